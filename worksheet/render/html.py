r"""HTML: one self-contained page per sheet or key, maths as MathML.

No scripts, styles or fonts from the network: the CSS is in the page and
the maths is MathML, which browsers draw natively.  Where the MathML comes
from:

* **Exact values** (the matrices of a key, the given inputs) are printed
  straight from the exact tree by :data:`worksheet.exact.mathml.to_mathml`:
  display-size fractions, a proper minus, matrices in stretchy brackets.
* **Formulas and worked lines** are maths trees printed by the MathML
  printer (:mod:`worksheet.solution.maths.mathml`, through :func:`mathml`),
  cached by formula.
* **User text** (titles, labels, tokens): in HTML it is escaped by Jinja's
  autoescape; inside a formula it is a text leaf, which the printer writes
  as an ``<mtext>`` of its escaped characters.  So a label ``<mtr>`` shows as
  ``<mtr>`` everywhere and is never markup; the maths allow-list
  (:mod:`worksheet.policy.safetext`) decides which TeX commands a user
  formula may use.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from markupsafe import Markup, escape

from ..solution import number_format as fmt
from ..exact import NegInf
from ..exact import mathml as ml
from ..solution.maths import as_tree
from ..solution.maths.printer import width
from ..solution.problem import MathLabel
from .base import Table, TemplateRenderer, _shared, col_blocks
from .formulas import FALLBACKS, formula_inner, mathml  # noqa: F401  (FALLBACKS: read by tests)

_CELL = '<math displaystyle="true">'  # a matrix entry in a table cell: fractions display size
_MATH = {False: "<math>", True: '<math display="block">'}  # inline is what <math> is


# -- cells of matrices: exact values and labels, no LaTeX -------------------
def given_cell(x) -> str:
    """A given entry as MathML, as :func:`worksheet.solution.number_format.given` prints it:
    0.2 stays 0.2, 1/3 is a fraction, a label is text."""
    if type(x) is Fraction and x._denominator == 1:
        return ml.entry(x)
    if isinstance(x, str):
        return ml.text(x)
    if isinstance(x, Fraction) and fmt.terminating_places(x) is not None:
        return ml.number(fmt.given(x))
    return ml.entry(x)


_PLAIN_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _decimal_cell(c: str) -> str:
    """A decimal-table cell as HTML text: a proper minus; anything that is
    not a plain decimal (a label) escaped."""
    if c == "-inf":
        return "&minus;&infin;"
    if _PLAIN_DECIMAL.fullmatch(c):
        return "\u2212" + c[1:] if c[0] == "-" else c
    return str(escape(c.replace("-", "\u2212", 1) if c.startswith("-") else c))


def exact_cell(x) -> str:
    """An exact step entry as MathML (a label as text)."""
    return ml.text(x) if isinstance(x, str) else ml.entry(x)


_MATH_PUNCT = re.compile(r"(<math>(?:(?!</math>).)*</math>)([,.;:!?)]+)")


@lru_cache(maxsize=4096)
def _glued(html: str) -> str:
    """Prose with each formula kept on one line with the punctuation after it (a
    line must not start with the comma after "f_t = ...", as TeX never does)."""
    return _MATH_PUNCT.sub(r'<span class="nowrap">\1\2</span>', html) if "</math>" in html else html


def label_html(s: str) -> Markup:
    """A row or column label: text, or maths for a :class:`MathLabel`."""
    return Markup(mathml(s)) if isinstance(s, MathLabel) else escape(s)


def grid_table(aid) -> Markup:
    """A standard table (an Aid with a grid: column heads, then rows led by their
    argument) as an HTML table, made once per table: thousands of cells, the same
    on every page."""

    def make(a) -> Markup:
        head = "".join(f"<th>{escape(h)}</th>" for h in a.grid[0])
        body = "".join(
            f"<tr><th>{escape(r[0])}</th>" + "".join(f"<td>{escape(v)}</td>" for v in r[1:]) + "</tr>"
            for r in a.grid[1:]
        )
        return Markup(f'<table class="aidgrid"><thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody></table>')

    return _shared("html.grid", aid, make)


class HtmlRenderer(TemplateRenderer):
    name = "html"
    ext = "html"
    student_rank = 1
    env_options = dict(autoescape=True)

    def __init__(self, templates=None):
        super().__init__(templates)
        self.env.filters["grid_table"] = grid_table

    def label(self, s: str) -> Markup:
        return label_html(s)

    # -- matrices: printed from the exact values (see given_cell, exact_cell) --
    def given(self, q) -> Markup:
        def cell(x):  # decimals with the places the quantity asks (a shown solution keeps its trailing zeros)
            if q.given_places is None or isinstance(x, (str, NegInf)):
                return given_cell(x)
            return ml.number(fmt.decimal(x, q.given_places))

        return _shared("html.given", q, lambda q: self._matrix(q.symbol, Table(q.exact, q.rows, q.cols), cell))

    def exact(self, s) -> Markup:
        if s.rounded:  # carried decimals: every entry with the same places, trailing zeros kept

            def cell(x):
                return exact_cell(x) if isinstance(x, (str, NegInf)) else ml.number(fmt.decimal(x, s.places))
        elif s.decimals:  # a calculator sheet gave 14.4: its key writes 14.4, not 72/5

            def cell(x):
                return (
                    ml.number(fmt.given(x))
                    if type(x) is Fraction and fmt.terminating_places(x) is not None
                    else exact_cell(x)
                )
        else:
            cell = exact_cell
        return self._matrix(s.symbol, Table(s.exact, s.rows, s.cols), cell)

    def matrix(self, symbol: str, t: Table) -> Markup:
        """``symbol = [...]`` of a table of LaTeX cells."""
        return self._matrix(symbol, t, formula_inner)

    def _matrix(self, symbol: str, t: Table, cell) -> Markup:
        """``symbol = [...]``: a MathML matrix in stretchy brackets, or, when
        rows or columns carry labels (tokens), a table of MathML cells drawn
        with brackets of its own (two thin bracket columns), so given and
        answer matrices look alike.  Wider than MAX_COLS: column blocks, each
        headed by its column numbers.  ``cell`` prints one entry as MathML."""
        sym = formula_inner(symbol)
        if "<mfrac>" in sym:  # as in the LaTeX key, where the symbol stands in display maths: s/√d_k full size
            sym = f'<mrow displaystyle="true">{sym}</mrow>'
        if not t.rows and not t.cols and len(col_blocks(t.m)) == 1:
            return Markup(_MATH[False] + ml.matrix(t.cells, cell=cell, symbol=sym) + "</math>")
        return Markup(
            f'<span class="labelled"><span class="sym">{_MATH[False]}{sym}<mo>=</mo></math></span>'
            + str(self._blocks(t, lambda c: _CELL + cell(c) + "</math>", "matrix"))
            + "</span>"
        )

    def table(self, t: Table, math: bool) -> Markup:
        if math:
            return self._blocks(t, lambda c: _CELL + formula_inner(c) + "</math>", "matrix")
        return self._blocks(t, _decimal_cell, "decimals")

    def empty_grid(self, t: Table) -> Markup:
        return self._blocks(t, lambda c: "", "grid")

    def _blocks(self, t: Table, cell, css: str) -> Markup:
        """One table, or one per column block (see col_blocks) one under the
        other.  ``cell`` gives an entry's HTML (safe text)."""
        blocks = col_blocks(t.m)
        if len(blocks) == 1:
            return Markup(self._table(t, cell, css))
        parts = [
            self._table(
                Table(
                    [row[a:b] for row in t.cells], t.rows, t.cols[a:b] if t.cols else [str(j + 1) for j in range(a, b)]
                ),
                cell,
                css,
            )
            for a, b in blocks
        ]
        return Markup('<span class="blocks">' + "".join(parts) + "</span>")

    @staticmethod
    def _table(t: Table, cell, css: str) -> str:
        head = [str(label_html(c)) for c in t.cols] if t.cols else [str(j + 1) for j in range(t.m)]
        br = css == "matrix"  # bracket columns left and right of the entries
        # a matrix numbers no rows that have no labels, nor does a one-row answer grid
        numbered = bool(t.rows) or not (br or (css == "grid" and t.n == 1))
        out = [f'<table class="{css}">']
        # a matrix has a head row only for its column labels; a one-cell box none for its column "1"
        if t.cols or not (br or (not numbered and t.m == 1)):
            out.append("<thead><tr>" + ("<th></th>" if numbered else "") + ("<th></th>" if br else ""))
            out += [f"<th>{h}</th>" for h in head]
            out.append("<th></th></tr></thead>" if br else "</tr></thead>")
        out.append("<tbody>")
        left, right = ('<td class="lb"></td>', '<td class="rb"></td>') if br else ("", "")
        for i, row in enumerate(t.cells):
            out.append("<tr>" + (f"<th>{label_html(t.rows[i]) if t.rows else i + 1}</th>" if numbered else "") + left)
            out += [f"<td>{cell(c)}</td>" for c in row]
            out.append(right + "</tr>")
        out.append("</tbody>")
        if br and t.cols:  # a blank row as tall as the head, so ``symbol =`` is level with the bracket's middle
            out.append(f'<tfoot aria-hidden="true"><tr><th colspan="{t.m + 2 + numbered}">&#160;</th></tr></tfoot>')
        out.append("</table>")
        return "".join(out)

    def math(self, latex: str) -> Markup:
        return Markup(mathml(latex))

    def display(self, latex: str) -> Markup:
        """A display formula in a div; a long one (a worked sum) is marked
        ``long``/``longer`` so that print CSS sets it smaller instead of
        cutting it off (a printed page has no scrollbar)."""
        n = width(as_tree(latex))  # about how many characters wide it prints
        size = "" if n < 60 else " long" if n < 120 else " longer"
        return Markup(f'<div class="display{size}">{mathml(latex, True)}</div>')

    def text(self, s: str) -> Markup:
        return escape(s)

    def code(self, word: str) -> Markup:
        return Markup("<code>%s</code>") % word

    def prose(self, s, after: str = "") -> Markup:
        return Markup(_glued(super().prose(s, after)))  # the base caches it (the same conventions on every sheet)
