"""The registry of problem kinds.

Each kind is one module in this package with the same members, the kind
contract :class:`worksheet.kinds.base.KindModule` (its docstring says what
each member must do):

* ``TITLE`` -- the heading on a sheet;
* ``INPUTS`` -- the input matrix names it reads (BRIEF.md);
* ``CONVENTIONS`` -- the conventions its sheet states (keys of
  :data:`worksheet.document.CONVENTION_TEXT`; add a text there if a new
  kind needs one);
* ``Params`` -- a frozen dataclass subclass of ``base.Params``, validated at
  construction;
* ``generate(rng, params) -> dict[str, Matrix]`` -- exact inputs from a seeded
  ``numpy.random.Generator``;
* ``reference(inputs, params, *, given=None) -> dict[str, np.ndarray]`` -- the
  independent float64 steps; ``given`` replaces steps (carried-forward marks);
* ``solve(inputs, params, *, seed=None) -> Problem`` -- the worked solution.

The table below maps names to modules and one-line summaries, so that
``worksheet list`` needs no import of any kind (nor of numpy or sympy).

Adding a kind, say ``dot-product-similarity``:

1. Write the module ``dot_product_similarity.py`` here.  Start from a small
   kind of the same family (``self_attention_basic.py``, ``feed_forward.py``):
   a module docstring with the formulas, step names and what hand mode draws;
   ``Params`` (a comment per field default, ``validate`` raising ParamError);
   ``generate`` drawing hand-friendly numbers with ``base.int_matrix`` /
   ``base.decimal_matrix`` under ``base.retry`` (enough distinct draws for 30
   variants); ``reference`` computing each step with ``base.given_or``; and
   ``solve`` beginning with ``base.require_inputs`` and
   ``base.solved_params``, then one ``Problem.add_step`` (or a step builder
   of :mod:`worksheet.blocks`) per step, each checked against ``reference``.
   ``CONVENTIONS`` naming what its sheet states.  Named mistakes for
   ``worksheet check``: rules registered with
   :func:`worksheet.mistakes.register` for the kind's step names, in a
   ``mistakes`` section at the end of the module.
2. Add one line to ``KINDS`` below: the kind's name, the module, a summary.
3. Add ``tests/test_kind_dot_product_similarity.py`` (the exact values of a
   small problem, every bad-input path, the CLI build, and a golden case with
   ``check_golden``).  The shared tests over ``names()`` already cover the
   contract (``test_kind_contract.py``), variants, determinism, check and
   every output format.
4. Generate its golden files (``tests/golden/dot-product-similarity/``):
   ``WORKSHEET_UPDATE_GOLDEN=1 python -m pytest tests/ -k golden``, and
   read every one.

Nothing else: the CLI, the spec files, ``worksheet list``, ``check`` and the
renderers find a kind through this registry.
"""

from __future__ import annotations

import difflib
import importlib
from types import ModuleType

from ..errors import UnknownKindError

# name -> (module, one-line summary)
KINDS: dict[str, tuple[str, str]] = {
    "attention": ("attention", "scaled dot-product attention softmax(Q K^T / sqrt(d_k)) V; --causal masks"),
    "self-attention-basic": ("self_attention_basic", "self-attention with no trained weights: score(x_i, x_j) = x_i . x_j"),
    "softmax-scaling": ("softmax_scaling", "why divide by sqrt(d_k): softmax of raw, /sqrt(d_k) and /d_k scores"),
    "multi-head-attention": ("multi_head_attention", "H heads on column blocks of W^Q, W^K, W^V, concat, then W^O"),
    "positional-encoding": ("positional_encoding", "sinusoidal positional encoding, optionally added to embeddings"),
    "layer-norm": ("layer_norm", "Add & Norm: residual, mean, population variance, normalise, gamma and beta"),
    "feed-forward": ("feed_forward", "position-wise feed-forward network: ReLU(X W_1 + b_1) W_2 + b_2"),
    "cross-attention": ("cross_attention", "encoder-decoder attention: Q from the decoder, K and V from the encoder"),
    "alignment": ("alignment", "seq2seq alignment scores (dot, scaled-dot, general, additive, cosine, location) and context"),
    "encoder-block": ("encoder_block", "one encoder layer: multi-head attention, add & norm, feed-forward, add & norm"),
    "decoder-block": ("decoder_block", "one decoder layer: masked self-attention, cross-attention, feed-forward, 3 add & norms"),
    "next-token": ("next_token", "decoder state -> vocabulary logits -> softmax -> greedy next token"),
    "lstm-cell": ("lstm_cell", "one LSTM step (T with steps): forget, input, candidate, output gates, c and h"),
    "gru-cell": ("gru_cell", "one GRU step (T with steps), PyTorch's convention: update, reset, candidate, h"),
    "find-the-mistake": ("find_the_mistake", "a worked solution of another kind (of=KIND) with one planted mistake to find"),
}


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
        return importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{module}":
            raise UnknownKindError(f"kind '{name}' is not available yet in this version") from None
        raise
