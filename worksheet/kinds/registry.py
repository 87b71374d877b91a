"""The table of problem kinds: each kind's name, module and one-line summary
(so that ``worksheet list`` imports no kind, nor numpy or sympy), the kind a
build makes by default, :func:`get` (a kind's module by name), :func:`kind`
(its contract read once into a :class:`Kind` record: what callers use, never
``hasattr`` on a module) and :func:`conventions` (what a sheet of problems
states).  The package
:mod:`worksheet.kinds` gives these names; adding a kind adds one line to
:data:`KINDS`.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from ..policy.errors import UnknownKindError

__all__ = ["KINDS", "DEFAULT", "Kind", "names", "get", "kind", "conventions", "every_convention"]

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


# The hooks of a kind that passes its settings on to another kind (the
# ``PassesOn`` part of the kind contract, worksheet.kinds.base); every other
# kind has the defaults of :class:`Kind`.
HOOKS = ("settings_of", "conventions_of", "mistakes_of")


@dataclass(frozen=True)
class Kind:
    """A kind's contract, read once from its module (:func:`kind`): the
    module's members, and its hooks with their defaults filled in.

    * ``settings_of(options) -> list[str]``: the settings a problem of this
      kind takes (default: its ``Params`` fields);
    * ``conventions_of(params) -> (kind, params)``: whose conventions its
      sheet states (default: its own);
    * ``mistakes_of(params, inputs) -> (kind, params, aliases)``: whose
      mistake rules explain its steps (default: its own, no aliases);

    a block's ``PARTS`` (default: none), and
    ``find_the_mistake_aids(right) -> list[Aid]``: the tables a find-the-mistake
    sheet of this kind prints, so that they single out no right value of a
    flawed step (default: the right solution's own tables).
    """

    name: str
    module: ModuleType
    passes_settings_on: bool  # it declares the hooks (find-the-mistake: those of its ``of``)
    hooks: tuple[Callable[..., Any], ...]  # settings_of, conventions_of, mistakes_of, as declared
    parts: dict  # a block built of other kinds: its PARTS (step prefix -> (kind, inputs)); else {}
    flawed_aids: Callable[..., Any] | None = None  # its find_the_mistake_aids, if it declares one

    @property
    def Params(self):  # noqa: N802 - the kind's own name for it
        return self.module.Params

    def settings_of(self, options: dict) -> list[str]:
        if self.passes_settings_on:
            return self.hooks[0](options)
        return self.module.Params.field_names()

    def conventions_of(self, params: dict) -> tuple[str, dict]:
        return self.hooks[1](params) if self.passes_settings_on else (self.name, params)

    def mistakes_of(self, params: dict, inputs: dict) -> tuple[str, dict, dict]:
        return self.hooks[2](params, inputs) if self.passes_settings_on else (self.name, params, {})

    def find_the_mistake_aids(self, right) -> list:
        return list(self.flawed_aids(right) if self.flawed_aids else right.aids)


@functools.cache
def kind(name: str) -> Kind:
    """The contract of the kind ``name``, read once (an unknown name: as :func:`get`)."""
    module = get(name)
    members = vars(module)
    declared = [members.get(h) for h in HOOKS]
    if any(declared) and not all(declared):
        missing = [h for h, f in zip(HOOKS, declared) if f is None]
        raise TypeError(f"kind {name} passes its settings on but has no {', '.join(missing)}")
    parts = members.get("PARTS") or {}
    flawed = members.get("find_the_mistake_aids")
    return Kind(name, module, all(declared), tuple(declared) if all(declared) else (), parts, flawed)


def conventions(problems, numbers: str = "hand") -> tuple[str, ...]:
    """The texts of the conventions a sheet of ``problems`` states (a calculator
    sheet's words when ``numbers`` is "calculator"): the union of their kinds'
    ``CONVENTIONS`` (:class:`worksheet.kinds.shared_conventions.Convention` records)
    in first-use order, without one whose parameter is false (a kind's
    ``Params.conventions_if``: the mask for a causal problem only).  A kind's
    ``conventions_of`` may name another kind (find-the-mistake: the kind its
    worked solution is of)."""
    said: dict = {}  # key -> Convention
    for p in problems:
        if p.kind not in KINDS and all(s.is_written for s in p.steps):  # a spec's question in words
            continue
        name, params = kind(p.kind).conventions_of(p.params)
        module = get(name)
        for c in module.CONVENTIONS:
            flag = module.Params.conventions_if.get(c.key)
            if flag and not params.get(flag):
                continue
            said.setdefault(c.key, c)
    if "rows" in said:  # "rows" says it already
        said.pop("token_rows", None)
    if "exact" in said:  # the general remark closes the list
        said["exact"] = said.pop("exact")
    return tuple(c.text_for(numbers) for c in said.values())


def every_convention() -> dict:
    """Every convention any kind states, by key (what the tests of every text read)."""
    out: dict = {}
    for name in KINDS:
        for c in get(name).CONVENTIONS:
            out.setdefault(c.key, c)
    return out
