"""Helpers shared by the test modules: one-line CLI errors, float arrays of exact
matrices, and input or answer files written as JSON or TOML."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from worksheet.solution.problem import to_array as floats  # noqa: F401  (float64 array of an exact matrix)


def one_line_error(result) -> str:
    """A user error: exit code 2 and exactly one line on stderr starting 'error: '."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


# ---------------------------------------------------------------- input and answer files
def toml_value(v, *, bare_numbers: bool = False) -> str:
    """One TOML value: booleans, numbers, strings (a basic string), fractions (as
    the string ``"p/q"``) and nested lists.  With ``bare_numbers`` a string that
    is a plain decimal (``"0.8808"``, ``"-3"``) is written as a TOML number, the
    way a student writes an answer file (``check`` reads it back as its text)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x, bare_numbers=bare_numbers) for x in v) + "]"
    if isinstance(v, Fraction):
        return json.dumps(str(v))
    if isinstance(v, str):
        if bare_numbers and v.lstrip("-").replace(".", "", 1).isdigit():
            return v
        return json.dumps(v, ensure_ascii=False)
    return str(v)  # int, or a decimal written as a TOML float (read exactly)


def toml_dumps(table: dict) -> str:
    """A flat TOML table (numbers, strings, booleans, fractions, nested lists)."""
    return "".join(f"{k} = {toml_value(v)}\n" for k, v in table.items())


def jsonable(v):
    """Fractions as ``"p/q"`` strings and tuples as lists, for ``json.dumps``."""
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, Fraction):
        return str(v)
    return v


def write_input(path: Path, table: dict) -> Path:
    """Write ``table`` as JSON or TOML (by the suffix of ``path``)."""
    if path.suffix == ".toml":
        text = toml_dumps(table)
    else:
        text = json.dumps({k: jsonable(v) for k, v in table.items()}, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def solve_error(runner, cli, kind: str, table: dict, path: Path) -> str:
    """The one-line error of ``worksheet solve KIND --input PATH -o OUT`` for a bad
    table, written as JSON or TOML by the suffix of ``path`` (None values drop the
    matrix).  The error names the file, and nothing is written."""
    f = write_input(path, {k: v for k, v in table.items() if v is not None})
    out = path.parent / "out.md"
    line = one_line_error(runner.invoke(cli, ["solve", kind, "--input", str(f), "-o", str(out)]))
    assert str(f) in line and not out.exists(), line
    return line
