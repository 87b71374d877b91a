"""Reading input files for ``solve``: JSON or TOML, numbers read exactly.

A file is one table: named matrices (lists of rows; a flat list is one row;
entries are integers, decimals or fraction strings such as ``"3/4"``) plus
optional parameters of the kind.  JSON and TOML floats are handed to us as
their text, so ``0.2`` is exactly 1/5.  No text is ever evaluated.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import InputError
from .parse import exact_from_json

MAX_SIZE = 64  # rows or columns of one input matrix
MAX_BYTES = 2_000_000


def read_table(path: Path | str, *, label: str | None = None) -> dict[str, Any]:
    """Parse a JSON or TOML file into a dict; floats stay as their text."""
    path = Path(path)
    label = label or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=label) from None
    if len(data) > MAX_BYTES:
        raise InputError(f"file is larger than {MAX_BYTES // 1_000_000} MB", file=label)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start + 1})", file=label) from None
    is_json = path.suffix.lower() == ".json" or (path.suffix.lower() != ".toml" and text.lstrip().startswith("{"))
    try:
        if is_json:
            table = json.loads(text, parse_float=str, parse_constant=_reject_constant)
        else:
            table = tomllib.loads(text, parse_float=str)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=label) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", file=label) from None
    except ValueError as exc:
        raise InputError(str(exc), file=label) from None
    except RecursionError:
        raise InputError("too deeply nested", file=label) from None
    if not isinstance(table, dict):
        raise InputError("the file must hold one table of named matrices", file=label)
    return table


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


def parse_matrix(value: Any, *, file: str | None, field: str) -> tuple:
    """A list of rows (or one flat row, or a single number) -> exact matrix."""
    if not isinstance(value, list):
        value = [[value]]
    elif value and not any(isinstance(r, list) for r in value):
        value = [value]
    if not value:
        raise InputError("empty matrix", file=file, field=field)
    if len(value) > MAX_SIZE:
        raise InputError(f"more than {MAX_SIZE} rows", file=file, field=field)
    rows = []
    width = None
    for i, row in enumerate(value, start=1):
        if not isinstance(row, list):
            raise InputError("mix of rows and numbers; write every row as a list", file=file, field=field, row=i)
        if len(row) > MAX_SIZE:
            raise InputError(f"more than {MAX_SIZE} columns", file=file, field=field, row=i)
        if width is None:
            width = len(row)
        if len(row) != width or not row:
            raise InputError(f"ragged rows: row 1 has {width} entries, row {i} has {len(row)}",
                             file=file, field=field, row=i)
        out = []
        for j, x in enumerate(row, start=1):
            try:
                out.append(exact_from_json(x))
            except ValueError as exc:
                raise InputError(str(exc), file=file, field=field, row=i, col=j) from None
        rows.append(tuple(out))
    return tuple(rows)


def split_table(table: dict, kind, *, file: str | None) -> tuple[dict, dict]:
    """Matrices (by the kind's INPUTS) and parameters (by its Params fields)."""
    inputs, options = {}, {}
    fields = set(kind.Params.field_names())
    for key, value in table.items():
        if key in kind.INPUTS:
            inputs[key] = parse_matrix(value, file=file, field=key)
        elif key in fields:
            options[key] = value
        else:
            known = list(kind.INPUTS) + sorted(fields)
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; expected one of {', '.join(known)}"
            raise InputError(f"unknown field{hint}", file=file, field=key)
    return inputs, options


def fraction_text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"
