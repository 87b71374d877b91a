r"""``worksheet check``: mark a student's answers step by step against a key.

Library use::

    from worksheet.check import check_answers, check_folder
    report = check_answers("worksheet.json", "alice.toml")
    report.exit_code, report.marks, report.out_of
    print(report.text())            # or report.to_dict() for the JSON report

The key
=======

The JSON written by ``worksheet build`` (``{"problems": [...]}`` or
``{"variants": [{"id": ..., "problems": [...]}, ...]}``) or by ``worksheet
solve --format json`` (``{"problems": [one]}``); a bare problem object
(``{"kind": ..., "steps": [...]}``) works too.  Each step's ``exact``
strings are our own output and are read with :func:`worksheet.parse.parse_exact`
(never ``eval``/``sympify``); where one cannot be read (longer than the
parser's limit) the step's float ``value`` is the expected value instead.
A step that says ``"rounded": true`` (the encoder block carries values
rounded to 4 places along its chain) accepts both: an answer right for the
unrounded ``value`` (an exact form within half a unit in the 4th place) or
right for the rounded ``exact`` string the sheet works with.

Answer files
============

TOML, JSON or CSV (by extension; otherwise by content), at most 512 KB of
UTF-8.  For each problem (numbered ``1``..``N`` in sheet order; with one
problem the number may be left out) each step by its name in the key
(``scores``, ``weights``, ``scores_2``, ``attn.output``), a matrix: a list
of rows, a flat list for a one-row matrix, or a single entry for a 1 x 1.
TOML::

    # one problem: steps at the top level
    scores = [[3, 1], [0, 2]]
    weights = [["1/(1+e^-2)", 0.1192], [0.5, 0.5]]

    # several problems: one table per problem
    [1]
    scores = [[3, 1], [0, 2]]
    [2]
    softmax_raw = [1, 0]

JSON is the same shape (``{"1": {"scores": [[3, 1], [0, 2]]}}``).  Dotted
step names may be written as nested tables (``[1.attn]`` then ``output =``).
Two optional top-level fields: ``variant`` (the key's variant id; required
when the key has several variants) and ``student`` (a name for the class
summary).

CSV has a header row naming the columns ``problem`` (optional with one
problem), ``step``, ``row``, ``col`` and ``value``, in any order, and one line
per entry (rows and columns 1-based; every entry of a matrix must be there)::

    problem,step,row,col,value
    1,scores,1,1,3
    1,scores,1,2,1

A line whose ``step`` is ``variant`` or ``student`` sets that field from its
``value``.  Blank lines and lines starting with ``#`` are skipped.

Entries are integers, decimals, fractions (``"3/4"``), ``"-inf"``/``"-oo"``
for masked scores, or exact forms (``e^2``, ``exp(-1)``, ``sqrt(2)``,
``1/(1+e^-2)``, ``e^{1/2}``, every string the JSON export prints); see
:mod:`worksheet.parse`.  TOML and JSON numbers are read as their text, so
``0.88`` keeps its two decimal places.  The label of a token (``prediction``
of next-token) may be given as the label or as its index.

Marking, per step (1 mark each)
===============================

* **correct** -- every entry within tolerance of the key.  A plain decimal or
  integer is accepted within half a unit in its last written place, but never
  more loosely than 0.005 (``0.88`` for 0.8808 is right, ``0.9`` is not); an
  exact form (a fraction or expression) must equal the key exactly (both are
  evaluated to 50 digits).  ``--rtol``/``--atol`` replace both rules by
  ``|given - expected| <= atol + rtol * |expected|`` (either defaults to 0).
  ``-oo`` matches only ``-oo``.
* **carried forward** -- wrong against the key, but right when the step is
  recomputed from the student's own earlier answers by the kind's own
  ``reference(..., given=answers)`` (the numpy path every key is checked
  against; an exact form is then compared within a relative 1e-9).  Full
  marks.  Two recomputations are tried: from every earlier answer as written,
  and from only the earlier answers marked incorrect (the rest at full
  precision, as with a calculator).  Each entry may also be off by how far
  the rounding of those earlier answers moves it (a linear bound by finite
  differences, see :meth:`_Own.slack`), so honest rounding of earlier steps
  is absorbed.  A key of a kind this version does not know is marked
  against the key only, and the report says so.
* **incorrect** -- with the wrong entries (row, column, given, expected) and,
  when one matches, a named mistake from :mod:`worksheet.mistakes`: first the
  mistakes registered for this step, then those of earlier steps followed
  into this one, each computed from the key's values and from the student's
  own; then ``arithmetic-slip`` when exactly one entry (of two or more) is
  wrong against the key or against the carried-forward values.
* **missing** -- no answer for the step.
* **by-person** -- a step answered in words (its key step has a ``"written"``
  model answer: "which would you use, and why?").  ``check`` does not mark
  it: the report says "marked by a person", whatever the answer file holds
  for it (text, or nothing); it counts 0 of 0 marks, so it never makes the
  exit code 1.

A matrix of the wrong shape is an error (exit 2), unless the carried-forward
values or a named mistake have that shape (``concat-wrong-axis``).

Untrusted input
===============

Answer files come from students.  Nothing is evaluated: numbers and exact
forms go through the bounded parser of :mod:`worksheet.parse`; files are at
most 512 KB, matrices at most 64 x 64, at most 200 steps and 100 problems
per file, and reading the entries of one file stops with an error once a
count of parser work is spent (:data:`worksheet.limits.ANSWER_WORK`;
counted, never timed, so a file gets the same result on every machine).  A
key is read in the same order: its file size, then its structure and the
shapes of its steps (at most 64 x 64, :data:`~worksheet.limits.MAX_KEY_STEPS`
steps per problem), and its exact strings only when a step is marked, from a
shared work budget (past it, the step's float ``value`` is used).  Every
problem with a file is an :class:`~worksheet.errors.InputError` naming the
file, the step, the row and the column.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import json
import math
import re
import sys
import tomllib
import types
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from . import mistakes
from .errors import InputError, OutputError, WorksheetError, printable
from .exact import NegInf, Add, Func, Mul, Pow
from .limits import (
    ANSWER_WORK, KEY_WORK, MAX_ANSWER_BYTES, MAX_KEY_BYTES, MAX_KEY_ENTRIES, MAX_KEY_PROBLEMS,
    MAX_KEY_STEPS,
)
from .parse import Budget, format_decimal_places, parse_exact

__all__ = ["Tolerance", "Key", "read_key", "read_answers", "answers_from_dict", "check_answers", "check_folder",
           "decimal_tolerance",
           "Report", "ProblemResult", "StepResult", "Cell", "ClassReport", "STATUSES"]

STATUSES = ("correct", "carried-forward", "incorrect", "missing", "by-person")
SYMBOLS = {"correct": "✓", "carried-forward": "↪", "incorrect": "✗", "missing": "–", "by-person": "✎"}
BY_PERSON = "marked by a person (a written answer; the key has a model answer)"

MAX_SIZE = 64  # rows or columns of one answer matrix
MAX_STEPS = 200  # steps in one problem of an answer file
MAX_PROBLEMS = 100  # problems in one answer file
MAX_NAME = 100  # characters of a step name or a metadata field
MAX_LABEL = 200  # characters of a token label
MAX_NESTING = 4  # nested tables for dotted step names
DIGITS = 50  # decimal digits of the high-precision comparison
EXACT_RTOL = 1e-40  # "exactly equal" at 50 digits
ROUNDED_KEY = 5e-5 * (1 + 1e-9)  # half a unit in the 4th place: a "rounded" key step's own rounding
FLOAT_RTOL = 1e-9  # an exact form against a float64 recomputation
MAX_FUNC_ARG = 1e5  # |x| in exp/sin/cos/tanh(x) we evaluate
SLACK_ENTRIES = 32  # rounded earlier entries moved one by one (more: 8 draws of random signs)
WRONG_CELLS_SHOWN = 20  # wrong entries listed per step in the JSON report
FOLDER_SUFFIXES = (".toml", ".json", ".csv")

_PROBLEM_NO = re.compile(r"[0-9]{1,4}")
_META = ("variant", "student")


# ---------------------------------------------------------------- tolerance
@dataclass(frozen=True)
class Tolerance:
    """How close an entry must be.  Both None: the default rules (module docstring)."""

    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self):
        for name in ("rtol", "atol"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v >= 0):
                raise WorksheetError(f"--{name} must be a number >= 0, not {v}")

    @property
    def override(self) -> bool:
        return self.rtol is not None or self.atol is not None


# ---------------------------------------------------------------- high precision
_CTX = None


def _ctx():
    """An mpmath context at 50 digits (mpmath comes with sympy; imported on first use)."""
    global _CTX
    if _CTX is None:
        import mpmath

        _CTX = mpmath.MPContext()
        _CTX.dps = DIGITS
    return _CTX


def _mp(x):
    """The value of an exact number to 50 digits (ValueError when out of range)."""
    ctx = _ctx()
    if isinstance(x, Fraction):
        return ctx.mpf(x.numerator) / x.denominator
    if isinstance(x, Add):
        return ctx.fsum([_mp(x.const), *(_mp(t) for t in x.terms)])
    if isinstance(x, Mul):
        out = _mp(x.coeff)
        for f in x.factors:
            out *= _mp(f)
        return out
    if isinstance(x, Pow):
        b, e = _mp(x.base), x.exponent
        if e.denominator == 1:
            return b ** int(e)
        if b < 0:
            raise ValueError("root of a negative number")
        return b ** (ctx.mpf(e.numerator) / e.denominator)
    if isinstance(x, Func):
        a = _mp(x.arg)
        if abs(a) > MAX_FUNC_ARG:
            raise ValueError(f"number too large: {x.name} of {ctx.nstr(a, 3)}")
        return getattr(ctx, x.name)(a)
    raise ValueError(f"not a number: {x!r}")  # pragma: no cover


@dataclass(frozen=True)
class Expected:
    """One expected entry: its value to 50 digits (None for -oo), how it was known, its label."""

    mp: Any  # mpmath mpf, or None for -oo
    precise: bool  # from an exact value (True) or a float64 (False)
    text: str  # for the report
    label: str | None = None  # a token label (its index is ``mp``)
    bad: bool = False  # nan / +inf: matches nothing
    rounding: float = 0.0  # how far the key itself rounded it (steps with "rounded": true)
    alt: Any = None  # a rounded step's exact string, carried rounded along the chain: also right

    @property
    def neg_inf(self) -> bool:
        return self.mp is None and not self.bad

    @property
    def value(self) -> float | None:
        return None if self.mp is None else float(self.mp)


def _expected_float(x: float) -> Expected:
    if x == -math.inf:
        return Expected(None, False, "-oo")
    if not math.isfinite(x):
        return Expected(None, False, str(x), bad=True)
    return Expected(_ctx().mpf(x), False, _decimal_text(x))


def _decimal_text(x: float) -> str:
    if x == -math.inf:
        return "-oo"
    if x != 0 and abs(x) < 5e-5:
        return f"{x:.4g}"
    return f"{x:.4f}".rstrip("0").rstrip(".") if "." in f"{x:.4f}" else f"{x:.4f}"


@dataclass(frozen=True)
class Given:
    """One entry of an answer: the text written, its exact value and its precision."""

    text: str
    mp: Any = None  # mpf; None for -oo or a label
    places: int | None = None  # decimal places of a plain decimal/integer; None: an exact form
    neg_inf: bool = False
    label: str | None = None

    @property
    def rounding(self) -> float:
        """How far the value written may be from the one the student had: half a unit in
        the last place of a decimal (at most 0.005); 0 for integers and exact forms."""
        if self.places is None or self.places <= 0:
            return 0.0
        return min(0.5 * 10.0 ** -self.places, 0.005)

    @property
    def value(self) -> float:
        if self.neg_inf:
            return -math.inf
        if self.mp is None:
            return math.nan
        try:
            return float(self.mp)
        except (OverflowError, ValueError):  # pragma: no cover - mpmath gives inf
            return math.inf


def close(g: Given, e: Expected, tol: Tolerance, extra: float = 0.0) -> bool:
    """Is the given entry right for the expected one under ``tol``?

    ``extra`` widens the tolerance by how far the rounding of a student's
    earlier answers can move a value recomputed from them (carried forward).
    """
    if e.bad:
        return False
    if e.label is not None and g.label is not None:
        return g.label.casefold() == e.label.casefold()
    if g.label is not None:
        return False
    if g.neg_inf or e.neg_inf:
        return g.neg_inf and e.neg_inf
    if _near(g, e.mp, e.precise, e.rounding, tol, extra):
        return True
    return e.alt is not None and _near(g, e.alt, True, 0.0, tol, extra)


def decimal_tolerance(places: int, expected):
    """How far a plain decimal written to ``places`` places may be from the
    ``expected`` value and still be right (the default rule): half a unit in
    its last place, never more than 0.005, plus ``1e-12 * max(1, |expected|)``
    for float noise.  An mpmath number; ``worksheet.render.moodle`` gives
    Moodle this tolerance for a 4-place answer."""
    ctx = _ctx()
    half_unit = ctx.mpf(5) / ctx.mpf(10) ** (places + 1)
    return min(half_unit, ctx.mpf("0.005")) + 1e-12 * max(1, abs(expected))


def _near(g: Given, target, precise: bool, rounding: float, tol: Tolerance, extra: float) -> bool:
    diff = abs(g.mp - target)
    size = abs(target)
    if tol.override:
        return diff <= (tol.atol or 0.0) + (tol.rtol or 0.0) * size + extra
    if g.places is not None:
        return diff <= decimal_tolerance(g.places, size) + extra
    rtol = EXACT_RTOL if precise else FLOAT_RTOL
    return diff <= max(rtol * max(1, size), rounding) + extra


# ---------------------------------------------------------------- files
def _read_text(path: Path, label: str, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise InputError("is a folder, not a file", file=label) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=label) from None
    if len(data) > limit:
        size = f"{limit // 1024 // 1024} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"
        raise InputError(f"file is larger than {size}", file=label)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start + 1})", file=label) from None


def _show(s: object, limit: int = 30) -> str:
    """Untrusted text for a message: quoted, escaped and cut short."""
    s = str(s)
    return repr(s if len(s) <= limit else s[:limit] + "...")


def _shown_entry(s: str, limit: int = 40) -> str:
    """An entry as written, printable and short (for the report)."""
    s = "".join(c if c.isprintable() else "?" for c in s.strip())
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


_NON_FINITE = frozenset({"NaN", "Infinity"})


def _json_constant(name: str) -> str:
    """JSON's NaN and Infinity are read as their text, so the entry holding one
    is refused with its step, row and column (-Infinity is -oo, a masked score)."""
    return "-inf" if name == "-Infinity" else name


# ---------------------------------------------------------------- the key
@dataclass
class KeyStep:
    name: str
    title: str
    value: np.ndarray  # float64, -inf for masked
    exact: list | None  # the key's exact strings (rows), read when first needed
    rounded: bool = False
    written: str = ""  # a step answered in words: the key's model answer (marked by a person)
    budget: Budget | None = field(default=None, repr=False)  # its variant's, shared by its steps

    @property
    def shape(self) -> tuple[int, int]:
        return self.value.shape

    @property
    def cells(self) -> list[list[Expected]]:
        """The expected entries, parsed from the exact strings on first use."""
        if "_cells" not in self.__dict__:
            arr, exact = self.value, self.exact
            self.__dict__["_cells"] = [
                [_key_cell(exact[i][j] if exact else None, float(arr[i, j]), self.rounded, self.budget)
                 for j in range(arr.shape[1])] for i in range(arr.shape[0])]
        return self.__dict__["_cells"]

    @property
    def labels(self) -> bool:
        return any(e.label is not None for row in self.cells for e in row)


@dataclass
class KeyProblem:
    number: int  # 1-based, in sheet order
    kind: str
    params: dict
    inputs: dict[str, np.ndarray]
    steps: list[KeyStep]

    def step(self, name: str) -> KeyStep:
        return next(s for s in self.steps if s.name == name)


@dataclass
class Key:
    """An answer key: the problems of each variant (``""`` when there are no variants)."""

    path: str
    variants: dict[str, list[dict]]  # id -> raw problem dicts
    _parsed: dict = field(default_factory=dict, repr=False)

    def problems(self, variant: str | None = None) -> list[KeyProblem]:
        """The problems of a variant: structure and shapes checked, exact strings not
        yet read (each variant's are read from a work budget of its own, once, so a
        class folder is marked the same whatever the order of its files)."""
        vid = self.variant_id(variant)
        if vid not in self._parsed:
            raws = self.variants[vid]
            _check_key_size(raws, self.path)
            budget = Budget(*KEY_WORK)
            self._parsed[vid] = [_key_problem(raw, i + 1, self.path, vid, budget)
                                 for i, raw in enumerate(raws)]
        return self._parsed[vid]

    def variant_id(self, variant: str | None) -> str:
        ids = list(self.variants)
        if variant is None:
            if len(ids) == 1:
                return ids[0]
            raise InputError(f"the key has {len(ids)} variants ({', '.join(map(_show, ids[:8]))}"
                             f"{', ...' if len(ids) > 8 else ''}); say which with variant = \"...\" "
                             "in the answers", field="variant")
        if variant in self.variants:
            return variant
        if ids == [""]:
            return ""  # a key without variants: the answers' variant field is only a note
        close_ = difflib.get_close_matches(variant, ids, n=1)
        hint = f"; did you mean {_show(close_[0])}?" if close_ else ""
        raise InputError(f"the key has no variant {_show(variant)}{hint}", field="variant")


def read_key(path: Path | str) -> Key:
    """Read an answer key (JSON from ``build`` or ``solve --format json``)."""
    path = Path(path)
    label = str(path)
    text = _read_text(path, label, MAX_KEY_BYTES)
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a JSON answer key (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                         file=label) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"not a JSON answer key ({exc})", file=label) from None
    if not isinstance(data, dict):
        raise InputError("not an answer key: expected a JSON object with \"problems\"", file=label)
    if "variants" in data:
        if not isinstance(data["variants"], list) or not data["variants"]:
            raise InputError("\"variants\" must be a non-empty list", file=label)
        variants = {}
        for k, v in enumerate(data["variants"], start=1):
            if not isinstance(v, dict) or not isinstance(v.get("problems"), list):
                raise InputError(f"variant {k} has no list of \"problems\"", file=label)
            variants[str(v.get("id", k))] = v["problems"]
    elif isinstance(data.get("problems"), list):
        variants = {"": data["problems"]}
    elif "steps" in data and "kind" in data:
        variants = {"": [data]}
    else:
        raise InputError("not an answer key: expected \"problems\" (the JSON written by "
                         "'worksheet build' or 'worksheet solve --format json')", file=label)
    if any(not probs for probs in variants.values()):
        raise InputError("the key has no problems", file=label)
    return Key(label, variants)


def _key_matrix(q: Any, where: str, file: str) -> tuple[list, np.ndarray]:
    if not isinstance(q, dict) or not isinstance(q.get("value"), list) or not q["value"]:
        raise InputError(f"{where} has no \"value\" matrix", file=file)
    value = q["value"]
    exact = q.get("exact")
    try:
        arr = np.array([[-math.inf if x is None else float(x) for x in row] for row in value],
                       dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer beyond float64
        raise InputError(f"{where}: \"value\" is not a matrix of numbers", file=file) from None
    if arr.ndim != 2:
        raise InputError(f"{where}: \"value\" is not a matrix", file=file)
    if not (isinstance(exact, list) and len(exact) == arr.shape[0]
            and all(isinstance(r, list) and len(r) == arr.shape[1] for r in exact)):
        exact = None
    return exact, arr


def _check_key_size(raws: list, file: str) -> None:
    """Steps per problem and entries of a variant within the limits, counted
    on the raw JSON before any of it is converted."""
    if len(raws) > MAX_KEY_PROBLEMS:
        raise InputError(f"{len(raws)} problems in one variant, more than the limit of {MAX_KEY_PROBLEMS}",
                         file=file)
    entries = 0
    for number, raw in enumerate(raws, start=1):
        steps = raw.get("steps") if isinstance(raw, dict) else None
        if not isinstance(steps, list):
            continue  # _key_problem names it
        if len(steps) > MAX_KEY_STEPS:
            raise InputError(f"problem {number} has {len(steps)} steps, more than the limit of "
                             f"{MAX_KEY_STEPS}", file=file)
        for q in [*steps, *((raw.get("inputs") or {}).values() if isinstance(raw.get("inputs"), dict) else ())]:
            value = q.get("value") if isinstance(q, dict) else None
            if not isinstance(value, list):
                continue
            if len(value) > MAX_SIZE or any(not isinstance(r, list) or len(r) > MAX_SIZE for r in value):
                name = q.get("name", "an input")
                raise InputError(f"problem {number}, step {_show(name)}: a \"value\" matrix larger than "
                                 f"{MAX_SIZE} x {MAX_SIZE} (or not a matrix)", file=file)
            entries += sum(len(r) for r in value)
            if entries > MAX_KEY_ENTRIES:
                raise InputError(f"more than {MAX_KEY_ENTRIES} entries in one variant", file=file)


def _key_cell(text: Any, x: float, rounded: bool, budget: Budget | None = None) -> Expected:
    """An expected entry from the key's exact string (our own output) and its float;
    the float alone where the string cannot be read (or the key's work budget is spent)."""
    if x == -math.inf:
        return Expected(None, False, "-oo")
    if rounded:
        # the exact string holds the value carried rounded along the chain (what the sheet
        # shows), the float the unrounded value: both are right, an exact form within the
        # key's own rounding of the float
        e = _expected_float(x)
        alt = None
        if isinstance(text, str):
            try:
                alt = _mp(parse_exact(text, budget))
            except ValueError:
                alt = None
        return dataclasses.replace(e, text=text if alt is not None else e.text, rounding=ROUNDED_KEY,
                                   alt=alt)
    if not isinstance(text, str):
        return _expected_float(x)
    try:
        value = parse_exact(text, budget)
        if isinstance(value, NegInf):
            return Expected(None, True, "-oo")
        return Expected(_mp(value), True, text)
    except ValueError:
        if not any(c in text for c in "()*/^") and len(text) <= MAX_LABEL:
            return Expected(_ctx().mpf(x), False, text, label=text)  # a token label; value: its index
        return _expected_float(x)  # longer than the parser reads: use the float


def _key_problem(raw: Any, number: int, file: str, variant: str, budget: Budget | None = None) -> KeyProblem:
    where = f"problem {number}" + (f" of variant {variant}" if variant else "")
    if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str):
        raise InputError(f"{where} has no \"kind\"", file=file)
    steps_raw = raw.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise InputError(f"{where} has no \"steps\"", file=file)
    params = raw.get("params") if isinstance(raw.get("params"), dict) else {}
    inputs = {}
    if not isinstance(raw.get("inputs", {}), dict):
        raise InputError(f"{where}: \"inputs\" must be an object of named matrices", file=file)
    for name, q in (raw.get("inputs") or {}).items():
        inputs[name] = _key_matrix(q, f"{where}, input {name}", file)[1]
    steps = []
    for s in steps_raw:
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            raise InputError(f"{where}: a step has no \"name\"", file=file)
        if isinstance(s.get("written"), str) and s["written"]:  # words, no matrix: for a person
            steps.append(KeyStep(s["name"], str(s.get("title", "")), np.zeros((0, 0)), [], written=s["written"]))
            continue
        exact, arr = _key_matrix(s, f"{where}, step {s['name']}", file)
        steps.append(KeyStep(s["name"], str(s.get("title", "")), arr, exact, bool(s.get("rounded")), budget=budget))
    return KeyProblem(number, raw["kind"], params, inputs, steps)


# ---------------------------------------------------------------- answer files
@dataclass
class Answers:
    """An answer file, read but not yet parsed: raw matrices per problem and step."""

    path: str
    problems: dict[int | None, dict[str, list[list[Any]]]]  # None: the one-problem form
    variant: str | None = None
    student: str | None = None


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
        raise InputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         file=label) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", file=label) from None
    except RecursionError:
        raise InputError("too deeply nested", file=label) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits, NaN
        reason = "a number is too long" if "digits" in str(exc) else str(exc)[:80]
        raise InputError(f"cannot read: {reason}", file=label) from None
    if not isinstance(table, dict):
        raise InputError("the file must hold one table of steps (step name = matrix)", file=label)
    return _answers_from_table(table, label)


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
            raise InputError("mixes numbered problems with step names at the top level; put every "
                             "step under its problem's number, e.g. [1]", file=label, field=_clip(other[0]))
        if len(numbered) > MAX_PROBLEMS:
            raise InputError(f"more than {MAX_PROBLEMS} problems", file=label)
        for k in numbered:
            if not isinstance(table[k], dict):
                raise InputError("a problem must be a table of steps (step name = matrix)",
                                 file=label, field=f"problem {int(k)}")
            problems[int(k)] = _flatten(table[k], label, f"problem {int(k)}")
    else:
        problems[None] = _flatten(table, label, None)
    return Answers(label, problems, meta.get("variant"), meta.get("student"))


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


def _read_csv(text: str, label: str) -> Answers:
    rows = csv.reader(io.StringIO(text))
    header = None
    cells: dict[int | None, dict[str, dict[tuple[int, int], str]]] = {}
    meta: dict[str, str] = {}
    try:
        for line in rows:
            lineno = rows.line_num
            if not line or all(not c.strip() for c in line) or line[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = _csv_header(line, label)
                continue
            get = {k: (line[i].strip() if i < len(line) else "") for k, i in header.items()}
            where = f"line {lineno}"
            step = get["step"]
            if step in _META:
                meta[step] = _meta(get["value"], step, label)
                continue
            if not step:
                raise InputError(f"{where}: no step name", file=label)
            if len(step) > MAX_NAME:
                raise InputError(f"{where}: step name too long", file=label)
            prob = get.get("problem", "")
            if prob and not _PROBLEM_NO.fullmatch(prob):
                raise InputError(f"{where}: problem must be a number 1, 2, ..., not {_show(prob)}",
                                 file=label)
            number = int(prob) if prob else None
            r, c = (_csv_index(get[k], k, where, label) for k in ("row", "col"))
            entries = cells.setdefault(number, {})
            if len(cells) > MAX_PROBLEMS:
                raise InputError(f"more than {MAX_PROBLEMS} problems", file=label)
            m = entries.setdefault(step, {})
            if len(entries) > MAX_STEPS:
                raise InputError(f"more than {MAX_STEPS} steps", file=label)
            if (r, c) in m:
                raise InputError(f"{where}: a second entry for row {r}, column {c}", file=label,
                                 field=_clip(step))
            m[(r, c)] = get["value"]
    except csv.Error as exc:
        raise InputError(f"invalid CSV at line {rows.line_num}: {exc}", file=label) from None
    if header is None:
        raise InputError("empty CSV: expected a header row problem,step,row,col,value", file=label)
    if None in cells and len(cells) > 1:
        raise InputError("some lines give a problem number and some do not", file=label)
    problems = {}
    for number, steps in cells.items():
        problems[number] = {}
        for step, m in steps.items():
            n_rows = max(r for r, _ in m)
            n_cols = max(c for _, c in m)
            for r in range(1, n_rows + 1):
                for c in range(1, n_cols + 1):
                    if (r, c) not in m:
                        raise InputError("no entry (every entry of the matrix needs a line)", file=label,
                                         field=_step_field(number, step), row=r, col=c)
            problems[number][step] = [[m[(r, c)] for c in range(1, n_cols + 1)]
                                      for r in range(1, n_rows + 1)]
    return Answers(label, problems, meta.get("variant"), meta.get("student"))


def _csv_header(line: list[str], label: str) -> dict[str, int]:
    names = [c.strip().lower() for c in line]
    aliases = {"column": "col", "entry": "value", "answer": "value"}
    names = [aliases.get(n, n) for n in names]
    need = ("step", "row", "col", "value")
    missing = [n for n in need if n not in names]
    if missing:
        raise InputError("the first line must be a header naming the columns "
                         f"problem,step,row,col,value (missing {', '.join(missing)})", file=label)
    return {n: names.index(n) for n in ("problem", *need) if n in names}


def _csv_index(text: str, name: str, where: str, label: str) -> int:
    if not re.fullmatch(r"[0-9]{1,3}", text) or not 1 <= int(text) <= MAX_SIZE:
        word = "row" if name == "row" else "column"
        raise InputError(f"{where}: the {word} must be a number from 1 to {MAX_SIZE}, not {_show(text)}",
                         file=label)
    return int(text)


def _step_field(number: int | None, step: str) -> str:
    return _clip(step) if number is None else f"problem {number}, {_clip(step)}"


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
            raise InputError(f"ragged rows: row 1 has {width} entries, row {i} has {len(row)}",
                             file=file, field=where, row=i)
        for j, x in enumerate(row, start=1):
            if isinstance(x, (list, dict)):
                raise InputError("an entry must be a number, not a list or table", file=file,
                                 field=where, row=i, col=j)
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


def _given(x: Any, labels: bool, budget: Budget | None = None) -> Given:
    """Parse one answer entry (ValueError with a short reason)."""
    text = _entry_text(x)
    if text in _NON_FINITE and not labels:
        raise ValueError(f"not a finite number: {text}")
    try:
        value = parse_exact(text, budget)
    except ValueError as exc:
        if labels and text.strip() and len(text) <= MAX_LABEL:
            return Given(text, label=text.strip())
        raise exc
    if isinstance(value, NegInf):
        return Given(text, neg_inf=True)
    return Given(text, _mp(value), format_decimal_places(text))


# ---------------------------------------------------------------- recomputation
Recompute = Callable[[dict], "dict | None"]


def recomputer(kind_name: str, params: dict, inputs: dict[str, np.ndarray]) -> Recompute | None:
    """``given -> steps`` through the kind's own ``reference(inputs, params, given=...)``
    (the kind contract, :class:`worksheet.kinds.base.KindModule`).

    ``params`` are the key's JSON params, read with
    ``Params.from_options(params, checked=False)`` (the sizes a key records
    may exceed the generation limits).  None when the kind is unknown or
    its params cannot be read: such keys get no carried-forward marks.
    """
    from . import kinds

    try:
        module = kinds.get(kind_name)
        kind_params = module.Params.from_options(params, checked=False)
    except WorksheetError:
        return None
    fn = module.reference

    def run(given: dict) -> dict | None:
        try:
            with np.errstate(all="ignore"):
                out = fn(dict(inputs), kind_params, given=dict(given))
        except Exception:  # a student's odd shapes or values: simply no recomputation
            return None
        try:
            return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}
        except (TypeError, ValueError):
            return None

    return run


# ---------------------------------------------------------------- report model
@dataclass
class Cell:
    """A wrong entry, 1-based."""

    row: int
    col: int
    given: str
    expected: str
    expected_value: float | None

    def to_dict(self) -> dict:
        v = self.expected_value
        return {"row": self.row, "col": self.col, "given": self.given, "expected": self.expected,
                "expected_value": v if v is not None and math.isfinite(v) else None}


@dataclass
class StepResult:
    name: str
    status: str
    mistake: str | None = None
    cells: list[Cell] = field(default_factory=list)  # the first few wrong entries
    wrong_count: int = 0
    against: str = "key"  # "key", or "own": the values carried forward from the student's answers
    carried_from: list[str] = field(default_factory=list)
    given_shape: tuple[int, int] | None = None  # when it differs from the key's
    expected_shape: tuple[int, int] | None = None
    title: str = ""
    out_of: int = 1

    @property
    def marks(self) -> int:
        return self.out_of if self.status in ("correct", "carried-forward") else 0

    @property
    def message(self) -> str:
        """One line for people (without the step name)."""
        if self.status == "correct":
            return "correct"
        if self.status == "missing":
            return "missing"
        if self.status == "by-person":
            return BY_PERSON
        if self.status == "carried-forward":
            if self.carried_from:
                return f"carried forward: follows from your own {', '.join(self.carried_from)}"
            return "carried forward: follows from your own (rounded) earlier answers"
        parts = []
        if self.mistake:
            parts.append(mistakes.CATALOGUE[self.mistake].sentence)
        elif self.wrong_count and self.expected_shape:
            total = self.expected_shape[0] * self.expected_shape[1]
            parts.append(f"incorrect: {self.wrong_count} of {total} entries are wrong.")
        else:
            parts.append("incorrect.")
        if self.given_shape:
            parts.append(f"Your matrix is {self.given_shape[0]} x {self.given_shape[1]}; "
                         f"the key's is {self.expected_shape[0]} x {self.expected_shape[1]}.")
        if self.cells:
            c = self.cells[0]
            whose = " (from your earlier answers)" if self.against == "own" else ""
            parts.append(f"Row {c.row}, column {c.col}: expected {c.expected}{whose}, given {c.given}.")
        return " ".join(parts)

    def to_dict(self) -> dict:
        out = {"name": self.name, "status": self.status, "mistake": self.mistake,
               "message": self.message,
               "wrong_cells": [c.to_dict() for c in self.cells], "wrong_count": self.wrong_count,
               "marks": self.marks, "out_of": self.out_of}
        if self.status == "incorrect":
            out["against"] = "key" if self.against == "key" else "carried-forward"
        if self.status == "carried-forward":
            out["carried_from"] = list(self.carried_from)
        if self.given_shape:
            out["given_shape"] = list(self.given_shape)
            out["expected_shape"] = list(self.expected_shape)
        return out


@dataclass
class ProblemResult:
    number: int
    kind: str
    steps: list[StepResult]
    carried_forward: bool  # the kind supports carried-forward marks

    @property
    def marks(self) -> int:
        return sum(s.marks for s in self.steps)

    @property
    def out_of(self) -> int:
        return sum(s.out_of for s in self.steps)

    def to_dict(self) -> dict:
        return {"problem": self.number, "kind": self.kind,
                "carried_forward_available": self.carried_forward,
                "steps": [s.to_dict() for s in self.steps],
                "marks": self.marks, "out_of": self.out_of}


@dataclass
class Report:
    """The marks of one answer file."""

    key: str
    answers: str
    problems: list[ProblemResult]
    student: str | None = None
    variant: str | None = None

    @property
    def marks(self) -> int:
        return sum(p.marks for p in self.problems)

    @property
    def out_of(self) -> int:
        return sum(p.out_of for p in self.problems)

    @property
    def ok(self) -> bool:
        """Every step correct or carried forward."""
        return all(s.marks == s.out_of for p in self.problems for s in p.steps)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def mistakes(self) -> list[tuple[int, str, str]]:
        """(problem, step, code) of every diagnosed mistake."""
        return [(p.number, s.name, s.mistake) for p in self.problems for s in p.steps if s.mistake]

    def to_dict(self) -> dict:
        return {"key": self.key, "answers": self.answers, "student": self.student,
                "variant": self.variant or None,
                "problems": [p.to_dict() for p in self.problems],
                "marks": self.marks, "out_of": self.out_of}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def text(self) -> str:
        who = f" ({self.student})" if self.student else ""
        lines = [f"Marking {self.answers}{who} against {self.key}"]
        many = len(self.problems) > 1
        for p in self.problems:
            lines.append(f"Problem {p.number}: {p.kind}")
            if not p.carried_forward:
                lines.append("  (no carried-forward marks for this kind yet: steps are marked "
                             "against the key only)")
            width = max(len(s.name) for s in p.steps)
            for s in p.steps:
                lines.append(f"  {SYMBOLS[s.status]} {s.name:<{width}}  {s.message}")
            if many:
                lines.append(f"  marks: {p.marks}/{p.out_of}")
        lines.append(f"Total: {self.marks}/{self.out_of}")
        return "\n".join(map(printable, lines)) + "\n"  # names from files cannot drive the terminal


# ---------------------------------------------------------------- marking
def check_answers(key: Path | str | Key, answers: Path | str | Answers, *, rtol: float | None = None,
                  atol: float | None = None, tolerance: Tolerance | None = None) -> Report:
    """Mark one answer file (or :class:`Answers` already read) against a key
    (a path or a :class:`Key` already read)."""
    tol = tolerance or Tolerance(rtol, atol)
    key = key if isinstance(key, Key) else read_key(key)
    ans = answers if isinstance(answers, Answers) else read_answers(answers)
    try:
        problems = key.problems(ans.variant)
    except InputError as exc:
        if exc.file:  # the key itself is wrong
            raise
        raise InputError(exc.reason, file=ans.path, field=exc.field) from None
    grids = _parse_answers(ans, problems)
    many = len(problems) > 1
    results = [_mark_problem(p, grids.get(p.number, {}), tol, ans.path, many) for p in problems]
    return Report(key.path, ans.path, results, ans.student, ans.variant)


def _parse_answers(ans: Answers, problems: list[KeyProblem]) -> dict[int, dict[str, list[list[Given]]]]:
    """Match the answers to the key's problems and steps, then parse every entry."""
    file = ans.path
    if None in ans.problems:
        if len(problems) > 1:
            if not ans.problems[None]:
                return {}
            raise InputError(f"the key has {len(problems)} problems: put each problem's steps under "
                             "its number, e.g. [1] in TOML or {\"1\": {...}} in JSON", file=file)
        by_number = {1: ans.problems[None]}
    else:
        by_number = ans.problems
    for number in by_number:
        if not 1 <= number <= len(problems):
            raise InputError(f"the key has {len(problems)} problem{'s' * (len(problems) > 1)}, "
                             f"so there is no problem {number}", file=file, field=f"problem {number}")
    many = len(problems) > 1
    raw: dict[int, dict[str, tuple[list, KeyStep, str]]] = {}
    for number, steps in by_number.items():
        kp = problems[number - 1]
        names = [s.name for s in kp.steps]
        for name, value in steps.items():
            where = f"problem {number}, {_clip(name)}" if many else _clip(name)
            if name not in names:
                close_ = difflib.get_close_matches(name, names, n=1)
                hint = (f"; did you mean '{close_[0]}'?" if close_
                        else f"; the steps are {', '.join(names)}")
                raise InputError(f"unknown step{hint}", file=file, field=where)
            if kp.step(name).written:  # a written answer: left to a person, not read
                continue
            rows = _raw_matrix(value, file=file, where=where)
            raw.setdefault(number, {})[name] = (rows, kp.step(name), where)
    budget = Budget(*ANSWER_WORK)
    out: dict[int, dict[str, list[list[Given]]]] = {}
    for number, steps in raw.items():
        for name, (rows, ks, where) in steps.items():
            # the key's strings are read only for an answer of its shape (see _mark_problem)
            labels = len(rows) == ks.shape[0] and len(rows[0]) == ks.shape[1] and ks.labels
            grid = []
            for i, row in enumerate(rows, start=1):
                parsed = []
                for j, x in enumerate(row, start=1):
                    try:
                        parsed.append(_given(x, labels, budget))
                    except ValueError as exc:
                        raise InputError(str(exc), file=file, field=where, row=i, col=j) from None
                grid.append(parsed)
            out.setdefault(number, {})[name] = grid
    return out


def _array(grid: list[list[Given]]) -> np.ndarray:
    return np.array([[g.value for g in row] for row in grid], dtype=np.float64)


def _rounding(grid: list[list[Given]]) -> np.ndarray:
    return np.array([[g.rounding for g in row] for row in grid], dtype=np.float64)


def _shape(grid: list[list[Given]]) -> tuple[int, int]:
    return (len(grid), len(grid[0]))


def _wrong(grid: list[list[Given]], expected, tol: Tolerance,
           slack: np.ndarray | None = None) -> list[tuple[int, int, Expected]] | None:
    """The wrong entries (0-based i, j, expected) against a KeyStep's cells or a float array
    (each entry allowed ``slack[i, j]`` more); None when the shapes differ."""
    if isinstance(expected, np.ndarray):
        if expected.ndim != 2 or expected.shape != _shape(grid):
            return None
        cells = [[_expected_float(float(x)) for x in row] for row in expected]
    else:
        cells = expected
        if (len(cells), len(cells[0])) != _shape(grid):
            return None
    return [(i, j, cells[i][j]) for i, row in enumerate(grid) for j, g in enumerate(row)
            if not close(g, cells[i][j], tol, 0.0 if slack is None else float(slack[i, j]))]


def _cells(grid, wrong) -> list[Cell]:
    out = []
    for i, j, e in wrong[:WRONG_CELLS_SHOWN]:
        shown = e.text
        if e.label is None and e.precise and e.mp is not None and len(shown) <= 40:
            dec = _decimal_text(float(e.mp))
            if dec != shown:
                shown = f"{shown} ≈ {dec}"
        elif len(shown) > 40:
            shown = _decimal_text(float(e.mp)) if e.mp is not None else shown[:37] + "..."
        out.append(Cell(i + 1, j + 1, _shown_entry(grid[i][j].text), shown, e.value))
    return out


class _Own:
    """A student's answers so far, and the values recomputed from them.

    Two ways a student may carry their own values forward: with every earlier
    answer as written (rounded values used by hand), or with only the wrong
    ones (the rest kept at full precision, as with a calculator).  Both are
    recomputed by the kind's reference; :meth:`bases` lists them.
    """

    def __init__(self, kp: KeyProblem, run: Recompute | None):
        self.kp, self.run = kp, run
        self.order = [s.name for s in kp.steps]
        self.answers: dict[str, np.ndarray] = {}
        self.rounding: dict[str, np.ndarray] = {}  # per entry, see Given.rounding
        self.wrong: set[str] = set()  # steps marked incorrect
        self._cache: dict = {}

    def givens(self, k: int) -> list[dict[str, np.ndarray]]:
        """The overrides for recomputing step k: all earlier answers, then only the wrong ones."""
        earlier = self.order[:k]
        out = []
        for g in ({s: self.answers[s] for s in earlier if s in self.answers},
                  {s: self.answers[s] for s in earlier if s in self.wrong}):
            if g and all(set(g) != set(h) for h in out):
                out.append(g)
        return out

    def recompute(self, given: dict[str, np.ndarray]) -> dict | None:
        if self.run is None:
            return None
        key = tuple(sorted((n, id(v)) for n, v in given.items()))
        if key not in self._cache:
            self._cache[key] = (self.run(given), given)  # keep given alive: ids stay unique
        return self._cache[key][0]

    def slack(self, given: dict[str, np.ndarray], step: str) -> np.ndarray | None:
        """How far the rounding of the ``given`` answers can move ``step`` (a linear bound).

        Each rounded entry is moved by its rounding and the changes of
        ``step`` added up (finite differences through the kind's reference).
        With more than SLACK_ENTRIES rounded entries, every entry is moved at
        once with random signs (as rounding errors are), eight times, and the
        largest change, times 3, is the slack: a few recomputations however
        large the problem.
        """
        base = self.recompute(given)
        if base is None or step not in base:
            return None
        entries = [(n, i, j, float(u)) for n in given if n in self.rounding
                   for (i, j), u in np.ndenumerate(self.rounding[n]) if u > 0]
        total = np.zeros_like(base[step])
        if not entries:
            return total

        def moved(changes) -> np.ndarray:
            g = {n: v.copy() for n, v in given.items()}
            for n, i, j, d in changes:
                g[n][i, j] += d
            out = self.run(g)
            if out is None or step not in out or out[step].shape != total.shape:
                return np.full_like(total, np.inf)
            with np.errstate(all="ignore"):
                diff = np.abs(out[step] - base[step])
            return np.where(np.isnan(diff), 0.0, diff)  # -inf stays -inf: no change

        if len(entries) <= SLACK_ENTRIES:
            for e in entries:
                total += moved([e])
            return total * 1.1
        rng = np.random.default_rng(0)
        for _ in range(8):
            signs = rng.choice([-1.0, 1.0], size=len(entries))
            total = np.maximum(total, moved([(n, i, j, s * u) for (n, i, j, u), s in zip(entries, signs)]))
        return total * 3.0

    def bases(self, k: int, key_vals: dict) -> list[tuple[dict, dict]]:
        """(overrides, values) to apply a wrong rule at step k to: the key's, then the student's."""
        out = [({}, key_vals)]
        for g in self.givens(k):
            r = self.recompute(g)
            if r is not None:
                out.append((g, {**self.kp.inputs, **r}))
        return out


def _mark_problem(kp: KeyProblem, grids: dict[str, list[list[Given]]], tol: Tolerance,
                  file: str, many: bool = False) -> ProblemResult:
    run = recomputer(kp.kind, kp.params, kp.inputs)
    key_vals = {**kp.inputs, **{s.name: s.value for s in kp.steps}}
    own = _Own(kp, run)
    results: list[StepResult] = []
    for k, ks in enumerate(kp.steps):
        if ks.written:
            results.append(StepResult(ks.name, "by-person", title=ks.title, out_of=0))
            continue
        grid = grids.get(ks.name)
        if grid is None:
            results.append(StepResult(ks.name, "missing", title=ks.title))
            continue
        own.answers[ks.name] = _array(grid)
        own.rounding[ks.name] = _rounding(grid)
        # the key's exact strings are read only for an answer of the key's shape
        wrong_key = _wrong(grid, ks.cells, tol) if _shape(grid) == ks.shape else None
        if wrong_key == []:
            results.append(StepResult(ks.name, "correct", title=ks.title))
            continue
        carried = []  # wrong entries against each recomputation from the student's own answers
        for g in own.givens(k):
            r = own.recompute(g)
            if r is not None and ks.name in r:
                w = _wrong(grid, r[ks.name], tol)
                if w:  # allow for the rounding of the earlier answers it was computed from
                    w = _wrong(grid, r[ks.name], tol, own.slack(g, ks.name))
                carried.append(w)
                if w == []:
                    break
        if [] in carried:
            earlier = [r.name for r in results if r.status == "incorrect"]
            results.append(StepResult(ks.name, "carried-forward", carried_from=earlier, title=ks.title))
            continue
        own.wrong.add(ks.name)
        code = _diagnose(kp, k, grid, key_vals, own, tol)
        res = StepResult(ks.name, "incorrect", mistake=code, title=ks.title, expected_shape=ks.shape)
        nearest = min((w for w in carried if w is not None), key=len, default=None)
        if wrong_key is None:  # a shape the key does not have
            if code is None and nearest is None:
                raise InputError(f"a {_shape(grid)[0]} x {_shape(grid)[1]} matrix, but the key's is "
                                 f"{ks.shape[0]} x {ks.shape[1]}", file=file,
                                 field=f"problem {kp.number}, {ks.name}" if many else ks.name)
            res.given_shape = _shape(grid)
            if nearest:
                res.against, res.cells, res.wrong_count = "own", _cells(grid, nearest), len(nearest)
        elif code == mistakes.SLIP and nearest is not None and len(nearest) == 1 and len(wrong_key) != 1:
            res.against, res.cells, res.wrong_count = "own", _cells(grid, nearest), 1
        else:
            res.cells, res.wrong_count = _cells(grid, wrong_key), len(wrong_key)
        results.append(res)
    return ProblemResult(kp.number, kp.kind, results, run is not None)


def _rules_of(kp: KeyProblem) -> tuple[str, dict, dict]:
    """The kind whose mistake rules explain this problem's steps, its params,
    and aliases of the values the rules read: the problem's own, or those a
    kind names with ``mistakes_of(params, inputs)`` (find-the-mistake: the
    kind its worked solution is of, and the shown steps before the mistake)."""
    from . import kinds

    try:
        module = kinds.get(kp.kind)
    except WorksheetError:
        return kp.kind, kp.params, {}
    hook = getattr(module, "mistakes_of", None)
    return hook(kp.params, kp.inputs) if hook else (kp.kind, kp.params, {})


def _with_aliases(context: dict, aliases: dict) -> dict:
    if not aliases:
        return context
    return {**context, "aliases": {**aliases, **context.get("aliases", {})}}


def _diagnose(kp: KeyProblem, k: int, grid, key_vals: dict, own: _Own, tol: Tolerance) -> str | None:
    """The mistake that explains the answer to step k, or None.

    Mistakes of step k itself are tried first, then those of earlier steps
    (nearest first) followed into step k by recomputation; each applied to
    the key's values and to the student's own (:meth:`_Own.bases`).  A rule
    that gives the right value on a base (``sqrt(d_model)`` when it equals
    ``sqrt(d_k)``) is no mistake there.  Then an arithmetic slip: exactly one
    entry wrong against the key or against the student's own values.
    """
    order = own.order
    step = order[k]
    kind, params, aliases = _rules_of(kp)
    for o in range(k, -1, -1):
        origin = order[o]
        found = mistakes.rules(kind, origin)
        if not found:
            continue
        bases = own.bases(o, key_vals)
        for code, rule, context in found:
            for given, vals in bases:
                try:
                    with np.errstate(all="ignore"):
                        wrong = rule(mistakes.Values(vals, **_with_aliases(context, aliases)), params)
                except (KeyError, ValueError, IndexError, TypeError):
                    continue
                if wrong is None:
                    continue
                wrong = np.asarray(wrong, dtype=np.float64)
                right = vals.get(origin)
                if right is not None and right.shape == wrong.shape and np.allclose(
                        right, wrong, rtol=1e-9, atol=1e-12, equal_nan=True):
                    continue  # the rule changes nothing here
                if o == k:
                    candidate = wrong
                else:
                    out = own.recompute({**given, origin: wrong})
                    candidate = out.get(step) if out else None
                if candidate is not None and _wrong(grid, candidate, tol) == []:
                    return code
    if _shape(grid)[0] * _shape(grid)[1] >= 2:
        ks = kp.steps[k]
        wrong_key = _wrong(grid, ks.cells, tol) if _shape(grid) == ks.shape else None
        if wrong_key is not None and len(wrong_key) == 1:
            return mistakes.SLIP
        for g in own.givens(k):
            r = own.recompute(g)
            if r is not None and step in r:
                w = _wrong(grid, r[step], tol)
                if w is not None and len(w) == 1:
                    return mistakes.SLIP
    return None


# ---------------------------------------------------------------- a class folder
@dataclass
class FileResult:
    file: str
    report: Report | None = None
    error: str | None = None


@dataclass
class ClassReport:
    key: str
    folder: str
    files: list[FileResult]
    summary: str | None = None  # where the summary CSV was written

    @property
    def exit_code(self) -> int:
        """0 when every file is readable and fully right, else 1."""
        return 0 if all(f.report is not None and f.report.ok for f in self.files) else 1

    def columns(self) -> list[str]:
        cols: list[str] = []
        for f in self.files:
            if f.report is None:
                continue
            many = len(f.report.problems) > 1
            for p in f.report.problems:
                for s in p.steps:
                    c = f"{p.number}.{s.name}" if many else s.name
                    if c not in cols:
                        cols.append(c)
        return cols

    def summary_csv(self) -> str:
        """file, student, variant, status, marks per step, total, out_of, mistakes, error."""
        cols = self.columns()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["file", "student", "variant", "status", *cols, "total", "out_of", "mistakes", "error"])
        for f in self.files:
            r = f.report
            if r is None:
                w.writerow([_cell(f.file), "", "", "error", *([""] * len(cols)), "", "", "", _cell(f.error)])
                continue
            many = len(r.problems) > 1
            marks = {(f"{p.number}.{s.name}" if many else s.name): s.marks
                     for p in r.problems for s in p.steps}
            found = "; ".join(f"{p}.{s}: {c}" if many else f"{s}: {c}" for p, s, c in r.mistakes())
            status = "correct" if r.ok else "marked"
            w.writerow([_cell(f.file), _cell(r.student or ""), _cell(r.variant or ""), status,
                        *(marks.get(c, "") for c in cols), r.marks, r.out_of, _cell(found), ""])
        return buf.getvalue()

    def to_dict(self) -> dict:
        return {"key": self.key, "folder": self.folder, "summary": self.summary,
                "files": [{"file": f.file, "error": f.error,
                           "report": f.report.to_dict() if f.report else None} for f in self.files]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def text(self) -> str:
        width = max((len(f.file) for f in self.files), default=4)
        lines = [f"Marking {len(self.files)} answer file{'s' * (len(self.files) != 1)} in "
                 f"{self.folder} against {self.key}"]
        for f in self.files:
            if f.report is None:
                lines.append(f"  {f.file:<{width}}  error: {f.error}")
                continue
            r = f.report
            bad = [f"{s.name} {s.status}" + (f" ({s.mistake})" if s.mistake else "")
                   for p in r.problems for s in p.steps if s.marks < s.out_of]
            lines.append(f"  {f.file:<{width}}  {r.marks}/{r.out_of}" + (f"  {'; '.join(bad)}" if bad else ""))
        if self.summary:
            lines.append(f"wrote {self.summary}")
        return "\n".join(map(printable, lines)) + "\n"  # names from files cannot drive the terminal


def _cell(text: str | None) -> str:
    """A CSV cell of untrusted text that a spreadsheet will not run as a formula."""
    text = text or ""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def answer_files(folder: Path | str, *, skip: Sequence[Path] = ()) -> list[Path]:
    """The answer files of a folder: *.toml, *.json, *.csv, not hidden, by name."""
    folder = Path(folder)
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(f"cannot read the folder ({exc.strerror or exc})", file=str(folder)) from None
    skipped = {p.resolve() for p in skip}
    return [p for p in entries
            if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in FOLDER_SUFFIXES
            and p.resolve() not in skipped]


def check_folder(key: Path | str, folder: Path | str, *, summary: Path | str | None = None,
                 force: bool = False, write: bool = True, rtol: float | None = None,
                 atol: float | None = None) -> ClassReport:
    """Mark every answer file in ``folder``; write the class summary CSV.

    ``summary`` defaults to ``folder/summary.csv`` (never read as an answer
    file); an existing summary is kept unless ``force``.  A file that cannot
    be read is reported with its error and the others are still marked.
    """
    from .files import write_all

    tol = Tolerance(rtol, atol)
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder", file=str(folder))
    summary_path = Path(summary) if summary is not None else folder / "summary.csv"
    if write and summary_path.exists() and not force:
        raise OutputError(f"{summary_path} already exists; use --force to overwrite")
    k = read_key(key)
    files = answer_files(folder, skip=[Path(key), summary_path])
    if not files:
        raise InputError("no answer files (*.toml, *.json, *.csv) in the folder", file=str(folder))
    results = []
    for path in files:
        try:
            results.append(FileResult(path.name, report=check_answers(k, path, tolerance=tol)))
        except WorksheetError as exc:
            results.append(FileResult(path.name, error=str(exc)))
        except Exception as exc:  # one odd file must not stop a class's marking
            results.append(FileResult(path.name, error=f"could not be marked ({type(exc).__name__})"))
    report = ClassReport(k.path, str(folder), results)
    if write:
        write_all({summary_path: report.summary_csv()}, force=True)
        report.summary = str(summary_path)
    return report


class _CallableModule(types.ModuleType):
    """``worksheet.check(problem, answers)`` (see :func:`worksheet.api.check`):
    importing this module sets the package's attribute ``check`` to it, so the
    module itself is what that call reaches."""

    def __call__(self, problem, answers):
        from .api import check

        return check(problem, answers)


sys.modules[__name__].__class__ = _CallableModule
