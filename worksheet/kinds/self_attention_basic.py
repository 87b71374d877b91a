"""Self-attention with no trained weights (the lectures' first step), row vectors.

    scores = X X^T                                # (n, n): s_ij = x_i . x_j
    masked = scores with -oo where j > i          # only with causal = true
    weights = softmax(scores or masked) by rows   # rows sum to exactly 1
    output = weights X                            # (n, d_model): z_i = sum_j alpha_ij x_j

Steps: ``scores``, ``masked`` (causal only), ``weights``, ``output``.

There is no scaling: the score is the plain dot product, as on the slides.
The key remarks that the scores are symmetric (s_ij = s_ji; the weights are
not, as each row's softmax has its own sum): without trained W^Q, W^K, W^V
what a token looks for is what it offers, and the diagonal s_ii = |x_i|^2
tends to win, which is one reason the trainable projections are needed.

Hand mode draws X from {-1, 0, 1, 2} (mostly 0 and 1; for d_model > 4 from
{-1, 0, 1} with about 2.5 non-zero entries a row) and retries (boundedly)
until every row of X is non-zero, the rows are not all equal, every live
score lies in [-8, 8] and each row of scores spans at most 4 (and some row is
not constant): the scores are integers, so the e^x table printed on the
sheet is the standard one of e^0, ..., e^{-4}, the same for every variant.
Calculator mode uses one-decimal entries in [-1, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..steps import scaled_dot_product as blocks
from ..solution.maths import Prose, as_prose
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.problem import Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from . import base
from . import shared_conventions as cv
from .shared_conventions import Convention

TITLE = "Self-attention without trained weights"
SELF_SCORES = Convention(
    "self_scores",
    r"Scores $S = X X^\top$ (no weights, no scaling): row $i$ is query $i$, column $j$ key $j$; "
    r"output $= A X$.",
)
CONVENTIONS = (cv.TOKEN_ROWS, SELF_SCORES, cv.SOFTMAX, cv.SOFTMAX_FORM, cv.CAUSAL, cv.EXACT)
INPUTS = ("X",)
EMBEDDINGS, SCORES, MASKED, WEIGHTS, OUTPUT = (m.sym(c) for c in "XSMAZ")  # X, S, M, A, Z


@dataclass(frozen=True)
class Params(base.Params):
    conventions_if = {"causal": "causal"}  # the mask is stated only for a causal problem
    seq_len: int = 3  # n, the number of tokens (rows of X)
    d_model: int = 3  # width of the token embeddings X
    causal: bool = False  # mask j > i (decoder self-attention)
    tokens: tuple[str, ...] | None = None  # row labels; default: a lecture sentence of seq_len words

    def validate(self):
        base.positive("--seq-len", self.seq_len, 12)
        base.positive("--d-model", self.d_model, 16)


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d = params.seq_len, params.d_model
    if params.numbers == "calculator":
        return {"X": base.decimal_matrix(rng, n, d)}

    if d <= 4:
        values, probs = (-1, 0, 1, 2), (0.15, 0.35, 0.4, 0.1)
    else:  # wider rows: sparser, so that s_ii = |x_i|^2 stays near the other scores
        nonzero = 2.5 / d
        values, probs = (-1, 0, 1), (0.4 * nonzero, 1 - nonzero, 0.6 * nonzero)

    def make():
        return {"X": base.int_matrix(rng, n, d, values, probs)}

    def ok(m):
        X = to_array(m["X"])
        if not np.all(np.any(X != 0, axis=1)):  # a zero row scores 0 with everything
            return False
        S = X @ X.T
        if n == 1:
            return bool(S[0, 0] <= 6)
        if params.causal:
            S = blocks.np_causal(S)
        return np.unique(X, axis=0).shape[0] > 1 and blocks.pleasant_logits(S, limit=8, spread=4)

    return base.retry(
        "self-attention-basic",
        make,
        ok,
        f"seq_len={n}, d_model={d} with scores in [-6, 6], each row spanning at most 4",
    )


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against.

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    g = given or {}
    X = inputs["X"]
    out = {"scores": base.given_or(g, "scores", lambda: X @ X.T)}
    logits = out["scores"]
    if params.causal:
        out["masked"] = logits = base.given_or(g, "masked", lambda: blocks.np_causal(logits))
    out["weights"] = base.given_or(g, "weights", lambda: blocks.np_softmax(logits))
    out["output"] = base.given_or(g, "output", lambda: out["weights"] @ X)
    return out


def _symmetry_note(S: Matrix) -> Prose:
    n = shape(S)[0]
    example = ()
    if n > 1:
        i, j = 0, 1
        example = (" (here ", m.eq(lines.entry("s", i, j), lines.entry("s", j, i), m.atom(S[i][j])), ")")
    return m.prose(
        as_prose("The scores are symmetric, $s_{ij} = x_i \\cdot x_j = x_j \\cdot x_i = s_{ji}$"),
        *example,
        as_prose(
            ", and $s_{ii} = \\lVert x_i \\rVert^2$; the weights need not be symmetric, as each row's "
            "softmax has its own sum. With no trained weights, what a token looks for is what it offers, "
            "and the diagonal tends to win: one reason attention learns $W^Q$, $W^K$ and $W^V$."
        ),
    )


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    base.require_inputs(inputs, INPUTS, "the token embeddings, one row per token")
    X = inputs["X"]
    n, d = shape(X)
    tokens = base.row_labels(params.tokens, n, "rows of X")
    actual = base.solved_params(params, seq_len=n, d_model=d, tokens=tokens)
    p = Problem(
        "self-attention-basic",
        TITLE,
        actual,
        seed=seed,
        intro=(
            f"Compute {'causal (masked) ' if params.causal else ''}self-attention with no "
            f"trained weights for the tokens {', '.join(tokens)}: the score of token $i$ "
            r"with token $j$ is the dot product $x_i \cdot x_j$ (no scaling), the weights "
            r"are its softmax along each row, and the output is $Z = A X$."
        ),
    )
    p.add_input("X", X, rows=tokens)
    ref = reference({"X": p.inputs["X"].value}, params)

    # 1) scores: every pair of tokens, s_ij = x_i . x_j
    S = blocks.product_step(
        p,
        "scores",
        X,
        X,
        ref["scores"],
        transpose_b=True,
        title="Scores (dot products of the embeddings)",
        formula=line(SCORES, "=", EMBEDDINGS, m.sym(EMBEDDINGS, sup=m.sym("⊤"))),
        sym="s",
        a_sym="x",
        b_sym="x",
        rows=tokens,
        cols=tokens,
        latex_name=SCORES,
        note=_symmetry_note(blocks.matmul(X, blocks.transpose(X))),
    )
    src = "s"
    # 2) causal mask
    if params.causal:
        S = blocks.mask_step(p, "masked", S, ref["masked"], sym="M", src_sym="s", rows=tokens, cols=tokens)
        src = "M"
    # 3) softmax along each row
    W = blocks.softmax_step(
        p,
        "weights",
        S,
        ref["weights"],
        sym=r"\alpha",
        src_sym=src,
        formula=line(WEIGHTS, "=", m.call("softmax", MASKED if params.causal else SCORES)),
        latex_name=WEIGHTS,
        rows=tokens,
        cols=tokens,
    )
    # 4) weighted sum of the embeddings themselves
    blocks.weighted_sum_step(
        p,
        "output",
        W,
        X,
        ref["output"],
        sym="z",
        w_sym=r"\alpha",
        v_sym="x",
        logits=S,
        rows=tokens,
        formula=line(OUTPUT, "=", WEIGHTS, EMBEDDINGS),
        latex_name=OUTPUT,  # Z, the attention output in every kind (Y is a layer norm's output)
        title="Output (weighted sum of the embeddings)",
        note=r"Each output row $z_i = \sum_j \alpha_{ij} x_j$ mixes the embeddings "
        r"themselves: without $W^V$ the values are the inputs.",
    )
    return p


# ---------------------------------------------------------------- mistakes
# All of this kind's mistake rules are those of the attention steps it shares with
# the other attention kinds: worksheet.kinds.mistakes registers them (ATTENTION_LIKE, MASKED).
