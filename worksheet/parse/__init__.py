r"""Safe, exact parsing of numbers from input files and values from answer files.

Nothing here evaluates code: there is no ``eval``, ``exec``, ``sympify`` or
``ast``; :func:`parse_exact` is a small hand-written recursive-descent parser
that builds values only with :mod:`worksheet.exact`'s constructors.  Input and
answer files are untrusted (a TA marks hundreds of them), so every path is
bounded and every failure is a :class:`ValueError` (:class:`ParseError`) with a
one-phrase message:

* text: at most 2000 characters (``input too long``); a number token at most
  100 (``number too long``), its decimal exponent at most 1000 in magnitude;
* nesting: at most 50 open groups, function calls and ``^`` in a chain, and
  an expression tree at most 120 levels deep (``too deeply nested``), far
  below Python's recursion limit, also when the value is printed later;
* exponents ``p/q`` with ``|p|, q <= 1000`` (``exponent too large``), rationals
  of at most 10,000 bits (``number too large``), roots only of rationals with
  ``|numerator * denominator| <= 10**40``;
* work budgets for what exact.py does with the value (tree nodes it walks,
  trial divisions it spends on square roots): ``expression too costly to
  evaluate``.  Ordinary answers use a tiny fraction of them; any 2000
  character input is parsed or refused in tens of milliseconds.

One module per job; this package re-exports their public names (and the
private ones other code and tests use):

* :mod:`.numbers`: plain numbers (grammar there): :class:`ParseError`, the
  ``MAX_*`` limits, :func:`parse_number`, :func:`exact_from_json`,
  :func:`format_decimal_places`;
* :mod:`.tokens`: the tokenizer of :func:`parse_exact`;
* :mod:`.guards`: cost estimates of exact.py's work, checked before it is done;
* :mod:`.parser`: :class:`Budget` and :func:`parse_exact` (grammar there);
* :mod:`.input_tables`: the input files of ``worksheet solve`` (JSON, TOML)
  read into matrices and parameters (not re-exported here).

This layer may import policy and exact.

The limits are read in the module that defines them (``MAX_*`` in
:mod:`.numbers`, the work budgets in :mod:`.parser`): patch them there.

Positions in error messages are 1-based character offsets into the text given
(position 1 is its first character; the end of the text is ``len(text) + 1``).
"""

from __future__ import annotations

from .numbers import (
    MAX_BITS,
    MAX_DECIMAL_EXPONENT,
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    MAX_POWER,
    MAX_RADICAND,
    MAX_TEXT_CHARS,
    MAX_TREE_DEPTH,
    ParseError,
    exact_from_json,
    format_decimal_places,
    parse_number,
)
from .parser import Budget, parse_exact
from .parser import _ROOT_BUDGET, _WORK_BUDGET  # noqa: F401 (private; tests read them)

__all__ = [
    "ParseError",
    "Budget",
    "parse_number",
    "parse_exact",
    "exact_from_json",
    "format_decimal_places",
    "MAX_NUMBER_CHARS",
    "MAX_DECIMAL_EXPONENT",
    "MAX_TEXT_CHARS",
    "MAX_DEPTH",
    "MAX_TREE_DEPTH",
    "MAX_POWER",
    "MAX_BITS",
    "MAX_RADICAND",
]
