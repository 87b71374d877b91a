"""Exact softmax: one row's weights, and the sums of exponentials an
attention output is made of, built straight into the canonical form of
:mod:`worksheet.exact` (each function says which constructor call it equals;
tests/test_exact.py checks the trees are the same).

A softmax row with no unmasked entry raises ValueError: every row needs at
least one entry that is not ``-oo``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from ..exact.core import ONE, ZERO
from ..exact.nodes import Add, Exact, Func, Mul, NegInf, Pow, exact
from ..exact.tree import _order, _split, add, exp, mul, power
from ..solution.problem import Matrix

__all__ = [
    "softmax_rows",
    "softmax_matmul",
    "softmax_matmul_sum",
    "softmax_row",
    "ratio_of_exp_sums",
    "exp_combination",
    "over_sum",
]


def exp_combination(pairs: Iterable[tuple]) -> Exact:
    """``sum_k c_k e_k`` for (coefficient, ``exp(d_k)``) pairs: the value
    ``add(*(mul(c, e) for c, e in pairs))`` gives, the same tree (tested), built
    directly when every coefficient is rational (an attention output has one
    such sum per entry: the memoised add/mul cost five times as much)."""
    pairs = list(pairs)
    if not all(type(c) is Fraction for c, _ in pairs):
        return add(*(mul(c, e) for c, e in pairs))
    const = ZERO
    coeffs: dict = {}  # e -> summed coefficient
    for c, e in pairs:
        if not c._numerator:
            continue  # 0 e^d is 0
        if type(e) is Fraction:  # e^0 = 1
            const += c * e
        elif e in coeffs:
            coeffs[e] += c
        else:
            coeffs[e] = c
    live = [(e, c) for e, c in coeffs.items() if c]
    if len(live) > 1:
        live.sort(key=lambda ec: _order(ec[0]))
    terms = tuple([e if c == 1 else Mul(c, (e,)) for e, c in live])
    if not terms:
        return const
    if const == 0 and len(terms) == 1:
        return terms[0]
    return Add(const, terms)


def ratio_of_exp_sums(num: Iterable[tuple], den: Iterable) -> Exact:
    """``(sum_j c_j e^{a_j}) / (sum_j e^{b_j})``, exponents exact.

    ``num`` holds (coefficient, exponent) pairs, ``den`` exponents.  Masked
    (``-oo``) exponents drop out, ``e^0`` is 1.  A ratio of proportional sums
    is the rational it is.  Raises ValueError if every exponent of ``den`` is
    masked.
    """
    den = [b for b in den if not isinstance(b, NegInf)]
    if not den:
        raise ValueError("softmax of a row with every entry masked (-oo): every row needs at least one unmasked entry")
    top = exp_combination((exact(c), exp(a)) for c, a in num if not isinstance(a, NegInf))
    bottom = add(*(exp(b) for b in den))
    if top == 0:
        return ZERO
    return mul(top, power(bottom, -1))


def over_sum(top, inv, total) -> Exact:
    """``mul(top, inv)`` for ``inv = power(total, -1)``, ``total`` a sum of
    exponentials: the same tree (tested), built directly in the cases a
    softmax row gives (a memoised mul of a new sum costs its structural key).
    A ``top`` proportional to ``total`` gives the rational ratio."""
    if isinstance(total, Add) and isinstance(inv, Pow) and (inv.base is total or inv.base == total):
        if type(top) is Fraction:
            return inv if top == 1 else Mul(top, (inv,))
        if isinstance(top, Func) and top.name == "exp":
            return Mul(ONE, (top, inv))
        if (
            isinstance(top, Mul)
            and len(top.factors) == 1
            and isinstance(top.factors[0], Func)
            and top.factors[0].name == "exp"
        ):
            return Mul(top.coeff, (top.factors[0], inv))
        if isinstance(top, Add):
            c = _proportional(top, total)
            return Mul(ONE, (inv, top)) if c is None else c
    return mul(top, inv)


def _proportional(a: Add, b: Add):
    """The rational c with ``a = c b``, or None (no new sums built)."""
    if len(a.terms) != len(b.terms) or bool(a.const) != bool(b.const):
        return None
    c = None
    if b.const:
        c = a.const / b.const
    for s, t in zip(a.terms, b.terms):
        (ca, fa), (cb, fb) = _split(s), _split(t)
        if fa != fb:
            return None
        if c is None:
            c = ca / cb
        elif ca != c * cb:
            return None
    return c


def softmax_row(row: list) -> list:
    """Exact softmax of one row, each weight as ``1 / sum_k e^{a_k - a_j}``.

    Masked entries (``-oo``) get weight exactly 0; the weights sum to 1
    exactly (as real numbers; each is written in its own simplest form).
    Raises ValueError if every entry is masked (the softmax is undefined).
    """
    out = []
    live = [a for a in row if not isinstance(a, NegInf)]
    if not live:
        raise ValueError("softmax of a row with every entry masked (-oo): every row needs at least one unmasked entry")
    rational = all(type(a) is Fraction for a in live)
    for a_j in row:
        if isinstance(a_j, NegInf):
            out.append(ZERO)
            continue
        diffs = [a_k - a_j for a_k in live] if rational else [add(a_k, mul(-1, a_j)) for a_k in live]
        out.append(power(add(*(exp(d) for d in diffs)), -1))
    return out


def shifted_exponents(row) -> list:
    """``[(j, s_j - m)]`` over the live (unmasked) entries, ``m`` the row maximum:
    every exponent is <= 0, so the sheet's table of e^x has them all."""
    live = [(k, x) for k, x in enumerate(row) if not isinstance(x, NegInf)]
    m = max((x for _, x in live), key=float)
    if all(type(x) is Fraction for _, x in live):
        return [(k, x - m) for k, x in live]
    return [(k, add(x, mul(-1, m))) for k, x in live]


def softmax_rows(S: Matrix) -> Matrix:
    """Exact row softmax in the form the key writes and the e^x table supports:

        alpha_ij = e^{s_ij - m_i} / sum_k e^{s_ik - m_i},   m_i = max_k s_ik

    (``1/(1 + e^{-1})``, ``e^{-1}/(1 + e^{-1})``; masked entries exactly 0):
    the same ratio as :func:`softmax_matmul` gives for the outputs, so a weight
    reads the same in every step.
    """
    out = []
    for row in S:
        exps = {k: exp(d) for k, d in shifted_exponents(row)}
        total = add(*exps.values())
        inv = power(total, -1)
        out.append(tuple(_over(exps[j], inv, total) if j in exps else Fraction(0) for j in range(len(row))))
    return tuple(out)


def softmax_matmul(S: Matrix, V: Matrix) -> Matrix:
    """``softmax(S) V`` exactly, each entry as one ratio of sums of exponentials.

    ``z_ij = sum_k v_kj e^{s_ik - m_i} / sum_k e^{s_ik - m_i}`` reads better
    than the sum of n separate fractions that ``matmul(weights, V)`` gives,
    and has the denominator of the weights (:func:`softmax_rows`).
    """
    out = []
    for row in S:
        # ratio_of_exp_sums(...) for each column j, with the row's e^d and
        # 1 / sum e^d computed once
        exps = [(k, exp(d)) for k, d in shifted_exponents(row)]
        total = add(*(e for _, e in exps))
        inv = power(total, -1)
        row_out = []
        for j in range(len(V[0])):
            top = exp_combination((V[k][j], e) for k, e in exps)
            row_out.append(Fraction(0) if top == 0 else _over(top, inv, total))
        out.append(tuple(row_out))
    return tuple(out)


_over = over_sum  # mul(top, inv) for inv = total**-1, built directly (see over_sum)


def softmax_matmul_sum(pairs) -> Matrix:
    """``sum_h softmax(S_h) M_h`` exactly (multi-head attention's ``concat W^O``
    as a sum over heads): like :func:`softmax_matmul` per head, but the heads
    whose rows share a denominator are added into one ratio, so an entry that
    is an integer (``(4 + 2 e^{-2})/(1 + e^{-2}) + (-6 - 4 e^{-2})/(1 + e^{-2})``)
    prints as one (``-2``)."""
    infos = []
    for S, _ in pairs:
        rows = []
        for row in S:
            exps = [(k, exp(d)) for k, d in shifted_exponents(row)]
            total = add(*(e for _, e in exps))
            rows.append((exps, total, power(total, -1)))
        infos.append(rows)
    n, m = len(pairs[0][0]), len(pairs[0][1][0])
    out = []
    for i in range(n):
        row_out = []
        for j in range(m):
            groups: dict = {}  # denominator -> (coefficient, e^d) pairs, 1/denominator
            for (_, M), rows in zip(pairs, infos):
                exps, total, inv = rows[i]
                groups.setdefault(total, ([], inv))[0].extend((M[k][j], e) for k, e in exps)
            terms = []
            for total, (prs, inv) in groups.items():
                top = exp_combination(prs)
                if top != 0:
                    terms.append(_over(top, inv, total))
            row_out.append(add(*terms) if terms else Fraction(0))
        out.append(tuple(row_out))
    return tuple(out)
