"""The mistakes ``worksheet check`` recognises, each a recomputation with a
known wrong rule (the mistakes students make, as lecturers report them).

A :class:`Mistake` has a stable code (the JSON report's ``mistake`` field)
and one plain sentence (the text report).  A *rule* computes, with numpy,
the value a step takes when the mistake is made there::

    rule(v: Values, params: dict) -> np.ndarray | None

``v`` holds the float inputs and the values of the problem's steps (the
key's, or ones recomputed from a student's own earlier answers); ``params``
is the problem's ``params`` from the key.  A rule returns None (or raises
KeyError) when it does not apply to the problem at hand, e.g. the mask
mistakes on a problem without a causal mask.

Where the rules live.  This module holds what every kind shares: the
catalogue, :class:`Values`, :func:`register`, :func:`rules`,
:func:`codes_for`, and the rules of the attention steps that several kinds
have (scores, scaled, masked, weights: registered for the tuples
:data:`SCALED`, :data:`ATTENTION_LIKE`, :data:`MASKED`).  Every other rule
lives in its kind's module, in a section ``# ---- mistakes`` at the end
(``layer_norm.py`` registers ``sample-variance``); rules that two kinds share
there (the gate rules of the LSTM and GRU) sit in their common module
(``recurrent.py``).  A kind's rules are registered when its module is
imported; :func:`rules` and :func:`codes_for` import it first (through
:func:`worksheet.kinds.get`), so nothing imports every kind at start-up.

Rules are registered per (kind, step) with :func:`register`.  The step where
a rule is registered is the mistake's *origin*; the checker also follows a
mistake into later steps by recomputing them from the wrong value with the
kind's own ``reference(..., given=...)`` (so a student who forgot the
scaling and wrote only the weights is still told so).  Steps numbered per
head (``scores_2`` in multi-head attention) use the rules registered for
their base name (``scores``), with :class:`Values` looking up the names of
the same head first.  A kind built from other kinds (the encoder and decoder
blocks) has no rules of its own: its module's ``PARTS`` maps each step
prefix to the kind that part is and its inputs by their names in the block
(the same mapping its ``solve`` wires the parts with), and a step
``attn.scores_1`` uses the rules of that part's kind, looking up
``attn.``-prefixed names first and reading the part's inputs under the
block's names (``S`` of ``norm1.`` is ``attn.output``).

``arithmetic-slip`` (exactly one entry wrong) has no rule: the checker finds
it by counting wrong entries.  Adding a mistake = one catalogue entry here +
one rule registered in the ``# ---- mistakes`` section of its kind's module
(or here, when several attention kinds share it) + a test that some
generated problem is diagnosed with it (``tests/test_mistakes.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

import numpy as np

from . import registry as _kinds
from ..steps import precise
from ..policy.errors import WorksheetError
from ..solution.maths import Prose, as_prose
from ..solution.step_ref import StepRef

__all__ = [
    "Mistake",
    "CATALOGUE",
    "SLIP",
    "TRUNCATED",
    "WITHOUT_RULE",
    "Values",
    "register",
    "rules",
    "codes_for",
    "parts",
    "softmax",
]


@dataclass(frozen=True)
class Mistake:
    code: str  # stable: reports and other tools key on it
    sentence: str  # one plain sentence for the text report
    maths: str = ""  # the same sentence typeset for sheets and keys (prose with inline $...$); "": no maths

    def __post_init__(self):  # its prose, read once (the same on every key and feedback)
        from .hints import hint

        typeset = as_prose(self.maths or self.sentence)
        object.__setattr__(self, "_typeset", typeset)
        object.__setattr__(self, "_hint", as_prose(hint(self.code, typeset)))

    @property
    def typeset(self) -> Prose:
        """The sentence as a key prints it (prose): maths typeset, no ASCII pseudo-maths."""
        return self._typeset

    @property
    def hint(self) -> Prose:
        """What the student who made it is told (prose: second person, ``$...$`` maths: :mod:`.hints`)."""
        return self._hint


SLIP = "arithmetic-slip"
TRUNCATED = "truncated"  # no rule either: the checker compares the digits written (worksheet.check.marking)
WITHOUT_RULE = (SLIP, TRUNCATED)  # diagnosed from the digits, no computation plants them

CATALOGUE: dict[str, Mistake] = {
    m.code: m
    for m in (
        Mistake(
            "no-scaling", "The scores were not divided by sqrt(d_k).", r"The scores were not divided by $\sqrt{d_k}$."
        ),
        Mistake(
            "scaled-by-d_k",
            "The scores were divided by d_k instead of by sqrt(d_k).",
            r"The scores were divided by $d_k$ instead of by $\sqrt{d_k}$.",
        ),
        Mistake(
            "scaled-by-sqrt-d_model",
            "The scores were divided by sqrt(d_model) instead of by sqrt(d_k), the width of the keys.",
            r"The scores were divided by $\sqrt{d_\mathrm{model}}$ instead of by $\sqrt{d_k}$, the width of the keys.",
        ),
        Mistake(
            "scores-transposed",
            "The scores are transposed (K Q^T instead of Q K^T): row i must be query i and column j key j.",
            r"The scores are transposed ($K Q^\top$ instead of $Q K^\top$): row $i$ must be query $i$ and column $j$ key $j$.",
        ),
        Mistake(
            "softmax-over-columns", "The softmax was taken down each column instead of along each row (over the keys)."
        ),
        Mistake(
            "mask-wrong-triangle",
            "The wrong triangle was masked: the entries with j > i (later tokens) become -inf.",
            r"The wrong triangle was masked: the entries with $j > i$ (later tokens) become $-\infty$.",
        ),
        Mistake(
            "mask-zero-instead-of-inf",
            "Masked scores were set to 0 instead of -inf, so the masked positions still get weight.",
            r"Masked scores were set to 0 instead of $-\infty$, so the masked positions still get weight.",
        ),
        Mistake(
            "mask-after-softmax",
            "The weights above the diagonal were zeroed after the softmax without renormalising; "
            "mask the scores with -inf before the softmax so each row sums to 1.",
            r"The weights above the diagonal were zeroed after the softmax without renormalising; "
            r"mask the scores with $-\infty$ before the softmax so each row sums to 1.",
        ),
        Mistake(
            "cross-sources-swapped",
            "The sources are swapped: in encoder-decoder attention the queries come from the decoder "
            "and the keys and values from the encoder output.",
        ),
        Mistake(
            "weights-times-X",
            "The weights were multiplied by the inputs X instead of by the values V.",
            r"The weights were multiplied by the inputs $X$ instead of by the values $V$.",
        ),
        Mistake(
            "sample-variance",
            "The variance was divided by d - 1 (sample variance) instead of by d (population variance).",
            r"The variance was divided by $d - 1$ (sample variance) instead of by $d$ (population variance).",
        ),
        Mistake(
            "normalized-across-tokens",
            "The mean and variance were taken down each column (across tokens) "
            "instead of along each row (across one token's features).",
        ),
        Mistake(
            "missing-residual",
            "The residual was left out: layer norm is applied to x + Sublayer(x).",
            r"The residual was left out: layer norm is applied to $x + \mathrm{Sublayer}(x)$.",
        ),
        Mistake(
            "pe-sin-cos-swapped",
            "sin and cos are swapped: even columns (2i) take the sine, odd columns (2i+1) the cosine.",
            r"$\sin$ and $\cos$ are swapped: even columns ($2i$) take the sine, odd columns ($2i+1$) the cosine.",
        ),
        Mistake(
            "pe-index-not-halved",
            "The exponent uses the column index instead of the pair index: columns 2i and 2i+1 "
            "share the angle pos / base^(2i/d_model).",
            r"The exponent uses the column index instead of the pair index: columns $2i$ and $2i+1$ "
            r"share the angle $\mathrm{pos} / \mathrm{base}^{2i/d_\mathrm{model}}$.",
        ),
        Mistake(
            "concat-wrong-axis",
            "The heads were stacked along the wrong axis: put them side by side, one row per token.",
        ),
        Mistake(
            "missing-W_O",
            "The concatenated heads were not multiplied by W^O.",
            r"The concatenated heads were not multiplied by $W^O$.",
        ),
        Mistake(
            "relu-after-second-layer", "The ReLU was applied after the second linear layer instead of after the first."
        ),
        Mistake(
            "tanh-for-sigmoid",
            "sigma and tanh were swapped on a gate: the gates (f, i, o; z, r) use the logistic sigma, "
            "the candidate (g; n) uses tanh.",
            r"$\sigma$ and $\tanh$ were swapped on a gate: the gates ($f, i, o$; $z, r$) use the logistic "
            r"$\sigma$, the candidate ($g$; $n$) uses $\tanh$.",
        ),
        Mistake(
            "c-without-forget",
            "The forget term was left out of the cell state: c_t = f * c_(t-1) + i * g, not i * g.",
            r"The forget term was left out of the cell state: $c_t = f_t \odot c_{t-1} + i_t \odot g_t$, not $i_t \odot g_t$.",
        ),
        Mistake(
            "h-from-c-without-tanh",
            "The hidden state was computed as o * c: the cell state goes through tanh first, h = o * tanh(c).",
            r"The hidden state was computed as $o_t \odot c_t$: the cell state goes through $\tanh$ first, $h_t = o_t \odot \tanh(c_t)$.",
        ),
        Mistake(
            "gru-cho-update",
            "z and 1 - z were swapped in the update: this GRU (PyTorch's) has h' = (1 - z) * n + z * h.",
            r"$z_t$ and $1 - z_t$ were swapped in the update: this GRU (PyTorch's) has $h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$.",
        ),
        Mistake(
            "reset-outside",
            "The reset gate was applied to h before the product with W_hn (Cho et al.); "
            "this GRU (PyTorch's) uses r * (h W_hn + b_hn).",
            r"The reset gate was applied to $h_{t-1}$ before the product with $W_{hn}$ (Cho et al.); "
            r"this GRU (PyTorch's) uses $r_t \odot (h_{t-1} W_{hn} + b_{hn})$.",
        ),
        Mistake(
            TRUNCATED,
            "A decimal was cut off instead of rounded: the digits written are right, the last one should be rounded.",
        ),
        Mistake(SLIP, "Exactly one entry is wrong: an arithmetic slip."),
    )
}

Rule = Callable[["Values", dict], "np.ndarray | None"]

# (kind, step base name) -> [(code, rule)], in the order they are tried
_RULES: dict[tuple[str, str], list[tuple[str, Rule]]] = {}


class Values(Mapping):
    """Float arrays of one problem by name, as one part of it sees them.

    ``at`` is the step the rule explains (a :class:`StepRef`): its index
    (head 2) picks a head's own steps and its part (``attn``) a part of the
    encoder block: ``v["scores"]`` is the first of ``attn.scores_2``,
    ``attn.scores``, ``scores_2``, ``scores`` that exists.
    ``aliases`` give a part's inputs by their names in the block (a block
    module's ``PARTS`` entry: ``{"S": "attn.output"}``), each used when that
    name exists.
    """

    def __init__(
        self,
        data: Mapping[str, np.ndarray],
        at: StepRef | None = None,
        aliases: Mapping[str, str] | None = None,
    ):
        self.data = data
        self.at = at or StepRef("", "")
        self.aliases = aliases or {}

    def _name(self, name: str) -> str:
        alias = self.aliases.get(name)
        if alias is not None and alias not in self.data:  # a block's step, itself shown under another name
            alias = self.aliases.get(alias, alias)
        if alias is not None and alias in self.data:
            return alias
        part, index = self.at.part, self.at.index
        for n in (str(StepRef(part, name, index)), str(StepRef(part, name)), str(StepRef("", name, index))):
            if n in self.data:
                return n
            alias = self.aliases.get(n)  # a block's step by its full name (find-the-mistake's shown steps)
            if alias is not None and alias in self.data:
                return alias
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


def _module(kind: str):
    """The module of a kind, imported (which registers its rules); None for an unknown kind."""
    try:
        return _kinds.get(kind)
    except WorksheetError:
        return None


def parts(kind: str) -> dict[str, tuple[str, dict[str, str]]]:
    """A kind built from other kinds: its module's ``PARTS`` (step prefix -> (the
    kind that part is, its inputs by their names in the block)); else {}."""
    try:
        return _kinds.kind(kind).parts
    except WorksheetError:
        return {}


def rules(kind: str, step: str) -> list[tuple[str, Rule, dict]]:
    """``(code, rule, context)`` for a step of a kind; ``Values(data, **context)`` is
    what the rule reads (head steps use their base name's rules, block steps
    those of their part's kind, see :func:`parts`)."""
    at = StepRef.parse(step)
    composed = parts(kind)
    if composed:
        if at.prefix not in composed:
            return []
        part, aliases = composed[at.prefix]
        return [
            (c, r, {**ctx, "at": dataclasses.replace(ctx["at"], part=at.part), "aliases": aliases})
            for c, r, ctx in rules(part, str(at.local))
        ]
    found = [(c, r, {"at": at.local.base}) for c, r in _RULES.get((kind, step), [])]
    if at.index is not None and (kind, at.name) in _RULES:
        found += [(c, r, {"at": at.local}) for c, r in _RULES[(kind, at.name)]]
    return found


def codes_for(kind: str) -> list[str]:
    """Every mistake code registered for a kind or its parts (catalogue order), plus the slip."""
    of = {kind} | {p for p, _ in parts(kind).values()}
    for k in of:
        _module(k)
    have = {c for (k, _), rs in _RULES.items() if k in of for c, _ in rs}
    return [c for c in CATALOGUE if c in have] + [SLIP]


# ---------------------------------------------------------------- numpy helpers
def softmax(S: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``; -inf entries get weight 0."""
    m = np.max(S, axis=axis, keepdims=True)
    e = precise.exp(S - m)
    return e / e.sum(axis=axis, keepdims=True)


def _above(S: np.ndarray) -> np.ndarray:
    """Boolean mask of the entries with j > i."""
    n, m = S.shape
    return np.triu(np.ones((n, m), dtype=bool), k=1)


def _below(S: np.ndarray) -> np.ndarray:
    n, m = S.shape
    return np.tril(np.ones((n, m), dtype=bool), k=-1)


def _where(S: np.ndarray, mask: np.ndarray, value: float) -> np.ndarray:
    out = np.array(S, dtype=object if precise.is_high(S) else np.float64, copy=True)
    out[mask] = precise.number(value) if precise.is_high(S) else value
    return out


# ---------------------------------------------------------------- attention family
# The rules the attention kinds share.  Steps: scores, scaled (not in
# self-attention-basic), masked (causal only), weights, output.  Multi-head
# attention has the same steps per head.  A kind's own rules (cross-sources-swapped,
# concat-wrong-axis) are in its module.
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
            return v["scores"] / precise.sqrt(v[x].shape[1])
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
