"""The step builders shared by the kinds: projection, scores, scaling, mask,
softmax, weighted sum (and the whole attention chain), with the e^x table a
softmax by hand needs.

A block computes the exact value, writes out the arithmetic of one
representative entry, and adds the step to the problem together with the
float64 value the kind computed independently with numpy.  Kinds call the
blocks; the blocks never look at which kind called them.

The blocks build every formula and worked line as a maths tree
(:mod:`worksheet.solution.maths.build`, :mod:`worksheet.steps.line_trees`);
a symbol argument (``sym="s'"``, ``b_sym="W^Q"``) may be a tree or LaTeX, read
with ``as_tree``.  The worked-line helpers re-exported below are the LaTeX ones
of :mod:`worksheet.steps.line_trees` and :mod:`worksheet.steps.line_choices`, for the kinds.

This module is also the one namespace the kinds use (``blocks.matmul``,
``blocks.work_term``, ``blocks.np_attention``, ...): it re-exports, in
``__all__``, the names of the modules each job lives in:

* :mod:`worksheet.steps.linalg`: exact linear algebra and shape checks;
* :mod:`worksheet.steps.softmax_steps`: the exact softmax (``softmax_rows``, ``softmax_matmul``);
* :mod:`worksheet.steps.line_trees`: worked lines as trees -- its docstring says
  which helper to use when (exact or decimal printing, calculator mode:
  ``shown``, ``EXACT_SHOWN_CHARS``, ``work_term``/``work_result``, ``approx``);
* :mod:`worksheet.steps.layer_steps`: the sum step, rounding and the carried chain;
* :mod:`worksheet.steps.float_check`: the numpy references (``np_attention``, ...).
"""

from __future__ import annotations

from functools import lru_cache

import dataclasses
from fractions import Fraction
from math import gcd, isqrt
from typing import Sequence

from ..exact import NegInf, add, exp, is_rational, mul, power, sqrt, to_latex, to_str
from ..solution.maths import Maths, Node, Row, as_tree
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.maths.nodes import Ident, Script, Table, Value
from ..solution.number_format import terminating_places
from . import line_trees as lines
from .layer_steps import Carry, carried, grid_drift, relabel_last, round_exact, round_matrix, sum_step
from .linalg import add_row, causal_mask, columns, entrywise, hstack, matmul, require_matmul, require_shape, transpose
from ..solution.problem import Aid, Matrix, Problem, shape
from .float_check import given_value, np_attention, np_causal, np_softmax, pleasant_logits
from .softmax_steps import shifted_exponents, softmax_matmul, softmax_rows
from .standard_tables import GRID_DRIFT, add_table, grid_aid, grid_argument
from ..policy.pencil import round_places, round_ratio
from .line_choices import (
    LONG_SUM,
    SHORT,
    approx,
    busiest_entry,
    calculator,
    decimal_at,
    fit_places,
    max_not_zero,
    nonzero_entry,
    shown,
    term_value,
)
from .line_trees import (
    chain,
    dot_latex,
    dot_work,
    entry,
    join_terms,
    latex_text,
    lx,
    nx,
    terms_count,
    weighted_sum,
    work_result,
    work_term,
)

__all__ = [
    # step builders (this module)
    "product_step",
    "scale_step",
    "mask_step",
    "softmax_step",
    "weighted_sum_step",
    "scaled_dot_product",
    "add_exp_aid",
    "aids_allowed",
    "teaching_row",
    "extend_work",
    "EXP_AID",
    "softmax_chain",
    "table_exp",
    "exp_grid",
    "grid_drift",
    "chain_of",
    "chain_product",
    # re-exported for the kinds
    "is_rational",
    "to_latex",
    "matmul",
    "transpose",
    "entrywise",
    "hstack",
    "columns",
    "add_row",
    "causal_mask",
    "require_matmul",
    "require_shape",
    "softmax_rows",
    "softmax_matmul",
    "LONG_SUM",
    "SHORT",
    "approx",
    "busiest_entry",
    "chain",
    "dot_latex",
    "dot_work",
    "entry",
    "join_terms",
    "latex_text",
    "lx",
    "nx",
    "calculator",
    "max_not_zero",
    "nonzero_entry",
    "shown",
    "terms_count",
    "weighted_sum",
    "work_result",
    "work_term",
    "decimal_at",
    "fit_places",
    "term_value",
    "Carry",
    "carried",
    "relabel_last",
    "round_exact",
    "round_matrix",
    "sum_step",
    "given_value",
    "np_attention",
    "np_causal",
    "np_softmax",
    "pleasant_logits",
]


def product_step(
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
    transpose_b: bool = False,
    rows=None,
    cols=None,
    entry_at: tuple[int, int] | None = None,
    latex_name: Maths | None = None,
    note: str = "",
) -> Matrix:
    """A step ``C = A B`` (or ``A B^T``), with one entry written out.

    ``sym`` is the entry letter of C (``q``), ``a_sym``/``b_sym`` name a row of
    A and a column of B in the worked line (``x_1``, ``w^Q_{:,1}``); each a
    tree or LaTeX.
    """
    Bm = transpose(B) if transpose_b else B
    C = matmul(A, Bm)
    i, j = entry_at or nonzero_entry(C)
    col = [row[j] for row in Bm]
    b_part = subscripted(b_sym, j + 1 if transpose_b else f":,{j + 1}")
    calc = calculator(p)  # decimals in the line, as the calculator sheet gives its numbers
    work = [
        line(
            lines.entry(sym, i, j),
            "=",
            subscripted(a_sym, i + 1),
            "⋅",
            b_part,
            "=",
            lines.dot_latex(A[i], col, calc),
            "=",
            lines.nx(C[i][j]) if calc else Value(C[i][j]),
            lines.terms_count(len(col)),
        )
    ]
    p.add_step(
        name, C, value, title=title, formula=formula, work=work, rows=rows, cols=cols, latex_name=latex_name, note=note
    )
    return C


def symbol(x: Maths) -> Node:
    """The one node of a symbol given as a tree or LaTeX (``"s'"`` is one Script), else its row."""
    t = as_tree(x)
    return t.items[0] if type(t) is Row and len(t.items) == 1 else t


def subscripted(x: Maths, sub) -> Node:
    """``x`` with the subscript ``sub`` (an int, a node, or indices such as ``":,1"``,
    ``"1k"``): ``W^Q`` gives ``W^Q_{:,1}``, ``s'`` gives ``s'_{j}``; a symbol that has a
    subscript already is wrapped (``{W^Q_1}_{:,1}``)."""
    base = symbol(x)
    if type(base) is Script and base.sub is None:
        return m.sym(base.base, sub=sub, sup=base.sup)
    return m.sym(base, sub=sub)


def scale_step(
    p: Problem,
    name: str,
    S: Matrix,
    divisor_sq,
    value,
    *,
    title: str,
    formula: Maths,
    sym: Maths,
    src_sym: Maths,
    rows=None,
    cols=None,
    note: str = "",
    latex_name: Maths | None = None,
) -> Matrix:
    """A step ``S' = S / sqrt(divisor_sq)`` with sqrt exact (``sqrt(3)`` stays)."""
    root = sqrt(divisor_sq)
    inv = power(root, -1)
    out = tuple(tuple(mul(x, inv) for x in row) for row in S)
    i, j = nonzero_entry(S)
    work = []
    if root_simplifies(divisor_sq):  # not for sqrt(2), which is all there is to say
        work.append(line(m.sqrt(Value(divisor_sq)), "=", Value(root)))
    work.append(scaled_line(p, S, out, root, sym, src_sym, i, j))
    if not is_rational(out[i][j]):
        work[-1] = line(work[-1], "≈", lines.approx_number(out[i][j]))
    p.add_step(
        name,
        out,
        value,
        title=title,
        formula=formula,
        work=work,
        rows=rows,
        cols=cols,
        note=note,
        latex_name=latex_name,
    )
    return out


def root_simplifies(d) -> bool:
    """Does ``sqrt(d)`` come out as something other than itself (``sqrt(4) = 2``,
    ``sqrt(8) = 2 sqrt(2)``, ``sqrt(1/4) = 1/2``), so that a line ``sqrt(d) = ...`` says something?
    Not for a square-free integer above 1."""
    q = Fraction(d)
    if q.denominator != 1 or q <= 1:
        return True
    n = q.numerator
    return any(n % (k * k) == 0 for k in range(2, isqrt(n) + 1))


def scaled_line(p: Problem, S: Matrix, out: Matrix, root, sym: Maths, src_sym: Maths, i: int, j: int) -> Row:
    """``s'_{ij} = s_{ij} / root = S_ij / root = out_ij``, each side once; a calculator
    sheet's decimals stay decimals."""
    calc = calculator(p)
    num = lines.nx if calc else Value
    r = Value(root)
    sides = [lines.entry(sym, i, j), m.frac(lines.entry(src_sym, i, j), r), m.frac(num(S[i][j]), r)]
    if not _reads_as(S[i][j], root, out[i][j], calc):  # 5/2 = 5/2 says nothing
        sides.append(num(out[i][j]))
    return lines.chain(*sides)


def _reads_as(s, root, out, calc: bool) -> bool:
    """Is ``s / root`` printed as ``out`` is (``5/2``): a positive integer over an integer
    root with no common factor, and ``out`` printed as a fraction (a calculator sheet
    writes a terminating one as its decimal, ``0.5``)?"""
    if not (is_rational(s) and is_rational(root) and is_rational(out)):
        return False
    s, root = Fraction(s), Fraction(root)
    if s.denominator != 1 or root.denominator != 1 or s <= 0 or root <= 1 or gcd(s.numerator, root.numerator) != 1:
        return False
    return not calc or terminating_places(Fraction(out)) is None


def capital(x: Maths) -> Node:
    """The matrix of the entries ``x`` (``s'`` gives ``S'``): its letter in capitals; a
    symbol whose base is not a letter (``{s'}^{(1)}``) as it is."""
    t = symbol(x)
    if type(t) is Ident:
        return Ident(t.name[0].upper() + t.name[1:], t.upright)
    if type(t) is Script and type(t.base) is Ident:
        return Script(capital(t.base), t.sub, t.sup)
    return t


INFTY = Ident("∞")


def mask_step(p: Problem, name: str, S: Matrix, value, *, sym: Maths, src_sym: Maths, rows=None, cols=None) -> Matrix:
    out = causal_mask(S)
    i, j = m.sym("i"), m.sym("j")
    work = []
    if shape(S)[1] > 1:
        work.append(
            line(lines.entry(sym, 0, 1), "=", "-", INFTY, m.quad(), m.paren(line(j, "=", "2", ">", i, "=", "1")))
        )
    work.append(
        line(
            lines.entry(sym, 0, 0),
            "=",
            lines.entry(src_sym, 0, 0),
            "=",
            Value(S[0][0]),
            m.quad(),
            m.paren(line(j, "≤", i)),
        )
    )
    cases = Table(
        ((subscripted(capital(src_sym), "ij"), line(j, "≤", i)), (line("-", INFTY), line(j, ">", i))), "cases"
    )
    p.add_step(
        name,
        out,
        value,
        title="Causal mask",
        formula=line(m.sym("M", sub="ij"), "=", cases),
        work=work,
        rows=rows,
        cols=cols,
        latex_name=m.sym("M"),
        note=r"A token may attend only to itself and earlier tokens; masked scores are "
        r"$-\infty$ so their weights are exactly 0.",
    )
    return out


def teaching_row(S: Matrix, live=lambda x: not isinstance(x, NegInf)) -> int:
    """The row a worked softmax (and its weighted sum) shows: the first whose
    live entries are not all equal (equal weights 1/n teach nothing) and whose
    maximum is not 0 (``m_i = 0`` subtracts nothing), else the first whose entries
    are not all equal, else the first with two live entries, else the first."""
    rows = [[x for x in row if live(x)] for row in S]
    varied = [r for r, xs in enumerate(rows) if len(set(map(to_str, xs))) > 1]
    return next(
        (r for r in varied if max_not_zero(rows[r])),
        next(iter(varied), next((r for r, xs in enumerate(rows) if len(xs) > 1), 0)),
    )


def aids_allowed(p: Problem) -> bool:
    """Tables of values (e^x, sin/cos, tanh) are printed in hand mode only: in
    calculator mode a calculator is allowed, and a table of computed values
    would give steps away."""
    return p.params.get("numbers") != "calculator"


def _sub(sym: Maths, i: int, j: int | str, vector: bool) -> Node:
    """``s_{1j}`` / ``s_{12}``, or for a one-row problem (``vector``) ``s_j`` / ``s_2``."""
    jj = j if isinstance(j, str) else j + 1
    if vector:
        return subscripted(sym, jj)
    return lines.entry(sym, i, j) if not isinstance(j, str) else subscripted(sym, f"{i + 1}{j}")


SOFTMAX_FORMULA = line(m.sym("A"), "=", m.call("softmax", m.sym("S", prime=1)))  # A = softmax(S')


# long: one softmax step (its worked lines: _softmax_work), its chain, and its table of e^x
def softmax_step(
    p: Problem,
    name: str,
    S: Matrix,
    value,
    *,
    sym: Maths,
    src_sym: Maths,
    title: str = "Attention weights (softmax along each row)",
    formula: Maths = SOFTMAX_FORMULA,
    rows=None,
    cols=None,
    work_row: int | None = None,
    note: str = "",
    aid: bool = True,
    latex_name: Maths | None = m.sym("A"),
    vector: bool = False,
    max_sym: Maths = "m",
    exp_grid: int | None = None,
    exp_span: int | None = 4,
) -> Matrix:
    """Row-wise exact softmax (:func:`softmax_rows`); the work shows one row
    (:func:`teaching_row`) via its maximum ``m_i``, every exponent <= 0.
    ``vector``: a one-row problem, written with one index (``alpha_j``, ``m``);
    ``max_sym``: the maximum's letter (``m'`` beside a second softmax on the page).
    Symbols are trees or LaTeX.

    Adds (once per problem, hand mode only) an aid with the values of e^x the
    rows need, when every exponent is rational.  ``exp_grid``: exponents that no
    rational grid holds (the additive score's tanh values, cosines) are read from the
    standard table of e^{-x} at every 0.01 up to ``exp_grid`` (:mod:`.standard_tables`), each
    rounded to 2 decimals first (of the scores' chain values when they have one).
    ``exp_span``: how far the kind's hand-mode rows of scores may spread (the e^x table's range;
    None: the exponents this problem needs, for a kind whose exponents are given anyway).
    On the grid the key's weights are that chain, carried (a ``rounded`` step; see
    :func:`weighted_sum_step`'s ``rounded`` for the sum that follows them).
    """
    W = softmax_rows(S)
    i = teaching_row(S) if work_row is None else work_row
    grid = exp_grid is not None and not calculator(p)
    B = (chain_of(p, S) or S) if grid else S  # the grid is read at the chain's exponents, rounded
    chain = None if calculator(p) else softmax_chain(B, grid)  # hand mode: with the table's values
    symbols = {"sym": sym, "src_sym": src_sym, "max_sym": max_sym}
    work = _softmax_work(p, S, B, W, chain, i, symbols, vector=vector, grid=grid)
    if grid:  # the key is the chain: exponents read on the table's grid, so it is carried as such
        W = chain
    p.add_step(
        name,
        W,
        value,
        title=title,
        formula=formula,
        work=work,
        rows=rows,
        cols=cols,
        note=note,
        latex_name=latex_name,
        rounded=grid,
        drift=GRID_DRIFT,
    )
    if chain is not None:
        p.steps[-1] = dataclasses.replace(p.steps[-1], chain=chain)
    if grid and aids_allowed(p):  # a file's wider scores: a longer table (it must hold every argument read)
        lowest = min((grid_argument(Fraction(d)) for row in B for _, d in shifted_exponents(row)), default=Fraction(0))
        add_table(p.aids, grid_aid("exp", max(exp_grid, -int(lowest // 1))))
    elif aid:  # scores carried rounded (a block's chain): their differences hide among distractors
        add_exp_aid(p, S, distract=len(p.steps) > 1 and p.steps[-2].rounded, span=exp_span)
    return W


# long: the worked lines of one softmax row in hand, grid and calculator mode
def _softmax_work(
    p: Problem, S: Matrix, B: Matrix, W: Matrix, chain, i: int, symbols: dict, *, vector: bool, grid: bool
) -> list[Row]:
    """``m_i = max_j s_ij``, the sum of the e^x, two weights (the row's first and one
    that differs) and the row's sum 1; ``B``: the scores whose e^x the grid reads,
    ``chain``: the weights the table's 4-place values give (hand mode), else None."""
    sym, src_sym, max_sym = symbols["sym"], symbols["src_sym"], symbols["max_sym"]
    calc = calculator(p)
    m_i = symbol(max_sym) if vector else subscripted(max_sym, i + 1)
    shifted = shifted_exponents(S[i])
    top = next(x for (k, d) in shifted for x in [S[i][k]] if d == 0)
    src_j, src_k = _sub(src_sym, i, "j", vector), _sub(src_sym, i, "k", vector)
    # the exact sum of the e^x: what a calculator key prints (by hand the table's values are summed)
    total = add(*(exp(d) for _, d in shifted)) if chain is None else None
    at = {k: grid_argument(Fraction(d)) for k, d in shifted_exponents(B[i])} if grid else {}

    def num(x) -> Node:  # -1/2 as the table prints it; calculator mode: -0.5 (4 decimals if not exact)
        if not calc:
            return Value(x)
        if not is_rational(x):
            return m.number(approx(x))
        return lines.unwrapped(lines.work_term(x, 0)[0])

    def power_of_e(d, k) -> Node:  # e^{-1}; on the grid, e^{-1.37} at the exponent read
        return m.power("e", m.number(_cents(at[k])) if grid else num(d))

    def power_of(src: Node) -> Node:  # e^{s_j - m}; exp(e_j - m) where e names a score (alignment)
        if symbol(src_sym) == Ident("e"):
            return m.call("exp", line(src, "-", m_i))
        return m.power("e", line(src, "-", m_i))

    rel = "=" if is_rational(top) or not calc else "≈"
    read_at = {k: (at[k] if grid else d) for k, d in shifted}  # where the table is read
    if chain is not None and not grid and all(type(d) is Fraction for _, d in shifted):  # kept by the exponents
        terms, table_row, total_shown, printed = _hand_exp_sum(tuple(d for _, d in shifted))
        values = {k: v for (k, _), v in zip(shifted, printed)}
        table_sum = ["≈", table_row]
    else:
        total_shown = m.number(
            approx(total) if chain is None else approx(sum(table_exp(read_at[k]) for k, _ in shifted))
        )
        values = _exp_values(shifted, total, chain is not None, read_at)  # the e^x a line's result comes from
        table_sum = ["≈", lines.join_terms([m.number(v) for v in values.values()])] if values else []
        terms = lines.join_terms([power_of_e(d, k) for k, d in shifted])
    sum_rel = "=" if values and chain is not None else "≈"  # a sum of the table's 4-place values is exact
    work = [
        line(m_i, "=", m.named("max", "j"), src_j, rel, num(top)),
        line(
            m.total("j"),
            power_of(src_j),
            "≈" if grid and any(read_at[k] != d for k, d in shifted) else "=",  # on the grid: read at rounded exponents
            terms,
            *table_sum,
            sum_rel,
            total_shown,
            lines.terms_count(len(shifted)),
        ),
    ]
    first = shifted[0]
    second = next(((k, d) for k, d in shifted if d != first[1]), shifted[1] if len(shifted) > 1 else None)
    over = line(m.total("k"), power_of(src_k))  # the weights' denominator
    for j, d in [first] + ([second] if second else []):
        # a calculator key writes no exponent as a fraction the sheet never gave (e^{-72/5} for 14.4)
        odd = calc and _fraction_exponent(to_latex(W[i][j]))
        rhs: list = ["=", Value(W[i][j]), "≈"] if shown(p, W[i][j]) and not odd else ["≈"]
        if chain is not None:  # the table's numbers are what give the chain's weight: 0.3679/1.3679
            rhs += [m.frac(m.number(values[j]), total_shown), "≈"]
        ratio = m.frac(m.power("e", num(d)), over)  # the exact exponent
        weight = lines.approx_number(W[i][j] if chain is None else chain[i][j])
        work.append(line(_sub(sym, i, j, vector), "=", ratio, *rhs, weight))
    if len(shifted) < shape(S)[1]:
        work.append(MASKED_LINE)
    work.append(_sums_to_one(sym, i, vector))
    return work


MASKED_LINE = line(m.text("masked entries: "), m.power("e", line("-", INFTY)), "=", "0")  # e^{-oo} = 0


@lru_cache(maxsize=1024)
def _sums_to_one(sym: Maths, i: int, vector: bool) -> Row:
    """``∑_j α_{1j} = 1`` (kept: the same line ends every problem's softmax)."""
    return line(m.total("j"), _sub(sym, i, "j", vector), "=", "1")


def _fraction_exponent(tex: str) -> bool:
    """Does an exact value's LaTeX raise e to a fraction (``e^{-\\frac{72}{5}}``)?"""
    return "^{\\frac" in tex or "^{-\\frac" in tex


@lru_cache(maxsize=4096)
def _hand_exp_sum(exponents: tuple) -> tuple[Row, Row, Node, tuple[str, ...]]:
    """By hand, for a row's rational exponents d_j (in column order; an irrational one
    may print otherwise than an equal one, so it is not kept): the terms e^{d_j}, the
    table's 4-place values of them (``1`` for e^0), their sum as printed, and each
    value as printed (kept: the same rows of exponents recur on every problem)."""
    table = [table_exp(d) for d in exponents]
    printed = tuple("1" if d == 0 else approx(t) for d, t in zip(exponents, table))
    terms = lines.join_terms([m.power("e", Value(d)) for d in exponents])
    return terms, lines.join_terms([m.number(v) for v in printed]), m.number(approx(sum(table))), printed


def _exp_values(shifted, total, hand: bool, read_at: dict) -> dict:
    """{j: how a line writes e^{d_j}}: in hand mode the table's 4-place value (``1``
    for e^0; on the grid, at the exponent rounded to 2 decimals), what the chain
    computes with; in calculator mode, when an exponent is printed
    rounded, e^{d_j} with the places the sum needs to give its printed total
    (:func:`fit_places`), else nothing (the exponents' sum is then true as printed)."""
    if hand:
        return {k: "1" if read_at[k] == 0 else approx(table_exp(read_at[k])) for k, _ in shifted}
    if all(is_rational(d) for _, d in shifted):
        return {}
    es = [exp(d) for _, d in shifted]
    digits = fit_places(es, lambda v: sum(v, Fraction(0)), total)
    return {k: "1" if d == 0 else decimal_at(e, digits) for (k, d), e in zip(shifted, es)}


def table_exp(d) -> Fraction:
    """e^d as the sheet's table prints it (4 places; e^0 = 1): the value a student reads
    (kept by exponent: the same ones recur on every problem; a rational one by its
    integers, whose hash costs less than a Fraction's)."""
    if type(d) is Fraction:
        return _table_exp_rational(d.numerator, d.denominator)
    return _table_exp(d)


@lru_cache(maxsize=16384)
def _table_exp_rational(num: int, den: int) -> Fraction:
    return _table_exp(Fraction(num, den))


@lru_cache(maxsize=4096)
def _table_exp(d) -> Fraction:
    return Fraction(1) if d == 0 else Fraction(approx(exp(d)))


def softmax_chain(S: Matrix, grid: bool = False) -> Matrix | None:
    """The weights the rounding chain gives (:mod:`worksheet.policy.pencil`): per row,
    alpha_j = e^{s_j - m} / sum_k e^{s_k - m} with every e^x the table's 4-place
    value, rounded once to 4 places; ``grid``: every exponent rounded to 2 decimals
    first, where the standard table of every 0.01 is read (:mod:`.standard_tables`)."""
    out = []
    for row in S:
        shifted = dict(shifted_exponents(row))
        if grid:
            shifted = {k: grid_argument(Fraction(d)) for k, d in shifted.items()}
        t = [table_exp(shifted[k]) if k in shifted else Fraction(0) for k in range(len(row))]
        total = sum(t)
        a, b = total.numerator, total.denominator  # x / total, rounded, without the Fraction x / total
        out.append(tuple(round_ratio(x.numerator * b, x.denominator * a) for x in t))
    return tuple(out)


def _cents(x: Fraction) -> str:
    """A 2-decimal exponent as the table's argument: ``-0.2``, ``-1.37``."""
    whole, cents = divmod(abs(x.numerator * 100 // x.denominator), 100)
    text = f"{whole}" if cents == 0 else f"{whole}.{cents:02d}".rstrip("0")
    return ("-" if x < 0 else "") + text


def chain_of(p: Problem, M: Matrix) -> Matrix | None:
    """The rounding-chain values of the step whose exact matrix is ``M`` (the last such), if any."""
    for s in reversed(p.steps):
        if s.exact is M:
            return s.chain
    return None


def chain_product(A: Matrix, B: Matrix) -> Matrix:
    """``A B`` of chain values and exact rationals, rounded once to 4 places."""
    return tuple(
        tuple(round_places(sum((Fraction(a) * Fraction(b) for a, b in zip(row, col)), Fraction(0))) for col in zip(*B))
        for row in A
    )


def add_exp_aid(p: Problem, S: Matrix, limit: int = 16, distract: bool = False, span: int | None = 4) -> None:
    """Add the table of e^x needed for a softmax by hand (every exponent x = s - row max <= 0);
    nothing in calculator mode (:func:`aids_allowed`).

    Exact exponents get the kind's standard table (:func:`exp_grid`): every multiple of
    the grid's step from 0 down to the span the hand mode allows, the same for every
    variant, so the table says nothing about which exponents this problem needs.
    Exponents carried rounded (a block's chain, ``distract``) are 4-place decimals: each
    is printed beside a distractor 0.1 to 0.3 away, and the table is never left off
    (the key reads every one of them from it).
    """
    if not aids_allowed(p):
        return
    xs: set = set()
    for row in S:
        live = [x for x in row if not isinstance(x, NegInf)]
        if not all(is_rational(x) for x in live):
            return
        top = max(live)
        xs.update(x - top for x in live)
    needed = frozenset(xs)
    existing = next((a for a in p.aids if a.title == EXP_AID), None)
    if existing is None and not distract and len(needed) <= limit:  # the common case: one standard table
        d_k = p.params.get("d_k")
        entries, vals = _exp_table(needed, d_k if isinstance(d_k, int) else None, span)
        p.aids.append(Aid(EXP_AID, entries, vals))
        return
    if existing is not None:
        xs.update(Fraction(x) for x in existing.values)
    if distract:
        for x in needed:  # a carried exponent (a difference of scores) beside a distractor
            if x != 0:
                xs.add(x - Fraction(1 + int(abs(x) * 10**4) % 3, 10))
    elif len(needed) <= limit:
        xs.update(exp_grid(p.params, needed, span) if span is not None else needed)
    else:
        return
    if existing is not None:
        p.aids.remove(existing)
    vals = sorted(xs, reverse=True)
    # an Aid holds LaTeX (the sheet's list of values reads it): the tree of e^x, printed
    p.aids.append(Aid(EXP_AID, tuple(_exp_entry(x) for x in vals), tuple(vals)))


@lru_cache(maxsize=4096)
def _exp_table(needed: frozenset, d_k: int | None, span: int | None) -> tuple[tuple, tuple]:
    """The e^x table's rows and arguments for a problem's exponents (kept: the same
    standard tables recur on every problem of a kind)."""
    xs = set(needed) | set(exp_grid({"d_k": d_k}, needed, span) if span is not None else needed)
    vals = sorted(xs, reverse=True)
    return tuple(_exp_entry(x) for x in vals), tuple(vals)


@lru_cache(maxsize=8192, typed=True)
def _exp_entry(x) -> tuple[str, str]:
    """A row of the e^x table: the LaTeX of e^x (the tree, printed) and its 4-place value
    (kept: the same exponents recur on every problem's grid)."""
    return str(m.power("e", Value(x))), approx(exp(x))


GRID_MAX = 41  # entries of a standard e^x table; a finer grid keeps this many near 0


def exp_grid(params: dict, needed, span: int = 4) -> list[Fraction]:
    """The standard e^x table's arguments: ``-k h`` for k = 0, 1, ... down to the span.

    The step ``h`` is ``1/sqrt(d_k)`` when the problem has a perfect-square ``d_k`` (a
    scaled score is an integer over sqrt(d_k)), refined to the exponents' own
    denominators if they need it; the span is the kind's (4, what every generator but
    self-attention-basic's allows), or more when a file's exponent lies further out.  A grid of more than :data:`GRID_MAX` entries keeps its first
    :data:`GRID_MAX` and adds the integers and the exponents beyond (softmax-scaling's
    raw scores: e^{-16})."""
    from math import isqrt, lcm

    d_k = params.get("d_k")
    step = isqrt(d_k) if isinstance(d_k, int) and d_k > 0 and isqrt(d_k) ** 2 == d_k else 1
    step = lcm(step, *(Fraction(x).denominator for x in needed))
    lowest = min((Fraction(x) for x in needed), default=Fraction(0))
    span = max(span, -(lowest.numerator // lowest.denominator))  # ceil(-lowest)
    count = span * step + 1
    grid = [Fraction(-k, step) for k in range(min(count, GRID_MAX))]
    if count > GRID_MAX:
        grid += [Fraction(-k) for k in range(span + 1)] + [Fraction(x) for x in needed]
    return grid


EXP_AID = "Values of $e^x$ you may need"


OUTPUT_FORMULA = line(m.sym("Z"), "=", m.sym("A"), m.sym("V"))  # Z = A V


# long: one weighted-sum step with its worked lines in hand and calculator mode
def weighted_sum_step(
    p: Problem,
    name: str,
    W: Matrix,
    V: Matrix,
    value,
    *,
    sym: Maths,
    w_sym: Maths,
    v_sym: Maths,
    logits: Matrix | None = None,
    title: str = "Output (weighted sum of values)",
    formula: Maths = OUTPUT_FORMULA,
    rows=None,
    cols=None,
    note: str = "",
    latex_name: Maths | None = m.sym("Z"),
    vector: bool = False,
    rounded: bool = False,
) -> Matrix:
    """``Z = A V`` exactly; the work shows one entry with decimals, in the row
    the softmax step worked (:func:`teaching_row`) and a column where it is
    not 0.  ``vector``: one row, written ``c_1 = sum_k alpha_k h_{k1}``.
    Symbols are trees or LaTeX.

    With ``logits`` (the matrix the softmax was taken of) each exact entry is
    written as a single ratio over the weights' denominator, see :func:`softmax_matmul`.
    """
    Z = softmax_matmul(logits, V) if logits is not None else matmul(W, V)
    i = teaching_row(logits) if logits is not None else teaching_row(W, live=lambda x: x != 0)
    j = next((c for c, x in enumerate(Z[i]) if x != 0), 0)
    lhs = subscripted(sym, j + 1) if vector else lines.entry(sym, i, j)
    Wc = chain_of(p, W)  # hand mode: the weights as the chain gave them, then Z from those
    Zc = chain_product(Wc, V) if Wc is not None and all(is_rational(x) for r in V for x in r) else None
    Ws = W if Zc is None else Wc
    terms = lines.weighted_sum(
        [Ws[i][k] for k in range(len(V))],
        [V[k][j] for k in range(len(V))],
        Z[i][j] if Zc is None else Zc[i][j],
        Ws is not W or any(st.rounded and st.exact == W for st in p.steps),
        calculator(p),
    )
    work = [
        line(
            weighted_lhs(lhs, w_sym, v_sym, "" if vector else i + 1, j),
            terms,
            lines.terms_count(len(V)),
        )
    ]
    if not is_rational(Z[i][j]) and shown(p, Z[i][j]):
        work.append(line(lhs, "=", Value(Z[i][j])))
    if rounded:  # weights carried from the e^x grid: the sum of the carried weights, rounded once
        Z = Zc if Zc is not None else Z
    p.add_step(
        name,
        Z,
        value,
        title=title,
        formula=formula,
        work=work,
        rows=rows,
        cols=cols,
        note=note,
        latex_name=latex_name,
        rounded=rounded,
        drift=GRID_DRIFT,
    )
    if Zc is not None:
        p.steps[-1] = dataclasses.replace(p.steps[-1], chain=Zc)
    return Z


def weighted_lhs(lhs: Node, w_sym: Maths, v_sym: Maths, row, j: int) -> Row:
    """``z_12 = sum_k alpha_1k v_k2``: the left of an output entry's worked line
    (``row`` the weights' row index, ``""`` for a vector's ``alpha_k``)."""
    return line(lhs, "=", m.total("k"), subscripted(w_sym, f"{row}k"), m.thin(), subscripted(v_sym, f"k{j + 1}"))


# long: the attention chain in the sheet's order: Q, K, V, scores, scaled, masked, weights, output
def scaled_dot_product(
    p: Problem,
    Q: Matrix,
    K: Matrix,
    V: Matrix,
    ref: dict,
    *,
    causal: bool = False,
    rows=None,
    cols=None,
    scores_note: str = "",
    output_note: str = "",
) -> Matrix:
    """The steps ``scores``, ``scaled``, ``masked`` (causal only), ``weights``,
    ``output`` of scaled dot-product attention, checked against ``ref``
    (see :func:`np_attention`); ``rows`` label the queries, ``cols`` the keys.
    Returns the output matrix.
    """
    d_k = shape(K)[1]
    s, s_prime, alpha = m.sym("s"), m.sym("s", prime=1), m.sym("alpha")
    S_, S_prime = m.sym("S"), m.sym("S", prime=1)
    S = product_step(
        p,
        "scores",
        Q,
        K,
        ref["scores"],
        transpose_b=True,
        title="Scores (query-key dot products)",
        formula=line(S_, "=", m.sym("Q"), m.sym("K", sup=TOP)),
        sym=s,
        a_sym=m.sym("q"),
        b_sym=m.sym("k"),
        rows=rows,
        cols=cols,
        latex_name=S_,
        note=scores_note,
    )
    S = scale_step(
        p,
        "scaled",
        S,
        d_k,
        ref["scaled"],
        title="Scaled scores",
        formula=line(S_prime, "=", m.frac(S_, m.sqrt(m.sym("d", sub="k"))), "=", m.frac(S_, m.sqrt(d_k))),
        sym=s_prime,
        src_sym=s,
        rows=rows,
        cols=cols,
        latex_name=S_prime,
        note=rf"Divide by $\sqrt{{d_k}} = \sqrt{{{d_k}}}$, the width of the keys, "
        r"not by $\sqrt{d_\mathrm{model}}$.",
    )
    src, logits = s_prime, S_prime
    if causal:
        S = mask_step(p, "masked", S, ref["masked"], sym=m.sym("M"), src_sym=s_prime, rows=rows, cols=cols)
        src = logits = m.sym("M")
    W = softmax_step(
        p,
        "weights",
        S,
        ref["weights"],
        sym=alpha,
        src_sym=src,
        formula=line(m.sym("A"), "=", m.call("softmax", logits)),
        rows=rows,
        cols=cols,
    )
    return weighted_sum_step(
        p,
        "output",
        W,
        V,
        ref["output"],
        sym=m.sym("z"),
        w_sym=alpha,
        v_sym=m.sym("v"),
        logits=S,
        rows=rows,
        note=output_note,
    )


TOP = Ident("⊤")  # the transpose's superscript: K^⊤


def extend_work(p: Problem, name: str, before: Sequence[Maths] = (), after: Sequence[Maths] = ()) -> None:
    """Add worked lines (trees or LaTeX) before and after the existing work of step ``name``."""
    for k, s in enumerate(p.steps):
        if s.name == name:
            p.steps[k] = dataclasses.replace(s, work=tuple(before) + s.work + tuple(after))
            return
    raise KeyError(name)
