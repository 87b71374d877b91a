"""Reading answer files (TOML, JSON or CSV) into raw matrices, within their
limits, and parsing one entry; nothing is evaluated (entries go through the
bounded parser of :mod:`worksheet.parse`)."""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..policy.errors import InputError
from ..exact import NegInf
from ..policy.limits import MAX_ANSWER_BYTES
from ..parse import Budget, format_decimal_places, parse_exact
from .reading import MAX_LABEL, MAX_NAME, MAX_SIZE, _NON_FINITE, _json_constant, _read_text, _show
from .tolerance import Given, mp_value

MAX_STEPS = 200  # steps in one problem of an answer file
MAX_PROBLEMS = 100  # problems in one answer file
MAX_NESTING = 4  # nested tables for dotted step names

_PROBLEM_NO = re.compile(r"[0-9]{1,4}")
_META = ("variant", "student", "fingerprint", "decimal")


@dataclass
class Answers:
    """An answer file, read but not yet parsed: raw matrices per problem and step."""

    path: str
    problems: dict[int | None, dict[str, list[list[Any]]]]  # None: the one-problem form
    variant: str | None = None
    student: str | None = None
    bad_lines: list[tuple[int, str]] = field(default_factory=list)  # (line, reason) skipped while reading
    broken: dict[tuple[int | None, str], str] = field(default_factory=dict)  # a step that cannot be read: why
    lines: dict[tuple[int | None, str], int] = field(default_factory=dict)  # the line of each step
    fingerprint: str | None = None  # the key's, written by ``worksheet template``; None: a hand-written file
    decimal: str = "point"  # "comma": 0,5 is a half (the file's ``decimal`` field)

    def line_of(self, number: int | None, step: str) -> int | None:
        """The line where a step's answer starts, if known."""
        return self.lines.get((number, step)) or self.lines.get((None, step))


def read_answers(path: Path | str, *, label: str | None = None) -> Answers:
    """Read an answer file (TOML, JSON or CSV) into raw matrices; nothing is evaluated."""
    path = Path(path)
    label = label or str(path)
    text = _read_text(path, label, MAX_ANSWER_BYTES)
    fmt = _answer_format(path, text)
    if fmt == "csv":
        return _read_csv(text, label)
    try:
        if fmt == "json":
            table = json.loads(text, parse_float=str, parse_int=str, parse_constant=_json_constant)
        else:
            table = tomllib.loads(text, parse_float=str)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=label) from None
    except tomllib.TOMLDecodeError as exc:
        last = len(text.splitlines()) or 1
        reason = str(exc).replace("(at end of document)", f"(at the end of the file, line {last})")
        raise InputError(f"invalid TOML: {reason}", file=label) from None
    except RecursionError:
        raise InputError("too deeply nested", file=label) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits, NaN
        from ..policy.integer_text import is_digit_limit_error, long_number_error

        if is_digit_limit_error(exc):
            raise long_number_error(text, file=label) from None
        raise InputError(f"cannot read: {str(exc)[:80]}", file=label) from None
    if not isinstance(table, dict):
        raise InputError("the file must hold one table of steps (step name = matrix)", file=label)
    ans = _answers_from_table(table, label)
    ans.lines = _toml_lines(text) if fmt == "toml" else _json_lines(text)
    return ans


_TOML_HEADER = re.compile(r"""\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$""")
_TOML_KEY = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.\- ]+?)\s*=""")


def _toml_lines(text: str) -> dict[tuple[int | None, str], int]:
    """The line of each ``name = ...`` under its ``[N]`` table (or at the top level):
    good enough to point a student at the line of an answer that cannot be read."""
    out: dict[tuple[int | None, str], int] = {}
    table: list[str] = []
    for k, line in enumerate(text.splitlines(), start=1):
        m = _TOML_HEADER.match(line)
        if m:
            table = [part.strip().strip("'\"") for part in m.group(1).split(".")]
            continue
        m = _TOML_KEY.match(line)
        if not m:
            continue
        key = m.group(1).strip()
        key = key[1:-1] if key[:1] in "'\"" else key
        path = table + [key]
        if path and _PROBLEM_NO.fullmatch(path[0]):
            number, name = int(path[0]), ".".join(path[1:])
        else:
            number, name = None, ".".join(path)
        if name:
            out.setdefault((number, name), k)
    return out


def _json_lines(text: str) -> dict[tuple[int | None, str], int]:
    """The line of each ``"name":`` key of a JSON answer file, under ``"N":`` when numbered."""
    out: dict[tuple[int | None, str], int] = {}
    number = None
    for k, line in enumerate(text.splitlines(), start=1):
        for m in re.finditer(r'"((?:[^"\\]|\\.)*)"\s*:', line):
            key = m.group(1)
            if _PROBLEM_NO.fullmatch(key):
                number = int(key)
            else:
                out.setdefault((number, key), k)
                out.setdefault((None, key), k)
    return out


def _answer_format(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix in (".toml", ".json", ".csv"):
        return suffix[1:]
    head = text.lstrip()
    if head.startswith("{"):
        return "json"
    first = head.splitlines()[0].lower() if head else ""
    if "," in first and "step" in first and "value" in first:
        return "csv"
    return "toml"


def _meta(value: Any, name: str, label: str) -> str:
    if isinstance(value, (str, int)) and not isinstance(value, bool) and len(str(value)) <= MAX_NAME:
        return str(value)
    raise InputError(f"must be a short text, not {_show(value)}", file=label, field=name)


def _answers_from_table(table: dict, label: str) -> Answers:
    meta = {k: _meta(table.pop(k), k, label) for k in _META if k in table}
    numbered = [k for k in table if _PROBLEM_NO.fullmatch(k)]
    problems: dict[int | None, dict] = {}
    if numbered:
        other = [k for k in table if k not in numbered]
        if other:
            raise InputError(
                "mixes numbered problems with step names at the top level; put every "
                "step under its problem's number, e.g. [1]",
                file=label,
                field=_clip(other[0]),
            )
        if len(numbered) > MAX_PROBLEMS:
            raise InputError(f"more than {MAX_PROBLEMS} problems", file=label)
        for k in numbered:
            if not isinstance(table[k], dict):
                raise InputError(
                    "a problem must be a table of steps (step name = matrix)", file=label, field=f"problem {int(k)}"
                )
            problems[int(k)] = _flatten(table[k], label, f"problem {int(k)}")
    else:
        problems[None] = _flatten(table, label, None)
    fingerprint, decimal = _binding(meta, label)
    return Answers(label, problems, meta.get("variant"), meta.get("student"), fingerprint=fingerprint, decimal=decimal)


def _binding(meta: dict, label: str) -> tuple[str | None, str]:
    """The key's fingerprint and the decimal separator an answer file names."""
    decimal = meta.get("decimal") or "point"
    if decimal not in DECIMALS:
        raise InputError(f"must be \"point\" or \"comma\", not {_show(decimal)}", file=label, field="decimal")
    fingerprint = meta.get("fingerprint") or None
    return fingerprint, decimal


def answers_from_dict(table: dict, *, label: str = "answers") -> Answers:
    """Answers given as a dict, the shape an answer file reads to (step name ->
    matrix; entries ints or text such as ``"0.8808"`` or ``"1/(1+e^-2)"``)."""
    return _answers_from_table(dict(table), label)


def _clip(name: str) -> str:
    return name if len(name) <= MAX_NAME and name.isprintable() else _show(name)


def _flatten(table: dict, label: str, where: str | None, prefix: str = "", depth: int = 0) -> dict:
    """``{"attn": {"output": m}}`` -> ``{"attn.output": m}`` (dotted step names)."""
    out = {}
    for k, v in table.items():
        name = prefix + str(k)
        if len(name) > MAX_NAME:
            raise InputError("step name too long", file=label, field=_show(name))
        if isinstance(v, dict):
            if depth + 1 >= MAX_NESTING:
                raise InputError("too deeply nested tables", file=label, field=_clip(name))
            out.update(_flatten(v, label, where, name + ".", depth + 1))
        else:
            out[name] = v
        if len(out) > MAX_STEPS:
            raise InputError(f"more than {MAX_STEPS} steps", file=label, field=where)
    return out


CSV_HINT = "write one entry per line as problem,step,row,col,value, e.g. 1,scores,2,3,-1/2"


# long: one check per column and line of the CSV answer format, each with its own message
def _read_csv(text: str, label: str) -> Answers:  # noqa: C901, PLR0915
    """The long CSV layout.  A line that cannot be read is skipped and reported (``bad_lines``)
    with its number, and a matrix that misses an entry is reported as a step that cannot be
    read: the rest of the file is still marked.  Only a file without its header, or one the
    CSV reader cannot split, is an error."""
    rows = csv.reader(io.StringIO(text))
    header = None
    cells: dict[int | None, dict[str, dict[tuple[int, int], str]]] = {}
    first_line: dict[tuple[int | None, str], int] = {}
    meta: dict[str, str] = {}
    bad: list[tuple[int, str]] = []
    try:
        for line in rows:
            lineno = rows.line_num
            if not line or all(not c.strip() for c in line) or line[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = _csv_header(line, label)
                continue
            if len(line) > max(header.values()) + 1 and any(c.strip() for c in line[max(header.values()) + 1 :]):
                bad.append(
                    (
                        lineno,
                        f"{len(line)} fields, but the header names {len(header)}; "
                        f"a value with a comma must be in double quotes (\"1,5\"); {CSV_HINT}",
                    )
                )
                continue
            get = {k: (line[i].strip() if i < len(line) else "") for k, i in header.items()}
            step = get["step"]
            if step in _META:
                try:
                    meta[step] = _meta(get["value"], step, label)
                except InputError as exc:
                    bad.append((lineno, f"{step}: {exc.reason}"))
                continue
            try:
                number, r, c = _csv_line(get, step)
            except ValueError as exc:
                bad.append((lineno, str(exc)))
                continue
            entries = cells.setdefault(number, {})
            if len(cells) > MAX_PROBLEMS:
                raise InputError(f"more than {MAX_PROBLEMS} problems", file=label)
            m = entries.setdefault(step, {})
            first_line.setdefault((number, step), lineno)
            if len(entries) > MAX_STEPS:
                raise InputError(f"more than {MAX_STEPS} steps", file=label)
            if (r, c) in m:
                bad.append((lineno, f"{_clip(step)}: a second entry for row {r}, column {c} (the first is kept)"))
                continue
            m[(r, c)] = get["value"]
            if len(bad) > MAX_BAD_LINES:
                raise InputError(f"more than {MAX_BAD_LINES} lines cannot be read; {CSV_HINT}", file=label)
    except csv.Error as exc:
        raise InputError(f"invalid CSV at line {rows.line_num}: {exc}; {CSV_HINT}", file=label) from None
    if header is None:
        raise InputError(f"empty CSV: expected a header row problem,step,row,col,value; {CSV_HINT}", file=label)
    if None in cells and len(cells) > 1:
        raise InputError("some lines give a problem number and some do not; give every line its problem", file=label)
    problems: dict[int | None, dict] = {}
    broken: dict[tuple[int | None, str], str] = {}
    for number, steps in cells.items():
        problems[number] = {}
        for step, m in steps.items():
            n_rows = max(r for r, _ in m)
            n_cols = max(c for _, c in m)
            gap = next(((r, c) for r in range(1, n_rows + 1) for c in range(1, n_cols + 1) if (r, c) not in m), None)
            if gap is not None:
                broken[(number, step)] = (
                    f"row {gap[0]}, column {gap[1]}: no entry (every entry of the matrix needs a line)"
                )
                problems[number][step] = None
                continue
            problems[number][step] = [[m[(r, c)] for c in range(1, n_cols + 1)] for r in range(1, n_rows + 1)]
    fingerprint, decimal = _binding(meta, label)
    return Answers(
        label,
        problems,
        meta.get("variant"),
        meta.get("student"),
        bad,
        broken,
        first_line,
        fingerprint=fingerprint,
        decimal=decimal,
    )


MAX_BAD_LINES = 1000  # lines of one CSV file that may be skipped before the file is refused


def _csv_line(get: dict, step: str) -> tuple[int | None, int, int]:
    """(problem, row, column) of one CSV line; ValueError naming what is wrong."""
    if not step:
        raise ValueError(f"no step name; {CSV_HINT}")
    if len(step) > MAX_NAME:
        raise ValueError("step name too long")
    prob = get.get("problem", "")
    if prob and not _PROBLEM_NO.fullmatch(prob):
        raise ValueError(f"problem must be a number 1, 2, ..., not {_show(prob)}; {CSV_HINT}")
    r, c = (_csv_index(get[k], k) for k in ("row", "col"))
    return (int(prob) if prob else None), r, c


def _csv_header(line: list[str], label: str) -> dict[str, int]:
    names = [c.strip().lower() for c in line]
    aliases = {"column": "col", "entry": "value", "answer": "value"}
    names = [aliases.get(n, n) for n in names]
    need = ("step", "row", "col", "value")
    missing = [n for n in need if n not in names]
    if missing:
        raise InputError(
            "the first line must be a header naming the columns "
            f"problem,step,row,col,value (missing {', '.join(missing)}); {CSV_HINT}",
            file=label,
        )
    return {n: names.index(n) for n in ("problem", *need) if n in names}


def _csv_index(text: str, name: str) -> int:
    if not re.fullmatch(r"[0-9]{1,3}", text) or not 1 <= int(text) <= MAX_SIZE:
        word = "row" if name == "row" else "column"
        raise ValueError(f"the {word} must be a number from 1 to {MAX_SIZE}, not {_show(text)}; {CSV_HINT}")
    return int(text)


def _raw_matrix(value: Any, *, file: str, where: str) -> list[list[Any]]:
    """A list of rows (a flat list is one row, a single entry a 1 x 1) with bounded size."""
    if isinstance(value, list):
        if not value:
            raise InputError("empty matrix", file=file, field=where)
        if all(not isinstance(x, list) for x in value):
            rows = [value]
        elif all(isinstance(x, list) for x in value):
            rows = value
        else:
            raise InputError("mix of rows and numbers; write every row as a list", file=file, field=where)
    else:
        rows = [[value]]
    if len(rows) > MAX_SIZE:
        raise InputError(f"more than {MAX_SIZE} rows", file=file, field=where)
    width = len(rows[0])
    for i, row in enumerate(rows, start=1):
        if len(row) > MAX_SIZE:
            raise InputError(f"more than {MAX_SIZE} columns", file=file, field=where, row=i)
        if len(row) != width or not row:
            raise InputError(
                f"ragged rows: row 1 has {width} entries, row {i} has {len(row)}", file=file, field=where, row=i
            )
        for j, x in enumerate(row, start=1):
            if isinstance(x, (list, dict)):
                raise InputError("an entry must be a number, not a list or table", file=file, field=where, row=i, col=j)
    return rows


def _entry_text(x: Any) -> str:
    if isinstance(x, bool):
        raise ValueError(f"not a number: {str(x).lower()}")
    if not isinstance(x, (str, int)):
        raise ValueError(f"not a number: {_show(x)}")
    if isinstance(x, int):
        if x.bit_length() > 340:  # about 100 digits
            raise ValueError("number too long")
        return str(x)
    return x


DECIMALS = ("point", "comma")  # the decimal separator of an answer file or page: 0.5 or 0,5
_ARITHMETIC = re.compile("[0-9.\\s+\\-\u2212*/()\u00b7\u00d7]+")  # numbers and + - * / only: no e, no roots
_DECIMAL_PLACES = re.compile(r"(?<![0-9.])[0-9]*\.([0-9]+)")


def parse_entry(x: Any, labels: bool, budget: Budget | None = None, decimal: str = "point") -> Given:
    """Parse one answer entry (ValueError with a short reason a student understands).

    The one reader of answer files, the practice page and the library
    (:func:`worksheet.parse.parse_exact`: nothing is evaluated, work and size are
    bounded).  With ``decimal="comma"`` a comma is the decimal separator
    (``0,5``); a point is still read.  An exact form is compared exactly; an
    expression over decimals (``0.3679/1.7358``, the sheet's own arithmetic) is
    compared like a decimal, with the sheet's tolerance."""
    text = _entry_text(x)
    if text in _NON_FINITE and not labels:
        raise ValueError(f"not a finite number: {text}")
    read = text.replace(",", ".") if decimal == "comma" else text
    try:
        value = parse_exact(read, budget)
    except ValueError as exc:
        if labels and text.strip() and len(text) <= MAX_LABEL:
            return Given(text, label=text.strip())
        if "," in text and decimal != "comma" and "unexpected character ','" in str(exc):
            raise ValueError(
                "a comma: write the decimal point as '.' (0.5), or say decimal = \"comma\" in the file"
            ) from None
        raise exc
    if isinstance(value, NegInf):
        return Given(text, neg_inf=True)
    places = format_decimal_places(read)
    if places is None and _ARITHMETIC.fullmatch(read):  # arithmetic over decimals: as precise as they are
        found = [len(m.group(1)) for m in _DECIMAL_PLACES.finditer(read)]
        places = max(found) if found else None
    return Given(text, mp_value(value), places)
