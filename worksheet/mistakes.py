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
the same head first.

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
    Mistake(SLIP,
            "Exactly one entry is wrong: an arithmetic slip."),
)}

Rule = Callable[["Values", dict], "np.ndarray | None"]

# (kind, step base name) -> [(code, rule)], in the order they are tried
_RULES: dict[tuple[str, str], list[tuple[str, Rule]]] = {}

_HEAD = re.compile(r"^(?P<base>.+?)_(?P<head>\d+)$")


class Values(Mapping):
    """Float arrays of one problem by name; ``suffix`` (``"_2"``) picks a head's own steps.

    ``v["scores"]`` is ``scores_2`` when the suffix is ``_2`` and that name
    exists, else ``scores``.
    """

    def __init__(self, data: Mapping[str, np.ndarray], suffix: str = ""):
        self.data = data
        self.suffix = suffix

    def _name(self, name: str) -> str:
        if self.suffix and name + self.suffix in self.data:
            return name + self.suffix
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


def rules(kind: str, step: str) -> list[tuple[str, Rule, str]]:
    """``(code, rule, suffix)`` for a step of a kind (head steps use their base name's rules)."""
    found = [(c, r, "") for c, r in _RULES.get((kind, step), [])]
    m = _HEAD.match(step)
    if m and (kind, m["base"]) in _RULES:
        found += [(c, r, "_" + m["head"]) for c, r in _RULES[(kind, m["base"])]]
    return found


def codes_for(kind: str) -> list[str]:
    """Every mistake code registered for a kind (catalogue order), plus the slip."""
    have = {c for (k, _), rs in _RULES.items() if k == kind for c, _ in rs}
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


@register(("attention", "multi-head-attention"), "output", "weights-times-X")
def _weights_times_x(v, params):
    return v["weights"] @ v["X"]


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
