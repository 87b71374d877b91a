"""The arguments of the library's public functions, checked at the door.

``worksheet.problem``, ``solve``, ``check``, ``build_document``,
``solve_inputs``, ``solve_file`` and ``Problem.step`` take values from
notebooks: anything may arrive.  Here each is turned into what an input or
answer file would hold (lists of rows of ints and exact text), or refused
with one line that names the argument:

* a wrong type (a kind name where a problem is expected, ``None`` where a
  table of matrices is expected, a matrix nested three deep or holding
  itself, a 3-dimensional array) is an :class:`~worksheet.errors.ArgumentError`
  (a ``TypeError``);
* a value of the right type that cannot be read (``"abc"`` as an entry,
  NaN, infinity, a complex number) is left to the readers every input file
  goes through, which raise :class:`~worksheet.errors.InputError` (a
  ``ValueError``) naming the matrix, row and column.

Numbers: ints stay ints; ``Fraction`` becomes ``"p/q"``; a float (numpy's too,
``np.longdouble`` included) becomes its shortest text, so ``0.1`` is 1/10;
``Decimal`` its exact text; ``-inf`` becomes ``-oo`` (a masked entry in
answers).  No value is ever evaluated, and no recursion depends on the
input: nesting is bounded (a matrix is at most a list of rows) and a list
that holds itself is refused.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from numbers import Integral
from typing import Any, Mapping

from ..policy.errors import ArgumentError
from ..policy.integer_text import shown

MAX_ITEMS = 100_000  # entries one argument may hold (input limits are far lower; this bounds the copying)


def text_argument(value: Any, name: str, what: str = "text") -> str:
    """``value`` if it is a ``str``; otherwise an ArgumentError naming ``name``."""
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be {what}, not {_kind_of(value)}")
    return value


def kind_argument(value: Any, name: str = "kind") -> str:
    """A kind name (text such as ``"attention"``)."""
    return text_argument(value, name, "the name of a problem kind, e.g. 'attention'")


def mapping_argument(value: Any, name: str, what: str) -> Mapping:
    """A mapping with text keys (``{"X": [[1, 0]]}``)."""
    if not isinstance(value, Mapping):
        raise ArgumentError(f"{name} must be {what}, not {_kind_of(value)}")
    for key in value:
        if not isinstance(key, str):
            raise ArgumentError(f"{name} must have text keys (names), not {_kind_of(key)}")
    return value


def problem_argument(value: Any, name: str = "p"):
    """A :class:`~worksheet.model.Problem`."""
    from ..solution.problem import Problem

    if isinstance(value, Problem):
        return value
    hint = f"; build it first, e.g. worksheet.problem({value!r})" if isinstance(value, str) and len(value) < 40 else ""
    raise ArgumentError(
        f"{name} must be a Problem (from worksheet.problem or worksheet.solve), not {_kind_of(value)}{hint}"
    )


def matrix_argument(m: Any, name: str) -> Any:
    """A matrix as a file would give it: a number (1 x 1), a row, or a list of
    rows of numbers; numpy arrays and sympy matrices become lists first."""
    if hasattr(m, "tolist") and not isinstance(m, (str, bytes)):
        ndim = getattr(m, "ndim", None)
        if ndim is not None and ndim > 2:
            raise ArgumentError(f"{name} must be a matrix (rows of numbers), not a {ndim}-dimensional array")
        try:
            m = m.tolist()
        except (TypeError, ValueError, AttributeError):
            raise ArgumentError(f"{name} must be a matrix (rows of numbers), not {_kind_of(m)}") from None
    if not isinstance(m, (list, tuple)):
        return entry_value(m, name)
    _bounded(m, name)
    rows = []
    for i, row in enumerate(m, 1):
        if hasattr(row, "tolist") and not isinstance(row, (str, bytes)):
            row = row.tolist()
        if isinstance(row, (list, tuple)):
            cells = []
            for j, x in enumerate(row, 1):
                if isinstance(x, (list, tuple, Mapping)) or (hasattr(x, "ndim") and getattr(x, "ndim", 0) > 0):
                    raise ArgumentError(
                        f"{name} row {i}, column {j} must be a number, not {_kind_of(x)} "
                        f"(a matrix is a list of rows of numbers)"
                    )
                cells.append(entry_value(x, f"{name} row {i}, column {j}"))
            rows.append(cells)
        elif isinstance(row, Mapping):
            raise ArgumentError(f"{name} row {i} must be a row of numbers, not {_kind_of(row)}")
        else:
            rows.append(entry_value(row, f"{name} entry {i}"))
    return rows


def exact_matrix_argument(m: Any, name: str) -> tuple:
    """An exact matrix (``solve_inputs``): rows of the same length, each entry an
    int, a Fraction or one of worksheet's exact values; other numbers are read
    exactly as an input file's are (``0.2`` is 1/5)."""
    from ..exact import NegInf
    from ..exact.nodes import Expr
    from . import exact_from_json
    from ..policy.errors import InputError

    from ..policy.integer_text import digit_limit, too_long

    rows = matrix_argument(m, name) if not _exact_rows(m) else m
    if not isinstance(rows, (list, tuple)):
        rows = [[rows]]
    if not all(isinstance(r, (list, tuple)) for r in rows):
        rows = [rows]
    if not rows or not rows[0]:
        raise ArgumentError(f"{name} must be a matrix with at least one entry, not an empty list")
    width = len(rows[0])
    out = []
    for i, row in enumerate(rows, 1):
        if len(row) != width or not row:
            raise ArgumentError(
                f"{name} must be a matrix with rows of one length; row 1 has {width} entries, row {i} has {len(row)}"
            )
        cells = []
        for j, x in enumerate(row, 1):
            if (
                isinstance(x, (int, Fraction))
                and not isinstance(x, bool)
                and (too_long(Fraction(x).numerator) or too_long(Fraction(x).denominator))
            ):
                raise InputError(f"a number of more than the limit of {digit_limit()} digits", field=name, row=i, col=j)
            if isinstance(x, (Fraction, Expr, NegInf)) or (isinstance(x, int) and not isinstance(x, bool)):
                cells.append(Fraction(x) if isinstance(x, int) else x)
                continue
            try:
                cells.append(exact_from_json(entry_value(x, name)))
            except ValueError as exc:
                raise InputError(str(exc), field=name, row=i, col=j) from None
        out.append(tuple(cells))
    return tuple(out)


def _exact_rows(m: Any) -> bool:
    """Rows (tuples or lists) of exact values already: taken as they are."""
    from ..exact import NegInf
    from ..exact.nodes import Expr

    return (
        isinstance(m, (list, tuple))
        and bool(m)
        and len(m) <= MAX_ITEMS
        and all(
            isinstance(r, (list, tuple))
            and r is not m
            and len(r) <= MAX_ITEMS
            and all(isinstance(x, (int, Fraction, Expr, NegInf)) and not isinstance(x, bool) for x in r)
            for r in m
        )
    )


def _bounded(m: list | tuple, name: str) -> None:
    if len(m) > MAX_ITEMS:
        raise ArgumentError(f"{name} has {len(m)} rows; a matrix has far fewer")
    total = 0
    for row in m:
        if row is m:
            raise ArgumentError(f"{name} is a list that holds itself, not a matrix")
        if isinstance(row, (list, tuple)):
            total += len(row)
            if total > MAX_ITEMS:
                raise ArgumentError(f"{name} has more than {MAX_ITEMS} entries; a matrix has far fewer")
            if any(x is row or x is m for x in row):
                raise ArgumentError(f"{name} is a list that holds itself, not a matrix")


def entry_value(x: Any, name: str) -> Any:
    """One number as a file would give it (see the module docstring); other
    values pass unchanged, for the reader to name what it cannot take."""
    if getattr(x, "ndim", 0):
        raise ArgumentError(f"{name} must be a single value, not a {x.ndim}-dimensional array")
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, Integral):
        return int(x)
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    if isinstance(x, Decimal):
        return str(x) if x.is_finite() else str(x).lower()
    if isinstance(x, float):
        return "-oo" if x == float("-inf") else repr(x)
    dtype = getattr(x, "dtype", None)
    if dtype is not None and getattr(dtype, "kind", "") == "f":  # numpy floats, longdouble included
        import numpy as np

        v = float(x) if dtype.itemsize <= 8 else None
        if v is not None:
            return entry_value(v, name)
        if np.isneginf(x):
            return "-oo"
        return np.format_float_positional(x, unique=True, trim="-") if np.isfinite(x) else str(x)
    if dtype is not None and hasattr(x, "item"):  # other numpy scalars (complex, ...)
        item = x.item()
        return item if type(item) is type(x) else entry_value(item, name)
    if getattr(x, "is_Number", False) or getattr(x, "free_symbols", None) == set():  # a sympy number
        return str(x)
    if isinstance(x, (list, tuple, dict, set)):
        raise ArgumentError(f"{name} must be a single value, not {_kind_of(x)}")
    return x


def option_value(x: Any, name: str) -> Any:
    """A keyword setting (``causal=True``, ``tokens=[...]``, ``eps=0.1``) as a file would give it."""
    if getattr(x, "ndim", 0) and hasattr(x, "tolist"):  # an array of labels or numbers
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        if len(x) > MAX_ITEMS:
            raise ArgumentError(f"{name} has {len(x)} items; too many")
        out = []
        for k, v in enumerate(x, 1):
            if v is x or isinstance(v, (list, tuple, dict, set)):
                raise ArgumentError(f"{name} item {k} must be a single value, not {_kind_of(v)}")
            out.append(entry_value(v, f"{name} item {k}"))
        return out
    if isinstance(x, (dict, set)):
        raise ArgumentError(f"{name} must be a single value or a list, not {_kind_of(x)}")
    return entry_value(x, name)


def _kind_of(value: Any) -> str:
    """What ``value`` is, for a message: its type and a short view of it."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"the text {shown(value, 40)}"
    if isinstance(value, (list, tuple, dict, set)):
        return f"a {type(value).__name__}"
    return f"{shown(value, 40)} ({type(value).__name__})"
