"""CSV that a spreadsheet opens as data: no cell becomes a formula.

The files we write as CSV (``NAME-variants.csv`` of ``build --variants``,
the class summary of ``check --answers-dir``) hold numbers we compute and
text that may come from users (file names, student names, messages).  A
spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and,
in some, a tab or carriage return before them) as a formula, so, as OWASP's
"CSV injection" guidance says, such a text cell gets a leading ``'`` and is
quoted (``"'=1+2"``); a ``"`` inside a quoted cell is doubled.

Numbers we write (``int`` and ``float`` cells) are written as they are:
``-3`` stays a number, never ``'-3``.  A text cell is also shown without
control or bidirectional control characters (U+202A-U+202E, U+2066-U+2069,
which could reorder what a reader sees): each is written as its escape
(``\\u202e``), as in one-line error messages.
"""

from __future__ import annotations

from typing import Iterable

from .errors import printable

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_QUOTE_IF = (",", '"', "\n", "\r")


def text_cell(text: str) -> str:
    """``text`` as a CSV cell (quoted when needed) that no spreadsheet reads as a formula."""
    text = str(text)
    danger = text.startswith(FORMULA_START)
    text = printable(text)  # control characters, bidi controls included, as escapes
    if danger or text.startswith(FORMULA_START):
        return '"' + ("'" + text).replace('"', '""') + '"'
    if any(c in text for c in _QUOTE_IF) or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def cell(value) -> str:
    """A number we computed (as it is) or text (see :func:`text_cell`); None is empty."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value) if isinstance(value, float) else str(value)
    return text_cell(value)


def csv_text(rows: Iterable[Iterable]) -> str:
    """Rows of cells as CSV text, one line each (``\\n``)."""
    return "".join(",".join(cell(v) for v in row) + "\n" for row in rows)
