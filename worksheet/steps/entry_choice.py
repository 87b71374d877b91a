"""Which entry of a step the key works out, and working out a better one:
an entry that is 0, or a sum of zeros, teaches nothing (used by multi-head
attention, whose heads are small and often have such entries).

The other choices live beside the step builders that use them:
:func:`worksheet.steps.line_choices.nonzero_entry`, ``busiest_entry`` and
``sum_entry`` (an entrywise sum: no 0 result, no 0 term),
:func:`worksheet.steps.scaled_dot_product.teaching_row` (a softmax row whose
scores vary and whose maximum is not 0), and the layer-norm kind's worked row
(a non-zero mean).  ``tests/test_entry_choice.py`` audits every kind's worked
lines over many seeds for trivial entries.
"""

from __future__ import annotations

from fractions import Fraction

from ..exact import NegInf, is_rational, sqrt
from ..solution.maths import Maths
from ..solution.maths.build import line
from ..solution.maths.nodes import Value
from ..solution.number_format import terminating_places
from ..solution.problem import Matrix, Problem
from . import line_trees as lines
from . import scaled_dot_product as blocks

__all__ = ["teaching_entry", "varied_row", "rework_scaled", "rework_weighted"]


def teaching_entry(A: Matrix, B: Matrix, C: Matrix | None = None) -> tuple[int, int]:
    """The (i, j) of ``C = A B`` to work out on the key: a non-zero entry whose dot
    product has the most non-zero terms (the first such); an entry that is 0
    or a sum of zeros teaches nothing."""
    C = blocks.matmul(A, B) if C is None else C
    best, at = (-1, -1), blocks.busiest_entry(A, B)
    for i, row in enumerate(A):
        for j in range(len(B[0])):
            terms = sum(1 for x, r in zip(row, B) if x != 0 and r[j] != 0)
            score = (C[i][j] != 0, terms)
            if score > best:
                best, at = score, (i, j)
    return at


def varied_row(S: Matrix) -> int | None:
    """The first row whose unmasked scores are not all equal (its weights are
    not 1/n each) and whose maximum is not 0 (``m_i = 0`` subtracts nothing),
    else the first whose scores are not all equal."""
    rows = [[x for x in row if not isinstance(x, NegInf)] for row in S]
    varied = [i for i, live in enumerate(rows) if len(live) > 1 and max(map(float, live)) != min(map(float, live))]
    return next((i for i in varied if blocks.max_not_zero(rows[i])), next(iter(varied), None))


def rework_scaled(p: Problem, S: Matrix, d_k: int, sym: Maths, src_sym: Maths) -> None:
    """Work out a scaled score that is not 0 (a fraction if there is one) instead of s'_12
    (symbols: trees or LaTeX)."""
    out = p.steps[-1].exact
    cells = [(i, j) for i, row in enumerate(out) for j, x in enumerate(row) if x != 0]
    if not cells:
        return
    i, j = min(cells, key=lambda ij: is_rational(out[ij[0]][ij[1]]) and Fraction(out[ij[0]][ij[1]]).denominator == 1)
    worked = blocks.scaled_line(p, S, out, sqrt(d_k), sym, src_sym, i, j)
    own = terminating_places(Fraction(out[i][j])) if is_rational(out[i][j]) else None
    if own is None or own > 4:  # an integer (0 places) or a short decimal is all there is to say
        worked = line(worked, "≈", lines.approx_number(out[i][j]))  # as the 4-place table (and a carried chain) has it
    blocks.relabel_last(p, work=p.steps[-1].work[:-1] + (worked,))


def rework_weighted(p: Problem, W: Matrix, V: Matrix, sym: Maths, w_sym: Maths, v_sym: Maths) -> None:
    """Work out an output entry that is not 0, from a row whose weights are not all equal
    (symbols: trees or LaTeX)."""
    Z = p.steps[-1].exact
    cells = [(i, j) for i in range(len(Z)) for j in range(len(Z[0]))]

    def score(ij):
        i, j = ij
        ws = [float(x) for x in W[i]]
        return (Z[i][j] != 0, max(ws) != min(ws), sum(1 for k in range(len(V)) if V[k][j] != 0))

    i, j = max(cells, key=score)  # the first of the best
    Zc = p.steps[-1].chain  # hand mode: from the weights as the chain gave them (worksheet.policy.pencil)
    Ws = W if Zc is None else blocks.chain_of(p, W)
    terms = lines.weighted_sum(
        [Ws[i][k] for k in range(len(V))],
        [V[k][j] for k in range(len(V))],
        Z[i][j] if Zc is None else Zc[i][j],
        Ws is not W or any(st.rounded and st.exact == W for st in p.steps),
        blocks.calculator(p),
    )
    lhs = lines.entry(sym, i, j)
    work = [line(blocks.weighted_lhs(lhs, w_sym, v_sym, i + 1, j), terms)]
    if not is_rational(Z[i][j]) and not blocks.calculator(p):  # a calculator key stays in decimals
        work.append(line(lhs, "=", Value(Z[i][j])))
    blocks.relabel_last(p, work=tuple(work))
