"""Helpers shared by the tests of the kinds (tests/test_kind_*.py): input files
solved through the library and the CLI, exact steps against numpy, CLI builds
compiled with pdflatex, and golden files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

import golden_util
from common import floats, one_line_error, solve_error, toml_dumps, write_input  # noqa: F401
from latex_util import compile_tex, overfull_points
from worksheet.build import build_document, render_document, solve_file
from worksheet.exact import to_str

GOLDEN = Path(__file__).parent / "golden"
FILES = ("worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json")


# ---------------------------------------------------------------- solving
def exact_strings(problem) -> dict[str, list]:
    return {s.name: [[x if isinstance(x, str) else to_str(x) for x in row] for row in s.exact] for s in problem.steps}


def exact_steps_match(problem, expected: dict[str, np.ndarray], *, rtol=1e-9, atol=1e-9) -> None:
    """Every step named in ``expected`` has exact entries equal to it (as floats)."""
    for name, want in expected.items():
        got = floats(problem.step(name).exact)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


def write_inputs(tmp_path: Path, table: dict, stem: str = "in") -> tuple[Path, Path]:
    """The same table as ``stem.json`` and ``stem.toml``."""
    return write_input(tmp_path / f"{stem}.json", table), write_input(tmp_path / f"{stem}.toml", table)


def solve_everywhere(runner, cli, kind: str, table: dict, tmp_path: Path):
    """Solve ``table`` from JSON and TOML, by the library and by the CLI; all agree.

    Returns the library's problem.
    """
    j, t = write_inputs(tmp_path, table)
    p_json, p_toml = solve_file(kind, j), solve_file(kind, t)
    assert exact_strings(p_json) == exact_strings(p_toml)
    for path in (j, t):
        r = runner.invoke(cli, ["solve", kind, "--input", str(path), "--format", "json"])
        assert r.exit_code == 0, r.output
        steps = json.loads(r.output)["problems"][0]["steps"]
        assert {s["name"]: s["exact"] for s in steps} == exact_strings(p_json)
        r = runner.invoke(cli, ["solve", kind, "-i", str(path)])
        assert r.exit_code == 0 and "answer key" in r.output, r.output
    return p_json


# ---------------------------------------------------------------- builds
def build_and_compile(runner, cli, args: list[str], tmp_path: Path) -> dict:
    """``worksheet build ARGS`` in md, tex, json: the five files, both .tex compile
    without a badly overfull box, and only the key has the answers.  Returns the
    parsed JSON key."""
    r = runner.invoke(cli, ["build", *args, "-o", str(tmp_path), "--format", "md,tex,json"])
    assert r.exit_code == 0, (r.output, r.stderr)
    assert sorted(os.listdir(tmp_path)) == sorted(FILES)
    for name in FILES:
        assert (tmp_path / name).stat().st_size > 200, name
    for name in ("worksheet.tex", "worksheet-key.tex"):
        log = compile_tex(tmp_path / name)
        assert (tmp_path / name).with_suffix(".pdf").stat().st_size > 1000
        assert all(w <= 10 for w in overfull_points(log)), overfull_points(log)
    sheet = (tmp_path / "worksheet.md").read_text(encoding="utf-8")
    key = (tmp_path / "worksheet-key.md").read_text(encoding="utf-8")
    assert "answer key" in key and "answer key" not in sheet
    return json.loads((tmp_path / "worksheet.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------- golden files
def check_golden(folder: str, problems: list[str], *, case: str = "worksheet", options: dict | None = None) -> None:
    """The md key and the JSON of ``problems`` at seed 1 equal
    tests/golden/FOLDER/CASE-key.md and CASE.json: the text exactly, in the
    JSON every ``exact`` string exactly and every float within rel 1e-12
    (:mod:`golden_util`).

    Regenerate with WORKSHEET_UPDATE_GOLDEN=1 (and read the diff).
    """
    doc = build_document(list(problems), seed=1, options=dict(options or {}))
    files = render_document(doc, ["md", "json"], name=case, roles=("key",))
    assert sorted(files) == sorted([f"{case}-key.md", f"{case}.json"])
    for name, text in files.items():
        golden_util.check(GOLDEN / folder / name, text)
