r"""``worksheet check``: mark a student's answers step by step against a key.

Library use::

    from worksheet.check import check_answers, check_folder
    report = check_answers("worksheet.json", "alice.toml")
    report.exit_code, report.marks, report.out_of
    print(report.text())            # or report.to_dict() for the JSON report

The key
=======

The JSON written by ``worksheet build`` (``{"problems": [...]}`` or
``{"variants": [{"id": ..., "problems": [...]}, ...]}``) or by ``worksheet
solve --format json`` (``{"problems": [one]}``); a bare problem object
(``{"kind": ..., "steps": [...]}``) works too.  Each step's ``exact``
strings are our own output and are read with :func:`worksheet.parse.parse_exact`
(never ``eval``/``sympify``); where one cannot be read (longer than the
parser's limit) the step's float ``value`` is the expected value instead.
A step that says ``"rounded": true`` (the encoder block carries values
rounded to 4 places along its chain) accepts both: an answer right for the
unrounded chain (the JSON ``value`` of such a step, which ``check``
recomputes from the key's inputs by the kind's reference; an exact form
within half a unit in the 4th place) or right for the rounded ``exact``
string the sheet works with.

Answer files
============

TOML, JSON or CSV (by extension; otherwise by content), at most 512 KB of
UTF-8.  For each problem (numbered ``1``..``N`` in sheet order; with one
problem the number may be left out) each step by its name in the key
(``scores``, ``weights``, ``scores_2``, ``attn.output``), a matrix: a list
of rows, a flat list for a one-row matrix, or a single entry for a 1 x 1.
TOML::

    # one problem: steps at the top level
    scores = [[3, 1], [0, 2]]
    weights = [["1/(1+e^-2)", 0.1192], [0.5, 0.5]]

    # several problems: one table per problem
    [1]
    scores = [[3, 1], [0, 2]]
    [2]
    softmax_raw = [1, 0]

JSON is the same shape (``{"1": {"scores": [[3, 1], [0, 2]]}}``).  Dotted
step names may be written as nested tables (``[1.attn]`` then ``output =``).
Optional top-level fields: ``variant`` (the key's variant id; required
when the key has several variants), ``student`` (a name for the class
summary), ``fingerprint`` (the key's, as ``worksheet template`` writes it:
a file made for another key or variant is refused, see :meth:`Key.bind`) and
``decimal`` (``"comma"``: ``0,5`` is a half).

CSV has a header row naming the columns ``problem`` (optional with one
problem), ``step``, ``row``, ``col`` and ``value``, in any order, and one line
per entry (rows and columns 1-based; every entry of a matrix must be there)::

    problem,step,row,col,value
    1,scores,1,1,3
    1,scores,1,2,1

A line whose ``step`` is ``variant`` or ``student`` sets that field from its
``value``.  Blank lines and lines starting with ``#`` are skipped.

Entries are integers, decimals, fractions (``"3/4"``), ``"-inf"``/``"-oo"``
for masked scores, or exact forms (``e^2``, ``exp(-1)``, ``sqrt(2)``,
``1/(1+e^-2)``, ``e^{1/2}``, every string the JSON export prints); see
:mod:`worksheet.parse`.  TOML and JSON numbers are read as their text, so
``0.88`` keeps its two decimal places.  The label of a token (``prediction``
of next-token, the wrong ``step`` of find-the-mistake) may be given as the label,
or as its number counted from 1 as the sheet prints it; a find-the-mistake step
also as its symbol (``Z``, ``head_1``, see :func:`worksheet.solution.number_format.label_key`).

Marking, per step (1 mark each)
===============================

* **correct** -- every entry within tolerance of the key.  A plain decimal or
  integer is accepted within 0.001 of the key, the tolerance every sheet
  prints (:data:`worksheet.policy.pencil.TOLERANCE`; ``0.8805`` for 0.8808 is right,
  ``0.88`` is not); an exact form (a fraction or expression) must equal the
  key exactly (both are evaluated to 50 digits).  A step that is right when
  recomputed from the student's own earlier answers, none of them wrong, is
  correct too: that is the rounding chain of :mod:`worksheet.policy.pencil` done by
  hand.  ``--rtol``/``--atol`` replace both rules by
  ``|given - expected| <= atol + rtol * |expected|`` (either defaults to 0).
  ``-oo`` matches only ``-oo``.
* **carried forward** -- wrong against the key, but right when the step is
  recomputed from the student's own earlier answers by the kind's own
  ``reference(..., given=answers)`` (the numpy path every key is checked
  against; an exact form is then compared within a relative 1e-9).  Full
  marks.  Two recomputations are tried: from every earlier answer as written,
  and from only the earlier answers marked incorrect (the rest at full
  precision, as with a calculator).  Each entry may also be off by how far
  the rounding of those earlier answers moves it (a linear bound by finite
  differences, see :meth:`_Own.slack`), so honest rounding of earlier steps
  is absorbed.  A key of a kind this version does not know is marked
  against the key only, and the report says so.
* **incorrect** -- with the wrong entries (row, column, given, expected) and,
  when one matches, a named mistake from :mod:`worksheet.kinds.mistakes`: first the
  mistakes registered for this step, then those of earlier steps followed
  into this one, each computed from the key's values and from the student's
  own; then ``arithmetic-slip`` when exactly one entry (of two or more) is
  wrong against the key or against the carried-forward values.
* **unreadable** -- an entry could not be read (:class:`Unread`: the reason,
  and the text as read): that entry is void, the others of the step are
  marked and reported, the step earns 0 and is no source of carried credit.
* **missing** -- no answer for the step.
* **by-person** -- a step answered in words (its key step has a ``"written"``
  model answer: "which would you use, and why?").  ``check`` does not mark
  it: the report says "marked by a person", whatever the answer file holds
  for it (text, or nothing); it counts 0 of 0 marks, so it never makes the
  exit code 1.

Carried-forward credit comes only from the student's own answers that were
read, and never from degenerate ones (all zeros, all entries equal, the
identity, a copy of an input, uniform weights, another variant's key, the
key transposed) unless the key's own are so: :mod:`.degenerate`; the report
names the reason ("follows from your Q, but Q is all zeros: no credit").  A
value a named mistake explains is an honest error and stays a source.

A matrix of the wrong shape is incorrect, unless the carried-forward
values or a named mistake have that shape (``concat-wrong-axis``).

Untrusted input
===============

Answer files come from students.  Nothing is evaluated: numbers and exact
forms go through the bounded parser of :mod:`worksheet.parse`; files are at
most 512 KB, matrices at most 64 x 64, at most 200 steps and 100 problems
per file, and reading the entries of one file stops with an error once a
count of parser work is spent (:data:`worksheet.policy.limits.ANSWER_WORK`;
counted, never timed, so a file gets the same result on every machine).  A
key is read in the same order: its file size, then its structure and the
shapes of its steps (at most 64 x 64, :data:`~worksheet.policy.limits.MAX_KEY_STEPS`
steps per problem), and its exact strings only when a step is marked, from a
shared work budget (past it, the step's float ``value`` is used).  Every
problem with a file is an :class:`~worksheet.policy.errors.InputError` naming the
file, the step, the row and the column.

The parts
=========

One module per job, imported in this order: :mod:`.reading` (a file's size
and UTF-8, text quoted for messages), :mod:`.tolerance` (50-digit values and
:func:`close`), :mod:`.key`, :mod:`.answers`, :mod:`.recompute` (the kind's
``reference`` and a student's own earlier answers), :mod:`.report`,
:mod:`.marking` (one answer file, with diagnosis), :mod:`.by_cell` (cell by cell,
as a practice page fills in), :mod:`.classroom` (a folder of them) and
:mod:`.in_memory` (a problem in memory, the notebook's ``worksheet.check``).
Names with a leading ``_`` are private to the package.

This layer may import policy, exact, solution, parse, steps and kinds (the
kinds' ``reference`` recomputes carried-forward steps, their registered
mistakes diagnose), and :mod:`worksheet.render` beside it (a problem in memory
becomes a key through its JSON).
"""

from __future__ import annotations

from .answers import Answers, answers_from_dict, parse_entry, read_answers
from .by_cell import CellMarks, CellVerdict, StepProgress, mark_cells, read_problem, shown_mistakes
from .classroom import ClassReport, FileResult, answer_files, check_folder
from .key import Key, KeyProblem, KeyStep, read_key
from .marking import check_answers
from .in_memory import Marks, check_problem
from .recompute import Recompute, recomputer
from .report import STATUSES, SYMBOLS, Cell, ProblemResult, Report, StepResult, Unread
from .tolerance import Expected, Given, Tolerance, close, decimal_tolerance, expected_float, mp_value

__all__ = [
    "Tolerance",
    "Key",
    "read_key",
    "read_answers",
    "answers_from_dict",
    "check_answers",
    "check_folder",
    "mark_cells",
    "read_problem",
    "shown_mistakes",
    "CellMarks",
    "CellVerdict",
    "StepProgress",
    "decimal_tolerance",
    "Report",
    "ProblemResult",
    "StepResult",
    "Cell",
    "Unread",
    "ClassReport",
    "STATUSES",
    # the parts, for tools and tests
    "Answers",
    "parse_entry",
    "FileResult",
    "answer_files",
    "KeyProblem",
    "KeyStep",
    "Recompute",
    "recomputer",
    "SYMBOLS",
    "Expected",
    "Given",
    "close",
    "expected_float",
    "mp_value",
    "check_problem",
    "Marks",
]
