"""Helpers shared by the tests of the attention-family kinds of issue 3 part A
(tests/test_kind_{self_attention_basic,softmax_scaling,cross_attention,
alignment,next_token}.py): input files in JSON and TOML, solving them through
the library and the CLI, CLI builds compiled with pdflatex, and golden files."""

from __future__ import annotations

import json
import os
from pathlib import Path


from latex_util import compile_tex, overfull_points
from worksheet.build import build_document, render_document, solve_file
from worksheet.exact import to_str
from common import one_line_error  # noqa: F401
from common import floats  # noqa: F401

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("WORKSHEET_UPDATE_GOLDEN") == "1"
FILES = ["worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json"]


# ---------------------------------------------------------------- input files


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a TOML basic string for our labels
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(v)


def toml_dumps(table: dict) -> str:
    """A flat TOML table (numbers, strings, booleans, nested lists)."""
    return "".join(f"{k} = {_toml_value(v)}\n" for k, v in table.items())


def write_inputs(tmp_path: Path, table: dict, stem: str = "in") -> tuple[Path, Path]:
    """The same table as ``stem.json`` and ``stem.toml``."""
    j, t = tmp_path / f"{stem}.json", tmp_path / f"{stem}.toml"
    j.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    t.write_text(toml_dumps(table), encoding="utf-8")
    return j, t


def exact_strings(problem) -> dict[str, list]:
    return {s.name: [[x if isinstance(x, str) else to_str(x) for x in row] for row in s.exact]
            for s in problem.steps}


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


def solve_error(runner, cli, kind: str, table: dict, tmp_path: Path, suffix: str = ".json") -> str:
    """The one-line error of ``worksheet solve KIND -i FILE`` for a bad table."""
    path = tmp_path / f"bad{suffix}"
    path.write_text(json.dumps(table) if suffix == ".json" else toml_dumps(table), encoding="utf-8")
    return one_line_error(runner.invoke(cli, ["solve", kind, "-i", str(path)]))


# ---------------------------------------------------------------- builds


def build_and_compile(runner, cli, args: list[str], tmp_path: Path) -> dict:
    """``worksheet build ARGS`` in md, tex, json; both .tex compile; returns the JSON."""
    r = runner.invoke(cli, ["build", *args, "-o", str(tmp_path), "--format", "md,tex,json"])
    assert r.exit_code == 0, r.output + r.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(FILES)
    for name in ("worksheet.tex", "worksheet-key.tex"):
        log = compile_tex(tmp_path / name)
        assert (tmp_path / name).with_suffix(".pdf").stat().st_size > 1000
        assert all(w <= 10 for w in overfull_points(log)), overfull_points(log)
    sheet = (tmp_path / "worksheet.md").read_text(encoding="utf-8")
    key = (tmp_path / "worksheet-key.md").read_text(encoding="utf-8")
    assert "answer key" in key and "answer key" not in sheet
    return json.loads((tmp_path / "worksheet.json").read_text(encoding="utf-8"))


def check_golden(kind: str, case: str, problems: list[str], options: dict) -> None:
    """The md key and the JSON at seed 1 equal tests/golden/KIND/CASE-key.md and CASE.json."""
    doc = build_document(problems, seed=1, options=options)
    files = render_document(doc, ["md", "json"], name=case, roles=("key",))
    assert sorted(files) == sorted([f"{case}-key.md", f"{case}.json"])
    for name, text in files.items():
        path = GOLDEN / kind / name
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.exists(), f"missing golden file {path}; run with WORKSHEET_UPDATE_GOLDEN=1"
        assert text == path.read_text(encoding="utf-8"), f"{path} differs (WORKSHEET_UPDATE_GOLDEN=1 regenerates)"
