"""The registry of problem kinds.

Each kind is one module in this package with the same members, the kind
contract :class:`worksheet.kinds.base.KindModule` (its docstring says what
each member must do):

* ``TITLE`` -- the heading on a sheet;
* ``INPUTS`` -- the input matrix names it reads (docs/reference.md);
* ``CONVENTIONS`` -- the conventions its sheet states, texts and all
  (:class:`.shared_conventions.Convention` records: the shared ones from
  :mod:`.shared_conventions`, a new one in the kind's own module;
  :func:`conventions` picks those a sheet states);
* ``Params`` -- a frozen dataclass subclass of ``base.Params``, validated at
  construction;
* ``generate(rng, params) -> dict[str, Matrix]`` -- exact inputs from a seeded
  ``numpy.random.Generator``;
* ``reference(inputs, params, *, given=None) -> dict[str, np.ndarray]`` -- the
  independent float64 steps; ``given`` replaces steps (carried-forward marks);
* ``solve(inputs, params, *, seed=None) -> Problem`` -- the worked solution.

The table in :mod:`.registry` maps names to modules and one-line summaries,
so that ``worksheet list`` needs no import of any kind (nor of numpy or sympy).

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
   of :mod:`worksheet.steps.scaled_dot_product`) per step, each checked against ``reference``.
   ``CONVENTIONS`` naming what its sheet states.  Named mistakes for
   ``worksheet check``: rules registered with
   :func:`worksheet.kinds.mistakes.register` for the kind's step names, in a
   ``mistakes`` section at the end of the module.
2. Add one line to ``KINDS`` in :mod:`.registry`: the kind's name, the module, a summary.
3. Add ``tests/test_kind_dot_product_similarity.py`` (the exact values of a
   small problem, every bad-input path, the CLI build, and a golden case with
   ``check_golden``).  The shared tests over ``names()`` already cover the
   contract (``test_kind_contract.py``), variants, determinism, check and
   every output format.
4. Generate its golden files (``tests/golden/dot-product-similarity/``):
   ``WORKSHEET_UPDATE_GOLDEN=1 python -m pytest tests/ -k golden``, and
   read every one.

Nothing else: the CLI, the spec files, ``worksheet list``, ``check`` and the
renderers find a kind through this registry.  No module outside this package
names a kind: what the others need to know of one, it declares here.

Beside the kind modules: :mod:`.base` (the contract and what kinds share),
:mod:`.param_types` (the declared parameter types and their converters),
:mod:`.shared_conventions` (the conventions several kinds state),
:mod:`.chain` and :mod:`.recurrent` with :mod:`.gate_lines` (machinery two
kinds share),
:mod:`.mistakes` (the named mistakes and their rules) and
:mod:`.lecture_examples` (the lectures' numbers, by kind).

This layer may import policy, exact, solution, parse and steps.
"""

from __future__ import annotations

import sys
from types import ModuleType

from .registry import DEFAULT, KINDS, Kind, conventions, every_convention, get, kind, names

__all__ = ["KINDS", "DEFAULT", "Kind", "names", "get", "kind", "conventions", "every_convention"]


class _Registry(ModuleType):
    """This module, which ``worksheet.kinds()`` calls: every kind with its parameters,
    modes and named mistakes (:func:`worksheet.kinds.catalogue.kind_infos`)."""

    def __call__(self) -> list:
        from .catalogue import kind_infos

        return kind_infos()


sys.modules[__name__].__class__ = _Registry
