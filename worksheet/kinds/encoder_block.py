"""One Transformer encoder layer (Vaswani et al. 2017, section 3.1), post-layer-norm.

    X_0 = X  (or X + PE when positional = true)
    A   = MultiHead(X_0)                   # heads on column blocks of W_Q, W_K, W_V, then W_O
    X_1 = LayerNorm(X_0 + A)               # gamma_1, beta_1
    F   = ReLU(X_1 W_1 + b_1) W_2 + b_2
    output = LayerNorm(X_1 + F)            # gamma_2, beta_2

The block is built from the other kinds, never from copies of their code: it
calls ``positional_encoding.solve`` (when positional), ``multi_head_attention
.solve``, ``layer_norm.solve``, ``feed_forward.solve`` and ``layer_norm.solve``
again, and copies their steps under the prefixes ``pe.`` (our addition, only
with positional = true), ``attn.``, ``norm1.``, ``ffn.`` and ``norm2.``
(``attn.Q_1``, ``norm1.mean``, ...); the last step is ``output``.  The
encoder attends to every position: there is no causal mask (errata 5).

The carried chain (see :mod:`worksheet.kinds.chain`).  A step keeps its exact
value while every entry is a decimal of at most 4 places (integers, 0.5) and
nothing it depends on was rounded; from the first step that breaks this (in
hand mode the softmax of head 1) every step is computed exactly from the
CARRIED values of the steps before it and rounded to 4 decimals (half away
from zero; the square root of a layer norm is rounded too before dividing),
so a student who rounds as told writes exactly the key.  Each head is its own
branch: head 2's Q, K, V and scores stay integers.  Rounded steps say
``"rounded": true``; the key prints one table per step, every entry with 4
places.  The step's numpy ``value`` holds the float64 of the unrounded chain
(computed first, independently; the JSON writes the carried value as ``exact``, and as
``value`` the unrounded chain evaluated at 60 digits), and every
carried step must lie within 5e-3 of it; if 4
places drift further (a layer-norm row with a tiny variance magnifies
rounding, or its variance even rounds to 0), the block is recomputed carrying
6, 8, 12, then 16 places, and says so; if even that fails, an InputError
says why.  The scale-and-shift step of Add & Norm 2 IS the block's output: it
is the last step, ``output``, and is not repeated as ``norm2.output``.

Positional encoding is refused in hand mode (a ParamError naming
``positional`` and ``--numbers calculator``): sin and cos of the positions
make every score irrational, so no e^x table could cover the softmax.  In
calculator mode X + PE is carried rounded like every other value.

Widths: ``d_k`` defaults to the multi-head kind's choice: 4 per head in hand
mode (sqrt(d_k) = 2, W_Q is d_model x H d_k), d_model // heads (at least 2)
in calculator mode; d_v = d_k.  ``eps`` defaults to 0 in hand mode and
1/100000 in calculator mode (``solve`` is calculator mode unless the file says
otherwise).

Hand mode draws X and W_Q, W_K, W_V, W_O as the multi-head-attention kind does
(integers, pleasant per-head scores), W_1, b_1, W_2, b_2 from {-1, 0, 1},
gamma from {1, 2} and beta from {-1, 0, 1}; draws are retried (boundedly) until
every row entering a layer norm has variance at least 1/4 (so rounding errors
are not magnified) and the feed-forward pre-activations have a negative and a
positive entry.  Calculator mode: one-decimal entries, gamma = 1 + [-0.3, 0.3],
same conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..solution.problem import Matrix, Problem, shape
from . import base, chain, feed_forward, layer_norm, multi_head_attention, positional_encoding
from . import block_symbols as names
from . import shared_conventions as cv
from . import screen

TITLE = "Transformer encoder block"
CONVENTIONS = (
    cv.PE,
    cv.ROWS,
    cv.SCORES,
    cv.SOFTMAX,
    cv.SOFTMAX_FORM,
    cv.OUTPUT,
    cv.HEADS,
    cv.LAYER_NORM,
    cv.FFN,
    cv.EXACT,
)
INPUTS = ("X", "W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1", "W_1", "b_1", "W_2", "b_2", "gamma_2", "beta_2")
STAGES = {
    "pe.": "Positional encoding",
    "attn.": "Attention",
    "norm1.": "Add & Norm 1",
    "ffn.": "Feed-forward",
    "norm2.": "Add & Norm 2",
}
# The wiring, written once: step prefix -> (the kind that part is, each of its inputs -> the
# block's matrix it is: an input or an earlier part's step).  ``solve`` feeds the parts with
# it (chain.wire) and ``worksheet check`` diagnoses a part's steps with its kind's mistake
# rules through it (worksheet.kinds.mistakes.rules).  Without positional encoding there is no
# ``pe.X_plus_PE``, and X is the block's own X.
PARTS: dict[str, tuple[str, dict[str, str]]] = {
    "pe.": ("positional-encoding", {"X": "X"}),
    "attn.": ("multi-head-attention", {"X": "pe.X_plus_PE", **{k: k for k in ("W_Q", "W_K", "W_V", "W_O")}}),
    "norm1.": ("layer-norm", {"X": "pe.X_plus_PE", "S": "attn.output", "gamma": "gamma_1", "beta": "beta_1"}),
    "ffn.": ("feed-forward", {"X": "norm1.output", **{k: k for k in ("W_1", "b_1", "W_2", "b_2")}}),
    "norm2.": ("layer-norm", {"X": "norm1.output", "S": "ffn.output", "gamma": "gamma_2", "beta": "beta_2"}),
}


# each part's matrices as the block names them (chain.copy): Add & Norm k's symbols carry k
# (R_k, mu_k, ..., its output Y_k; entries r^{[k]}_{ij}: chain.add_norm), the feed-forward
# hidden layer is U and its output O_f; the sublayer output of an Add & Norm is named, never
# an undefined F
SYMBOLS = {
    "norm1.": names.add_norm(1, None, ("O", "o")),
    "ffn.": names.feed_forward(1),
    "norm2.": names.add_norm(2, ("Y_1", "y^{[1]}"), ("O_f", "{O_f}")),
}


@dataclass(frozen=True)
class Params(base.Params):
    conventions_if = {"pe": "positional"}  # the encoding is stated only when it is added
    heads: int = 2  # H, the number of attention heads
    eps: Fraction | None = None  # added to the variances; None: 0 in hand mode, 1/100000 in calculator mode
    positional: bool = False  # add the sinusoidal positional encoding to X first
    seq_len: int = 2  # n, the number of tokens
    d_model: int = 4  # width of X and of every sublayer output
    d_k: int | None = None  # width of each head; None: 4 in hand mode, d_model // heads (at least 2) otherwise
    d_ff: int = 4  # hidden width of the feed-forward network
    tokens: tuple[str, ...] | None = None  # row labels; default: a lecture sentence of seq_len words

    def validate(self):
        chain.validate(
            self,
            (
                ("--heads", self.heads, 8),
                ("--seq-len", self.seq_len, 8),
                ("--d-model", self.d_model, 16),
                ("d_ff", self.d_ff, 32),
            ),
        )
        if self.positional and self.numbers == "hand":
            raise base.ParamError(
                "positional = true is not done by hand (sin and cos of the positions make "
                "every score irrational and the e^x table useless): use --numbers calculator"
            )

    @property
    def key_width(self) -> int:
        return self.mha_params().key_width if self.d_k is None else self.d_k

    @property
    def epsilon(self) -> Fraction:
        return chain.epsilon(self.eps, self.numbers, layer_norm.CALCULATOR_EPS)

    def mha_params(self, d_k: int | None = None):
        """The multi-head-attention parameters for generating this block's attention."""
        return multi_head_attention.Params(
            numbers=self.numbers,
            heads=self.heads,
            seq_len=self.seq_len,
            d_model=self.d_model,
            d_k=d_k if d_k is not None else self.d_k,
        )


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d, f = params.seq_len, params.d_model, params.d_ff
    mha = params.mha_params(d_k=params.key_width)
    draw, gamma = chain.drawers(rng, params.numbers == "hand", d)

    def make():
        m = multi_head_attention.generate(rng, mha)
        m.update(
            gamma_1=gamma(),
            beta_1=draw(1, d),
            W_1=draw(d, f),
            b_1=draw(1, f),
            W_2=draw(f, d),
            b_2=draw(1, d),
            gamma_2=gamma(),
            beta_2=draw(1, d),
        )
        return chain.Drawn({k: m[k] for k in INPUTS})

    def ok(m):  # decided on the high-precision values (screen.py): the same draw on any CPU
        # hand mode: the exact chain reads the standard tables, never past their range (the same in every variant)
        return screen.screened("encoder-block", reference, params, m, test) and chain.reads_standard_tables_by_hand(
            solve, m, params
        )

    def test(ref):
        pre = ref["ffn.hidden_pre"]
        return (
            ref["norm1.variance"].min() >= 0.25
            and ref["norm2.variance"].min() >= 0.25
            and (pre < 0).any()
            and (pre > 0).any()
        )

    return base.retry(
        "encoder-block",
        make,
        ok,
        f"heads={params.heads}, seq_len={n}, d_model={d}, d_ff={f} with layer-norm variances of at least 1/4",
    )


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The whole float64 chain, unrounded, computed first and independently of the exact one.

    ``given`` maps step names (``attn.scores_1``, ``norm1.mean``, ``output``)
    to values that replace the computed ones; each part gets its own (prefix
    dropped) and every later step is computed from them (``worksheet check``
    marks a step "carried forward" when it follows from a student's own
    earlier answers).
    """
    r = chain.Reference(inputs, precise.number(params.epsilon), given)
    put, part = r.put, r.part
    X = inputs["X"]
    n, d = X.shape
    if params.positional:
        X = put("pe.", positional_encoding.np_steps(range(n), d, 10000, X, given=part("pe.")))["X_plus_PE"]
    attn = put(
        "attn.",
        multi_head_attention.np_steps(
            {k: X if k == "X" else inputs[k] for k in multi_head_attention.INPUTS},
            params.heads,
            False,
            given=part("attn."),
        ),
    )
    n1 = r.add_norm("norm1.", X, attn["output"], 1)
    r.add_norm("norm2.", n1["output"], r.ffn("ffn.", n1["output"])["output"], 2)
    # Add & Norm 2's scale and shift is the block's output: one step, ``output``
    return r.finish("norm2.")


def check_inputs(inputs: dict[str, Matrix], heads: int) -> None:
    base.require_inputs(inputs, INPUTS, f"the encoder block needs {', '.join(INPUTS)}")
    multi_head_attention.check_inputs({k: inputs[k] for k in multi_head_attention.INPUTS}, heads)
    chain.check_widths(inputs, ("gamma_1", "beta_1", "gamma_2", "beta_2"), ("W_O",), "Add & Norm 1")
    feed_forward.check_inputs({k: inputs[k] for k in feed_forward.INPUTS})


def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    check_inputs(inputs, params.heads)
    kept = chain.take_solved(inputs, params, seed)  # generate solved this draw to accept it
    if kept is not None:
        return kept
    return chain.solve_carried(lambda carry: _solve(inputs, params, seed, carry))


# long: the block's sublayers in order, as the sheet has them
def _solve(inputs: dict[str, Matrix], params: Params, seed: int | None, carry: chain.Chain) -> Problem:
    X = inputs["X"]
    n, d = shape(X)
    H = params.heads
    tokens = base.row_labels(params.tokens, n)
    eps = params.epsilon
    d_k = chain.head_width(inputs, H)
    actual = base.solved_params(
        params, seq_len=n, d_model=d, d_k=d_k, d_ff=shape(inputs["W_1"])[1], eps=eps, tokens=tokens
    )
    p = Problem(
        "encoder-block",
        TITLE,
        actual,
        seed=seed,
        intro=(
            "Pass the tokens "
            + ", ".join(tokens)
            + " through one encoder layer: "
            + ("add the positional encoding, " if params.positional else "")
            + f"multi-head self-attention ($H = {H}$ {'head' if H == 1 else 'heads'}, no mask), Add & Norm, the "
            "feed-forward network, Add & Norm. Both layer norms use the population variance and "
            f"$\\varepsilon = {blocks.work_term(eps)[0]}$. " + chain.round_as_told(carry.places)
        ),
    )
    for name in INPUTS:
        p.add_input(name, inputs[name], rows=tokens if name == "X" else None)
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)
    drift = screen.precise_floats(p.kind, params, {k: q.exact for k, q in p.inputs.items()})
    b = chain.Builder(p, carry, ref, PARTS, STAGES, drift)

    if params.positional:
        b.add(
            "pe.",
            "positional encoding",
            positional_encoding.solve,
            positional_encoding.Params(numbers=params.numbers, tokens=tokens),
        )
    x0 = "X + \\mathrm{PE}" if params.positional else "X"

    b.add(
        "attn.",
        "attention",
        multi_head_attention.solve,
        multi_head_attention.Params(numbers=params.numbers, heads=H, d_k=params.d_k, tokens=tokens),
        f"Self-attention on ${x0}$: every token attends to every token (no mask).",
    )

    # the sub-kinds read the sizes from their inputs
    ln = layer_norm.Params(numbers=params.numbers, eps=eps, tokens=tokens)
    b.add(
        "norm1.",
        "Add & Norm 1",
        layer_norm.solve,
        ln,
        f"Here $X$ is the attention input ${x0}$, $O$ the attention output, "
        r"$\gamma = \gamma_1$, $\beta = \beta_1$.",
        symbols=SYMBOLS["norm1."],
    )

    b.add(
        "ffn.",
        "feed-forward",
        feed_forward.solve,
        feed_forward.Params(numbers=params.numbers, tokens=tokens),
        "Here $Y_1$ is the output of Add & Norm 1.",
        symbols=SYMBOLS["ffn."],
    )

    # Add & Norm 2: its scale-and-shift step is the block's output, asked for once (step ``output``)
    b.add(
        "norm2.",
        "Add & Norm 2",
        layer_norm.solve,
        ln,
        "Here $Y_1$ is the output of Add & Norm 1, $O_f$ the feed-forward output, "
        r"$\gamma = \gamma_2$, $\beta = \beta_2$.",
        last="output",
        last_title="Add & Norm 2: scale and shift = the encoder block output",
        symbols=SYMBOLS["norm2."],
    )
    return p
