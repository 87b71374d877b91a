"""Reading input files for ``solve``: JSON or TOML, numbers read exactly.

A file is one table: named matrices (lists of rows; a flat list is one row;
entries are integers, decimals or fraction strings such as ``"3/4"``) plus
optional parameters of the kind.  JSON and TOML floats are handed to us as
their text, so ``0.2`` is exactly 1/5; JSON's ``NaN`` and ``Infinity`` too, so
they are refused like any other text that is not a finite number, naming the
field, row and column.  No text is ever evaluated.

Every size and range limit of :mod:`worksheet.policy.limits` is checked here, before
any arithmetic: the file size, each matrix's rows and columns (before its
entries are read), the entries of all matrices together, each number's range,
and the common denominator of all entries.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..policy.errors import InputError
from ..policy.files import read_text
from ..policy.limits import (
    MAX_COLS,
    MAX_COMMON_DENOMINATOR,
    MAX_ENTRIES,
    MAX_INPUT_BYTES,
    MAX_ROWS,
    common_denominator,
)
from .numbers import exact_from_json


def read_table(path: Path | str, *, label: str | None = None) -> dict[str, Any]:
    """Parse a JSON or TOML file into a dict; floats stay as their text."""
    path = Path(path)
    label = label or str(path)
    text = read_text(path, label, MAX_INPUT_BYTES)
    is_json = path.suffix.lower() == ".json" or (path.suffix.lower() != ".toml" and text.lstrip().startswith("{"))
    return parse_table(text, label=label, is_json=is_json)


def parse_table(text: str, *, label: str, is_json: bool | None = None) -> dict[str, Any]:
    """The table of a file's text (pasted into a page, say): JSON when ``is_json``
    (None: when it starts with ``{``), else TOML; at most MAX_INPUT_BYTES of UTF-8."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
        raise InputError(f"more than the limit of {MAX_INPUT_BYTES} bytes", file=label)
    if is_json is None:
        is_json = text.lstrip().startswith("{")
    try:
        if is_json:
            table = json.loads(text, parse_float=str, parse_constant=str)  # NaN: refused as an entry
        else:
            table = tomllib.loads(text, parse_float=str)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=label) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", file=label) from None
    except ValueError as exc:
        from ..policy.integer_text import is_digit_limit_error, long_number_error

        if is_digit_limit_error(exc):
            raise long_number_error(text, file=label) from None
        raise InputError(str(exc)[:200], file=label) from None
    except RecursionError:
        raise InputError("too deeply nested", file=label) from None
    if not isinstance(table, dict):
        raise InputError("the file must hold one table of named matrices", file=label)
    return table


def _rows(value: Any) -> list:
    """A list of rows (or one flat row, or a single number) as rows, not yet read."""
    if not isinstance(value, list):
        return [[value]]
    if value and not any(isinstance(r, list) for r in value):
        return [value]
    return value


def check_shape(value: Any, *, file: str | None, field: str) -> int:
    """Check a matrix's shape against the limits before reading it; its number of entries."""
    value = _rows(value)
    if not value:
        raise InputError("empty matrix", file=file, field=field)
    if len(value) > MAX_ROWS:
        raise InputError(f"{len(value)} rows, more than the limit of {MAX_ROWS}", file=file, field=field)
    width = None
    for i, row in enumerate(value, start=1):
        if not isinstance(row, list):
            raise InputError("mix of rows and numbers; write every row as a list", file=file, field=field, row=i)
        if len(row) > MAX_COLS:
            raise InputError(f"{len(row)} columns, more than the limit of {MAX_COLS}", file=file, field=field, row=i)
        if width is None:
            width = len(row)
        if len(row) != width or not row:
            raise InputError(
                f"ragged rows: row 1 has {width} entries, row {i} has {len(row)}", file=file, field=field, row=i
            )
    return len(value) * width


def parse_matrix(value: Any, *, file: str | None, field: str) -> tuple:
    """A list of rows (or one flat row, or a single number) -> exact matrix (shape checked first)."""
    check_shape(value, file=file, field=field)
    rows = []
    for i, row in enumerate(_rows(value), start=1):
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
    entries = 0
    for key, value in table.items():
        if key in kind.INPUTS:
            entries += check_shape(value, file=file, field=key)
            if entries > MAX_ENTRIES:
                raise InputError(
                    f"the matrices have more than {MAX_ENTRIES} entries together (the limit)", file=file, field=key
                )
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
    _check_common_denominator(inputs, file)
    return inputs, options


def _check_common_denominator(inputs: dict, file: str | None) -> None:
    """All entries over one denominator of at most 10^18 (see :mod:`worksheet.policy.limits`)."""
    lcm = 1
    for name, m in inputs.items():
        for i, row in enumerate(m, start=1):
            for j, x in enumerate(row, start=1):
                lcm = common_denominator((Fraction(1, lcm), x))
                if lcm > MAX_COMMON_DENOMINATOR:
                    raise InputError(
                        "the entries have no common denominator of at most 10^18 (the limit): "
                        "use decimals of at most 12 places or fractions over a few small "
                        "denominators",
                        file=file,
                        field=name,
                        row=i,
                        col=j,
                    )
