"""The worked-solution model: what every renderer, the JSON export and the
checker read, and none of them recomputes.

* :mod:`.problem` -- :class:`~.problem.Problem`, an ordered list of
  :class:`~.problem.Step` s over named input :class:`~.problem.Quantity` s,
  each step's exact value checked against its float64 value;
* :mod:`.document` -- :class:`~.document.Document`, what one output file
  shows (the kinds give it the texts of the conventions it states);
* :mod:`.step_ref` -- :class:`~.step_ref.StepRef`, a step's name read as
  (part, name, index): ``attn.scores_2``;
* :mod:`.number_format` -- decimals and LaTeX of exact values, format-neutral.

May import :mod:`worksheet.policy` and :mod:`worksheet.exact`.
"""
