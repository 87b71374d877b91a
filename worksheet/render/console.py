"""Plain Unicode text for a terminal (the format `text`): ``worksheet solve`` on a terminal,
``--format text`` anywhere.

No markup of any kind: headings are lines underlined with ``═`` and ``─``,
maths is printed from the maths tree by the plain-text printer
(:func:`worksheet.solution.maths.to_text`: ``α₁₂ = e⁰/(e⁰ + e⁻¹) ≈ 0.7311``),
matrices and tables are columns aligned by their display width, answer grids
are rows of blanks.  The layout fits an 80-column terminal (:data:`WIDTH`):
prose is wrapped (never inside a formula), a long worked line breaks before
its ``=`` signs, and a matrix too wide for one block is printed in blocks of
columns, each headed by its column labels.

User text (titles, labels, tokens) is shown as its own characters: a terminal
shows no markup, so nothing is escaped, except what a terminal would act on
instead of showing.  Labels and titles reach a renderer with no control
character (:mod:`worksheet.policy.safetext` refuses them); should one come
through the library anyway, a C0 control character shows as its Unicode
picture (``␛`` for ESC, so no escape sequence reaches the terminal) and any
other unprintable character as ``�``.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from functools import lru_cache

from ..policy.safetext import plain_title
from ..solution.maths import Maths, MathsError, Node, read_latex, to_text
from ..solution.problem import MathLabel
from .base import Table, TemplateRenderer

__all__ = ["TextRenderer", "WIDTH", "width", "shown", "maths_text"]

WIDTH = 78  # the widest line the layout aims for (an 80-column terminal)
INDENT = "    "  # formulas, worked lines and tables sit under their step's heading
_GAP = "  "  # between two columns of a table
_KEEP = "\ue000"  # a space inside a formula in prose: never a place to wrap (private use: never user text)
_BLANK_CELL = 8  # the least width of a blank cell of an answer grid


def width(s: str) -> int:
    """How many terminal columns ``s`` takes: a wide (East Asian) character
    two, a combining mark or an invisible format character none."""
    if s.isascii():
        return len(s)
    n = 0
    for c in s:
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(c) in "WF" else 1
    return n


def _shown_char(c: str) -> str:
    if c == "\t":
        return " "
    if ord(c) < 0x20:
        return chr(0x2400 + ord(c))  # the control picture: ␛, ␀, ␊
    if c == "\x7f":
        return "\u2421"  # ␡
    if unicodedata.category(c) == "Zs":
        return " "
    return "\ufffd"


def shown(s: str, *, newlines: bool = False) -> str:
    """User text as a terminal should show it: its own characters, except
    what is not printable (see the module's docstring); ``newlines`` keeps
    line breaks (a paragraph)."""
    s = str(s)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or (c == "\n" and newlines) else _shown_char(c) for c in s)


def maths_text(latex: Maths) -> str:
    """A formula (a tree, or LaTeX) as plain Unicode text, printed from the maths tree.
    LaTeX the reader cannot read (tests assert the kinds write none) loses its
    commands' backslashes and braces rather than show them."""
    if isinstance(latex, Node):  # a tree is printed (hashing it to cache would cost as much)
        return shown(to_text(latex))
    return _text_of_latex(latex)


@lru_cache(maxsize=8192)
def _text_of_latex(latex: str) -> str:
    try:
        out = to_text(read_latex(latex))
    except MathsError:
        out = re.sub(r"\\(.)", r"\1", plain_title(f"${latex.replace('$', '')}$"))
    return shown(out)


def _at_depth(s: str, seps: tuple[str, ...], level: int = 0) -> list[int]:
    """Where each of ``seps`` starts in ``s`` inside exactly ``level`` brackets."""
    out, depth = [], 0
    for k, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif depth == level and k and any(s.startswith(sep, k) for sep in seps):
            out.append(k)
    return out


def _cut(s: str, at: list[int]) -> list[str]:
    return [s[a:b] for a, b in zip([0, *at], [*at, len(s)])]


def broken(line: str, room: int) -> list[str]:
    """A worked line that is wider than ``room`` as several lines: each
    ``=`` (``≈``, ``→``) after the first starts a line of its own, under the
    first; a piece still too wide breaks before a ``+`` or ``−`` between terms
    (of the outermost brackets that have them), or else at a space."""
    if width(line) <= room:
        return [line]
    rels = _at_depth(line, (" = ", " ≈ ", " → "))
    if not rels:
        return _terms(line, room, "   ")
    head, *rest = _cut(line, rels[1:])
    pad = " " * (width(line[: rels[0]]) + 1)  # the first "=" is in the column after it
    lines = _terms(head, room, pad + "  ")
    for piece in rest:
        lines += _terms(pad + piece.lstrip(" "), room, pad + "  ")
    return lines


def _terms(s: str, room: int, pad: str) -> list[str]:
    """``s`` broken before a ``+`` or ``−`` between terms where it is wider
    than ``room``, each further line after ``pad``."""
    if width(s) <= room:
        return [s]
    cuts = next((c for level in range(4) if (c := _at_depth(s, (" + ", " − "), level))), None)
    if cuts is None:
        cuts = [k for k, c in enumerate(s) if c == " " and k and s[k - 1] != " "]
    lines, line = [], ""
    for piece in _cut(s, cuts):
        if line.strip() and width(line + piece) > room:
            lines.append(line.rstrip(" "))
            line = pad + piece.lstrip(" ")
        else:
            line += piece
    return [*lines, line]


class TextRenderer(TemplateRenderer):
    name = "text"
    ext = "txt"
    student_rank = 3

    def __init__(self, templates=None):
        super().__init__(templates)
        self.env.filters.update(wrap=wrap, heading=heading, columns=self.columns, rule=rule)

    # -- the parts of a file: a space kept inside a formula becomes a space --
    def head(self, outlines, *, key):
        return super().head(outlines, key=key).replace(_KEEP, " ")

    def body(self, doc, index, count, *, key):
        return super().body(doc, index, count, key=key).replace(_KEEP, " ")

    def foot(self, outlines, *, key):
        return super().foot(outlines, key=key).replace(_KEEP, " ")

    # -- maths and words -----------------------------------------------------
    def math(self, latex: str) -> str:
        """An inline formula (in prose: never broken across lines)."""
        return maths_text(latex).replace(" ", _KEEP)

    def display(self, latex: str) -> str:
        """A formula or worked line on lines of its own, indented."""
        return "\n".join(INDENT + line for line in broken(maths_text(latex), WIDTH - len(INDENT)))

    def text(self, s: str) -> str:
        return shown(s, newlines=True)

    def label(self, s: str) -> str:
        """A row or column label: its own characters, or maths for a :class:`MathLabel`."""
        return maths_text(s) if isinstance(s, MathLabel) else shown(s)

    # -- tables ---------------------------------------------------------------
    def matrix(self, symbol: str, t: Table) -> str:
        return self._grid(t, [[maths_text(c) for c in row] for row in t.cells])

    def table(self, t: Table, math: bool) -> str:
        if math:
            return self.matrix("", t)
        return self._grid(t, [[_decimal_cell(c) for c in row] for row in t.cells])

    def empty_grid(self, t: Table) -> str:
        return self._grid(t, [[""] * t.m for _ in range(t.n)], blank=True)

    def _grid(self, t: Table, cells: list[list[str]], blank: bool = False) -> str:
        """Aligned columns under a header of column labels (numbers when a
        table has none), a row label before each row; blocks of columns when
        the whole is wider than WIDTH (see :func:`aligned`)."""
        cols = [self.label(c) for c in t.cols] if t.cols else [str(j + 1) for j in range(t.m)]
        rows = [self.label(r) for r in t.rows] if t.rows else [str(i + 1) for i in range(t.n)]
        return aligned(cols, rows, cells, blank=blank)

    def columns(self, grid) -> str:
        """A standard table (the tables page): its first row heads the columns; plain decimals."""
        head, *body = [[_decimal_cell(str(c)) for c in row] for row in grid]
        rows = [r[0] for r in body]
        return aligned(head[1:], rows, [r[1:] for r in body], corner=head[0], indent="", gap=" ")


def aligned(cols, rows, cells, *, blank: bool = False, corner: str = "", indent: str = INDENT, gap: str = _GAP) -> str:
    """A table as aligned text, indented: a header of column labels, a rule,
    then each row label and its cells, right-aligned (decimals with the same
    places line up on the point).  Columns go in blocks that fit WIDTH, each
    block with the row labels again; a label is never cut, its column widens."""
    m = len(cols)
    cells = [[*r, *[""] * (m - len(r))] for r in cells]  # a short last row of a standard table
    label_w = max([width(corner), *map(width, rows)])
    widths = [max(width(cols[j]), *(width(r[j]) for r in cells), _BLANK_CELL if blank else 1) for j in range(m)]
    out = []
    for a, b in _fitting(widths, len(indent) + label_w + 2, len(gap)):
        head = _pad(corner, label_w) + " │" + "".join(gap + _right(cols[j], widths[j]) for j in range(a, b))
        out.append(indent + head.rstrip())
        out.append(indent + "─" * (label_w + 1) + "┼" + "─" * (width(head) - label_w - 2))
        for i, row in enumerate(cells):
            line = "".join(gap + ("_" * widths[j] if blank else _right(row[j], widths[j])) for j in range(a, b))
            out.append(indent + (_pad(rows[i], label_w) + " │" + line).rstrip())
    return "\n".join(_blocks_apart(out, len(cells) + 2))


def _fitting(widths: list[int], used: int, gap: int) -> list[tuple[int, int]]:
    """Column ranges [a, b) that fit WIDTH after ``used`` columns (each at least one column wide)."""
    blocks, start, line = [], 0, used
    for j, w in enumerate(widths):
        if j > start and line + gap + w > WIDTH:
            blocks.append((start, j))
            start, line = j, used
        line += gap + w
    return [*blocks, (start, len(widths))]


def _blocks_apart(lines: list[str], size: int) -> list[str]:
    """A blank line between two blocks of columns."""
    out = []
    for k in range(0, len(lines), size):
        out += ([""] if k else []) + lines[k : k + size]
    return out


def _pad(s: str, w: int) -> str:
    return s + " " * (w - width(s))


def _right(s: str, w: int) -> str:
    return " " * (w - width(s)) + s


_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _decimal_cell(c: str) -> str:
    """A cell of a decimal table: a number with a proper minus, ``−∞``, or a label shown as it is."""
    if c == "-inf":
        return "−∞"
    if _NUMBER.fullmatch(c):
        return "−" + c[1:] if c.startswith("-") else c
    return shown(c)


# -- filters of the templates ---------------------------------------------------
def wrap(s: str, indent: str = "", first: str | None = None) -> str:
    """Prose filled to WIDTH, each line of a paragraph on its own: ``first``
    before the first line (a bullet), ``indent`` before every other line (and
    before the first when there is no ``first``).  A formula is never broken."""
    first = indent if first is None else first
    out = []
    for k, line in enumerate(str(s).split("\n")):
        lead = first if k == 0 else indent
        out.append(
            textwrap.fill(
                line,
                WIDTH,
                initial_indent=lead,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or lead.rstrip()
        )
    return "\n".join(out)


def heading(s: str, mark: str = "─") -> str:
    """A heading: its text (wrapped), and a line of ``mark`` under it as wide as the text."""
    lines = wrap(s).replace(_KEEP, " ").split("\n")
    return "\n".join(lines) + "\n" + mark * min(WIDTH, max(1, *map(width, lines)))


def rule(mark: str = "─") -> str:
    return mark * WIDTH
