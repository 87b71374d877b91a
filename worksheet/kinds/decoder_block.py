"""One Transformer decoder layer (Vaswani et al. 2017, section 3.1), post-layer-norm.

    A   = MultiHead_causal(X)                        # W_Q, W_K, W_V, W_O; token i sees tokens j <= i
    X_1 = LayerNorm(X + A)                           # gamma_1, beta_1
    C   = MultiHead(Q from X_1; K, V from H_enc)     # W_Q_c, W_K_c, W_V_c, W_O_c; no mask
    X_2 = LayerNorm(X_1 + C)                         # gamma_2, beta_2
    F   = ReLU(X_2 W_1 + b_1) W_2 + b_2
    output = LayerNorm(X_2 + F)                      # gamma_3, beta_3

The block is built from the same parts as the encoder block, never from
copies of their code: ``multi_head_attention.solve`` (causal, then with the
encoder output ``H_enc`` as the source of keys and values),
``layer_norm.solve`` three times and ``feed_forward.solve``; their steps are
copied under the prefixes ``self.``, ``norm1.``, ``cross.``, ``norm2.``,
``ffn.`` and ``norm3.``.  The scale-and-shift step of the last Add & Norm is
the block's output: the last step, ``output`` (not repeated as
``norm3.output``).  X is the decoder side (m x d), H_enc the encoder output
(n x d); the cross-attention scores are m x n.

This is PyTorch's ``nn.TransformerDecoderLayer(d_model, nhead, d_ff,
dropout=0, activation="relu", norm_first=False, bias=True)`` with zero
biases in the attention projections, in the row convention: PyTorch's
``in_proj_weight`` stacks W_Q^T, W_K^T, W_V^T, ``out_proj.weight`` is
W_O^T, ``linear1.weight`` is W_1^T (the tests check this with an
independent numpy re-implementation written the way PyTorch computes it).
PyTorch needs H d_k = d_model; this kind also takes wider heads.

Hand mode is the carried chain of :mod:`worksheet.kinds.chain`, as in the
encoder block: the causal self-attention has integer Q, K, V and scores and
an e^x table; from its softmax on, every step is computed from the carried
4-place values and rounded to 4 places.  The cross-attention's queries come
from the carried output of Add & Norm 1, so its scaled scores are 4-place
decimals: the sheet's e^x table then also lists e^(s' - m) for the
differences those rows need (a pencil cannot take e^-0.8731; the table
gives the values, not which entry needs which).

Defaults: one head (heads = 1) of width d_k = 4 (hand mode: sqrt(d_k) = 2;
calculator mode d_k = d_model // heads), d_model = 4, d_ff = 4, m = 2
decoder tokens ("<s> I'm"), n = 3 encoder tokens ("Je suis étudiant"); with one
head the default problem has exactly PyTorch's shapes.  ``eps`` defaults to
0 in hand mode and 1/100000 in calculator mode.

Generation draws X, H_enc and the self-attention weights as the multi-head
kind does (causal), the cross weights, W_1, b_1, W_2, b_2 from {-1, 0, 1},
gamma from {1, 2} and beta from {-1, 0, 1}, retried (boundedly) until every
row entering a layer norm has variance at least 1/4, the feed-forward
pre-activations have a negative and a positive entry, and every cross
head's scaled scores lie in [-6, 6] with each row spanning at most 4 and
some row not constant.  Calculator mode: one-decimal entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..policy.errors import ShapeError
from ..solution.problem import Matrix, Problem, shape
from ..solution.maths.nodes import Ident, Node, Num, Op, Prime, Row, Script
from . import base, chain, cross_attention, feed_forward, layer_norm, multi_head_attention
from . import block_symbols as names
from . import shared_conventions as cv
from . import screen

TITLE = "Transformer decoder block"
CONVENTIONS = (
    cv.ROWS,
    cv.SCORES,
    cv.SOFTMAX,
    cv.SOFTMAX_FORM,
    cv.OUTPUT,
    cv.CAUSAL,
    cv.HEADS,
    cv.CROSS,
    cv.LAYER_NORM,
    cv.FFN,
    cv.EXACT,
)
INPUTS = (
    "X",
    "H_enc",
    "W_Q",
    "W_K",
    "W_V",
    "W_O",
    "W_Q_c",
    "W_K_c",
    "W_V_c",
    "W_O_c",
    "gamma_1",
    "beta_1",
    "gamma_2",
    "beta_2",
    "gamma_3",
    "beta_3",
    "W_1",
    "b_1",
    "W_2",
    "b_2",
)
STAGES = {
    "self.": "Self-attention",
    "norm1.": "Add & Norm 1",
    "cross.": "Cross-attention",
    "norm2.": "Add & Norm 2",
    "ffn.": "Feed-forward",
    "norm3.": "Add & Norm 3",
}
CROSS = {"W_Q_c": "W_Q", "W_K_c": "W_K", "W_V_c": "W_V", "W_O_c": "W_O"}  # block name -> multi-head name
# The wiring, written once: step prefix -> (the kind that part is, each of its inputs -> the
# block's matrix it is: an input or an earlier part's step).  ``solve`` feeds the parts with
# it (chain.wire) and ``worksheet check`` diagnoses a part's steps with its kind's mistake
# rules through it (worksheet.kinds.mistakes.rules).
PARTS: dict[str, tuple[str, dict[str, str]]] = {
    "self.": ("multi-head-attention", {k: k for k in multi_head_attention.INPUTS}),
    "norm1.": ("layer-norm", {"X": "X", "S": "self.output", "gamma": "gamma_1", "beta": "beta_1"}),
    "cross.": ("multi-head-attention", {"X": "norm1.output", "H_enc": "H_enc", **{v: k for k, v in CROSS.items()}}),
    "norm2.": ("layer-norm", {"X": "norm1.output", "S": "cross.output", "gamma": "gamma_2", "beta": "beta_2"}),
    "ffn.": ("feed-forward", {"X": "norm2.output", **{k: k for k in feed_forward.INPUTS[1:]}}),
    "norm3.": ("layer-norm", {"X": "norm2.output", "S": "ffn.output", "gamma": "gamma_3", "beta": "beta_3"}),
}


# each part's matrices as the block names them, so that one symbol means one thing on the
# page (chain.copy): Add & Norm k's symbols carry k (R_k, mu_k, ..., its output Y_k; entries
# r^{[k]}_{ij}: chain.add_norm), the cross-attention O_c with W^Q_c..., the feed-forward
# hidden layer U (H is the encoder output) and its output O_f
_C = Ident("c")
_W, _O, _QKV = Ident("W"), Ident("O"), (Ident("Q"), Ident("K"), Ident("V"))
_NAMED = (Ident("head", upright=True), *(Ident(c) for c in "QKVSA"))  # a head's matrices, and head_h
_NAMED_SUPS = (None, Prime(1), Ident("⊤"))


def _cross_index(sub: Node) -> Node:
    """``1`` -> ``c,1``: the cross-attention's own index before a head's."""
    return Row((_C, Op(","), *(sub.items if type(sub) is Row else (sub,))))


def _cross(n: Node) -> Node | None:
    """The cross-attention's weights and matrices carry a c, so that no symbol is
    the self-attention's too: ``W^Q_1`` -> ``W^{Q}_{c,1}``, ``W^Q`` -> ``W^Q_c``,
    ``W^O_{:,1}`` -> ``{W^O_c}_{:,1}``, ``Q_1`` -> ``Q_{c,1}``, ``S'_1`` -> ``S'_{c,1}``,
    ``head_1`` -> ``head_{c,1}``, and a head's entries ``q^{(1)}_{ij}`` -> ``q^{(c,1)}_{ij}``."""
    if type(n) is not Script:
        return None
    base, sub, sup = n.base, n.sub, n.sup
    if base == _W and sup in _QKV:
        return Script(base, _C if sub is None else _cross_index(sub), sup)
    if base == _W and sup == _O:
        return Script(base, _C, sup) if sub is None else Script(Script(base, _C, sup), sub)
    named = base in _NAMED
    if named and type(sub) is Num and sup in _NAMED_SUPS:
        return Script(base, _cross_index(sub), sup)
    if type(sup) is Row and len(sup.items) == 3 and sup.items[0] == Op("(") and type(sup.items[1]) is Num:
        return Script(base, sub, Row((Op("("), *_cross_index(sup.items[1]).items, Op(")"))))
    return None


_cross.gives = frozenset("c")  # (block_symbols.Renaming: the names its replacements bring)

SYMBOLS = {
    "norm1.": names.add_norm(1, None, ("O", "o")),
    "cross.": (
        names.symbol("X", "Y_1"),
        names.symbol("H", r"H_{\mathrm{enc}}"),
        names.symbol("O", "O_c"),
        _cross,
        names.symbol("C", "C_c"),
        names.entry("x", "y^{[1]}"),
        names.entry("c", "{C_c}"),
        names.entry("o", "{O_c}"),
    ),
    "norm2.": names.add_norm(2, ("Y_1", "y^{[1]}"), ("O_c", "{O_c}")),
    "ffn.": names.feed_forward(2),
    "norm3.": names.add_norm(3, ("Y_2", "y^{[2]}"), ("O_f", "{O_f}")),
}


@dataclass(frozen=True)
class Params(base.Params):
    heads: int = 1  # H, the number of heads of both attentions
    eps: Fraction | None = None  # added to the variances; None: 0 in hand mode, 1/100000 in calculator mode
    seq_len: int = 2  # m, the number of decoder tokens (rows of X)
    src_len: int = 3  # n, the number of encoder tokens (rows of H_enc)
    d_model: int = 4  # width of X, H_enc and every sublayer output
    d_k: int | None = None  # width of each head; None: 4 in hand mode, d_model // heads (at least 2) otherwise
    d_ff: int = 4  # hidden width of the feed-forward network
    tokens: tuple[str, ...] | None = None  # decoder row labels; default: the first seq_len of "<s> I'm a student"
    source_tokens: tuple[str, ...] | None = None  # encoder row labels; default: a lecture sentence of src_len words

    def validate(self):
        chain.validate(
            self,
            (
                ("--heads", self.heads, 8),
                ("--seq-len", self.seq_len, 8),
                ("src_len", self.src_len, 8),
                ("--d-model", self.d_model, 16),
                ("d_ff", self.d_ff, 32),
            ),
        )

    @property
    def key_width(self) -> int:
        return self.mha_params().key_width

    @property
    def epsilon(self) -> Fraction:
        return chain.epsilon(self.eps, self.numbers, layer_norm.CALCULATOR_EPS)

    def mha_params(self, causal: bool = True):
        """The multi-head-attention parameters of the block's attentions."""
        return multi_head_attention.Params(
            numbers=self.numbers,
            heads=self.heads,
            seq_len=self.seq_len,
            d_model=self.d_model,
            d_k=self.d_k,
            causal=causal,
        )


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    m, n, d, f, H = params.seq_len, params.src_len, params.d_model, params.d_ff, params.heads
    width = H * params.key_width
    tokens = ((-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15))
    draw, gamma = chain.drawers(rng, params.numbers == "hand", d)

    def make():
        out = multi_head_attention.generate(rng, params.mha_params(causal=True))
        out.update(
            H_enc=draw(n, d, tokens),
            W_Q_c=draw(d, width),
            W_K_c=draw(d, width),
            W_V_c=draw(d, width),
            W_O_c=draw(width, d),
        )
        for k in (1, 2, 3):
            out[f"gamma_{k}"], out[f"beta_{k}"] = gamma(), draw(1, d)
        out.update(W_1=draw(d, f), b_1=draw(1, f), W_2=draw(f, d), b_2=draw(1, d))
        return chain.Drawn({k: out[k] for k in INPUTS})

    def ok(mats):  # decided on the high-precision values (screen.py): the same draw on any CPU
        # hand mode: the exact chain reads the standard tables, never past their range (the same in every variant)
        return screen.screened("decoder-block", reference, params, mats, test) and chain.reads_standard_tables_by_hand(
            solve, mats, params
        )

    def test(ref):
        pre = ref["ffn.hidden_pre"]
        if not (min(ref[f"norm{k}.variance"].min() for k in (1, 2, 3)) >= 0.25 and (pre < 0).any() and (pre > 0).any()):
            return False
        for h in range(1, H + 1):
            S = ref[f"cross.scaled_{h}"]
            span = S.max(axis=1) - S.min(axis=1)
            if np.abs(S).max() > 6 or span.max() > 4 or (n > 1 and span.max() < 0.5):
                return False
        return multi_head_attention._distinct([ref[f"cross.{x}_{h}"] for h in range(1, H + 1) for x in "KV"])

    return base.retry(
        "decoder-block",
        make,
        ok,
        f"heads={H}, seq_len={m}, src_len={n}, d_model={d}, d_ff={f} with layer-norm variances of at least 1/4",
    )


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The whole float64 chain, unrounded, computed first and independently of the exact one.

    ``given`` maps step names (``self.scores_1``, ``norm2.mean``, ``output``)
    to values that replace the computed ones; each part gets its own (prefix
    dropped) and every later step is computed from them (``worksheet check``).
    """
    heads = params.heads
    r = chain.Reference(inputs, precise.number(params.epsilon), given)
    put, part = r.put, r.part
    sa = put(
        "self.",
        multi_head_attention.np_steps(
            {k: inputs[k] for k in multi_head_attention.INPUTS}, heads, True, given=part("self.")
        ),
    )
    n1 = r.add_norm("norm1.", inputs["X"], sa["output"], 1)
    ca = put(
        "cross.",
        multi_head_attention.np_steps(
            {"X": n1["output"], "H_enc": inputs["H_enc"], **{v: inputs[k] for k, v in CROSS.items()}},
            heads,
            False,
            given=part("cross."),
        ),
    )
    n2 = r.add_norm("norm2.", n1["output"], ca["output"], 2)
    r.add_norm("norm3.", n2["output"], r.ffn("ffn.", n2["output"])["output"], 3)
    return r.finish("norm3.")  # Add & Norm 3's scale and shift is the block's output: one step, ``output``


def check_inputs(inputs: dict[str, Matrix], heads: int) -> None:
    base.require_inputs(inputs, INPUTS, f"the decoder block needs {', '.join(INPUTS)}")
    multi_head_attention.check_inputs({k: inputs[k] for k in multi_head_attention.INPUTS}, heads)
    X, H_enc = inputs["X"], inputs["H_enc"]
    d = shape(X)[1]
    if shape(H_enc)[1] != d:
        raise ShapeError(
            f"{chain.dims('X', X)} and {chain.dims('H_enc', H_enc)}: the encoder output must be as wide "
            f"as the decoder side ({d} columns)"
        )
    try:
        multi_head_attention.check_inputs({"X": X, "H_enc": H_enc, **{v: inputs[k] for k, v in CROSS.items()}}, heads)
    except ShapeError as exc:  # name the block's matrices, not the part's
        text = str(exc)
        for k, v in CROSS.items():
            text = text.replace(v + " ", k + " ")
        raise ShapeError(f"cross-attention: {text}") from None
    chain.check_widths(
        inputs, ("gamma_1", "beta_1", "gamma_2", "beta_2", "gamma_3", "beta_3"), ("W_O", "W_O_c"), "Add & Norm 2"
    )
    feed_forward.check_inputs({k: inputs[k] for k in feed_forward.INPUTS})


def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    check_inputs(inputs, params.heads)
    kept = chain.take_solved(inputs, params, seed)  # generate solved this draw to accept it
    if kept is not None:
        return kept
    return chain.solve_carried(lambda carry: _solve(inputs, params, seed, carry))


# long: the block's sublayers in order, as the sheet has them
def _solve(inputs: dict[str, Matrix], params: Params, seed: int | None, carry: chain.Chain) -> Problem:
    X, H_enc = inputs["X"], inputs["H_enc"]
    (m, d), n = shape(X), shape(H_enc)[0]
    H = params.heads
    tokens = base.row_labels(params.tokens or cross_attention.default_target(m), m)
    source = base.row_labels(params.source_tokens, n, field="source_tokens")
    eps = params.epsilon
    d_k = chain.head_width(inputs, H)
    actual = base.solved_params(
        params,
        seq_len=m,
        src_len=n,
        d_model=d,
        d_k=d_k,
        d_ff=shape(inputs["W_1"])[1],
        eps=eps,
        tokens=tokens,
        source_tokens=source,
    )
    p = Problem(
        "decoder-block",
        TITLE,
        actual,
        seed=seed,
        intro=(
            "Pass the decoder tokens " + ", ".join(tokens) + " through one decoder layer, with "
            "the encoder output $H_{\\mathrm{enc}}$ for " + ", ".join(source) + ": masked multi-head "
            f"self-attention ($H = {H}$ {'head' if H == 1 else 'heads'}, token $i$ sees tokens $j \\le i$), Add & Norm, "
            "cross-attention (queries from the decoder, keys and values from $H_{\\mathrm{enc}}$), "
            "Add & Norm, the feed-forward network, Add & Norm. The layer norms use the population "
            f"variance and $\\varepsilon = {blocks.work_term(eps)[0]}$. " + chain.round_as_told(carry.places)
        ),
    )
    for name in INPUTS:
        p.add_input(
            name,
            inputs[name],
            rows=tokens if name == "X" else source if name == "H_enc" else None,
            latex_name=f"W^{name[2]}_c" if name in CROSS else "H_{\\mathrm{enc}}" if name == "H_enc" else None,
        )
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)
    hand = params.numbers == "hand"

    drift = screen.precise_floats(p.kind, params, {k: q.exact for k, q in p.inputs.items()})
    b = chain.Builder(p, carry, ref, PARTS, STAGES, drift)

    b.add(
        "self.",
        "masked self-attention",
        multi_head_attention.solve,
        params.mha_params(causal=True).replace(tokens=tokens, d_model=None, seq_len=m),
        "Masked self-attention on the decoder tokens: token $i$ attends to tokens $j \\le i$ only.",
    )
    ln = layer_norm.Params(numbers=params.numbers, eps=eps, tokens=tokens)
    b.add(
        "norm1.",
        "Add & Norm 1",
        layer_norm.solve,
        ln,
        "Here $O$ is the self-attention output, "
        r"$\gamma = \gamma_1$, $\beta = \beta_1$.",
        symbols=SYMBOLS["norm1."],
    )

    def cross(inputs_, params_, carry):
        return multi_head_attention.solve(inputs_, params_, carry=carry, memory_tokens=source, exp_table=hand or None)

    b.add(
        "cross.",
        "cross-attention",
        cross,
        params.mha_params(causal=False).replace(tokens=tokens, d_model=None, seq_len=m),
        "Cross-attention: the queries come from $Y_1$, the output of Add & Norm 1, with $W^Q_c$; "
        r"the keys and values from the encoder output $H_{\mathrm{enc}}$ with $W^K_c$ and $W^V_c$. No mask.",
        symbols=SYMBOLS["cross."],
    )
    b.add(
        "norm2.",
        "Add & Norm 2",
        layer_norm.solve,
        ln,
        "Here $Y_1$ is the output of Add & Norm 1, $O_c$ the "
        r"cross-attention output, $\gamma = \gamma_2$, $\beta = \beta_2$.",
        symbols=SYMBOLS["norm2."],
    )

    b.add(
        "ffn.",
        "feed-forward",
        feed_forward.solve,
        feed_forward.Params(numbers=params.numbers, tokens=tokens),
        "Here $Y_2$ is the output of Add & Norm 2.",
        symbols=SYMBOLS["ffn."],
    )
    b.add(
        "norm3.",
        "Add & Norm 3",
        layer_norm.solve,
        ln,
        "Here $Y_2$ is the output of Add & Norm 2, $O_f$ the "
        r"feed-forward output, $\gamma = \gamma_3$, $\beta = \beta_3$.",
        last="output",
        last_title="Add & Norm 3: scale and shift = the decoder block output",
        symbols=SYMBOLS["norm3."],
    )
    return p
