"""The mistakes ``worksheet check`` recognises, each a recomputation with a
known wrong rule (CONCEPTS.md, "Mistakes students make").

A :class:`Mistake` has a stable code (the JSON report's ``mistake`` field)
and one plain sentence (the text report).  A *rule* computes, with numpy,
the value a step takes when the mistake is made there::

    rule(v: Values, params: dict) -> np.ndarray | None

``v`` holds the float inputs and the values of the problem's steps (the
key's, or ones recomputed from a student's own earlier answers); ``params``
is the problem's ``params`` from the key.  A rule returns None (or raises
KeyError) when it does not apply to the problem at hand, e.g. the mask
mistakes on a problem without a causal mask.

Rules are registered per (kind, step) with :func:`register`.  The step where
a rule is registered is the mistake's *origin*; the checker also follows a
mistake into later steps by recomputing them from the wrong value with the
kind's own ``reference(..., given=...)`` (so a student who forgot the
scaling and wrote only the weights is still told so).  Steps numbered per
head (``scores_2`` in multi-head attention) use the rules registered for
their base name (``scores``), with :class:`Values` looking up the names of
the same head first.  The encoder block's steps (``attn.scores_1``,
``norm1.variance``, ``ffn.hidden``) use the rules of the kind each part is
(:data:`ENCODER_PARTS`), looking up ``attn.``-prefixed names first and
renaming the part's inputs (``S`` of ``norm1.`` is ``attn.output``).

``arithmetic-slip`` (exactly one entry wrong) has no rule: the checker finds
it by counting wrong entries.  Adding a mistake = one catalogue entry + one
registered rule + a test that some generated problem is diagnosed with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

import numpy as np

__all__ = ["Mistake", "CATALOGUE", "SLIP", "Values", "register", "rules", "codes_for"]


@dataclass(frozen=True)
class Mistake:
    code: str  # stable: reports and other tools key on it
    sentence: str  # one plain sentence for the text report


SLIP = "arithmetic-slip"

CATALOGUE: dict[str, Mistake] = {m.code: m for m in (
    Mistake("no-scaling",
            "The scores were not divided by sqrt(d_k)."),
    Mistake("scaled-by-d_k",
            "The scores were divided by d_k instead of by sqrt(d_k)."),
    Mistake("scaled-by-sqrt-d_model",
            "The scores were divided by sqrt(d_model) instead of by sqrt(d_k), the width of the keys."),
    Mistake("scores-transposed",
            "The scores are transposed (K Q^T instead of Q K^T): row i must be query i and column j key j."),
    Mistake("softmax-over-columns",
            "The softmax was taken down each column instead of along each row (over the keys)."),
    Mistake("mask-wrong-triangle",
            "The wrong triangle was masked: the entries with j > i (later tokens) become -inf."),
    Mistake("mask-zero-instead-of-inf",
            "Masked scores were set to 0 instead of -inf, so the masked positions still get weight."),
    Mistake("mask-after-softmax",
            "The weights above the diagonal were zeroed after the softmax without renormalising; "
            "mask the scores with -inf before the softmax so each row sums to 1."),
    Mistake("cross-sources-swapped",
            "The sources are swapped: in encoder-decoder attention the queries come from the decoder "
            "and the keys and values from the encoder output."),
    Mistake("weights-times-X",
            "The weights were multiplied by the inputs X instead of by the values V."),
    Mistake("sample-variance",
            "The variance was divided by d - 1 (sample variance) instead of by d (population variance)."),
    Mistake("normalized-across-tokens",
            "The mean and variance were taken down each column (across tokens) "
            "instead of along each row (across one token's features)."),
    Mistake("missing-residual",
            "The residual was left out: layer norm is applied to x + Sublayer(x)."),
    Mistake("pe-sin-cos-swapped",
            "sin and cos are swapped: even columns (2i) take the sine, odd columns (2i+1) the cosine."),
    Mistake("pe-index-not-halved",
            "The exponent uses the column index instead of the pair index: columns 2i and 2i+1 "
            "share the angle pos / base^(2i/d_model)."),
    Mistake("concat-wrong-axis",
            "The heads were stacked along the wrong axis: put them side by side, one row per token."),
    Mistake("missing-W_O",
            "The concatenated heads were not multiplied by W^O."),
    Mistake("relu-after-second-layer",
            "The ReLU was applied after the second linear layer instead of after the first."),
    Mistake("tanh-for-sigmoid",
            "sigma and tanh were swapped on a gate: the gates (f, i, o; z, r) use the logistic sigma, "
            "the candidate (g; n) uses tanh."),
    Mistake("c-without-forget",
            "The forget term was left out of the cell state: c_t = f * c_(t-1) + i * g, not i * g."),
    Mistake("h-from-c-without-tanh",
            "The hidden state was computed as o * c: the cell state goes through tanh first, h = o * tanh(c)."),
    Mistake("gru-cho-update",
            "z and 1 - z were swapped in the update: this GRU (PyTorch's) has h' = (1 - z) * n + z * h."),
    Mistake("reset-outside",
            "The reset gate was applied to h before the product with W_hn (Cho et al.); "
            "this GRU (PyTorch's) uses r * (h W_hn + b_hn)."),
    Mistake(SLIP,
            "Exactly one entry is wrong: an arithmetic slip."),
)}

Rule = Callable[["Values", dict], "np.ndarray | None"]

# (kind, step base name) -> [(code, rule)], in the order they are tried
_RULES: dict[tuple[str, str], list[tuple[str, Rule]]] = {}

_HEAD = re.compile(r"^(?P<base>.+?)_(?P<head>\d+)$")


class Values(Mapping):
    """Float arrays of one problem by name, as one part of it sees them.

    ``suffix`` (``"_2"``) picks a head's own steps and ``prefix`` (``"attn."``)
    a part of the encoder block: ``v["scores"]`` is the first of
    ``attn.scores_2``, ``attn.scores``, ``scores_2``, ``scores`` that exists.
    ``aliases`` rename a part's inputs (``{"S": "attn.output"}``), used when
    the alias exists.
    """

    def __init__(self, data: Mapping[str, np.ndarray], suffix: str = "", prefix: str = "",
                 aliases: Mapping[str, str] | None = None):
        self.data = data
        self.suffix = suffix
        self.prefix = prefix
        self.aliases = aliases or {}

    def _name(self, name: str) -> str:
        alias = self.aliases.get(name)
        if alias is not None and alias in self.data:
            return alias
        for n in (self.prefix + name + self.suffix, self.prefix + name, name + self.suffix):
            if n in self.data:
                return n
        return name

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[self._name(name)]

    def __contains__(self, name) -> bool:
        return self._name(name) in self.data

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def register(kinds: str | tuple[str, ...], step: str, code: str):
    """Decorator: ``rule`` computes ``step`` of each kind in ``kinds`` with mistake ``code``."""
    if code not in CATALOGUE:
        raise ValueError(f"unknown mistake code {code!r}")
    kinds = (kinds,) if isinstance(kinds, str) else kinds

    def deco(rule: Rule) -> Rule:
        for kind in kinds:
            _RULES.setdefault((kind, step), []).append((code, rule))
        return rule

    return deco


# encoder-block step prefix -> (the kind that part is, its inputs by their names in the block)
ENCODER_PARTS: dict[str, tuple[str, dict[str, str]]] = {
    "pe.": ("positional-encoding", {}),
    "attn.": ("multi-head-attention", {"X": "pe.X_plus_PE"}),
    "norm1.": ("layer-norm", {"X": "pe.X_plus_PE", "S": "attn.output", "gamma": "gamma_1",
                              "beta": "beta_1"}),
    "ffn.": ("feed-forward", {"X": "norm1.output"}),
    "norm2.": ("layer-norm", {"X": "norm1.output", "S": "ffn.output", "gamma": "gamma_2",
                              "beta": "beta_2"}),
}


# decoder-block step prefix -> (the kind that part is, its inputs by their names in the block)
DECODER_PARTS: dict[str, tuple[str, dict[str, str]]] = {
    "self.": ("multi-head-attention", {}),
    "norm1.": ("layer-norm", {"S": "self.output", "gamma": "gamma_1", "beta": "beta_1"}),
    "cross.": ("multi-head-attention", {"X": "norm1.output", "W_Q": "W_Q_c", "W_K": "W_K_c", "W_V": "W_V_c",
                                        "W_O": "W_O_c"}),
    "norm2.": ("layer-norm", {"X": "norm1.output", "S": "cross.output", "gamma": "gamma_2", "beta": "beta_2"}),
    "ffn.": ("feed-forward", {"X": "norm2.output"}),
    "norm3.": ("layer-norm", {"X": "norm2.output", "S": "ffn.output", "gamma": "gamma_3", "beta": "beta_3"}),
}
BLOCK_PARTS = {"encoder-block": ENCODER_PARTS, "decoder-block": DECODER_PARTS}


def rules(kind: str, step: str) -> list[tuple[str, Rule, dict]]:
    """``(code, rule, context)`` for a step of a kind; ``Values(data, **context)`` is
    what the rule reads (head steps use their base name's rules, encoder-block
    steps those of their part's kind)."""
    if kind in BLOCK_PARTS:
        for prefix, (part, aliases) in BLOCK_PARTS[kind].items():
            if step.startswith(prefix):
                return [(c, r, {**ctx, "prefix": prefix, "aliases": aliases})
                        for c, r, ctx in rules(part, step[len(prefix):])]
        return []
    found = [(c, r, {}) for c, r in _RULES.get((kind, step), [])]
    m = _HEAD.match(step)
    if m and (kind, m["base"]) in _RULES:
        found += [(c, r, {"suffix": "_" + m["head"]}) for c, r in _RULES[(kind, m["base"])]]
    return found


def codes_for(kind: str) -> list[str]:
    """Every mistake code registered for a kind (catalogue order), plus the slip."""
    parts = {kind} | {p for p, _ in BLOCK_PARTS.get(kind, {}).values()}
    have = {c for (k, _), rs in _RULES.items() if k in parts for c, _ in rs}
    return [c for c in CATALOGUE if c in have] + [SLIP]


# ---------------------------------------------------------------- numpy helpers
def softmax(S: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``; -inf entries get weight 0."""
    m = np.max(S, axis=axis, keepdims=True)
    e = np.exp(S - m)
    return e / e.sum(axis=axis, keepdims=True)


def _above(S: np.ndarray) -> np.ndarray:
    """Boolean mask of the entries with j > i."""
    n, m = S.shape
    return np.triu(np.ones((n, m), dtype=bool), k=1)


def _below(S: np.ndarray) -> np.ndarray:
    n, m = S.shape
    return np.tril(np.ones((n, m), dtype=bool), k=-1)


def _where(S: np.ndarray, mask: np.ndarray, value: float) -> np.ndarray:
    out = np.array(S, dtype=np.float64, copy=True)
    out[mask] = value
    return out


# ---------------------------------------------------------------- attention family
# Steps: scores, scaled (not in self-attention-basic), masked (causal only),
# weights, output.  Multi-head attention has the same steps per head.
SCALED = ("attention", "cross-attention", "multi-head-attention")
ATTENTION_LIKE = SCALED + ("self-attention-basic",)
MASKED = ("attention", "self-attention-basic", "multi-head-attention")


def _unmasked_logits(v: Values) -> np.ndarray:
    """What the mask is applied to: the scaled scores, or the scores when there is no scaling."""
    return v["scaled"] if "scaled" in v else v["scores"]


def _logits(v: Values) -> np.ndarray:
    """What the softmax is taken of."""
    return v["masked"] if "masked" in v else _unmasked_logits(v)


def _d_k(v: Values) -> int:
    return v["K"].shape[1] if "K" in v else v["scores"].shape[1]


@register(("attention", "cross-attention", "multi-head-attention"), "scores", "scores-transposed")
def _scores_transposed(v, params):
    return v["K"] @ v["Q"].T


@register(SCALED, "scaled", "no-scaling")
def _no_scaling(v, params):
    return v["scores"]


@register(SCALED, "scaled", "scaled-by-d_k")
def _scaled_by_d_k(v, params):
    return v["scores"] / _d_k(v)


@register(SCALED, "scaled", "scaled-by-sqrt-d_model")
def _scaled_by_sqrt_d_model(v, params):
    for x in ("X", "X_dec"):
        if x in v:
            return v["scores"] / np.sqrt(v[x].shape[1])
    return None  # Q, K, V given directly: there is no d_model


@register(MASKED, "masked", "mask-wrong-triangle")
def _mask_wrong_triangle(v, params):
    S = _unmasked_logits(v)
    return _where(S, _below(S), -np.inf)


@register(MASKED, "masked", "mask-zero-instead-of-inf")
def _mask_zero(v, params):
    S = _unmasked_logits(v)
    return _where(S, _above(S), 0.0)


@register(ATTENTION_LIKE, "weights", "softmax-over-columns")
def _softmax_columns(v, params):
    return softmax(_logits(v), axis=0)


@register(MASKED, "weights", "mask-after-softmax")
def _mask_after_softmax(v, params):
    if "masked" not in v:
        return None
    W = softmax(_unmasked_logits(v))
    return _where(W, _above(W), 0.0)


@register("attention", "output", "weights-times-X")
@register("multi-head-attention", "head", "weights-times-X")
def _weights_times_x(v, params):
    return v["weights"] @ v["X"]


@register("cross-attention", "Q", "cross-sources-swapped")
def _queries_from_encoder(v, params):
    return v["H_enc"] @ v["W_Q"]


@register("cross-attention", "K", "cross-sources-swapped")
def _keys_from_decoder(v, params):
    return v["X_dec"] @ v["W_K"]


@register("cross-attention", "V", "cross-sources-swapped")
def _values_from_decoder(v, params):
    return v["X_dec"] @ v["W_V"]


@register("cross-attention", "output", "weights-times-X")
def _weights_times_h(v, params):
    return v["weights"] @ v["H_enc"]


# ---------------------------------------------------------------- softmax-scaling, alignment
def _softmax_of_scores_over(divisor):
    def rule(v, params):
        d_k = float(params["d_k"])
        return softmax(v["scores"] / divisor(d_k))
    return rule


register("softmax-scaling", "softmax_sqrt_dk", "no-scaling")(_softmax_of_scores_over(lambda d: 1.0))
register("softmax-scaling", "softmax_sqrt_dk", "scaled-by-d_k")(_softmax_of_scores_over(lambda d: d))


def _scaled_dot(v, params) -> np.ndarray | None:
    """``s . h_j`` of an alignment with the scaled-dot score (else None: no scaling to get wrong)."""
    if params.get("score") != "scaled-dot":
        return None
    return v["s"] @ v["H"].T


@register("alignment", "scores", "no-scaling")
def _alignment_no_scaling(v, params):
    return _scaled_dot(v, params)


@register("alignment", "scores", "scaled-by-d_k")
def _alignment_by_d(v, params):
    dots = _scaled_dot(v, params)
    return None if dots is None else dots / v["s"].shape[1]


# ---------------------------------------------------------------- multi-head attention
# Per head: the attention rules above (scores_h, scaled_h, masked_h, weights_h)
# and weights-times-X on head_h; then concat and output.
def _heads(v: Values, params) -> list[np.ndarray]:
    return [v[f"head_{h}"] for h in range(1, int(params["heads"]) + 1)]


@register("multi-head-attention", "concat", "concat-wrong-axis")
def _concat_rows(v, params):
    return np.vstack(_heads(v, params))  # (H n, d_v) instead of (n, H d_v)


@register("multi-head-attention", "output", "missing-W_O")
def _missing_w_o(v, params):
    return v["concat"]


# ---------------------------------------------------------------- positional encoding
# angles (n x pairs): pos / base^(2i/d_model); PE: sin on even columns, cos on odd.
def _positions(v: Values) -> np.ndarray:
    return v["angles"][:, :1]  # pair 0 has divisor base^0 = 1: the positions themselves


def _pe_width(v: Values, params) -> int:
    return v["PE"].shape[1] if "PE" in v else int(params["d_model"])


def _pe_base(params) -> float:
    return float(params.get("base") or 10000)


def _sin_cos(angle_of_column: np.ndarray) -> np.ndarray:
    """PE from one angle per column: sin on even columns, cos on odd ones."""
    out = np.empty_like(angle_of_column)
    out[:, 0::2] = np.sin(angle_of_column[:, 0::2])
    out[:, 1::2] = np.cos(angle_of_column[:, 1::2])
    return out


@register(("positional-encoding",), "PE", "pe-sin-cos-swapped")
def _pe_swapped(v, params):
    A, d = v["angles"], _pe_width(v, params)
    out = np.empty((A.shape[0], d))
    out[:, 0::2] = np.cos(A)
    out[:, 1::2] = np.sin(A[:, : d // 2])
    return out


def _pe_column_exponent(scale: float):
    """PE whose angle for column j uses exponent scale * j / d_model (j the column index)."""
    def rule(v, params):
        d = _pe_width(v, params)
        j = np.arange(d, dtype=np.float64)
        return _sin_cos(_positions(v) / np.power(_pe_base(params), scale * j / d))
    return rule


register("positional-encoding", "PE", "pe-index-not-halved")(_pe_column_exponent(2.0))
register("positional-encoding", "PE", "pe-index-not-halved")(_pe_column_exponent(1.0))


@register("positional-encoding", "angles", "pe-index-not-halved")
def _angles_by_column(v, params):
    i = np.arange(v["angles"].shape[1], dtype=np.float64)  # pair i has the sine column 2i
    d = _pe_width(v, params)
    return _positions(v) / np.power(_pe_base(params), 2 * (2 * i) / d)


# ---------------------------------------------------------------- layer norm
# residual (when S is given), mean and variance (n x 1), normalized, output.
def _R(v: Values) -> np.ndarray:
    return v["residual"] if "residual" in v else v["X"]


def _eps(params) -> float:
    from fractions import Fraction

    eps = params.get("eps")
    return 0.0 if eps in (None, "") else float(Fraction(str(eps)))


@register("layer-norm", "residual", "missing-residual")
def _no_residual(v, params):
    return v["S"]  # LayerNorm(Sublayer(x)) instead of LayerNorm(x + Sublayer(x))


@register("layer-norm", "variance", "sample-variance")
def _sample_variance(v, params):
    R = _R(v)
    if R.shape[1] < 2:
        return None
    return ((R - v["mean"]) ** 2).sum(axis=1, keepdims=True) / (R.shape[1] - 1)


@register("layer-norm", "mean", "normalized-across-tokens")
def _mean_down_columns(v, params):
    return _R(v).mean(axis=0, keepdims=True)  # (1, d) instead of (n, 1)


@register("layer-norm", "variance", "normalized-across-tokens")
def _variance_down_columns(v, params):
    return _R(v).var(axis=0, keepdims=True)


@register("layer-norm", "normalized", "normalized-across-tokens")
def _normalized_down_columns(v, params):
    R = _R(v)
    return (R - R.mean(axis=0, keepdims=True)) / np.sqrt(R.var(axis=0, keepdims=True) + _eps(params))


# ---------------------------------------------------------------- feed-forward
# hidden_pre = X W_1 + b_1, hidden = ReLU(hidden_pre), output = hidden W_2 + b_2.
@register("feed-forward", "hidden", "relu-after-second-layer")
def _no_relu_first(v, params):
    return v["hidden_pre"]


@register("feed-forward", "output", "relu-after-second-layer")
def _relu_second(v, params):
    return np.maximum(v["hidden_pre"] @ v["W_2"] + v["b_2"], 0.0)


@register("feed-forward", "output", "relu-after-second-layer")
def _relu_both(v, params):
    return np.maximum(v["hidden"] @ v["W_2"] + v["b_2"], 0.0)


# ---------------------------------------------------------------- lstm-cell, gru-cell
# LSTM steps f, i, g, o, c, h; GRU steps z, r, n, h; with several time steps
# each is suffixed _t (f_2), and its rules read the step's own time step.
def _rec():
    from .kinds import recurrent  # local: the kinds package stays off this module's import

    return recurrent


def _gate_with(act: str, gate: str) -> Rule:
    def rule(v, params):
        rec = _rec()
        a = rec.np_pre(v, gate)
        return np.tanh(a) if act == "tanh" else rec.np_sigmoid(a)
    return rule


for _g in ("f", "i", "o"):
    register("lstm-cell", _g, "tanh-for-sigmoid")(_gate_with("tanh", _g))
register("lstm-cell", "g", "tanh-for-sigmoid")(_gate_with("sigma", "g"))
for _g in ("z", "r"):
    register("gru-cell", _g, "tanh-for-sigmoid")(_gate_with("tanh", _g))


@register("lstm-cell", "c", "c-without-forget")
def _c_without_forget(v, params):
    return v["i"] * v["g"]


@register("lstm-cell", "h", "h-from-c-without-tanh")
def _h_without_tanh(v, params):
    return v["o"] * v["c"]


def _gru_prev(v) -> tuple[np.ndarray, np.ndarray]:
    """(x_t, h_{t-1}) of a GRU rule's time step."""
    rec = _rec()
    t = rec.time_of(v.suffix)
    x = v.data["x"] if "x" in v.data else v.data["X"][t - 1: t]
    return x, rec.before(v, "h", t, "h0")


@register("gru-cell", "n", "tanh-for-sigmoid")
def _gru_n_sigmoid(v, params):
    x, h = _gru_prev(v)
    return _rec().np_sigmoid(x @ v["W_n"] + v["b_n"] + v["r"] * (h @ v["W_hn"] + v["b_hn"]))


@register("gru-cell", "n", "reset-outside")
def _gru_reset_outside(v, params):
    x, h = _gru_prev(v)
    return np.tanh(x @ v["W_n"] + v["b_n"] + (v["r"] * h) @ v["W_hn"] + v["b_hn"])


@register("gru-cell", "h", "gru-cho-update")
def _gru_cho_update(v, params):
    _, h = _gru_prev(v)
    return v["z"] * v["n"] + (1 - v["z"]) * h
