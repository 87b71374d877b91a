"""Encoder-decoder (cross-) attention, row vectors.

    Q = X_dec W^Q                                  # (m, d_k): queries from the decoder
    K = H_enc W^K,  V = H_enc W^V                  # (n, d_k), (n, d_v): keys and values from the encoder
    scores = Q K^T                                 # (m, n): row i = decoder token i, column j = source token j
    scaled = scores / sqrt(d_k)
    weights = softmax(scaled) by rows              # rows sum to exactly 1
    output = weights V                             # (m, d_v)

Steps: ``Q``, ``K``, ``V``, ``scores``, ``scaled``, ``weights``, ``output``.

The decoder length m and the encoder length n may differ, so the scores are
m x n.  The key says where each matrix comes from: Q from the decoder, K and
V from the encoder output (some slides say the decoder takes Q and K from the
encoder; that is wrong, an erratum of lecture slides).  There is no causal mask: a
decoder token may look at every source token.

Default labels: the decoder rows are the shifted-right target "<s> I'm a
student" (its first m tokens; "I'm" rather than "I", which beside a row of
numbers reads as the digit 1), the encoder rows a lecture sentence of n
words ("Je suis étudiant" for n = 3).

Hand mode draws X_dec and H_enc from {-1, 0, 1, 2} and the weights from
{-1, 0, 1}, so Q, K, V and the scores are integers, keeps d_k a perfect
square (scaled scores have denominator sqrt(d_k)), and retries (boundedly)
until every scaled score lies in [-6, 6], each row spans at most 4 and V is
at least half non-zero, so the e^x table on the sheet stays short.
Calculator mode uses one-decimal entries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import mistakes
from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ShapeError
from ..solution.maths.build import line, sym
from ..solution.problem import Matrix, Problem, shape, to_array
from . import base
from . import shared_conventions as cv

TITLE = "Cross-attention (encoder-decoder attention)"
CONVENTIONS = (cv.ROWS, cv.CROSS, cv.SCORES, cv.SOFTMAX, cv.SOFTMAX_FORM, cv.OUTPUT, cv.EXACT)
INPUTS = ("X_dec", "H_enc", "W_Q", "W_K", "W_V")

# decoder input: the translation of "Je suis étudiant", shifted right; "I'm", not "I", which
# beside a row of numbers reads as the digit 1
TARGET = ("<s>", "I'm", "a", "student")
DEC, ENC = sym("dec", upright=True), sym("enc", upright=True)  # the decoder's and the encoder's marks
X_DEC, H_ENC = sym("X", sub=DEC), sym("H", sub=ENC)  # the decoder's tokens, the encoder's output


@dataclass(frozen=True)
class Params(base.Params, base.KeyValueWidths):
    dec_len: int = 2  # m, the number of decoder tokens (rows of X_dec, queries)
    enc_len: int = 3  # n, the number of source tokens (rows of H_enc, keys and values)
    d_model: int = 4  # width of X_dec and H_enc
    d_k: int | None = None  # width of queries and keys; None: 4 when generating, W_K's width when solving
    d_v: int | None = None  # width of the values; None: the same as d_k
    tokens: tuple[str, ...] | None = None  # decoder row labels; default: the first dec_len of "<s> I'm a student"
    source_tokens: tuple[str, ...] | None = None  # encoder row labels; default: a lecture sentence of enc_len words

    def validate(self):
        base.positive("dec_len", self.dec_len, 12)
        base.positive("enc_len", self.enc_len, 12)
        base.positive("--d-model", self.d_model, 16)
        self.validate_widths()


def default_target(m: int) -> tuple[str, ...]:
    return TARGET[:m] if m <= len(TARGET) else tuple(f"y{i + 1}" for i in range(m))


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    m, n, d = params.dec_len, params.enc_len, params.d_model
    d_k, d_v = params.key_width, params.value_width
    if params.numbers == "calculator":
        return {
            "X_dec": base.decimal_matrix(rng, m, d),
            "H_enc": base.decimal_matrix(rng, n, d),
            "W_Q": base.decimal_matrix(rng, d, d_k),
            "W_K": base.decimal_matrix(rng, d, d_k),
            "W_V": base.decimal_matrix(rng, d, d_v),
        }
    root = np.sqrt(d_k)

    def make():
        tokens, weights = ((-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15)), ((-1, 0, 1), (0.25, 0.45, 0.3))
        return {
            "X_dec": base.int_matrix(rng, m, d, *tokens),
            "H_enc": base.int_matrix(rng, n, d, *tokens),
            "W_Q": base.int_matrix(rng, d, d_k, *weights),
            "W_K": base.int_matrix(rng, d, d_k, *weights),
            "W_V": base.int_matrix(rng, d, d_v, *weights),
        }

    def ok(mats):
        f = {k: to_array(v) for k, v in mats.items()}
        scaled = (f["X_dec"] @ f["W_Q"]) @ (f["H_enc"] @ f["W_K"]).T / root
        V = f["H_enc"] @ f["W_V"]
        if n == 1:  # one key: every weight is 1, nothing to spread
            return bool(np.abs(scaled).max() <= 6 and np.count_nonzero(V) >= V.size // 2)
        return blocks.pleasant_logits(scaled) and np.count_nonzero(V) >= V.size // 2

    return base.retry(
        "cross-attention", make, ok, f"dec_len={m}, enc_len={n}, d_model={d}, d_k={d_k} with scaled scores in [-6, 6]"
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
    Q = base.given_or(g, "Q", lambda: inputs["X_dec"] @ inputs["W_Q"])  # (m, d_k)
    K = base.given_or(g, "K", lambda: inputs["H_enc"] @ inputs["W_K"])  # (n, d_k)
    V = base.given_or(g, "V", lambda: inputs["H_enc"] @ inputs["W_V"])  # (n, d_v)
    return {"Q": Q, "K": K, "V": V, **blocks.np_attention(Q, K, V, given=g)}


def check_inputs(inputs: dict[str, Matrix]) -> None:
    """Every matrix present, shapes fitting (ShapeError names both matrices)."""
    base.require_inputs(
        inputs,
        INPUTS,
        {"X_dec": "the decoder tokens, one row each", "H_enc": "the encoder output, one row per source token"},
    )
    X, H = inputs["X_dec"], inputs["H_enc"]
    if shape(X)[1] != shape(H)[1]:
        raise ShapeError(
            f"X_dec is {shape(X)[0]} x {shape(X)[1]} and H_enc is {shape(H)[0]} x {shape(H)[1]}: "
            "decoder and encoder rows need the same width d_model"
        )
    blocks.require_matmul("X_dec", X, "W_Q", inputs["W_Q"])
    blocks.require_matmul("H_enc", H, "W_K", inputs["W_K"])
    blocks.require_matmul("H_enc", H, "W_V", inputs["W_V"])
    (_, q), (_, k) = shape(inputs["W_Q"]), shape(inputs["W_K"])
    if q != k:
        raise ShapeError(
            f"W_Q is {shape(inputs['W_Q'])[0]} x {q} and W_K is {shape(inputs['W_K'])[0]} x {k}: "
            "queries and keys need the same width d_k"
        )


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    check_inputs(inputs)
    X, H = inputs["X_dec"], inputs["H_enc"]
    (m, d), n = shape(X), shape(H)[0]
    d_k, d_v = shape(inputs["W_K"])[1], shape(inputs["W_V"])[1]
    if params.d_k is not None and params.d_k != d_k:
        raise ShapeError(f"d_k = {params.d_k} but W_K has {d_k} columns")
    for field, labels, rows, name in (
        ("tokens", params.tokens, m, "X_dec"),
        ("source_tokens", params.source_tokens, n, "H_enc"),
    ):
        if labels is not None and len(labels) != rows:
            raise InputError(f"{len(labels)} labels for {rows} rows of {name}", field=field)
    target = params.tokens or default_target(m)
    source = params.source_tokens or base.default_tokens(n)
    actual = base.solved_params(
        params, dec_len=m, enc_len=n, d_model=d, d_k=d_k, d_v=d_v, tokens=target, source_tokens=source
    )
    p = Problem(
        "cross-attention",
        TITLE,
        actual,
        seed=seed,
        intro=(
            f"The decoder, at the tokens {', '.join(target)}, attends over the encoder output for "
            f"the source tokens {', '.join(source)}. Compute cross-attention with $d_k = {d_k}$: "
            r"queries from the decoder, $Q = X_\mathrm{dec} W^Q$; keys and values from the encoder, "
            r"$K = H_\mathrm{enc} W^K$ and $V = H_\mathrm{enc} W^V$."
        ),
    )
    p.add_input("X_dec", X, rows=target, latex_name=X_DEC)
    p.add_input("H_enc", H, rows=source, latex_name=H_ENC)
    for w in ("W_Q", "W_K", "W_V"):
        p.add_input(w, inputs[w])
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)

    # 1) the three projections: Q from the decoder, K and V from the encoder
    Q = blocks.product_step(
        p,
        "Q",
        X,
        inputs["W_Q"],
        ref["Q"],
        title="Queries (from the decoder)",
        formula=line(sym("Q"), "=", X_DEC, sym("W", sup="Q")),
        latex_name=sym("Q"),
        sym=sym("q"),
        a_sym=sym("x", sup=DEC),
        b_sym=sym("W", sup="Q"),
        rows=target,
        note=r"The queries come from the decoder: one row per target token, what "
        r"each target position is looking for in the source.",
    )
    K = blocks.product_step(
        p,
        "K",
        H,
        inputs["W_K"],
        ref["K"],
        title="Keys (from the encoder)",
        formula=line(sym("K"), "=", H_ENC, sym("W", sup="K")),
        latex_name=sym("K"),
        sym=sym("k"),
        a_sym=sym("h"),
        b_sym=sym("W", sup="K"),
        rows=source,
        note=r"The keys come from the encoder output, one row per source token "
        r"(not from the decoder).",
    )
    V = blocks.product_step(
        p,
        "V",
        H,
        inputs["W_V"],
        ref["V"],
        title="Values (from the encoder)",
        formula=line(sym("V"), "=", H_ENC, sym("W", sup="V")),
        latex_name=sym("V"),
        sym=sym("v"),
        a_sym=sym("h"),
        b_sym=sym("W", sup="V"),
        rows=source,
        note=r"The values come from the encoder as well: the decoder mixes source "
        r"information. (Slides that take $Q$ and $K$ from the encoder and $V$ "
        r"from the decoder have it the wrong way round.)",
    )
    # 2) scores (m x n), scaled, softmax over the source tokens, weighted sum of encoder values
    blocks.scaled_dot_product(
        p,
        Q,
        K,
        V,
        ref,
        rows=target,
        cols=source,
        scores_note=(
            rf"The scores are {m} $\times$ {n}: one row per decoder token "
            r"(query), one column per source token (key); no causal mask, "
            r"every source token is visible."
        ),
        output_note=r"Row $i$ is what decoder token $i$ takes from the source sentence.",
    )
    return p


# ---------------------------------------------------------------- mistakes
# The rules of the attention steps (scores, scaled, weights) are shared with the
# other attention kinds (worksheet.kinds.mistakes); these are cross-attention's own.
def _projected_from(source: str, step: str):
    """``step`` (Q, K or V) projected from the other sequence: source W_step."""

    def rule(v, params):
        return v[source] @ v["W_" + step]

    return rule


# queries from the encoder, keys and values from the decoder
for _step, _source in (("Q", "H_enc"), ("K", "X_dec"), ("V", "X_dec")):
    mistakes.register("cross-attention", _step, "cross-sources-swapped")(_projected_from(_source, _step))


@mistakes.register("cross-attention", "output", "weights-times-X")
def _weights_times_h(v, params):
    return v["weights"] @ v["H_enc"]
