"""Scaled dot-product attention (Vaswani et al. 2017, eq. 1), row vectors.

    Q = X W^Q,  K = X W^K,  V = X W^V            # (n, d_k), (n, d_k), (n, d_v)
    scores = Q K^T                                # (n, n): row i = query i
    scaled = scores / sqrt(d_k)
    masked = scaled with -oo where j > i          # only with causal = true
    weights = softmax(scaled or masked) by rows   # rows sum to exactly 1
    output = weights V                            # (n, d_v)

Steps: ``Q``, ``K``, ``V`` (when projecting from ``X``), ``scores``,
``scaled``, ``masked`` (causal only), ``weights``, ``output``.

Hand mode draws X from {-1, 0, 1, 2} and the weights from {-1, 0, 1}, so Q,
K, V and the scores are integers, and keeps d_k a perfect square so the
scaled scores are rationals with denominator sqrt(d_k).  Draws are retried
(boundedly) until every scaled score lies in [-6, 6] and each row spans at
most 4, so the e^x table printed on the sheet stays short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ShapeError
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.problem import Matrix, Problem, shape, to_array
from . import base
from . import shared_conventions as cv

TITLE = "Scaled dot-product attention"
CONVENTIONS = (cv.ROWS, cv.SCORES, cv.SOFTMAX, cv.SOFTMAX_FORM, cv.OUTPUT, cv.CAUSAL, cv.EXACT)
INPUTS = ("X", "W_Q", "W_K", "W_V", "Q", "K", "V")


@dataclass(frozen=True)
class Params(base.Params, base.KeyValueWidths):
    conventions_if = {"causal": "causal"}  # the mask is stated only for a causal problem
    seq_len: int = 3  # n, the number of tokens (rows of X)
    d_model: int = 4  # width of the token embeddings X
    d_k: int | None = None  # width of queries and keys; None: 4 when generating, K's width when solving
    d_v: int | None = None  # width of the values; None: the same as d_k
    causal: bool = False  # mask j > i (decoder self-attention)
    tokens: tuple[str, ...] | None = None  # row labels; default: a lecture sentence of seq_len words

    def validate(self):
        base.positive("--seq-len", self.seq_len, 12)
        base.positive("--d-model", self.d_model, 16)
        self.validate_widths()


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d, d_k, d_v = params.seq_len, params.d_model, params.key_width, params.value_width
    if params.numbers == "calculator":
        return {
            "X": base.decimal_matrix(rng, n, d),
            "W_Q": base.decimal_matrix(rng, d, d_k),
            "W_K": base.decimal_matrix(rng, d, d_k),
            "W_V": base.decimal_matrix(rng, d, d_v),
        }
    root = math.isqrt(d_k)

    def make():
        return {
            "X": base.int_matrix(rng, n, d, (-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15)),
            "W_Q": base.int_matrix(rng, d, d_k, (-1, 0, 1), (0.25, 0.45, 0.3)),
            "W_K": base.int_matrix(rng, d, d_k, (-1, 0, 1), (0.25, 0.45, 0.3)),
            "W_V": base.int_matrix(rng, d, d_v, (-1, 0, 1), (0.25, 0.45, 0.3)),
        }

    def ok(m):
        X = to_array(m["X"])
        S = (X @ to_array(m["W_Q"])) @ (X @ to_array(m["W_K"])).T / root
        if params.causal:
            S = blocks.np_causal(S)
        live = np.where(np.isinf(S), np.nan, S)
        spread = np.nanmax(live, axis=1) - np.nanmin(live, axis=1)
        V = X @ to_array(m["W_V"])
        return (
            np.nanmax(np.abs(live)) <= 6
            and spread.max() <= 4
            and spread.max() > 0
            and np.count_nonzero(V) >= V.size // 2
        )

    return base.retry("attention", make, ok, f"seq_len={n}, d_model={d}, d_k={d_k} with scaled scores in [-6, 6]")


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against:
    the projections (from X only), then :func:`worksheet.steps.scaled_dot_product.np_attention`.

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    g = given or {}
    if "X" in inputs:
        X = inputs["X"]
        Q = base.given_or(g, "Q", lambda: X @ inputs["W_Q"])
        K = base.given_or(g, "K", lambda: X @ inputs["W_K"])
        V = base.given_or(g, "V", lambda: X @ inputs["W_V"])
    else:
        Q, K, V = inputs["Q"], inputs["K"], inputs["V"]
    return {"Q": Q, "K": K, "V": V, **blocks.np_attention(Q, K, V, causal=params.causal, given=g)}


def check_inputs(inputs: dict[str, Matrix]) -> bool:
    """Validate names and shapes; True when projecting from X."""
    project = "X" in inputs
    names = ("X", "W_Q", "W_K", "W_V") if project else ("Q", "K", "V")
    other = "Q, K and V" if project else "X, W_Q, W_K and W_V"
    base.require_inputs(inputs, names, f"give X, W_Q, W_K and W_V, or Q, K and V; not {other} mixed")
    extra = sorted(set(inputs) & set(INPUTS) - set(names))
    if extra:
        raise InputError(
            f"give either X, W_Q, W_K, W_V or Q, K, V, not both (found {', '.join(extra)})", field=extra[0]
        )
    if project:
        for w in ("W_Q", "W_K", "W_V"):
            blocks.require_matmul("X", inputs["X"], w, inputs[w])
        if shape(inputs["W_Q"])[1] != shape(inputs["W_K"])[1]:
            raise ShapeError(
                f"W_Q is {'x'.join(map(str, shape(inputs['W_Q'])))} and W_K is "
                f"{'x'.join(map(str, shape(inputs['W_K'])))}: queries and keys need the same width d_k"
            )
    else:
        if shape(inputs["Q"])[1] != shape(inputs["K"])[1]:
            raise ShapeError(
                f"Q is {shape(inputs['Q'])[0]} x {shape(inputs['Q'])[1]} and K is "
                f"{shape(inputs['K'])[0]} x {shape(inputs['K'])[1]}: Q K^T needs the same number of columns"
            )
        if shape(inputs["K"])[0] != shape(inputs["V"])[0]:
            raise ShapeError(
                f"K has {shape(inputs['K'])[0]} rows and V has {shape(inputs['V'])[0]}: every key needs a value"
            )
    return project


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    project = check_inputs(inputs)
    first = inputs["X"] if project else inputs["Q"]
    n = shape(first)[0]
    d_k = shape(inputs["W_K"] if project else inputs["K"])[1]
    if params.d_k is not None and params.d_k != d_k:
        raise ShapeError(f"d_k = {params.d_k} but the keys have {d_k} columns")
    tokens = base.row_labels(params.tokens, n)
    keys = tokens if project or shape(inputs["K"])[0] == n else base.default_tokens(shape(inputs["K"])[0])
    # the sizes actually solved (generation limits do not apply to given numbers)
    actual = base.solved_params(
        params,
        seq_len=n,
        d_model=shape(first)[1],
        d_k=d_k,
        d_v=shape(inputs["W_V"] if project else inputs["V"])[1],
        tokens=tokens,
    )
    p = Problem(
        "attention",
        TITLE,
        actual,
        seed=seed,
        intro=(
            f"Compute {'causal (masked) ' if params.causal else ''}scaled dot-product attention "
            f"for the tokens {', '.join(tokens)} with $d_k = {d_k}$."
        ),
    )
    for name in INPUTS:
        if name in inputs:
            rows = tokens if name in ("X", "Q") else keys if name in ("K", "V") else None
            p.add_input(name, inputs[name], rows=rows)
    ref = reference({k: v.value for k, v in p.inputs.items()}, params)

    if project:
        X = inputs["X"]
        Q = blocks.product_step(
            p,
            "Q",
            X,
            inputs["W_Q"],
            ref["Q"],
            title="Queries",
            formula=line(m.sym("Q"), "=", m.sym("X"), m.sym("W", sup="Q")),
            latex_name=m.sym("Q"),
            sym=m.sym("q"),
            a_sym=m.sym("x"),
            b_sym=m.sym("W", sup="Q"),
            rows=tokens,
        )
        K = blocks.product_step(
            p,
            "K",
            X,
            inputs["W_K"],
            ref["K"],
            title="Keys",
            formula=line(m.sym("K"), "=", m.sym("X"), m.sym("W", sup="K")),
            latex_name=m.sym("K"),
            sym=m.sym("k"),
            a_sym=m.sym("x"),
            b_sym=m.sym("W", sup="K"),
            rows=keys,
        )
        V = blocks.product_step(
            p,
            "V",
            X,
            inputs["W_V"],
            ref["V"],
            title="Values",
            formula=line(m.sym("V"), "=", m.sym("X"), m.sym("W", sup="V")),
            latex_name=m.sym("V"),
            sym=m.sym("v"),
            a_sym=m.sym("x"),
            b_sym=m.sym("W", sup="V"),
            rows=keys,
        )
    else:
        Q, K, V = inputs["Q"], inputs["K"], inputs["V"]
    blocks.scaled_dot_product(p, Q, K, V, ref, causal=params.causal, rows=tokens, cols=keys)
    return p


# ---------------------------------------------------------------- mistakes
# All of this kind's mistake rules are those of the attention steps it shares with
# the other attention kinds: worksheet.kinds.mistakes registers them (ATTENTION_LIKE, MASKED, SCALED).
