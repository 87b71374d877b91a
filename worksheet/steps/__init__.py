"""Step builders that several kinds share: each adds worked steps to a
:class:`~worksheet.solution.problem.Problem`, exact and checked.

* :mod:`.linalg` -- exact matrices: products, sums, masks, stacking;
* :mod:`.softmax_steps` -- the exact softmax of a row, in its short forms;
* :mod:`.line_trees` -- the written-out arithmetic of one entry, as trees; :mod:`.line_choices` -- which numbers it shows;
* :mod:`.layer_steps` -- rounded carries, sums and relabelling for long chains;
* :mod:`.scaled_dot_product` -- the attention chain (scores, scaled, masked,
  weights, output) and its hand-mode checks; also the one namespace the
  kinds use (``blocks.matmul``, ``blocks.work_term``, ...);
* :mod:`.entry_choice` -- which entry a key works out (not one that is 0);
* :mod:`.float_check` -- the independent float64 computations every exact
  step is checked against (and ``worksheet check`` recomputes).

May import :mod:`worksheet.policy`, :mod:`worksheet.exact`,
:mod:`worksheet.parse` and :mod:`worksheet.solution`.
"""
