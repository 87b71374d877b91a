"""The table of problem kinds: each kind's name, module and one-line summary
(so that ``worksheet list`` imports no kind, nor numpy or sympy), the kind a
build makes by default, :func:`get` (a kind's module by name) and
:func:`conventions` (what a sheet of problems states).  The package
:mod:`worksheet.kinds` gives these names; adding a kind adds one line to
:data:`KINDS`.
"""

from __future__ import annotations

import difflib
import importlib
from types import ModuleType

from ..policy.errors import UnknownKindError

__all__ = ["KINDS", "DEFAULT", "names", "get", "conventions"]

# name -> (module, one-line summary)
KINDS: dict[str, tuple[str, str]] = {
    "attention": ("attention", "scaled dot-product attention softmax(Q K^T / sqrt(d_k)) V; --causal masks"),
    "self-attention-basic": (
        "self_attention_basic",
        "self-attention with no trained weights: score(x_i, x_j) = x_i . x_j",
    ),
    "softmax-scaling": ("softmax_scaling", "why divide by sqrt(d_k): softmax of raw, /sqrt(d_k) and /d_k scores"),
    "multi-head-attention": ("multi_head_attention", "H heads on column blocks of W^Q, W^K, W^V, concat, then W^O"),
    "positional-encoding": ("positional_encoding", "sinusoidal positional encoding, optionally added to embeddings"),
    "layer-norm": ("layer_norm", "Add & Norm: residual, mean, population variance, normalise, gamma and beta"),
    "feed-forward": ("feed_forward", "position-wise feed-forward network: ReLU(X W_1 + b_1) W_2 + b_2"),
    "cross-attention": ("cross_attention", "encoder-decoder attention: Q from the decoder, K and V from the encoder"),
    "alignment": (
        "alignment",
        "seq2seq alignment scores (dot, scaled-dot, general, additive, cosine, location) and context",
    ),
    "encoder-block": ("encoder_block", "one encoder layer: multi-head attention, add & norm, feed-forward, add & norm"),
    "decoder-block": (
        "decoder_block",
        "one decoder layer: masked self-attention, cross-attention, feed-forward, 3 add & norms",
    ),
    "next-token": ("next_token", "decoder state -> vocabulary logits -> softmax -> greedy next token"),
    "lstm-cell": ("lstm_cell", "one LSTM step (T with steps): forget, input, candidate, output gates, c and h"),
    "gru-cell": ("gru_cell", "one GRU step (T with steps), PyTorch's convention: update, reset, candidate, h"),
    "find-the-mistake": (
        "find_the_mistake",
        "a worked solution of another kind (of=KIND) with one planted mistake to find",
    ),
}

DEFAULT = ("attention",)  # what ``worksheet build`` makes when no kind is named


def names() -> list[str]:
    return list(KINDS)


def get(name: str) -> ModuleType:
    """The module of a kind, with a suggestion when the name is misspelt."""
    if name not in KINDS:
        close = difflib.get_close_matches(name, KINDS, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; see 'worksheet list'"
        raise UnknownKindError(f"unknown kind '{name}'{hint}")
    module, _ = KINDS[name]
    try:
        return importlib.import_module(f"{__package__}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__package__}.{module}":
            raise UnknownKindError(f"kind '{name}' is not available yet in this version") from None
        raise


def conventions(problems) -> tuple[str, ...]:
    """The texts of the conventions a sheet of ``problems`` states: the union of
    their kinds' ``CONVENTIONS`` (keys of
    :data:`worksheet.solution.document.CONVENTION_TEXT`) in first-use order,
    without a key whose parameter is false (a kind's ``Params.conventions_if``:
    the mask for a causal problem only).  A kind with ``conventions_of(params)``
    states those of another kind (find-the-mistake: the kind its worked
    solution is of)."""
    from ..solution.document import CONVENTION_TEXT

    keys: list[str] = []
    for p in problems:
        if p.kind not in KINDS and all(s.is_written for s in p.steps):  # a spec's question in words
            continue
        module, params = get(p.kind), p.params
        if hasattr(module, "conventions_of"):
            kind, params = module.conventions_of(params)
            module = get(kind)
        for key in module.CONVENTIONS:
            flag = module.Params.conventions_if.get(key)
            if flag and not params.get(flag):
                continue
            if key not in keys:
                keys.append(key)
    if "rows" in keys and "token_rows" in keys:  # "rows" says it already
        keys.remove("token_rows")
    if "exact" in keys:  # the general remark closes the list
        keys.remove("exact")
        keys.append("exact")
    return tuple(CONVENTION_TEXT[k] for k in keys)
