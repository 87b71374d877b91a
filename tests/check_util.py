"""Helpers for the tests of ``worksheet check``: keys from generated problems,
answer files written from numpy arrays, recomputation through the kinds."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from common import toml_value
from worksheet.build import build_document
from worksheet.check import recomputer
from worksheet.render.json import document, dumps


def make_key(tmp_path: Path, kinds=("attention",), *, seed: int = 1, options=None, name="key.json"):
    """Build a document and write its JSON key; returns (path, document)."""
    doc = build_document(list(kinds), seed=seed, options=dict(options or {}))
    path = tmp_path / name
    path.write_text(dumps(document(doc)), encoding="utf-8")
    return path, doc


def inputs_of(problem) -> dict[str, np.ndarray]:
    return {name: q.value for name, q in problem.inputs.items()}


def key_values(problem) -> dict[str, np.ndarray]:
    return {s.name: s.value for s in problem.steps}


def recompute(problem, given=None) -> dict[str, np.ndarray]:
    """Every step from the inputs, with ``given`` steps replaced (the kind's reference)."""
    run = recomputer(problem.kind, problem.params, inputs_of(problem))
    assert run is not None, f"{problem.kind} has no reference(..., given=...)"
    out = run(dict(given or {}))
    assert out is not None
    return out


def fmt(x: float, places: int = 4) -> str:
    if x == -np.inf:
        return "-inf"
    return f"{x:.{places}f}"


def table(values: dict[str, np.ndarray], places: int = 4, steps=None) -> dict[str, list[list[str]]]:
    """Steps as matrices of decimal strings, rounded to ``places``."""
    names = steps if steps is not None else list(values)
    return {n: [[fmt(float(x), places) for x in row] for row in np.atleast_2d(values[n])] for n in names}


def write_toml(path: Path, steps: dict, *, numbered: dict | None = None, meta: dict | None = None) -> Path:
    def line(k, v) -> str:
        return f"{json.dumps(k) if '.' in k else k} = {toml_value(v, bare_numbers=True)}"

    lines = [f"{k} = {json.dumps(v)}" for k, v in (meta or {}).items()]
    lines += [line(k, v) for k, v in steps.items()]
    for number, st in (numbered or {}).items():
        lines.append(f"[{number}]")
        lines += [line(k, v) for k, v in st.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_json(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def write_csv(path: Path, problems: dict) -> Path:
    """``{number or None: {step: rows}}`` in the long CSV layout."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["problem", "step", "row", "col", "value"])
        for number, steps in problems.items():
            for step, rows in steps.items():
                for i, row in enumerate(rows, start=1):
                    for j, x in enumerate(row, start=1):
                        w.writerow(["" if number is None else number, step, i, j, x])
    return path


def statuses(report, problem: int = 0) -> dict[str, str]:
    return {s.name: s.status for s in report.problems[problem].steps}


def mistakes_of(report, problem: int = 0) -> dict[str, str | None]:
    return {s.name: s.mistake for s in report.problems[problem].steps if s.status == "incorrect"}
