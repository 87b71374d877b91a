"""Blocks shared by the layer kinds (multi-head-attention, positional-encoding,
layer-norm, feed-forward, encoder-block): the entrywise sum step, rounding,
and the :class:`Carry` rule by which a long chain carries its values.

Kinds reach these names through :mod:`worksheet.steps.scaled_dot_product` (``blocks.Carry``,
``blocks.sum_step``, ...); the worked-line helpers they use with them
(``work_term``, ``work_result``, ``dot_work``) are in :mod:`worksheet.steps.line_trees`,
and as trees in :mod:`worksheet.steps.line_trees`.  :func:`sum_step` writes its
worked line as a tree (:mod:`worksheet.solution.maths`); its symbols may be
trees or LaTeX.
"""

from __future__ import annotations

import dataclasses as _dataclasses
from fractions import Fraction

from ..exact import NegInf, add
from ..exact.rounding import round_scaled
from ..exact import to_str as _to_str
from .linalg import add_row, entrywise
from ..solution.maths import Maths, Row, as_tree
from ..solution.maths.build import entry as _vector_entry
from ..solution.maths.build import line
from ..solution.problem import Matrix, Problem, shape, shows_exact
from ..solution.problem import verify as _verify
from .line_trees import entry, work_result, work_term
from .standard_tables import GRID_DRIFT
from .line_choices import SHORT, sum_entry

__all__ = ["sum_step", "round_exact", "round_matrix", "Carry", "carried", "grid_drift", "relabel_last"]


def sum_step(
    p: Problem,
    name: str,
    A: Matrix,
    B: Matrix,
    value,
    *,
    title: str,
    formula: Maths,
    sym: Maths,
    a_sym: Maths,
    b_sym: Maths,
    rows=None,
    cols=None,
    latex_name: Maths | None = None,
    note: str = "",
    entry_at: tuple[int, int] | None = None,
    places: int | None = None,
) -> Matrix:
    """A step ``C = A + B`` (entrywise; a one-row ``B`` is added to every row), one
    entry worked: ``entry_at``, else one whose result and terms are not 0 (:func:`sum_entry`);
    ``places``: a carried chain's decimals print with that many places."""
    C = add_row(A, B) if shape(B)[0] == 1 and shape(A)[0] != 1 else entrywise(add, A, B)
    i, j = entry_at or sum_entry(A, B, C)
    b = B[0][j] if shape(B)[0] == 1 else B[i][j]
    b_entry = _vector_entry(as_tree(b_sym), j) if shape(B)[0] == 1 and shape(A)[0] != 1 else entry(b_sym, i, j)
    (sa, ra), (sb, rb) = work_term(A[i][j], places=places), work_term(b, places=places)
    res = work_result(C[i][j], places=places)
    rel = "≈" if ra or rb else "="
    if rel == "≈" and res.items[0] == line("=").items[0]:
        res = line("≈", Row(res.items[1:]))
    work = [line(entry(sym, i, j), "=", entry(a_sym, i, j), "+", b_entry, rel, sa, "+", sb, res)]
    p.add_step(
        name, C, value, title=title, formula=formula, work=work, rows=rows, cols=cols, latex_name=latex_name, note=note
    )
    return C


def round_exact(x, places: int = 4) -> Fraction:
    """``x`` rounded to ``places`` decimals, half away from zero, as a Fraction.

    Decided exactly for every value (rationals with integers, others by
    :func:`worksheet.exact.rounding.round_scaled`), never through a float.
    """
    return Fraction(round_scaled(x, places), 10**places)


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
        # hand mode: the values of the rounding chain (table values, worksheet.policy.pencil), else the exact rounded
        R = s.chain if s.chain is not None and self.places == 4 else round_matrix(s.exact, self.places)
        _verify(f"{p.kind}.{s.name}", R, s.value, rounded=True, drift=grid_drift(p), rtol=grid_drift(p))
        p.steps[-1] = _dataclasses.replace(
            s, exact=R, rounded=True, places=self.places, exact_shown=shows_exact(R, p.params.get("numbers", "hand"))
        )
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


def grid_drift(p: Problem) -> float:
    """How far a carried step may drift: 5e-3, or :data:`GRID_DRIFT` once the problem
    reads a standard table of every 0.01 (its values are read at rounded arguments)."""
    return GRID_DRIFT if any(a.grid for a in p.aids) else 5e-3
