"""Seq2seq attention: alignment scores of one decoder state against the encoder states.

Row convention: s is the decoder state (1, d), h_j the j-th row of H (n, d).

    dot          e_j = s . h_j
    scaled-dot   e_j = s . h_j / sqrt(d)
    general      e_j = s W_a h_j^T                 # W_a: (d, d)
    additive     e_j = tanh([s, h_j] W_a) v_a^T    # [s, h_j]: (1, 2d), W_a: (2d, d_a), v_a: (1, d_a)
    cosine       e_j = s . h_j / (|s| |h_j|)
    location     e = s W_a                         # W_a: (d, n); e_j = (s W_a)_j, no h_j in the score
    weights      alpha = softmax(e)                # (1, n), sums to exactly 1
    context      c = alpha H                       # (1, d): sum_j alpha_j h_j

The location-based score (Luong et al. 2015, a_t = softmax(W_a s_t) with
column vectors) reads only the decoder state: in row convention
alpha = softmax(s W_a), W_a of shape d x n, one column per source position.
The encoder states enter only the context vector.

Steps: ``scores``, ``weights``, ``context``.  The score is the parameter
``score`` (default ``dot``); on the command line it is a per-problem setting:
``worksheet build alignment:score=additive``; in an input file
``score = "additive"``.  W_a is given only for general and additive, v_a only
for additive; a matrix the score does not use is an error (it usually means
the score was forgotten).  The location score's W_a is d x n.

Exactness: every score stays exact; additive keeps tanh exact (``tanh(1)``)
and the key shows its decimals, cosine keeps the square roots
(``2*sqrt(6)/9``).  A zero vector has no cosine: solving rejects it.

Hand mode (default sizes: n = 3 encoder states of width d = 4, or d = 2 for
additive, whose [s, h_j] is 2d wide; d_a = 2):

* dot, general, location: s and H from {-1, 0, 1, 2}, W_a from {-1, 0, 1}; integer
  scores in [-6, 6] spanning at most 4 (retried, bounded), e^x table printed;
* scaled-dot: the same with d a perfect square (sqrt(d) an integer);
* cosine: s and every h_j are drawn with an integer length (sum of squares a
  perfect square, e.g. (1, 2, 2) has length 3; with d = 2 they are (3, 4)
  and (4, 3) with signs) and at least two non-zero entries, so every cosine
  is rational; at most one score is 0;
* additive: W_a from {-1, 0, 1} and v_a from {-1, 1} with every tanh argument
  in [-2, 2]; the sheet prints a table of the tanh values and of the e^x the
  softmax needs (the scores are not rational, so these are decimals).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import mistakes
from ..steps import precise
from ..steps import standard_tables as tables
from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ParamError, ShapeError
from ..exact import add, is_rational, mul, power, sqrt, tanh
from ..solution.maths import Node, as_prose
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.maths.nodes import Value
from ..solution.problem import Aid, Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from ..policy.pencil import round_places
from . import base
from . import shared_conventions as cv
from .shared_conventions import Convention
from . import screen

TITLE = "Seq2seq attention: alignment scores and context vector"
ALIGNMENT_SCORES = Convention(
    "alignment_scores",
    r"Alignment: $e_j = \mathrm{score}(s, h_j)$, $\alpha = \operatorname{softmax}(e)$ over the "
    r"encoder states, context $c = \sum_j \alpha_j h_j$.",
)
SOFTMAX_FORM_E = Convention(
    "softmax_form_e",
    r"Softmax by hand: subtract the maximum score $m = \max_k e_k$, "
    r"$\alpha_j = \exp(e_j - m) / \sum_k \exp(e_k - m)$ (every exponent $\le 0$; $\exp(x) = e^x$, "
    r"as $e_j$ names a score).",
    calculator=r"Softmax: $\alpha_j = \exp(e_j - m) / \sum_k \exp(e_k - m)$ with $m$ the largest score "
    r"(subtracting it changes nothing and keeps every exponent $\le 0$).",
)
CONVENTIONS = (ALIGNMENT_SCORES, SOFTMAX_FORM_E, cv.EXACT)  # the scores are e_j: s is the decoder state
INPUTS = ("s", "H", "W_a", "v_a")
SCORES = ("dot", "scaled-dot", "general", "additive", "cosine", "location")
NEEDS = {
    "dot": (),
    "scaled-dot": (),
    "general": ("W_a",),
    "additive": ("W_a", "v_a"),
    "cosine": (),
    "location": ("W_a",),
}


# ---------------------------------------------------------------- symbols
S_SYM, E_SYM, U_SYM, C_SYM, ALPHA = m.sym("s"), m.sym("e"), m.sym("u"), m.sym("c"), m.sym("alpha")
H_SYM, H_ROW = m.sym("H"), m.sym("h")
W_A, V_A = m.sym("W", sub="a"), m.sym("v", sub="a")
TOP = m.sym("⊤")
E_J, H_J = m.sym("e", sub="j"), m.sym("h", sub="j")


def _h(j: int) -> Node:
    """``h_{j}``, the j-th encoder state (1-based)."""
    return m.sym("h", sub=j)


FORMULA = {
    "dot": line(E_J, "=", S_SYM, "⋅", H_J),
    "scaled-dot": line(E_J, "=", m.frac(line(S_SYM, "⋅", H_J), m.sqrt(m.sym("d")))),
    "general": line(E_J, "=", S_SYM, m.thin(), W_A, m.thin(), m.sym("h", sub="j", sup=TOP)),
    "additive": line(
        E_J, "=", m.call("tanh", line(m.brackets(S_SYM, H_J), m.thin(), W_A), sized=True), m.sym("v", sub="a", sup=TOP)
    ),
    "cosine": line(E_J, "=", m.frac(line(S_SYM, "⋅", H_J), line(m.norm(S_SYM), m.thin(), m.norm(H_J)))),
    "location": line(
        E_SYM, "=", S_SYM, m.thin(), W_A, ",", m.quad(), E_J, "=", m.indexed(line(S_SYM, m.thin(), W_A), "j")
    ),
}
WHO = {
    "dot": "dot product (Luong 2015)",
    "scaled-dot": "scaled dot product (Vaswani 2017)",
    "general": "general, bilinear (Luong 2015)",
    "additive": "additive (Bahdanau 2015)",
    "cosine": "content-based cosine (Graves 2014)",
    "location": "location-based (Luong 2015)",
}


@dataclass(frozen=True)
class Params(base.Params):
    score: str = "dot"  # dot, scaled-dot, general, additive, cosine or location
    seq_len: int = 3  # n, the number of encoder states (rows of H)
    d_model: int | None = None  # d, the width of s and h_j; None: 4 (2 for additive, whose [s, h_j] is 2d wide)
    d_a: int = 2  # additive only: the width of the hidden layer (columns of W_a, v_a)
    tokens: tuple[str, ...] | None = None  # labels of the encoder states; default: a lecture sentence of seq_len words

    def validate(self):
        if self.score not in SCORES:
            raise ParamError(f"score must be one of {', '.join(SCORES)}, not '{self.score}'")
        base.positive("--seq-len", self.seq_len, 12)
        base.positive("--d-model", self.width, 16)
        base.positive("d_a", self.d_a, 8)
        if self.score == "scaled-dot":
            base.require_square_d_k(self, self.width, "d_model")

    @property
    def width(self) -> int:
        if self.d_model is not None:
            return self.d_model
        return 2 if self.score == "additive" else 4


# ---------------------------------------------------------------- generating


# long: the kind's hand-mode draw: one retry rule per guarantee the README lists
def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:  # noqa: C901
    n, d, d_a, score = params.seq_len, params.width, params.d_a, params.score
    if params.numbers == "calculator":

        def vectors(rows):  # cosine: no zero vector (it has no direction)
            return base.retry(
                "alignment",
                lambda: base.decimal_matrix(rng, rows, d),
                lambda m: score != "cosine" or all(any(x != 0 for x in r) for r in m),
                f"non-zero vectors of width {d}",
            )

        out = {"s": vectors(1), "H": vectors(n)}
        if score == "general":
            out["W_a"] = base.decimal_matrix(rng, d, d)
        elif score == "location":
            out["W_a"] = base.decimal_matrix(rng, d, n)
        elif score == "additive":
            out["W_a"] = base.decimal_matrix(rng, 2 * d, d_a)
            out["v_a"] = base.decimal_matrix(rng, 1, d_a)
        return out

    def make():
        if score == "cosine":
            return {"s": base.norm_vectors(rng, 1, d, "alignment"), "H": base.norm_vectors(rng, n, d, "alignment")}
        out = {
            "s": base.int_matrix(rng, 1, d, (-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15)),
            "H": base.int_matrix(rng, n, d, (-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15)),
        }
        if score == "general":
            out["W_a"] = base.int_matrix(rng, d, d, (-1, 0, 1), (0.25, 0.45, 0.3))
        elif score == "location":
            out["W_a"] = base.int_matrix(rng, d, n, (-1, 0, 1), (0.25, 0.45, 0.3))
        elif score == "additive":
            out["W_a"] = base.int_matrix(rng, 2 * d, d_a, (-1, 0, 1), (0.3, 0.4, 0.3))
            out["v_a"] = base.int_matrix(rng, 1, d_a, (-1, 1))
        return out

    def ok(m):
        f = {k: to_array(v) for k, v in m.items()}
        if np.count_nonzero(f["H"]) < f["H"].size // 2:
            return False
        if score == "additive":
            pre = _np_additive_pre(f["s"], f["H"], f["W_a"])
            e = screen.precise_floats("alignment", params, m)["scores"]  # tanh: the same everywhere
            return bool(np.abs(pre).max() <= 2 and n > 1 and np.ptp(e) > 0.05) or (n == 1 and np.abs(pre).max() <= 2)
        ref = screen.precise_floats("alignment", params, m)
        if ref is None:  # a division by zero (a zero vector's cosine): numpy's nan
            return False
        e = ref["scores"]
        if score == "cosine" and np.count_nonzero(e == 0) > 1:  # mostly orthogonal: dull
            return False
        if n == 1:
            return bool(np.abs(e).max() <= 6)
        return blocks.pleasant_logits(e)

    return base.retry("alignment", make, ok, f"score={score}, seq_len={n}, d_model={d} with scores in [-6, 6]")


# ---------------------------------------------------------------- float reference


def _np_additive_pre(s: np.ndarray, H: np.ndarray, W_a: np.ndarray) -> np.ndarray:
    """[s, h_j] W_a for every j: (n, d_a)."""
    concat = np.hstack([np.repeat(s, H.shape[0], axis=0), H])  # (n, 2d)
    return concat @ W_a


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against.

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    g = given or {}
    H = inputs["H"]
    e = base.given_or(g, "scores", lambda: _np_scores(inputs, params.score))
    weights = base.given_or(g, "weights", lambda: base.np_softmax_all(e))
    return {"scores": e, "weights": weights, "context": base.given_or(g, "context", lambda: weights @ H)}


def _np_scores(inputs: dict[str, np.ndarray], score: str) -> np.ndarray:
    """The scores e_j of ``score`` between s and every h_j: (1, n)."""
    s, H = inputs["s"], inputs["H"]
    if score == "dot":
        return s @ H.T
    if score == "scaled-dot":
        return s @ H.T / precise.sqrt(s.shape[1])
    if score == "general":
        return s @ inputs["W_a"] @ H.T
    if score == "location":
        return s @ inputs["W_a"]
    if score == "additive":
        return (precise.tanh(_np_additive_pre(s, H, inputs["W_a"])) @ inputs["v_a"].T).T
    return s @ H.T / (precise.norm(s) * precise.norm(H, axis=1))[None, :]


# ---------------------------------------------------------------- solving


def check_inputs(inputs: dict[str, Matrix], score: str) -> None:
    base.require_inputs(
        inputs,
        ("s", "H", *NEEDS[score]),
        {
            "s": "the decoder state, one row",
            "H": "the encoder states, one row each",
            **{name: f"the {score} score needs it" for name in NEEDS[score]},
        },
    )
    for name in ("W_a", "v_a"):
        if name in inputs and name not in NEEDS[score]:
            users = " and ".join(k for k, v in NEEDS.items() if name in v)
            raise InputError(
                f"the {score} score does not use {name} (only {users} do): remove it or set score", field=name
            )
    s, H = inputs["s"], inputs["H"]
    blocks.require_shape("s", s, 1, None, "the decoder state is one row")
    d = shape(s)[1]
    if shape(H)[1] != d:
        raise ShapeError(
            f"s is 1 x {d} and H is {shape(H)[0]} x {shape(H)[1]}: "
            "the decoder state and the encoder states need the same width d"
        )
    if score == "general":
        blocks.require_matmul("s", s, "W_a", inputs["W_a"])
        blocks.require_shape("W_a", inputs["W_a"], d, d, f"the general score needs W_a to be d x d with d = {d}")
    if score == "location":
        n = shape(H)[0]
        blocks.require_shape(
            "W_a",
            inputs["W_a"],
            d,
            n,
            f"the location score needs W_a to be d x n = {d} x {n}: one column per encoder state",
        )
    if score == "additive":
        W_a, v_a = inputs["W_a"], inputs["v_a"]
        blocks.require_shape("W_a", W_a, 2 * d, None, f"[s, h_j] is 1 x {2 * d}, so W_a needs {2 * d} rows")
        if shape(v_a) != (1, shape(W_a)[1]):
            raise ShapeError(
                f"W_a is {shape(W_a)[0]} x {shape(W_a)[1]} and v_a is {shape(v_a)[0]} x {shape(v_a)[1]}: "
                f"v_a must be 1 x {shape(W_a)[1]}, one row as wide as W_a"
            )
    if score == "cosine":
        for name, rows in (("s", s), ("H", H)):
            for i, row in enumerate(rows):
                if all(x == 0 for x in row):
                    raise InputError(
                        "a zero vector has no direction, so its cosine is undefined", field=name, row=i + 1
                    )


def _dot(a, b):
    return add(*(mul(x, y) for x, y in zip(a, b)))


def _row(values) -> Matrix:
    return (tuple(values),)


def _worked_column(x, W: Matrix, out) -> int:
    """The column c of ``out = x W`` to work out: a non-zero entry with the most
    non-zero terms (the first such); a 0 result teaches nothing."""
    return max(
        range(len(out)), key=lambda c: (out[c] != 0, sum(1 for a, row in zip(x, W) if a != 0 and row[c] != 0), -c)
    )


# long: one branch per score function (dot, scaled-dot, general, additive, cosine, location) with its worked lines
def _scores(p: Problem, inputs: dict, score: str, ref: np.ndarray, labels) -> Matrix:  # noqa: PLR0915
    """The step ``scores`` for any score function, with its worked lines."""
    s, H = inputs["s"][0], inputs["H"]
    n, d = len(H), len(s)
    j = min(1, n - 1)  # the representative entry e_j (0-based): the second, unless it is 0
    if ref[0][j] == 0 and np.any(ref[0] != 0):
        j = int(np.flatnonzero(ref[0])[0])
    e_j, h_j = m.sym("e", sub=j + 1), _h(j + 1)
    work = []
    note = ""
    calc = blocks.calculator(p)  # a calculator sheet's lines write its decimals as decimals

    def num(x) -> Node:  # a calculator's decimals as decimals
        return lines.nx(x) if calc else Value(x)

    chain = None  # hand mode, additive: the scores as the sheet's tanh table gives them
    if score in ("dot", "scaled-dot"):
        dots = [_dot(s, h) for h in H]
        if score == "dot":
            e = dots
            work.append(line(e_j, "=", S_SYM, "⋅", h_j, "=", lines.dot_latex(s, H[j], calc), "=", num(e[j])))
        else:
            root = sqrt(d)
            e = [mul(x, power(root, -1)) for x in dots]
            work.append(line(m.sqrt(m.sym("d")), "=", m.sqrt(d), "=", Value(root)))
            work.append(
                line(
                    e_j,
                    "=",
                    m.frac(line(S_SYM, "⋅", h_j), m.sqrt(d)),
                    "=",
                    m.frac(lines.dot_latex(s, H[j], calc), Value(root)),
                    "=",
                    num(e[j]),
                )
            )
    elif score == "general":
        W_a = inputs["W_a"]
        u = blocks.matmul((s,), W_a)[0]  # (d,): s W_a
        e = [_dot(u, h) for h in H]
        c = _worked_column(s, W_a, u)
        col = [row[c] for row in W_a]
        u_c = m.sym("u", sub=c + 1)
        work.append(
            line(
                U_SYM, "=", S_SYM, m.thin(), W_A, ",", m.quad(), u_c, "=", lines.dot_latex(s, col, calc), "=", num(u[c])
            )
        )
        work.append(line(U_SYM, "=", S_SYM, m.thin(), W_A, "=", m.row_matrix(u)))
        work.append(line(e_j, "=", U_SYM, "⋅", h_j, "=", lines.dot_latex(u, H[j], calc), "=", num(e[j])))
        note = r"Compute $u = s W_a$ once; then every score is $u \cdot h_j$."
    elif score == "location":
        W_a = inputs["W_a"]
        e = blocks.matmul((s,), W_a)[0]  # (n,): s W_a, one score per source position
        col = [row[j] for row in W_a]
        work.append(
            line(
                e_j,
                "=",
                m.indexed(line(S_SYM, m.thin(), W_A), j + 1),
                "=",
                lines.dot_latex(s, col, calc),
                "=",
                num(e[j]),
            )
        )
        note = (
            r"The location-based score looks only at the decoder state $s$: $W_a$ has one column per "
            r"source position, and the encoder states enter only the context vector."
        )
    elif score == "additive":
        W_a, v_a = inputs["W_a"], inputs["v_a"][0]
        pre = [blocks.matmul((tuple(s) + tuple(h),), W_a)[0] for h in H]  # (n, d_a)
        e = [add(*(mul(v, tanh(a)) for v, a in zip(v_a, row))) for row in pre]
        concat = tuple(s) + tuple(H[j])
        c = _worked_column(concat, W_a, pre[j])
        col = [row[c] for row in W_a]
        sh = m.brackets(S_SYM, h_j)  # [s, h_j]
        work.append(line(sh, "=", m.row_matrix(concat)))
        a_jc = m.sym("a", sub=m.join((j + 1, c + 1), ","))
        w_c = m.sym("W", sub=m.join((m.sym("a"), ":", c + 1), ","))  # column c of W_a
        work.append(line(a_jc, "=", sh, "⋅", w_c, "=", lines.dot_latex(concat, col, calc), "=", num(pre[j][c])))
        work.append(line(sh, m.thin(), W_A, "=", m.row_matrix(pre[j])))
        if p.params.get("numbers") != "calculator":  # the rounding chain: tanh as the table gives it
            chain = (
                (
                    tuple(
                        round_places(sum((Fraction(v) * _table_tanh(a) for v, a in zip(v_a, row)), Fraction(0)))
                        for row in pre
                    )
                ),
            )
        terms = m.join((line(m.call("tanh", Value(a)), "⋅", lines.lx(v)) for a, v in zip(pre[j], v_a)), "+")
        exact = ("=", Value(e[j])) if not is_rational(e[j]) or len(v_a) > 1 else ()
        shown = lines.approx_number(e[j] if chain is None else chain[0][j])
        tanh_sh = m.call("tanh", line(sh, m.thin(), W_A), sized=True)
        work.append(line(e_j, "=", tanh_sh, m.sym("v", sub="a", sup=TOP), "=", terms, *exact, "≈", shown))
        note = (
            r"$\tanh$ of a non-zero rational number is irrational, so the scores stay exact as "
            r"$\tanh(\cdot)$ terms; use their decimals."
        )
    else:  # cosine
        dots = [_dot(s, h) for h in H]
        ss = _dot(s, s)
        hh = [_dot(h, h) for h in H]
        e = [mul(x, power(sqrt(mul(ss, q)), -1)) for x, q in zip(dots, hh)]
        work.append(line(m.norm(S_SYM), "=", m.sqrt(lines.dot_latex(s, s, calc)), "=", num(sqrt(ss))))
        work.append(line(m.norm(h_j), "=", m.sqrt(lines.dot_latex(H[j], H[j], calc)), "=", num(sqrt(hh[j]))))
        work.append(line(S_SYM, "⋅", h_j, "=", lines.dot_latex(s, H[j], calc), "=", num(dots[j])))
        approx = () if is_rational(e[j]) else ("≈", lines.approx_number(e[j]))
        den = line(Value(sqrt(ss)), "⋅", Value(sqrt(hh[j])))  # lengths: no sign
        work.append(line(e_j, "=", m.frac(Value(dots[j]), den), "=", Value(e[j]), *approx))
        note = (
            r"A cosine lies in $[-1, 1]$ whatever the lengths, so these scores are small and the "
            r"weights come out fairly flat."
        )
    E = _row(e)
    p.add_step(
        "scores",
        E,
        ref,
        title=f"Alignment scores ({score})",
        formula=FORMULA[score],
        work=work,
        note=note,
        cols=labels,
        latex_name=E_SYM,
    )
    if chain is not None:
        p.steps[-1] = dataclasses.replace(p.steps[-1], chain=chain)
    return E


def _table_tanh(a) -> Fraction:
    """tanh(a) as the sheet's table gives it (4 places; tanh(-x) = -tanh x, tanh 0 = 0)."""
    return Fraction(0) if a == 0 else Fraction(blocks.approx(tanh(a)))


def _exp_grid(score: str, d_a: int | None) -> int | None:
    """Scores no rational grid holds are read from the standard table of e^{-x} at every
    0.01 down to the lowest exponent: a cosine lies in [-1, 1], an additive score in
    [-d_a, d_a] (|v_a| = 1 by hand).  None: the kind's rational e^x table."""
    return 2 if score == "cosine" else 2 * d_a if score == "additive" else None


def _tanh_aid(inputs: dict) -> Aid:
    """The additive score's tanh table: tanh at every integer in [-2, 2] (the generator's
    range; wider for a file's larger ones), or for a file's fractions the values it needs."""
    s, H, W_a = inputs["s"][0], inputs["H"], inputs["W_a"]
    args = {abs(Fraction(a)) for h in H for a in blocks.matmul((tuple(s) + tuple(h),), W_a)[0]}
    if all(a.denominator == 1 for a in args):
        return tables.integer_aid("tanh", max(2, int(max(args))))
    needed = sorted(args - {0})
    return Aid(
        r"Values of $\tanh x$ you may need ($\tanh(-x) = -\tanh x$)",
        tuple((str(m.call("tanh", Value(a))), blocks.approx(tanh(a))) for a in needed),  # Aid: LaTeX pairs
        tuple(needed),
    )


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    score = params.score
    check_inputs(inputs, score)
    s, H = inputs["s"], inputs["H"]
    n, d = shape(H)
    labels = base.row_labels(params.tokens, n, "rows of H")
    actual = base.solved_params(params, seq_len=n, d_model=d, tokens=labels)
    if score == "additive":
        actual["d_a"] = shape(inputs["W_a"])[1]
    p = Problem(
        "alignment",
        TITLE,
        actual,
        seed=seed,
        intro=m.prose(
            as_prose(
                f"A decoder state $s$ attends over the encoder states $h_1, \\dots, h_{{{n}}}$ (the rows of $H$, "
            ),
            f"for the source tokens {', '.join(labels)}) with the {WHO[score]} score ",  # the user's tokens: words
            FORMULA[score],
            as_prose(
                r". Compute the scores, their softmax $\alpha$ and the context vector $c = \sum_j \alpha_j h_j = \alpha H$."
            ),
        ),
    )
    p.add_input("s", s)
    p.add_input("H", H, rows=labels)
    for name in NEEDS[score]:
        p.add_input(name, inputs[name], latex_name={"W_a": W_A, "v_a": V_A}[name])
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)
    d_a = shape(inputs["W_a"])[1] if score == "additive" else None

    # 1) one score per encoder state
    E = _scores(p, inputs, score, ref["scores"], labels)
    # 2) softmax over the encoder states (e^x table when the scores are rational)
    W = blocks.softmax_step(
        p,
        "weights",
        E,
        ref["weights"],
        sym=ALPHA,
        src_sym=str(E_SYM),  # the block writes exp(e_j - m) for a score named by the LaTeX "e"
        title="Attention weights (softmax of the scores)",
        formula=line(
            m.sym("alpha", sub="j"),
            "=",
            m.frac(m.call("exp", E_J), line(m.total("k"), m.call("exp", m.sym("e", sub="k")))),
        ),
        cols=labels,
        latex_name=ALPHA,
        vector=True,
        exp_grid=_exp_grid(score, d_a),
    )
    if score == "additive" and blocks.aids_allowed(p):  # the standard table of tanh, before the e^x
        p.aids.insert(0, _tanh_aid(inputs))
    # 3) context vector: the weighted sum of the encoder states
    grid = _exp_grid(score, d_a) is not None and p.params.get("numbers") != "calculator"  # weights carried
    blocks.weighted_sum_step(
        p,
        "context",
        W,
        H,
        ref["context"],
        sym=C_SYM,
        w_sym=ALPHA,
        v_sym=H_ROW,
        logits=None if grid else E,
        rounded=grid,
        title="Context vector (weighted sum of the encoder states)",
        formula=line(C_SYM, "=", ALPHA, H_SYM, "=", m.total("j"), m.sym("alpha", sub="j"), H_J),
        latex_name=C_SYM,
        vector=True,
    )
    return p


# ---------------------------------------------------------------- mistakes
def _scaled_dot(v, params) -> np.ndarray | None:
    """``s . h_j`` of an alignment with the scaled-dot score (else None: no scaling to get wrong)."""
    if params.get("score") != "scaled-dot":
        return None
    return v["s"] @ v["H"].T


@mistakes.register("alignment", "scores", "no-scaling")
def _alignment_no_scaling(v, params):
    return _scaled_dot(v, params)


@mistakes.register("alignment", "scores", "scaled-by-d_k")
def _alignment_by_d(v, params):
    dots = _scaled_dot(v, params)
    return None if dots is None else dots / v["s"].shape[1]
