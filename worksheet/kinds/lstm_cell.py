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
carried rounded (3 decimals in hand mode, 4 in calculator mode; see
:mod:`worksheet.kinds.recurrent`).

Hand mode draws x from {-1, 0, 1, 2} and the weights, biases, h0 and c0 from
{-1, 0, 1}, retried (boundedly) until every pre-activation lies in [-3, 3],
the four gates of the first step are not all zero before the activation, and
every entry of every c_t is at least 0.05 away from 0; the sheet prints the σ and tanh values the problem needs
(tanh(c_t) at the 3-decimal c_t the student carries).  Calculator mode uses
one-decimal entries in [-1, 1].
"""

from __future__ import annotations

import numpy as np

from .. import mistakes
from ..exact import add, mul, tanh
from ..model import Matrix, Problem, shape
from . import base, recurrent as rec
from .recurrent import SIGMA, TANH

TITLE = "LSTM cell"
CONVENTIONS = ("recurrent", "exact")  # keys of worksheet.document.CONVENTION_TEXT, in the order a sheet states them
GATES = (("f", SIGMA, "Forget gate"), ("i", SIGMA, "Input gate"),
         ("g", TANH, "Candidate values"), ("o", SIGMA, "Output gate"))
WEIGHTS = tuple(f"{w}_{g}" for g, _, _ in GATES for w in ("W", "W_h", "b"))
INPUTS = ("x", "X", "h0", "c0") + tuple(f"W_{g}" for g, _, _ in GATES) + \
    tuple(f"W_h{g}" for g, _, _ in GATES) + tuple(f"b_{g}" for g, _, _ in GATES)
NEEDED = INPUTS[2:]


class Params(rec.Params):
    pass


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    T, d, k = params.steps, params.d_in, params.d_h
    xname = "x" if T == 1 else "X"
    if params.numbers == "calculator":
        draw, draw_x = rec.calc_matrix, rec.calc_matrix
    else:
        draw, draw_x = rec.hand_matrix, rec.hand_x

    def make():
        m = {xname: draw_x(rng, T, d), "h0": draw(rng, 1, k), "c0": draw(rng, 1, k)}
        for g, _, _ in GATES:
            m[f"W_{g}"], m[f"W_h{g}"], m[f"b_{g}"] = draw(rng, d, k), draw(rng, k, k), draw(rng, 1, k)
        return m

    def ok(m):
        f = {n: rec.to_np(v) for n, v in m.items()}
        ref = reference(f, params)
        x, h0 = rec.np_rows(f)[:1], f["h0"]
        pres = [rec.np_affine(x, f[f"W_{g}"], h0, f[f"W_h{g}"], f[f"b_{g}"]) for g, _, _ in GATES]
        if any(not np.any(a) for a in pres) or any(np.abs(ref[rec.name("c", t, T)]).min() < 0.05
                                                   for t in range(1, T + 1)):
            return False
        if params.numbers == "calculator":
            return True
        return rec.drift_ok(solve, m, params) and all(np.abs(np.round(rec.np_affine(rec.np_rows(f)[t - 1:t], f[f"W_{g}"],
                                                 ref[rec.name("h", t - 1, T)] if t > 1 else h0,
                                                 f[f"W_h{g}"], f[f"b_{g}"]), 2)).max() <= rec.HAND_RANGE
                   for t in range(1, T + 1) for g, _, _ in GATES)

    return base.retry("lstm-cell", make, ok, f"steps={T}, d_in={d}, d_h={k} with pre-activations in [-3, 3]")


def reference(inputs: dict[str, np.ndarray], params: Params, *,
              given: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The unrounded float64 chain, step by step (the independent computation).

    A step named in ``given`` takes that value and later steps follow from it
    (``worksheet check``'s error carried forward).
    """
    g = given or {}
    X = rec.np_rows(inputs)
    T = X.shape[0]
    h, c = inputs["h0"], inputs["c0"]
    out: dict[str, np.ndarray] = {}

    def put(base_name, t, fresh):
        n = rec.name(base_name, t, T)
        out[n] = base.given_or(g, n, fresh)
        return out[n]

    for t in range(1, T + 1):
        x = X[t - 1: t]
        gates = {}
        for gate, act, _ in GATES:
            gates[gate] = put(gate, t, lambda gate=gate, act=act: act.np(
                rec.np_affine(x, inputs[f"W_{gate}"], h, inputs[f"W_h{gate}"], inputs[f"b_{gate}"])))
        c_prev = c
        c = put("c", t, lambda: gates["f"] * c_prev + gates["i"] * gates["g"])
        h = put("h", t, lambda: gates["o"] * np.tanh(c))
    return out


def check_inputs(inputs: dict[str, Matrix], params: Params) -> tuple[str, Matrix, int]:
    key, X = rec.sequence(inputs, params)
    d_h = rec.require_inputs(inputs, NEEDED, shape(X)[1],
                             "give h0, c0, W_f, W_i, W_g, W_o, W_hf, W_hi, W_hg, W_ho, b_f, b_i, b_g and b_o")
    return key, X, d_h


def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    key, X, d_h = check_inputs(inputs, params)
    places = rec.places_of(params)
    return rec.solved("lstm-cell", places, lambda: _solve(inputs, params, seed, key, X, d_h, places))


def _solve(inputs, params, seed, key, X, d_h, places) -> Problem:
    T, d_in = shape(X)
    hand = params.numbers == "hand"
    actual = base.solved_params(params, steps=T, d_in=d_in, d_h=d_h)
    runs = "one time step" if T == 1 else f"{T} time steps (row $t$ of $X$ is $x_t$)"
    p = Problem("lstm-cell", TITLE, actual, seed=seed, intro=(
        f"Run an LSTM cell for {runs} from $h_0$ and $c_0$. Row convention: "
        r"$f = \sigma(x W_f + h W_{hf} + b_f)$, and likewise $i$ and $o$; $g = \tanh(x W_g + h W_{hg} + b_g)$; "
        r"$c' = f \odot c + i \odot g$ and $h' = o \odot \tanh(c')$, with $\sigma(a) = 1/(1 + e^{-a})$ "
        r"and $\odot$ the entrywise product. "
        + (f"Carry $c$ and $h$ rounded to {places} decimals and read $\\sigma$ and $\\tanh$ from the table."
           if hand else f"Carry $c$ and $h$ rounded to {places} decimals.")))
    for n in (key,) + NEEDED:
        p.add_input(n, inputs[n], rows=rec.time_labels(T) if n == "X" else None,
                    latex_name={"h0": "h_0", "c0": "c_0"}.get(n))
    chain = rec.Chain(p, reference({n: q.value for n, q in p.inputs.items()}, params))
    table = rec.Table() if hand else None
    h, c = inputs["h0"], inputs["c0"]
    for t in range(1, T + 1):
        x = (X[t - 1],)
        G = {}
        for gate, act, title in GATES:
            G[gate] = rec.gate_step(chain, rec.name(gate, t, T), act, letter=gate, gate=gate, t=t, T=T,
                                    x_row=x, W=inputs[f"W_{gate}"], h_row=h, W_h=inputs[f"W_h{gate}"],
                                    b=inputs[f"b_{gate}"], title=title + (f" (t = {t})" if T > 1 else ""),
                                    table=table)
        gf = {k: rec.to_np(v) for k, v in G.items()}
        c_exact = (tuple(add(mul(f, cp), mul(i, g)) for f, cp, i, g in
                         zip(G["f"][0], c[0], G["i"][0], G["g"][0])),)
        c_prev = "c_{0}" if t == 1 else rec.sub("c", t - 1, T)
        c_new = chain.add(rec.name("c", t, T), c_exact, gf["f"] * rec.to_np(c) + gf["i"] * gf["g"],
                          places=places, title="Cell state" + (f" (t = {t})" if T > 1 else ""),
                          formula=rf"{rec.sub('c', t, T)} = {rec.sub('f', t, T)} \odot {c_prev} + "
                                  rf"{rec.sub('i', t, T)} \odot {rec.sub('g', t, T)}",
                          work=_c_work(t, T, G, c, c_exact, places), latex_name=rec.sub("c", t, T))
        if table is not None:
            table.need(TANH, c_new)
        h_exact = (tuple(mul(o, tanh(cn)) for o, cn in zip(G["o"][0], c_new[0])),)
        h = chain.add(rec.name("h", t, T), h_exact, gf["o"] * np.tanh(rec.to_np(c_new)),
                      places=places, title="Hidden state" + (f" (t = {t})" if T > 1 else ""),
                      formula=rf"{rec.sub('h', t, T)} = {rec.sub('o', t, T)} \odot \tanh({rec.sub('c', t, T)})",
                      work=_h_work(t, T, G, c_new, h_exact, places), latex_name=rec.sub("h", t, T))
        c = c_new
    if table is not None:
        table.add_to(p)
    p.notes.append(rec.round_note(places, hand))
    return p


def _c_work(t, T, G, c_prev, c_exact, places) -> list[str]:
    from ..fmt import decimal

    out = []
    for j in rec.units(len(c_exact[0])):
        cj = rec.sub("c", t - 1, T, j) if t > 1 else f"c_{{0,{j + 1}}}"
        out.append(rf"{rec.sub('c', t, T, j)} = {rec.sub('f', t, T, j)} \, {cj} + {rec.sub('i', t, T, j)} \, "
                   rf"{rec.sub('g', t, T, j)} \approx {decimal(G['f'][0][j])} \cdot {_num(c_prev[0][j])} + "
                   rf"{decimal(G['i'][0][j])} \cdot {_num(G['g'][0][j])} {rec.to_places(c_exact[0][j], places)}")
    return out


def _h_work(t, T, G, c_new, h_exact, places) -> list[str]:
    from ..fmt import decimal

    out = []
    for j in rec.units(len(h_exact[0])):
        out.append(rf"{rec.sub('h', t, T, j)} = {rec.sub('o', t, T, j)} \tanh({rec.sub('c', t, T, j)}) "
                   rf"\approx {decimal(G['o'][0][j])} \cdot \tanh({_num(c_new[0][j]).strip('()')}) \approx "
                   rf"{decimal(G['o'][0][j])} \cdot {_num(tanh(c_new[0][j]))} {rec.to_places(h_exact[0][j], places)}")
    return out


def _num(x) -> str:
    """A number inside a worked product: a short given decimal as is, else 4 decimals."""
    from .. import blocks

    s, _ = blocks.work_term(x, limit=0)
    return s


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
