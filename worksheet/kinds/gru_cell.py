"""One GRU cell step (Cho et al. 2014) in PyTorch's convention, row vectors.

For each time step t = 1..T (x_t is row t of X; h_0 = h0):

    z_t = σ(x_t W_z + h_{t-1} W_hz + b_z)                       # update gate
    r_t = σ(x_t W_r + h_{t-1} W_hr + b_r)                       # reset gate
    n_t = tanh(x_t W_n + b_n + r_t ⊙ (h_{t-1} W_hn + b_hn))     # candidate
    h_t = (1 - z_t) ⊙ n_t + z_t ⊙ h_{t-1}

with σ(a) = 1 / (1 + e^{-a}).  This is ``torch.nn.GRUCell``: weight_ih =
[W_r; W_z; W_n]^T (PyTorch orders the gates r, z, n), weight_hh =
[W_hr; W_hz; W_hn]^T, bias_ih = [b_r; b_z; b_n] with b_r, b_z holding the
whole gate biases, and bias_hh = [0; 0; b_hn] (b_hn stays inside r ⊙ (...);
tested).  Cho et al. apply the reset gate before the product,
tanh(x W_n + (r ⊙ h) W_hn + b_n), and write h_t = z ⊙ h_{t-1} + ... with z
and 1 - z the other way round in the paper; the sheet says which convention
it uses, and ``check`` names both as mistakes (``reset-outside``,
``gru-cho-update``).

Steps ``z``, ``r``, ``n``, ``h``; with ``steps`` = T > 1 suffixed with t.
The candidate's pre-activation holds r, so it is carried rounded (4 decimals
in hand mode, 4 in calculator mode) before its tanh, and h_t is carried
rounded likewise (see :mod:`worksheet.kinds.recurrent`).

Hand mode draws x from {-1, 0, 1, 2} and the weights, biases and h0 from
{-1, 0, 1}, retried (boundedly) until every pre-activation lies in [-3, 3]
(the candidate's for r = 1), h W_hn + b_hn is not all zero (so r matters) and
z and r are not all σ(0); the sheet prints the σ and tanh values needed.
Calculator mode uses one-decimal entries in [-1, 1].
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import mistakes
from ..steps import scaled_dot_product as blocks
from ..exact import add, mul
from ..solution.maths import Row
from ..solution.maths.build import line, number, paren, sym, thin
from ..solution.number_format import decimal
from ..solution.problem import Matrix, Problem, shape, verify
from ..steps import line_trees as lines
from . import base, recurrent as rec
from . import shared_conventions as cv
from . import screen
from .recurrent import SIGMA, TANH

TITLE = "GRU cell"
CONVENTIONS = (cv.RECURRENT, cv.EXACT)
INPUTS = ("x", "X", "h0", "W_z", "W_r", "W_n", "W_hz", "W_hr", "W_hn", "b_z", "b_r", "b_n", "b_hn")
NEEDED = INPUTS[2:]
GATES = (("z", SIGMA, "Update gate"), ("r", SIGMA, "Reset gate"))  # n holds r: its own step below


class Params(rec.Params):
    pass


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    T, d, k = params.steps, params.d_in, params.d_h

    def make():
        m, draw = rec.draw_start(rng, params, ("h0",))
        m.update(rec.gate_weights(rng, draw, "zrn", d, k))
        m["b_hn"] = draw(rng, 1, k)
        return m

    def ok(m):
        f = {n: rec.to_np(v) for n, v in m.items()}
        ref = screen.precise_floats("gru-cell", params, m)  # the same on any CPU
        if ref is None:  # a division by zero: numpy's nan
            return False
        X = rec.np_rows(f)
        for t in range(1, T + 1):
            x, h = X[t - 1 : t], ref[rec.name("h", t - 1, T)] if t > 1 else f["h0"]
            zr = [rec.np_affine(x, f[f"W_{g}"], h, f[f"W_h{g}"], f[f"b_{g}"]) for g in "zr"]
            hn = h @ f["W_hn"] + f["b_hn"]
            if t == 1 and (not np.any(hn) or not any(np.any(a) for a in zr)):
                return False
            if (
                params.numbers == "hand"
                and max(np.abs(np.round(a, 2)).max() for a in zr + [x @ f["W_n"] + f["b_n"] + hn]) > rec.HAND_RANGE
            ):
                return False
        return params.numbers == "calculator" or rec.drift_ok(solve, m, params)

    return base.retry("gru-cell", make, ok, f"steps={T}, d_in={d}, d_h={k} with pre-activations in [-3, 3]")


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The unrounded float64 chain of the GRU formulas above, step by step
    (the independent computation); ``given`` as in :func:`recurrent.recorder`."""
    h = inputs["h0"]
    X, out, put = rec.recorder(inputs, given)
    for t in range(1, len(X) + 1):
        x, hp = X[t - 1 : t], h
        z = put("z", t, lambda: rec.np_sigmoid(rec.np_affine(x, inputs["W_z"], hp, inputs["W_hz"], inputs["b_z"])))
        r = put("r", t, lambda: rec.np_sigmoid(rec.np_affine(x, inputs["W_r"], hp, inputs["W_hr"], inputs["b_r"])))
        n = put(
            "n",
            t,
            lambda: rec.precise.tanh(x @ inputs["W_n"] + inputs["b_n"] + r * (hp @ inputs["W_hn"] + inputs["b_hn"])),
        )
        h = put("h", t, lambda: (1 - z) * n + z * hp)
    return out


def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    return rec.solve_cell(
        "gru-cell",
        inputs,
        params,
        NEEDED,
        "give h0, W_z, W_r, W_n, W_hz, W_hr, W_hn, b_z, b_r, b_n and b_hn",
        _solve,
        seed,
    )


def _intro(runs: str, places: int, hand: bool) -> str:
    return (
        f"Run a GRU cell for {runs} from $h_0$, in PyTorch's convention (row vectors): "
        r"$z_t = \sigma(x_t W_z + h_{t-1} W_{hz} + b_z)$, $r_t = \sigma(x_t W_r + h_{t-1} W_{hr} + b_r)$, "
        r"$n_t = \tanh(x_t W_n + b_n + r_t \odot (h_{t-1} W_{hn} + b_{hn}))$ and "
        r"$h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$, "
        r"with $\sigma(a) = 1/(1 + e^{-a})$ and $\odot$ the entrywise product. "
        r"(Cho et al. apply $r_t$ to $h_{t-1}$ before the product with $W_{hn}$; we follow PyTorch.) "
        + (
            f"Carry the pre-activation of $n$ and $h$ rounded to {places} decimals and read $\\sigma$ and "
            r"$\tanh$ from the table."
            if hand
            else f"Carry the pre-activation of $n$ and $h$ rounded to {places} decimals."
        )
    )


def _solve(inputs, params, seed, key, X, d_h, places) -> Problem:
    T = shape(X)[0]
    hand = params.numbers == "hand"
    p, chain, table = rec.start(
        "gru-cell", TITLE, _intro, inputs, params, seed, key, X, d_h, NEEDED, {"h0": sym("h", sub=0)}, reference
    )
    f = {n: rec.to_np(inputs[n]) for n in NEEDED}
    h = inputs["h0"]
    for t in range(1, T + 1):
        x = (X[t - 1],)
        xf, hf = rec.to_np(x), rec.to_np(h)
        G = rec.gate_steps(chain, GATES, t, T, x, h, inputs, table)
        if hand:  # the rounding chain: the gates as the table gives them (worksheet.policy.pencil)
            G = {k: rec.rounded(v, rec.GATE_PLACES) for k, v in G.items()}
        rf = rec.to_np(G["r"])
        # candidate: the pre-activation holds r, so it is carried rounded before the tanh
        A_x = blocks.add_row(blocks.matmul(x, inputs["W_n"]), inputs["b_n"])
        A_h = blocks.add_row(blocks.matmul(h, inputs["W_hn"]), inputs["b_hn"])
        A = (tuple(add(a, mul(r, b)) for a, r, b in zip(A_x[0], G["r"][0], A_h[0])),)
        verify(
            f"gru-cell.{rec.name('n', t, T)} (pre-activation)",
            A,
            xf @ f["W_n"] + f["b_n"] + rf * (hf @ f["W_hn"] + f["b_hn"]),
        )
        A_r = rec.rounded(A, places)
        N = rec.apply(TANH, A_r)
        if table is not None:
            table.need(TANH, A_r)
        N = chain.add(
            rec.name("n", t, T),
            N,
            np.tanh(rec.to_np(A_r)),
            carried=True,
            title=rec.titled("Candidate", t, T),
            formula=_n_formula(t, T),
            work=_n_work(t, T, x, h, inputs, G["r"], A_x, A_h, A, A_r, N, places),
            latex_name=rec.sub("n", t, T),
        )
        if hand:  # n read from the table
            N = rec.rounded(N, rec.GATE_PLACES)
        h_before = {rec.name("h", t - 1, T): h} if t > 1 else {}  # h_0: the input
        h_exact = (tuple(add(mul(add(1, mul(-1, z)), n), mul(z, hp)) for z, n, hp in zip(G["z"][0], N[0], h[0])),)
        h = chain.add(
            rec.name("h", t, T),
            h_exact,
            chain.fresh(rec.name("h", t, T), **{rec.name("z", t, T): G["z"], rec.name("n", t, T): N}, **h_before),
            places=places,
            title=rec.titled("Hidden state", t, T),
            formula=_h_formula(t, T),
            work=_h_work(t, T, G["z"], N, h, h_exact, places),
            latex_name=rec.sub("h", t, T),
        )
    return rec.finish(p, table, places, hand)


@lru_cache(maxsize=64)
def _n_formula(t: int, T: int) -> Row:
    """``n_{t} = tanh(x W_n + b_n + r ⊙ (h_{0} W_{hn} + b_{hn}))`` (made once)."""
    return line(rec.sub("n", t, T), "=", TANH.of(_candidate_pre(t, T)))


@lru_cache(maxsize=64)
def _h_formula(t: int, T: int) -> Row:
    """``h_{t} = (1 − z_{t}) ⊙ n_{t} + z_{t} ⊙ h_{t-1}``."""
    z = rec.sub("z", t, T)
    return line(
        rec.sub("h", t, T), "=", paren(line("1", "-", z)), "⊙", rec.sub("n", t, T), "+", z, "⊙", rec.prev_h(t, T)
    )


def _candidate_pre(t: int, T: int) -> Row:
    """``x W_n + b_n + r ⊙ (h_{0} W_{hn} + b_{hn})``: the candidate's pre-activation."""
    return line(
        rec.x_sym(t, T),
        sym("W", sub="n"),
        "+",
        sym("b", sub="n"),
        "+",
        rec.sub("r", t, T),
        "⊙",
        paren(line(rec.prev_h(t, T), sym("W", sub="hn"), "+", sym("b", sub="hn"))),
    )


def _n_work(t, T, x, h, inputs, R, A_x, A_h, A, A_r, N, places) -> list[Row]:
    """``a^n_{1,1} = (1 ⋅ 1 + 1) + 0.7311 ⋅ (0 ⋅ 1 + (−1))``, the same to 4 places, then ``n_{1,1} = tanh(...)``."""
    out = []
    for j in rec.units(len(N[0])):
        lhs = rec.pre_sym("n", t, j)
        out.append(
            line(
                lhs,
                "=",
                paren(
                    line(
                        rec.products(x[0], [w[j] for w in inputs["W_n"]]), "+", lines.work_term(inputs["b_n"][0][j])[0]
                    )
                ),
                "+",
                number(decimal(R[0][j])),
                "⋅",
                paren(
                    line(
                        rec.products(h[0], [w[j] for w in inputs["W_hn"]]),
                        "+",
                        lines.work_term(inputs["b_hn"][0][j])[0],
                    )
                ),
            )
        )
        ax, ah = A_x[0][j], A_h[0][j]
        d = _digits([(ax, 0), (R[0][j], 0), (ah, 0)], lambda v: v[0] + v[1] * v[2], A[0][j])
        out.append(
            line(
                lhs,
                "≈",
                lines.work_term(ax, digits=d)[0],
                "+",
                number(blocks.decimal_at(R[0][j], d)),
                "⋅",
                lines.work_term(ah, digits=d)[0],
                rec.to_places(A[0][j], places),
            )
        )
        out.append(rec.act_work(rec.sub("n", t, T, j), TANH, A_r[0][j], N[0][j]))
    return out


def _h_work(t, T, Z, N, h_prev, h_exact, places) -> list[Row]:
    """``h_{1,1} = (1 − z_{1,1}) \\, n_{1,1} + z_{1,1} \\, h_{0,1} ≈ (1 − 0.8808) ⋅ 0.7616 + 0.8808 ⋅ 1 → ...``."""
    out = []
    for j in rec.units(len(N[0])):
        zs, ns, hs = (Z[0][j], 0), (N[0][j], 0), (h_prev[0][j], blocks.SHORT)  # (value, its work_term limit)
        d = _digits([zs, ns, hs], lambda v: (1 - v[0]) * v[1] + v[0] * v[2], h_exact[0][j])
        z, n = blocks.decimal_at(Z[0][j], d), blocks.decimal_at(N[0][j], d)
        n_term = paren(number(n)) if n.startswith("-") else number(n)  # all 4 places, as the table gives n
        out.append(
            line(
                rec.sub("h", t, T, j),
                "=",
                paren(line("1", "-", rec.sub("z", t, T, j))),
                thin(),
                rec.sub("n", t, T, j),
                "+",
                rec.sub("z", t, T, j),
                thin(),
                rec.prev_unit("h", t, T, j),
                "≈",
                paren(line("1", "-", number(z))),
                "⋅",
                n_term,
                "+",
                number(z),
                "⋅",
                lines.work_term(h_prev[0][j], digits=d)[0],
                rec.to_places(h_exact[0][j], places),
            )
        )
    return out


def _digits(values, combine, result) -> int:
    """The places of a line's rounded factors (4, or more where the printed result needs them);
    ``values``: (value, the limit below which :func:`work_term` prints it as an exact form)."""
    return blocks.fit_places(values, combine, result, at=lambda v, p: blocks.term_value(v[0], v[1], p))


# ---------------------------------------------------------------- mistakes
# Steps z, r, n, h; with several time steps each is suffixed _t (z_2), and
# its rules read the step's own time step.
for _g in ("z", "r"):
    mistakes.register("gru-cell", _g, "tanh-for-sigmoid")(rec.gate_with("tanh", _g))


def _gru_prev(v) -> tuple[np.ndarray, np.ndarray]:
    """(x_t, h_{t-1}) of a GRU rule's time step."""
    t = rec.time_of(v)
    x = v.data["x"] if "x" in v.data else v.data["X"][t - 1 : t]
    return x, rec.before(v, "h", t, "h0")


@mistakes.register("gru-cell", "n", "tanh-for-sigmoid")
def _gru_n_sigmoid(v, params):
    x, h = _gru_prev(v)
    return rec.np_sigmoid(x @ v["W_n"] + v["b_n"] + v["r"] * (h @ v["W_hn"] + v["b_hn"]))


@mistakes.register("gru-cell", "n", "reset-outside")
def _gru_reset_outside(v, params):
    x, h = _gru_prev(v)
    return rec.precise.tanh(x @ v["W_n"] + v["b_n"] + (v["r"] * h) @ v["W_hn"] + v["b_hn"])


@mistakes.register("gru-cell", "h", "gru-cho-update")
def _gru_cho_update(v, params):
    _, h = _gru_prev(v)
    return v["z"] * v["n"] + (1 - v["z"]) * h
