"""Checks shared by the layer kinds' test files (tests/test_kind_{multi_head_attention,
positional_encoding,layer_norm,feed_forward,encoder_block}.py): float
arrays of exact matrices, input files, one-line CLI errors, builds in every
format with LaTeX compilation, and golden files."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import numpy as np

from latex_util import compile_tex
from worksheet.build import build_document, render_document
from common import one_line_error  # noqa: F401
from common import floats  # noqa: F401

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("WORKSHEET_UPDATE_GOLDEN") == "1"
FILES = ("worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json")


def exact_steps_match(problem, expected: dict[str, np.ndarray], *, rtol=1e-9, atol=1e-9) -> None:
    """Every step named in ``expected`` has exact entries equal to it (as floats)."""
    for name, want in expected.items():
        got = floats(problem.step(name).exact)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Fraction):
        return json.dumps(str(v))
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(v)  # int, or a decimal written as a TOML float (read exactly)


def solve_error(runner, cli, kind: str, table: dict, path: Path) -> str:
    """The one-line error of ``worksheet solve KIND --input PATH`` for a bad table
    (None values drop the matrix), written as JSON or TOML by the suffix."""
    f = write_input(path, {k: v for k, v in table.items() if v is not None})
    return one_line_error(runner.invoke(cli, ["solve", kind, "--input", str(f)]))


def write_input(path: Path, table: dict) -> Path:
    """Write ``table`` as JSON or TOML (by the suffix of ``path``)."""
    if path.suffix == ".toml":
        text = "".join(f"{k} = {_toml_value(v)}\n" for k, v in table.items())
    else:
        text = json.dumps({k: _jsonable(v) for k, v in table.items()}, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def _jsonable(v):
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, Fraction):
        return str(v)
    return v


def cli_build_compiles(runner, cli, kind: str, args: list[str], out: Path) -> dict:
    """``worksheet build KIND ARGS`` in md, tex and json; both .tex files compile.

    Returns the parsed JSON key.
    """
    r = runner.invoke(cli, ["build", kind, *args, "--format", "md,tex,json", "-o", str(out)])
    assert r.exit_code == 0, (r.output, r.stderr)
    for name in FILES:
        assert (out / name).stat().st_size > 200, name
    for name in ("worksheet.tex", "worksheet-key.tex"):
        compile_tex(out / name)
    return json.loads((out / "worksheet.json").read_text(encoding="utf-8"))


def check_golden(kind: str, spec: str | None = None, options: dict | None = None) -> None:
    """The md key and the JSON at seed 1 equal tests/golden/<kind>/ byte for byte.

    Regenerate with WORKSHEET_UPDATE_GOLDEN=1 (and read the diff).
    """
    doc = build_document([spec or kind], seed=1, options=options or {})
    files = render_document(doc, ["md", "json"], name="worksheet")
    for name in ("worksheet-key.md", "worksheet.json"):
        path = GOLDEN / kind / name
        text = files[name]
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.exists(), f"missing golden file {path}; run with WORKSHEET_UPDATE_GOLDEN=1"
        assert text == path.read_text(encoding="utf-8"), f"{kind}/{name} differs from its golden file"
