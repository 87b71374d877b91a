"""Building blocks shared by the kinds: exact matrix arithmetic and the
steps that recur (projection, scores, scaling, mask, softmax, weighted sum).

A block computes the exact value, writes out the arithmetic of one
representative entry, and adds the step to the problem together with the
float64 value the kind computed independently with numpy.  Kinds call the
blocks; the blocks never look at which kind called them.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Sequence

import numpy as np

from .errors import ShapeError
from .exact import (NEG_INF, NegInf, add, exp, is_rational, mul, power, rational,
                    sqrt, to_latex, to_str)
from .model import EXACT_SHOWN_CHARS, Aid, Matrix, Problem, shape
from .softmax import exp_combination, over_sum

# ---------------------------------------------------------------- exact linear algebra


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """Exact ``A @ B`` (Fractions stay Fractions; sums of Exprs use exact.add)."""
    Bt = list(zip(*B))
    if all(type(x) is Fraction for row in A for x in row) and all(type(x) is Fraction for c in Bt for x in c):
        # integer arithmetic over a common denominator: one Fraction per entry
        # instead of one per product and partial sum (same values)
        da, Ai = _scaled(A)
        db, Bi = _scaled(Bt)
        den = da * db
        return tuple(tuple(rational(sum(map(operator.mul, row, col)), den) for col in Bi) for row in Ai)
    return tuple(tuple(add(*(mul(a, b) for a, b in zip(row, col))) for col in Bt) for row in A)


def _scaled(rows) -> tuple[int, list[list[int]]]:
    """Fraction rows as (d, integer rows) with rows = integer rows / d."""
    d = 1
    for row in rows:
        for x in row:
            q = x._denominator
            if d % q:
                d = d * q // math.gcd(d, q)
    if d == 1:
        return 1, [[x._numerator for x in row] for row in rows]
    return d, [[x._numerator * (d // x._denominator) for x in row] for row in rows]


def transpose(A: Matrix) -> Matrix:
    return tuple(zip(*A))


def entrywise(f, *Ms: Matrix) -> Matrix:
    return tuple(tuple(f(*xs) for xs in zip(*rows)) for rows in zip(*Ms))


def hstack(*Ms: Matrix) -> Matrix:
    return tuple(sum((tuple(r) for r in rows), ()) for rows in zip(*Ms))


def columns(A: Matrix, start: int, stop: int) -> Matrix:
    return tuple(tuple(row[start:stop]) for row in A)


def require_matmul(a_name: str, A: Matrix, b_name: str, B: Matrix) -> None:
    """Raise ShapeError naming both matrices unless A @ B is defined."""
    (n, k), (k2, m) = shape(A), shape(B)
    if k != k2:
        raise ShapeError(
            f"{a_name} is {n} x {k} and {b_name} is {k2} x {m}: "
            f"{a_name} {b_name} needs the columns of {a_name} ({k}) to equal the rows of {b_name} ({k2})")


def require_shape(name: str, A: Matrix, rows: int | None, cols: int | None, why: str = "") -> None:
    n, m = shape(A)
    if (rows is not None and n != rows) or (cols is not None and m != cols):
        want = f"{rows if rows is not None else 'any'} x {cols if cols is not None else 'any'}"
        raise ShapeError(f"{name} is {n} x {m} but must be {want}{': ' + why if why else ''}")


# ---------------------------------------------------------------- LaTeX of arithmetic
# (in worksheet.worklines)
from .worklines import LONG_SUM, approx, dot_latex, entry, join_terms, lx, terms_count  # noqa: E402,F401


# ---------------------------------------------------------------- step blocks


def product_step(p: Problem, name: str, A: Matrix, B: Matrix, value, *, title: str,
                 formula: str, sym: str, a_sym: str, b_sym: str, transpose_b: bool = False,
                 rows=None, cols=None, entry_at: tuple[int, int] | None = None,
                 latex_name: str | None = None, note: str = "") -> Matrix:
    """A step ``C = A B`` (or ``A B^T``), with one entry written out.

    ``sym`` is the entry letter of C (``q``), ``a_sym``/``b_sym`` name a row of
    A and a column of B in the worked line (``x_1``, ``w^Q_{:,1}``).
    """
    Bm = transpose(B) if transpose_b else B
    C = matmul(A, Bm)
    i, j = entry_at or nonzero_entry(C)
    col = [row[j] for row in Bm]
    b_part = f"{b_sym}_{{{j + 1}}}" if transpose_b else f"{b_sym}_{{:,{j + 1}}}"
    work = [f"{entry(sym, i, j)} = {a_sym}_{{{i + 1}}} \\cdot {b_part} = "
            f"{dot_latex(A[i], col)} = {to_latex(C[i][j])}{terms_count(len(col))}"]
    p.add_step(name, C, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               latex_name=latex_name, note=note)
    return C


def nonzero_entry(C: Matrix) -> tuple[int, int]:
    """The worked entry of a matrix step: (0, 1) (the second of the first row),
    unless it is 0 or masked; then the first entry in reading order that is
    neither (a worked entry that comes out 0 teaches nothing)."""
    n, m = shape(C)
    first = (0, min(1, m - 1))
    cells = [first] + [(i, j) for i in range(n) for j in range(m)]
    return next(((i, j) for i, j in cells if not isinstance(C[i][j], NegInf) and C[i][j] != 0), first)


def chain(*sides: str) -> str:
    """``a = b = c``, each side once (``\\frac{5}{2} = \\frac{5}{2}`` says nothing)."""
    out = [sides[0]]
    for side in sides[1:]:
        if side != out[-1]:
            out.append(side)
    return " = ".join(out)


def scale_step(p: Problem, name: str, S: Matrix, divisor_sq, value, *, title: str,
               formula: str, sym: str, src_sym: str, rows=None, cols=None,
               note: str = "", latex_name: str | None = None) -> Matrix:
    """A step ``S' = S / sqrt(divisor_sq)`` with sqrt exact (``sqrt(3)`` stays)."""
    root = sqrt(divisor_sq)
    inv = power(root, -1)
    out = tuple(tuple(mul(x, inv) for x in row) for row in S)
    i, j = nonzero_entry(S)
    work = []
    root_line = chain(f"\\sqrt{{{to_latex(divisor_sq)}}}", to_latex(root))
    if " = " in root_line:  # not for sqrt(2), which is all there is to say
        work.append(root_line)
    work.append(chain(entry(sym, i, j), f"\\frac{{{entry(src_sym, i, j)}}}{{{to_latex(root)}}}",
                      f"\\frac{{{to_latex(S[i][j])}}}{{{to_latex(root)}}}", to_latex(out[i][j])))
    if not is_rational(out[i][j]):
        work[-1] += f" \\approx {approx(out[i][j])}"
    p.add_step(name, out, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               note=note, latex_name=latex_name)
    return out


def causal_mask(S: Matrix) -> Matrix:
    """Entries above the diagonal (j > i) become -oo."""
    return tuple(tuple(NEG_INF if j > i else x for j, x in enumerate(row)) for i, row in enumerate(S))


def mask_step(p: Problem, name: str, S: Matrix, value, *, sym: str, src_sym: str,
              rows=None, cols=None) -> Matrix:
    out = causal_mask(S)
    src = src_sym[0].upper() + src_sym[1:]  # the matrix of the entries s'_ij: S'
    work = [f"{entry(sym, 0, 1)} = -\\infty \\quad (j = 2 > i = 1)" if shape(S)[1] > 1 else "",
            f"{entry(sym, 0, 0)} = {entry(src_sym, 0, 0)} = {to_latex(S[0][0])} \\quad (j \\le i)"]
    p.add_step(name, out, value, title="Causal mask",
               formula=rf"M_{{ij}} = \begin{{cases}} {src}_{{ij}} & j \le i \\ -\infty & j > i \end{{cases}}",
               work=[w for w in work if w], rows=rows, cols=cols,
               latex_name="M",
               note=r"A token may attend only to itself and earlier tokens; masked scores are "
                    r"$-\infty$ so their weights are exactly 0.")
    return out


def _shifted(row) -> list:
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
        exps = {k: exp(d) for k, d in _shifted(row)}
        total = add(*exps.values())
        inv = power(total, -1)
        out.append(tuple(_over(exps[j], inv, total) if j in exps else Fraction(0) for j in range(len(row))))
    return tuple(out)


def teaching_row(S: Matrix, live=lambda x: not isinstance(x, NegInf)) -> int:
    """The row a worked softmax (and its weighted sum) shows: the first whose
    live entries are not all equal (equal weights 1/n teach nothing), else the
    first with two live entries, else the first."""
    rows = [[x for x in row if live(x)] for row in S]
    return next((r for r, xs in enumerate(rows) if len(set(map(to_str, xs))) > 1),
                next((r for r, xs in enumerate(rows) if len(xs) > 1), 0))


def aids_allowed(p: Problem) -> bool:
    """Tables of values (e^x, sin/cos, tanh) are printed in hand mode only: in
    calculator mode a calculator is allowed, and a table of computed values
    would give steps away."""
    return p.params.get("numbers") != "calculator"


def shown(p: Problem, x) -> bool:
    """An exact value goes into a worked line: always in hand mode, in
    calculator mode only when short (see :data:`worksheet.model.EXACT_SHOWN_CHARS`)."""
    return p.params.get("numbers") != "calculator" or len(to_latex(x)) <= EXACT_SHOWN_CHARS


def _sub(sym: str, i: int, j: int | str, vector: bool) -> str:
    """``s_{1j}`` / ``s_{12}``, or for a one-row problem (``vector``) ``s_j`` / ``s_2``."""
    jj = j if isinstance(j, str) else j + 1
    if vector:
        return f"{sym}_{{{jj}}}"
    return entry(sym, i, j) if not isinstance(j, str) else f"{sym}_{{{i + 1}{j}}}"


def softmax_step(p: Problem, name: str, S: Matrix, value, *, sym: str, src_sym: str,
                 title: str = "Attention weights (softmax along each row)",
                 formula: str = r"A = \operatorname{softmax}(S')", rows=None, cols=None,
                 work_row: int | None = None, note: str = "", aid: bool = True,
                 latex_name: str | None = "A", vector: bool = False) -> Matrix:
    """Row-wise exact softmax (:func:`softmax_rows`); the work shows one row
    (:func:`teaching_row`) via its maximum ``m_i``, every exponent <= 0.
    ``vector``: a one-row problem, written with one index (``alpha_j``, ``m``).

    Adds (once per problem, hand mode only) an aid with the values of e^x the
    rows need, when every exponent is rational.
    """
    W = softmax_rows(S)
    i = teaching_row(S) if work_row is None else work_row
    m_i = "m" if vector else f"m_{{{i + 1}}}"
    shifted = _shifted(S[i])
    top = next(x for (k, d) in shifted for x in [S[i][k]] if d == 0)
    src_j, src_k = _sub(src_sym, i, "j", vector), _sub(src_sym, i, "k", vector)
    total = add(*(exp(d) for _, d in shifted))
    calculator = p.params.get("numbers") == "calculator"

    def number(x) -> str:  # -1/2 as the table prints it; calculator mode: -0.5 (4 decimals if not exact)
        if not calculator:
            return to_latex(x)
        if not is_rational(x):
            return approx(x)
        s = work_term(x, 0)[0]
        return s[1:-1] if s.startswith("(") else s

    def power_of_e(d) -> str:
        return f"e^{{{number(d)}}}"

    rel = "=" if is_rational(top) or not calculator else "\\approx"
    work = [
        f"{m_i} = \\max_j {src_j} {rel} {number(top)}",
        f"\\sum_j e^{{{src_j} - {m_i}}} = " + join_terms([power_of_e(d) for _, d in shifted])
        + f" \\approx {approx(total)}{terms_count(len(shifted))}",
    ]
    first = shifted[0]
    second = next(((k, d) for k, d in shifted if d != first[1]), shifted[1] if len(shifted) > 1 else None)
    for j, d in [first] + ([second] if second else []):
        exact_part = f"= {to_latex(W[i][j])} \\approx" if shown(p, W[i][j]) else "\\approx"
        work.append(f"{_sub(sym, i, j, vector)} = \\frac{{{power_of_e(d)}}}{{\\sum_k e^{{{src_k} - {m_i}}}}} "
                    f"{exact_part} {approx(W[i][j])}")
    if len(shifted) < shape(S)[1]:
        work.append(r"\text{masked entries: } e^{-\infty} = 0")
    work.append(f"\\sum_j {_sub(sym, i, 'j', vector)} = 1")
    p.add_step(name, W, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               note=note, latex_name=latex_name)
    if aid:
        add_exp_aid(p, S)
    return W


def add_exp_aid(p: Problem, S: Matrix, limit: int = 16) -> None:
    """Add the table of e^{x - row max} (every x - max <= 0) needed for a
    softmax by hand; nothing in calculator mode (:func:`aids_allowed`)."""
    if not aids_allowed(p):
        return
    xs: set = set()
    for row in S:
        live = [x for x in row if not isinstance(x, NegInf)]
        if not all(is_rational(x) for x in live):
            return
        m = max(live)
        xs.update(x - m for x in live)
    existing = next((a for a in p.aids if a.title == EXP_AID), None)
    if existing is not None:
        xs.update(Fraction(x) for x in existing.values)
        p.aids.remove(existing)
    if len(xs) > limit:
        return
    vals = sorted(xs, reverse=True)
    p.aids.append(Aid(EXP_AID, tuple((f"e^{{{to_latex(x)}}}", approx(exp(x))) for x in vals),
                      tuple(vals)))


EXP_AID = "Values of $e^x$ you may need"


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
        exps = [(k, exp(d)) for k, d in _shifted(row)]
        total = add(*(e for _, e in exps))
        inv = power(total, -1)
        row_out = []
        for j in range(len(V[0])):
            top = exp_combination((V[k][j], e) for k, e in exps)
            row_out.append(Fraction(0) if top == 0 else _over(top, inv, total))
        out.append(tuple(row_out))
    return tuple(out)


_over = over_sum  # mul(top, inv) for inv = total**-1, built directly (see exact.over_sum)


def weighted_sum_step(p: Problem, name: str, W: Matrix, V: Matrix, value, *, sym: str,
                      w_sym: str, v_sym: str, logits: Matrix | None = None,
                      title: str = "Output (weighted sum of values)",
                      formula: str = "Z = A V", rows=None, cols=None, note: str = "",
                      latex_name: str | None = "Z", vector: bool = False) -> Matrix:
    """``Z = A V`` exactly; the work shows one entry with decimals, in the row
    the softmax step worked (:func:`teaching_row`) and a column where it is
    not 0.  ``vector``: one row, written ``c_1 = sum_k alpha_k h_{k1}``.

    With ``logits`` (the matrix the softmax was taken of) each exact entry is
    written as a single ratio over the weights' denominator, see :func:`softmax_matmul`.
    """
    Z = softmax_matmul(logits, V) if logits is not None else matmul(W, V)
    i = teaching_row(logits) if logits is not None else teaching_row(W, live=lambda x: x != 0)
    j = next((c for c, x in enumerate(Z[i]) if x != 0), 0)
    lhs = f"{sym}_{{{j + 1}}}" if vector else entry(sym, i, j)
    w_k = f"{w_sym}_{{k}}" if vector else f"{w_sym}_{{{i + 1}k}}"
    terms = join_terms([f"{approx(W[i][k])} \\cdot {lx(V[k][j])}" for k in range(len(V))])
    work = [f"{lhs} = \\sum_k {w_k} \\, {v_sym}_{{k{j + 1}}} \\approx {terms} "
            f"\\approx {approx(Z[i][j])}{terms_count(len(V))}"]
    if not is_rational(Z[i][j]) and shown(p, Z[i][j]):
        work.append(f"{lhs} = {to_latex(Z[i][j])}")
    p.add_step(name, Z, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               note=note, latex_name=latex_name)
    return Z


def np_softmax(S: np.ndarray) -> np.ndarray:
    """Float64 row softmax (the independent check); -inf entries give 0."""
    m = np.max(S, axis=-1, keepdims=True)
    e = np.exp(S - m)
    return e / e.sum(axis=-1, keepdims=True)


def np_causal(S: np.ndarray) -> np.ndarray:
    out = S.copy()
    out[np.triu_indices(S.shape[0], k=1, m=S.shape[1])] = -np.inf
    return out


# ---------------------------------------------------------------- shared by the attention-like kinds
# (self-attention-basic, cross-attention, alignment, next-token, softmax-scaling)


def pleasant_logits(S: np.ndarray, *, limit: float = 6, spread: float = 4) -> bool:
    """Hand-mode test of float logits about to go through a row softmax.

    Every live (finite) entry lies in [-limit, limit], every row spans at
    most ``spread`` (so the e^x table stays short) and some row is not
    constant (so the weights are not all uniform).
    """
    S = np.asarray(S, dtype=np.float64)
    live = np.where(np.isinf(S), np.nan, S)
    spans = np.nanmax(live, axis=1) - np.nanmin(live, axis=1)
    return bool(np.nanmax(np.abs(live)) <= limit and spans.max() <= spread and spans.max() > 0)


def np_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, causal: bool = False,
                 given: dict | None = None) -> dict:
    """Float64 ``softmax(Q K^T / sqrt(d_k)) V`` step by step (the independent check).

    Keys: ``scores``, ``scaled``, ``masked`` (causal only), ``weights``, ``output``.
    A step named in ``given`` takes that value and later steps follow from it
    (carried-forward marking in ``worksheet check``).
    """
    g = given or {}
    out = {"scores": g["scores"] if "scores" in g else Q @ K.T}
    out["scaled"] = logits = g["scaled"] if "scaled" in g else out["scores"] / np.sqrt(K.shape[1])
    if causal:
        out["masked"] = logits = g["masked"] if "masked" in g else np_causal(logits)
    out["weights"] = g["weights"] if "weights" in g else np_softmax(logits)
    out["output"] = g["output"] if "output" in g else out["weights"] @ V
    return out


def attention_steps(p: Problem, Q: Matrix, K: Matrix, V: Matrix, ref: dict, *,
                    causal: bool = False, rows=None, cols=None, scores_note: str = "",
                    output_note: str = "") -> Matrix:
    """The steps ``scores``, ``scaled``, ``masked`` (causal only), ``weights``,
    ``output`` of scaled dot-product attention, checked against ``ref``
    (see :func:`np_attention`); ``rows`` label the queries, ``cols`` the keys.
    Returns the output matrix.
    """
    d_k = shape(K)[1]
    S = product_step(p, "scores", Q, K, ref["scores"], transpose_b=True,
                     title="Scores (query-key dot products)", formula=r"S = Q K^\top",
                     sym="s", a_sym="q", b_sym="k", rows=rows, cols=cols, latex_name="S",
                     note=scores_note)
    S = scale_step(p, "scaled", S, d_k, ref["scaled"], title="Scaled scores",
                   formula=rf"S' = \frac{{S}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{d_k}}}}}",
                   sym="s'", src_sym="s", rows=rows, cols=cols, latex_name="S'",
                   note=rf"Divide by $\sqrt{{d_k}} = \sqrt{{{d_k}}}$, the width of the keys, "
                        r"not by $\sqrt{d_\mathrm{model}}$.")
    src = "s'"
    if causal:
        S = mask_step(p, "masked", S, ref["masked"], sym="M", src_sym="s'", rows=rows, cols=cols)
        src = "M"
    W = softmax_step(p, "weights", S, ref["weights"], sym=r"\alpha", src_sym=src,
                     formula=r"A = \operatorname{softmax}(" + ("M" if causal else "S'") + ")",
                     rows=rows, cols=cols)
    return weighted_sum_step(p, "output", W, V, ref["output"], sym="z", w_sym=r"\alpha", v_sym="v",
                             logits=S, rows=rows, note=output_note)


def extend_work(p: Problem, name: str, before: Sequence[str] = (), after: Sequence[str] = ()) -> None:
    """Add worked lines (LaTeX) before and after the existing work of step ``name``."""
    import dataclasses

    for k, s in enumerate(p.steps):
        if s.name == name:
            p.steps[k] = dataclasses.replace(s, work=tuple(before) + s.work + tuple(after))
            return
    raise KeyError(name)


_TEXT_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
                 "#": r"\#", "^": r"\^{}", "_": r"\_", "%": r"\%", "~": r"\~{}"}


def latex_text(s: str) -> str:
    """``\\text{...}`` of a label (a token) inside a LaTeX formula, specials escaped."""
    return r"\text{" + "".join(_TEXT_SPECIAL.get(c, c) for c in str(s)) + "}"


# ---------------------------------------------------------------- shared by the layer kinds
# (in worksheet.layer_blocks; re-exported here, where the kinds look for them)
from .layer_blocks import (SHORT, Carry, add_row, busiest_entry, carried, dot_work, relabel_last,  # noqa: E402,F401
                           round_exact, round_matrix, sum_step, work_result, work_term)
