"""Blocks shared by the layer kinds (multi-head-attention, positional-encoding,
layer-norm, feed-forward, encoder-block): numbers inside worked lines, sums,
rounding, and the :class:`Carry` rule by which a long chain carries its values.

Split from :mod:`worksheet.blocks`, which re-exports every name here (kinds
call ``blocks.work_term``, ``blocks.Carry``, ...).
"""

from __future__ import annotations

import dataclasses as _dataclasses
import math as _math
from fractions import Fraction
from typing import Sequence

from .exact import NegInf, add, is_rational, to_latex
from .exact import to_str as _to_str
from .fmt import terminating_places as _terminating_places
from .model import Matrix, Problem, shape, shows_exact
from .model import verify as _verify
from .worklines import approx, entry, join_terms, lx, terms_count

SHORT = 40  # an exact entry "reads well" while its str() has at most this many characters


def add_row(A: Matrix, b: Matrix) -> Matrix:
    """``A + b``: the one-row matrix ``b`` added to every row of ``A`` (a bias)."""
    (row,) = b
    return tuple(tuple(add(x, y) for x, y in zip(r, row)) for r in A)


def work_term(x, limit: int = SHORT) -> tuple[str, bool]:
    """LaTeX of one number inside a worked line, and whether it was rounded.

    Integers print as integers, terminating rationals as decimals (as the
    sheet prints given numbers: ``0.75``, and the 4-place values a long chain
    carries), other rationals as fractions (``\\frac{1}{3}``); short
    irrational values exactly (``\\sin\\left(1\\right)``); anything longer as
    4 decimals (then the line says ``\\approx``).  Negative numbers and sums
    come in parentheses, ready for a product.
    """
    if isinstance(x, NegInf):
        return r"(-\infty)", False
    if is_rational(x):
        q = Fraction(x)
        places = _terminating_places(q)
        if q.denominator > 1 and places is not None:
            s = f"{float(q):.{places}f}"
            return (f"({s})" if q < 0 else s), False
        return lx(q), False
    if len(_to_str(x)) <= limit:
        s = to_latex(x)
        return (rf"\left({s}\right)" if " " in s or s.startswith("-") else s), False
    s = approx(x)
    return (f"({s})" if s.startswith("-") else s), True


def work_result(x, limit: int = SHORT) -> str:
    """``= value`` for the end of a worked line: exact when short, else ``\\approx`` 4 decimals."""
    if isinstance(x, NegInf) or (is_rational(x) and len(_to_str(x)) <= limit):
        s, _ = work_term(x, limit)
        return "= " + (s[1:-1] if s.startswith("(") and s.endswith(")") else s)
    if len(_to_str(x)) <= limit:
        return f"= {to_latex(x)} \\approx {approx(x)}"
    return f"\\approx {approx(x)}"


def dot_work(lhs: str, a: Sequence, b: Sequence, result, *, plus=None, limit: int = SHORT) -> str:
    """``lhs = a_1 b_1 + a_2 b_2 + ... (+ plus) = result``, one worked entry of a product.

    Numbers print as :func:`work_term` says (``limit=0``: every irrational
    number as 4 decimals); if any is rounded the line uses ``\\approx``.
    """
    rounded = False
    terms = []
    for x, y in zip(a, b):
        (sx, rx), (sy, ry) = work_term(x, limit), work_term(y, limit)
        rounded = rounded or rx or ry
        terms.append(f"{sx} \\cdot {sy}")
    if plus is not None:
        s, r = work_term(plus, limit)
        rounded = rounded or r
        terms.append(s)
    res = work_result(result, 0 if rounded else limit)
    if rounded and res.startswith("= "):
        res = "\\approx " + res[2:]
    rel = "\\approx" if rounded else "="
    return f"{lhs} {rel} {join_terms(terms)} {res}{terms_count(len(terms))}"


def sum_step(p: Problem, name: str, A: Matrix, B: Matrix, value, *, title: str, formula: str,
             sym: str, a_sym: str, b_sym: str, rows=None, cols=None, latex_name: str | None = None,
             note: str = "", entry_at: tuple[int, int] | None = None) -> Matrix:
    """A step ``C = A + B`` (entrywise; a one-row ``B`` is added to every row), one entry worked."""
    from .blocks import entrywise  # blocks imports this module

    C = add_row(A, B) if shape(B)[0] == 1 and shape(A)[0] != 1 else entrywise(add, A, B)
    i, j = entry_at or (0, 0)
    b = B[0][j] if shape(B)[0] == 1 else B[i][j]
    b_entry = f"{b_sym}_{{{j + 1}}}" if shape(B)[0] == 1 and shape(A)[0] != 1 else entry(b_sym, i, j)
    (sa, ra), (sb, rb) = work_term(A[i][j]), work_term(b)
    res = work_result(C[i][j])
    if (ra or rb) and res.startswith("= "):
        res = "\\approx " + res[2:]
    rel = "\\approx" if ra or rb else "="
    work = [f"{entry(sym, i, j)} = {entry(a_sym, i, j)} + {b_entry} {rel} {sa} + {sb} {res}"]
    p.add_step(name, C, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               latex_name=latex_name, note=note)
    return C


def round_exact(x, places: int = 4) -> Fraction:
    """``x`` rounded to ``places`` decimals, half away from zero, as a Fraction.

    Rationals are rounded exactly; other values through their float64 value.
    """
    scale = 10**places
    if is_rational(x):
        q = abs(Fraction(x)) * scale
        k = _math.floor(q + Fraction(1, 2))
        return Fraction(k if x >= 0 else -k, scale)
    v = float(x)
    k = _math.floor(abs(v) * scale + 0.5)
    return Fraction(k if v >= 0 else -k, scale)


def round_matrix(M: Matrix, places: int = 4) -> Matrix:
    """Every entry rounded by :func:`round_exact` (-oo stays -oo)."""
    return tuple(tuple(x if isinstance(x, NegInf) else round_exact(x, places) for x in row) for row in M)


@_dataclasses.dataclass
class Carry:
    """How a long chain (the encoder block) carries its values from step to step.

    A step keeps its exact value while every entry reads well (its ``str`` has
    at most ``limit`` characters) and nothing before it was rounded.  From the
    first step that fails this, the step shows -- and the chain goes on
    with -- every entry rounded to ``places`` decimals (a Fraction), and that
    step and every later one is marked ``rounded``.  Kinds that accept a
    ``carry`` call :meth:`after` on each step they add, and compute the float
    value of a step from the carried values once :attr:`rounding` is on.
    """

    limit: int = SHORT
    places: int = 4
    rounding: bool = False  # True once a value has been rounded

    def readable(self, M: Matrix) -> bool:
        return all(isinstance(x, NegInf) or len(_to_str(x)) <= self.limit for row in M for x in row)

    def after(self, p: Problem) -> Matrix:
        """Apply the rule to the step just added to ``p``; the matrix to carry on with."""
        s = p.steps[-1]
        if not self.rounding and self.readable(s.exact):
            return s.exact
        self.rounding = True
        R = round_matrix(s.exact, self.places)
        _verify(f"{p.kind}.{s.name}", R, s.value, rounded=True)
        p.steps[-1] = _dataclasses.replace(s, exact=R, rounded=True, places=self.places,
                                           exact_shown=shows_exact(R, p.params.get("numbers", "hand")))
        return R


def carried(carry: "Carry | None", fresh, reference):
    """The float value of a step: ``reference`` (the independent chain) until
    ``carry`` has rounded something, then ``fresh()`` (recomputed in float64
    from the carried, rounded values, so the step's own arithmetic is checked).
    """
    return fresh() if carry is not None and carry.rounding else reference


def relabel_last(p: Problem, **changes) -> None:
    """Change the title, symbol or note of the step just added (e.g. one made by a block)."""
    p.steps[-1] = _dataclasses.replace(p.steps[-1], **changes)


def busiest_entry(A: Matrix, B: Matrix) -> tuple[int, int]:
    """The (i, j) of ``A B`` whose dot product has the most non-zero terms (the
    first such), so that a worked entry shows real arithmetic."""
    best, at = -1, (0, 0)
    for i, row in enumerate(A):
        for j in range(len(B[0])):
            k = sum(1 for x, r in zip(row, B) if x != 0 and r[j] != 0)
            if k > best:
                best, at = k, (i, j)
    return at
