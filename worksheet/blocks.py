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
from .exact import (NEG_INF, NegInf, add, exp, exp_combination, is_rational, mul, over_sum, power, rational,
                    softmax_row, sqrt, to_latex)
from .fmt import decimal
from .model import Aid, Matrix, Problem, shape

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


def lx(x) -> str:
    """LaTeX of an exact number, negative ones in parentheses (for products)."""
    s = to_latex(x)
    return f"({s})" if s.startswith("-") else s


def dot_latex(a: Sequence, b: Sequence) -> str:
    """``1 \\cdot 0 + 2 \\cdot 1 + (-1) \\cdot 1``."""
    return " + ".join(f"{lx(x)} \\cdot {lx(y)}" for x, y in zip(a, b))


def entry(sym: str, i: int, j: int) -> str:
    """``s_{12}`` for 0-based (i, j)."""
    return f"{sym}_{{{i + 1}{j + 1}}}" if max(i, j) < 9 else f"{sym}_{{{i + 1},{j + 1}}}"


def approx(x, places: int = 4) -> str:
    return decimal(x, places)


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
    n, m = shape(C)
    i, j = entry_at or (0, min(1, m - 1))
    col = [row[j] for row in Bm]
    b_part = f"{b_sym}_{{{j + 1}}}" if transpose_b else f"{b_sym}_{{:,{j + 1}}}"
    work = [f"{entry(sym, i, j)} = {a_sym}_{{{i + 1}}} \\cdot {b_part} = "
            f"{dot_latex(A[i], col)} = {to_latex(C[i][j])}"]
    p.add_step(name, C, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               latex_name=latex_name, note=note)
    return C


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
    i, j = 0, min(1, shape(S)[1] - 1)
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
    work = [f"{entry(sym, 0, 1)} = -\\infty \\quad (j = 2 > i = 1)" if shape(S)[1] > 1 else "",
            f"{entry(sym, 0, 0)} = {entry(src_sym, 0, 0)} = {to_latex(S[0][0])} \\quad (j \\le i)"]
    p.add_step(name, out, value, title="Causal mask",
               formula=r"M_{ij} = \begin{cases} S'_{ij} & j \le i \\ -\infty & j > i \end{cases}",
               work=[w for w in work if w], rows=rows, cols=cols,
               latex_name="M",
               note=r"A token may attend only to itself and earlier tokens; masked scores are "
                    r"$-\infty$ so their weights are exactly 0.")
    return out


def softmax_rows(S: Matrix) -> Matrix:
    return tuple(tuple(softmax_row(list(row))) for row in S)


def softmax_step(p: Problem, name: str, S: Matrix, value, *, sym: str, src_sym: str,
                 title: str = "Attention weights (softmax along each row)",
                 formula: str = r"A = \operatorname{softmax}(S')", rows=None, cols=None,
                 work_row: int | None = None, note: str = "", aid: bool = True,
                 latex_name: str | None = "A") -> Matrix:
    """Row-wise exact softmax; work shows one whole row via the row maximum.

    Adds (once per problem) an aid with the values of e^x the rows need,
    when every exponent is rational.
    """
    W = softmax_rows(S)
    n, m = shape(S)
    if work_row is None:  # the first row with two or more unmasked entries
        live = [sum(not isinstance(x, NegInf) for x in row) for row in S]
        work_row = next((r for r, c in enumerate(live) if c > 1), 0)
    i = work_row
    row = S[i]
    live = [(j, x) for j, x in enumerate(row) if not isinstance(x, NegInf)]
    top = max(live, key=lambda jx: float(jx[1]))[1]
    shifted = [(j, add(x, mul(-1, top))) for j, x in live]
    work = [
        f"m_{{{i + 1}}} = \\max_j {src_sym}_{{{i + 1}j}} = {to_latex(top)}",
        f"\\sum_j e^{{{src_sym}_{{{i + 1}j}} - m_{{{i + 1}}}}} = "
        + " + ".join(f"e^{{{to_latex(d)}}}" for _, d in shifted)
        + f" \\approx {approx(add(*(exp(d) for _, d in shifted)))}",
    ]
    for j, d in shifted[:2]:
        work.append(f"{entry(sym, i, j)} = \\frac{{e^{{{to_latex(d)}}}}}{{\\sum_k e^{{{src_sym}_{{{i + 1}k}} - m_{{{i + 1}}}}}}} = "
                    f"{to_latex(W[i][j])} \\approx {approx(W[i][j])}")
    if len(live) < m:
        work.append(r"\text{masked entries: } e^{-\infty} = 0")
    work.append(f"\\sum_j {sym}_{{{i + 1}j}} = 1")
    p.add_step(name, W, value, title=title, formula=formula, work=work, rows=rows, cols=cols,
               note=note, latex_name=latex_name)
    if aid:
        add_exp_aid(p, S)
    return W


def add_exp_aid(p: Problem, S: Matrix, limit: int = 16) -> None:
    """Add the table of e^{x - row max} needed for a softmax by hand."""
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
    than the sum of n separate fractions that ``matmul(weights, V)`` gives.
    """
    out = []
    for row in S:
        live = [(k, x) for k, x in enumerate(row) if not isinstance(x, NegInf)]
        m = max((x for _, x in live), key=float)
        rational = all(type(x) is Fraction for _, x in live)
        shifted = [(k, x - m if rational else add(x, mul(-1, m))) for k, x in live]
        # ratio_of_exp_sums(...) for each column j, with the row's e^d and
        # 1 / sum e^d computed once
        exps = [(k, exp(d)) for k, d in shifted]
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
                      latex_name: str | None = "Z") -> Matrix:
    """``Z = A V`` exactly; the work shows one entry with decimals.

    With ``logits`` (the matrix the softmax was taken of) each exact entry is
    written as a single ratio, see :func:`softmax_matmul`.
    """
    Z = softmax_matmul(logits, V) if logits is not None else matmul(W, V)
    i = 1 if shape(W)[0] > 1 and any(isinstance(x, Fraction) and x == 0 for x in W[0][1:]) else 0
    j = 0
    terms = " + ".join(f"{approx(W[i][k])} \\cdot {lx(V[k][j])}" for k in range(len(V)))
    work = [f"{entry(sym, i, j)} = \\sum_k {w_sym}_{{{i + 1}k}} \\, {v_sym}_{{k{j + 1}}} \\approx {terms} "
            f"\\approx {approx(Z[i][j])}"]
    if not is_rational(Z[i][j]):
        work.append(f"{entry(sym, i, j)} = {to_latex(Z[i][j])}")
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
# (multi-head-attention, positional-encoding, layer-norm, feed-forward, encoder-block)

import dataclasses as _dataclasses  # noqa: E402
import math as _math  # noqa: E402

from .exact import to_str as _to_str  # noqa: E402
from .fmt import terminating_places as _terminating_places  # noqa: E402
from .model import verify as _verify  # noqa: E402

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
    return f"{lhs} {rel} {' + '.join(terms)} {res}"


def sum_step(p: Problem, name: str, A: Matrix, B: Matrix, value, *, title: str, formula: str,
             sym: str, a_sym: str, b_sym: str, rows=None, cols=None, latex_name: str | None = None,
             note: str = "", entry_at: tuple[int, int] | None = None) -> Matrix:
    """A step ``C = A + B`` (entrywise; a one-row ``B`` is added to every row), one entry worked."""
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
        p.steps[-1] = _dataclasses.replace(s, exact=R, rounded=True, places=self.places)
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
