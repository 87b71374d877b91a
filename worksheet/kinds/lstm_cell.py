"""One LSTM cell step (Hochreiter & Schmidhuber 1997, with a forget gate), row vectors.

For each time step t = 1..T (x_t is row t of X; h_0 = h0, c_0 = c0):

    f_t = σ(x_t W_f + h_{t-1} W_hf + b_f)     # forget gate: what of c_{t-1} to keep
    i_t = σ(x_t W_i + h_{t-1} W_hi + b_i)     # input ("add") gate
    g_t = tanh(x_t W_g + h_{t-1} W_hg + b_g)  # candidate values
    o_t = σ(x_t W_o + h_{t-1} W_ho + b_o)     # output gate
    c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t
    h_t = o_t ⊙ tanh(c_t)

with σ(a) = 1 / (1 + e^{-a}).  This is ``torch.nn.LSTMCell`` with
weight_ih = [W_i; W_f; W_g; W_o]^T (PyTorch orders the gates i, f, g, o),
weight_hh = [W_hi; W_hf; W_hg; W_ho]^T and bias_ih + bias_hh = b (tested).

Steps ``f``, ``i``, ``g``, ``o``, ``c``, ``h``; with ``steps`` = T > 1 they
are suffixed with t (``f_1`` ... ``h_1``, ``f_2`` ...).  c_t and h_t are
carried rounded (4 decimals, the rounding chain's; see
:mod:`worksheet.kinds.recurrent`).

Hand mode draws x from {-1, 0, 1, 2} and the weights, biases, h0 and c0 from
{-1, 0, 1}, retried (boundedly) until every pre-activation lies in [-3, 3],
the four gates of the first step are not all zero before the activation, and
every entry of every c_t is at least 0.05 away from 0; the sheet prints the σ and tanh values the problem needs
(tanh(c_t) at the 3-decimal c_t the student carries).  Calculator mode uses
one-decimal entries in [-1, 1].
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import mistakes
from ..exact import add, mul, tanh
from ..solution.maths import Node, Row
from ..solution.maths.build import line, number, paren, sym, thin
from ..solution.number_format import decimal
from ..solution.problem import Matrix, Problem, shape
from ..steps import line_trees as lines
from . import base, recurrent as rec
from . import shared_conventions as cv
from ..steps import scaled_dot_product as blocks
from . import screen
from .recurrent import SIGMA, TANH

TITLE = "LSTM cell"
CONVENTIONS = (cv.RECURRENT, cv.EXACT)
GATES = (
    ("f", SIGMA, "Forget gate"),
    ("i", SIGMA, "Input gate"),
    ("g", TANH, "Candidate values"),
    ("o", SIGMA, "Output gate"),
)
WEIGHTS = tuple(f"{w}_{g}" for g, _, _ in GATES for w in ("W", "W_h", "b"))
INPUTS = (
    ("x", "X", "h0", "c0")
    + tuple(f"W_{g}" for g, _, _ in GATES)
    + tuple(f"W_h{g}" for g, _, _ in GATES)
    + tuple(f"b_{g}" for g, _, _ in GATES)
)
NEEDED = INPUTS[2:]


class Params(rec.Params):
    pass


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    T, d, k = params.steps, params.d_in, params.d_h

    def make():
        m, draw = rec.draw_start(rng, params, ("h0", "c0"))
        return {**m, **rec.gate_weights(rng, draw, "".join(g for g, _, _ in GATES), d, k)}

    def ok(m):
        f = {n: rec.to_np(v) for n, v in m.items()}
        ref = screen.precise_floats("lstm-cell", params, m)  # the same on any CPU
        if ref is None:  # a division by zero: numpy's nan
            return False
        x, h0 = rec.np_rows(f)[:1], f["h0"]
        pres = [rec.np_affine(x, f[f"W_{g}"], h0, f[f"W_h{g}"], f[f"b_{g}"]) for g, _, _ in GATES]
        if any(not np.any(a) for a in pres) or any(
            np.abs(ref[rec.name("c", t, T)]).min() < 0.05 for t in range(1, T + 1)
        ):
            return False
        if params.numbers == "hand" and any(  # tanh(c_t) is read from the table of [-3, 3]
            np.abs(np.round(ref[rec.name("c", t, T)], 2)).max() > rec.HAND_RANGE - 0.05 for t in range(1, T + 1)
        ):
            return False
        if params.numbers == "calculator":
            return True
        return rec.drift_ok(solve, m, params) and all(
            np.abs(
                np.round(
                    rec.np_affine(
                        rec.np_rows(f)[t - 1 : t],
                        f[f"W_{g}"],
                        ref[rec.name("h", t - 1, T)] if t > 1 else h0,
                        f[f"W_h{g}"],
                        f[f"b_{g}"],
                    ),
                    2,
                )
            ).max()
            <= rec.HAND_RANGE
            for t in range(1, T + 1)
            for g, _, _ in GATES
        )

    return base.retry("lstm-cell", make, ok, f"steps={T}, d_in={d}, d_h={k} with pre-activations in [-3, 3]")


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The unrounded float64 chain of the LSTM formulas above, step by step
    (the independent computation); ``given`` as in :func:`recurrent.recorder`."""
    h, c = inputs["h0"], inputs["c0"]
    X, out, put = rec.recorder(inputs, given)
    for t in range(1, len(X) + 1):
        x = X[t - 1 : t]
        gates = {}
        for gate, act, _ in GATES:
            gates[gate] = put(
                gate,
                t,
                lambda gate=gate, act=act: act.np(
                    rec.np_affine(x, inputs[f"W_{gate}"], h, inputs[f"W_h{gate}"], inputs[f"b_{gate}"])
                ),
            )
        c_prev = c
        c = put("c", t, lambda: gates["f"] * c_prev + gates["i"] * gates["g"])
        h = put("h", t, lambda: gates["o"] * rec.precise.tanh(c))
    return out


def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    return rec.solve_cell(
        "lstm-cell",
        inputs,
        params,
        NEEDED,
        "give h0, c0, W_f, W_i, W_g, W_o, W_hf, W_hi, W_hg, W_ho, b_f, b_i, b_g and b_o",
        _solve,
        seed,
    )


def _intro(runs: str, places: int, hand: bool) -> str:
    return (
        f"Run an LSTM cell for {runs} from $h_0$ and $c_0$. Row convention: "
        r"$f_t = \sigma(x_t W_f + h_{t-1} W_{hf} + b_f)$, and likewise the input gate $i_t$ and the output "
        r"gate $o_t$; the candidate $g_t = \tanh(x_t W_g + h_{t-1} W_{hg} + b_g)$; "
        r"$c_t = f_t \odot c_{t-1} + i_t \odot g_t$ and $h_t = o_t \odot \tanh(c_t)$, with "
        r"$\sigma(a) = 1/(1 + e^{-a})$ and $\odot$ the entrywise product. "
        + (
            f"Carry $c$ and $h$ rounded to {places} decimals and read $\\sigma$ and $\\tanh$ from the table."
            if hand
            else f"Carry $c$ and $h$ rounded to {places} decimals."
        )
    )


def _solve(inputs, params, seed, key, X, d_h, places) -> Problem:
    T = shape(X)[0]
    hand = params.numbers == "hand"
    p, chain, table = rec.start(
        "lstm-cell",
        TITLE,
        _intro,
        inputs,
        params,
        seed,
        key,
        X,
        d_h,
        NEEDED,
        {"h0": sym("h", sub=0), "c0": sym("c", sub=0)},
        reference,
    )
    h, c = inputs["h0"], inputs["c0"]
    for t in range(1, T + 1):
        x = (X[t - 1],)
        G = rec.gate_steps(chain, GATES, t, T, x, h, inputs, table)
        if hand:  # the rounding chain: the gates as the table gives them (worksheet.policy.pencil)
            G = {k: rec.rounded(v, rec.GATE_PLACES) for k, v in G.items()}
        gf = {k: rec.to_np(v) for k, v in G.items()}
        c_exact = (tuple(add(mul(f, cp), mul(i, g)) for f, cp, i, g in zip(G["f"][0], c[0], G["i"][0], G["g"][0])),)
        c_before = {rec.name("c", t - 1, T): c} if t > 1 else {}  # c_0: the input
        c_new = chain.add(
            rec.name("c", t, T),
            c_exact,
            chain.fresh(rec.name("c", t, T), **{rec.name(k, t, T): v for k, v in G.items()}, **c_before),
            places=places,
            title=rec.titled("Cell state", t, T),
            formula=_c_formula(t, T),
            work=_c_work(t, T, G, c, c_exact, places),
            latex_name=rec.sub("c", t, T),
        )
        if table is not None:
            table.need(TANH, c_new)
        tanh_c = rec.apply(TANH, c_new)
        if hand:  # tanh(c) read from the table
            tanh_c = rec.rounded(tanh_c, rec.GATE_PLACES)
        h_exact = (tuple(mul(o, tc) for o, tc in zip(G["o"][0], tanh_c[0])),)
        h = chain.add(
            rec.name("h", t, T),
            h_exact,
            gf["o"] * rec.to_np(tanh_c),
            places=places,
            title=rec.titled("Hidden state", t, T),
            formula=_h_formula(t, T),
            work=_h_work(t, T, G, c_new, h_exact, places),
            latex_name=rec.sub("h", t, T),
        )
        c = c_new
    return rec.finish(p, table, places, hand)


@lru_cache(maxsize=64)
def _c_formula(t: int, T: int) -> Row:
    """``c_{t} = f_{t} ⊙ c_{t-1} + i_{t} ⊙ g_{t}``."""
    sub = rec.sub
    return line(
        sub("c", t, T), "=", sub("f", t, T), "⊙", rec.prev_state("c", t, T), "+", sub("i", t, T), "⊙", sub("g", t, T)
    )


@lru_cache(maxsize=64)
def _h_formula(t: int, T: int) -> Row:
    """``h_{t} = o_{t} ⊙ tanh(c_{t})``."""
    return line(rec.sub("h", t, T), "=", rec.sub("o", t, T), "⊙", TANH.of(rec.sub("c", t, T)))


def _in_product(text: str) -> Node:
    """A printed decimal inside a product: a negative one in parentheses (all 4 places kept)."""
    return paren(number(text)) if text.startswith("-") else number(text)


def _c_work(t, T, G, c_prev, c_exact, places) -> list[Row]:
    """``c_{1,1} = f_{1,1} \\, c_{0,1} + i_{1,1} \\, g_{1,1} ≈ 0.8808 ⋅ 1 + 0.7311 ⋅ 0.7616 → ...``."""
    decimal_at = blocks.decimal_at

    out = []
    for j in rec.units(len(c_exact[0])):
        f, cp, i, g = G["f"][0][j], c_prev[0][j], G["i"][0][j], G["g"][0][j]
        d = _digits([f, cp, i, g], lambda v: v[0] * v[1] + v[2] * v[3], c_exact[0][j])
        out.append(
            line(
                rec.sub("c", t, T, j),
                "=",
                rec.sub("f", t, T, j),
                thin(),
                rec.prev_unit("c", t, T, j),
                "+",
                rec.sub("i", t, T, j),
                thin(),
                rec.sub("g", t, T, j),
                "≈",
                number(decimal_at(f, d)),
                "⋅",
                lines.work_term(cp, 0, digits=d)[0],
                "+",
                number(decimal_at(i, d)),
                "⋅",
                _in_product(decimal_at(g, d)),
                rec.to_places(c_exact[0][j], places),
            )
        )
    return out


def _digits(values, combine, result) -> int:
    """The places of a line's rounded factors (4, or more where the printed result needs them)."""
    return blocks.fit_places(values, combine, result, at=lambda x, p: blocks.term_value(x, 0, p))


def _h_work(t, T, G, c_new, h_exact, places) -> list[Row]:
    """``h_{1,1} = o_{1,1} tanh(c_{1,1}) ≈ 0.8808 ⋅ tanh(0.52) ≈ 0.8808 ⋅ 0.4777 → ...``."""
    decimal_at = blocks.decimal_at

    out = []
    for j in rec.units(len(h_exact[0])):
        o, tc = G["o"][0][j], tanh(c_new[0][j])
        d = _digits([o, tc], lambda v: v[0] * v[1], h_exact[0][j])
        out.append(
            line(
                rec.sub("h", t, T, j),
                "=",
                rec.sub("o", t, T, j),
                TANH.of(rec.sub("c", t, T, j)),
                "≈",
                number(decimal(o)),
                "⋅",
                TANH.of(lines.unwrapped(rec.num(c_new[0][j]))),
                "≈",
                number(decimal_at(o, d)),
                "⋅",
                lines.work_term(tc, 0, digits=d)[0],
                rec.to_places(h_exact[0][j], places),
            )
        )
    return out


# ---------------------------------------------------------------- mistakes
# Steps f, i, g, o, c, h; with several time steps each is suffixed _t (f_2),
# and its rules read the step's own time step.
for _g in ("f", "i", "o"):
    mistakes.register("lstm-cell", _g, "tanh-for-sigmoid")(rec.gate_with("tanh", _g))
mistakes.register("lstm-cell", "g", "tanh-for-sigmoid")(rec.gate_with("sigma", "g"))


@mistakes.register("lstm-cell", "c", "c-without-forget")
def _c_without_forget(v, params):
    return v["i"] * v["g"]


@mistakes.register("lstm-cell", "h", "h-from-c-without-tanh")
def _h_without_tanh(v, params):
    return v["o"] * v["c"]
