"""HTML: one self-contained page per sheet or key, maths as MathML.

No scripts, styles or fonts from the network: the CSS is in the page and
the maths is MathML (converted from the model's LaTeX by ``latex2mathml``),
which browsers draw natively.  Autoescape is on, so every user-supplied text
(titles, token labels, names) is escaped; the filters below return
:class:`markupsafe.Markup` for the HTML they build.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup, escape

from .base import Table, TemplateRenderer, col_blocks, prose_parts


@lru_cache(maxsize=8192)
def mathml(latex: str, display: bool = False) -> str:
    """MathML of a LaTeX formula; the escaped LaTeX in ``<code>`` if it cannot be converted."""
    from latex2mathml.converter import convert

    try:
        return _primes(clean_mathml(convert(_TEXT_ARG.sub(_plain_text, latex), display="block" if display else "inline")))
    except Exception:  # noqa: BLE001 - any converter failure: show the LaTeX source instead
        FALLBACKS.append(latex)
        return f'<code class="tex">{escape(latex)}</code>'


# \text{...} as worksheet.solution.number_format.text_escape writes it (a token label in a
# cell): latex2mathml reads neither \textless{} nor \_ there, and ends the
# text at the first }, so the escapes become the characters they stand for
# (braces and backslash as look-alikes); clean_mathml then escapes them for HTML.
_TEXT_ARG = re.compile(r"\\text\{((?:[^{}\\]|\\[$&%#_{}]|\\(?:text[a-z]+|[~^])\{\})*)\}")
_TEXT_ESCAPES = re.compile(r"\\([$&%#_])|\\([{}])|\\(text[a-z]+|[~^])\{\}")
_TEXT_NAMED = {"textbackslash": "\u29f5", "textless": "<", "textgreater": ">", "textasciitilde": "~",
               "textasciicircum": "^", "~": "~", "^": "^"}


def _plain_text(m: re.Match) -> str:
    def one(e: re.Match) -> str:
        if e.group(1):
            return e.group(1)
        if e.group(2):
            return "\uff5b" if e.group(2) == "{" else "\uff5d"
        return _TEXT_NAMED.get(e.group(3), e.group())

    text = _TEXT_ESCAPES.sub(one, m.group(1))
    return r"\text{" + ("\u2060" if text.startswith("%") else "") + text + "}"  # latex2mathml fails on \text{%...}


# attributes MathML must never carry here: links (latex2mathml turns \href
# into an href), scripts, styles.  The maths allow-list (worksheet.policy.safetext)
# already keeps \href and \style out; this is the second line of defence.
_UNSAFE_ATTR = re.compile(r"""\s(?:[\w:-]*href|src|action|formaction|style|on[a-z]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]*)""",
                          re.I)


def strip_unsafe(markup: str) -> str:
    """MathML with every link, script and style attribute removed."""
    return _UNSAFE_ATTR.sub("", markup)


# latex2mathml copies the text of \text{...} into <mtext> as it is, so a
# label "<script>" would arrive as a tag: only these MathML tags, with these
# attributes, stay markup; every other <, > and stray & becomes text.
_MATHML_TAG = re.compile(
    r'</?(?:math|mrow|mi|mn|mo|mtext|ms|mspace|msqrt|mroot|mfrac|msub|msup|msubsup|munder|mover|munderover'
    r'|mtable|mtr|mtd|mstyle|mpadded|mphantom|menclose)'
    r'(?:\s+(?:xmlns|display|mathvariant|stretchy|fence|separator|lspace|rspace|width|height|depth|columnalign'
    r'|columnlines|rowlines|columnspacing|rowspacing|linethickness|accent|accentunder|movablelimits|form'
    r'|minsize|maxsize|symmetric|largeop|notation|frame|scriptlevel|displaystyle)="[^"<>]*")*\s*/?>')
_STRAY_AMP = re.compile(r"&(?!#[0-9]+;|#x[0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)")


def clean_mathml(markup: str) -> str:
    """MathML where only known MathML tags and attributes are markup (see
    _MATHML_TAG); links, scripts and styles are dropped or become text."""
    markup = strip_unsafe(markup)
    out, at = [], 0
    for m in _MATHML_TAG.finditer(markup):
        out.append(_text(markup[at:m.start()]))
        out.append(m.group())
        at = m.end()
    out.append(_text(markup[at:]))
    return "".join(out)


def _text(s: str) -> str:
    return _STRAY_AMP.sub("&amp;", s).replace("<", "&lt;").replace(">", "&gt;")


_PRIME = r"(?:<mrow>)?<mi>&#x02032;</mi>(?:</mrow>)?"
_PRIME_SUP = re.compile(r"<msup>(<mi>[^<]*</mi>)" + _PRIME + "</msup>")
_PRIME_SUBSUP = re.compile(r"<msubsup>(<mi>[^<]*</mi>)(.*?)" + _PRIME + "</msubsup>")
_PRIME_MO = '<mo lspace="0" rspace="0">&#x02032;</mo>'


def _primes(m: str) -> str:
    """S' as S followed by a prime at the base line: the converter makes the
    prime a superscript, and the prime glyph, already raised, then prints
    small and high like an acute accent (S´).  ``S'_{ij}`` likewise."""
    if "&#x02032;" not in m:
        return m
    m = _PRIME_SUP.sub(lambda g: f"<mrow>{g[1]}{_PRIME_MO}</mrow>", m)
    return _PRIME_SUBSUP.sub(lambda g: f"<msub><mrow>{g[1]}{_PRIME_MO}</mrow>{g[2]}</msub>", m)


FALLBACKS: list[str] = []  # LaTeX the converter could not read (tests assert it stays empty)

_MATH = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">'


def _inner(latex: str) -> str | None:
    """The MathML inside <math> of a (cached) conversion, or None."""
    m = mathml(latex)
    return m[len(_MATH):-len("</math>")] if m.startswith(_MATH) and m.endswith("</math>") else None


def bmatrix(symbol: str, cells) -> str:
    """``symbol = [cells]`` as MathML, assembled from the cells' conversions:
    the cells repeat (0, 1, -1, ...) and convert once, where converting each
    whole matrix cost most of the HTML time."""
    parts = [_inner(f"{symbol} =")]
    rows = []
    for row in cells:
        inner = [_inner(c) for c in row]
        parts.extend(inner)
        rows.append("<mtr>" + "".join(f"<mtd>{x}</mtd>" for x in inner) + "</mtr>")
    if any(x is None for x in parts):  # a cell the converter could not read
        body = r" \\ ".join(" & ".join(row) for row in cells)
        return mathml(rf"{symbol} = \begin{{bmatrix}} {body} \end{{bmatrix}}")
    return (f"{_MATH}<mrow>{parts[0]}<mo>&#x0005B;</mo><mtable>{''.join(rows)}</mtable>"
            f"<mo>&#x0005D;</mo></mrow></math>")


class HtmlRenderer(TemplateRenderer):
    name = "html"
    ext = "html"
    env_options = dict(autoescape=True)

    def label(self, s: str) -> Markup:
        return escape(s)

    def matrix(self, symbol: str, t: Table) -> Markup:
        """``symbol = [...]``: a MathML matrix, or, when rows or columns carry
        labels (tokens), a table of MathML cells drawn with the same brackets
        (two thin bracket columns), so given and answer matrices look alike.
        Wider than MAX_COLS: column blocks, each headed by its column numbers."""
        blocks = col_blocks(t.m)
        if not t.rows and not t.cols and len(blocks) == 1:
            return Markup(bmatrix(symbol, t.cells))
        return Markup('<span class="labelled"><span class="sym">') + Markup(mathml(f"{symbol} =")) \
            + Markup("</span>") + self._blocks(t, lambda c: Markup(mathml(c)), "matrix") + Markup("</span>")

    def table(self, t: Table, math: bool) -> Markup:
        if math:
            return self._blocks(t, lambda c: Markup(mathml(c)), "matrix")
        return self._blocks(t, lambda c: Markup("&minus;&infin;") if c == "-inf" else
                            escape(c.replace("-", "\N{MINUS SIGN}", 1) if c.startswith("-") else c), "decimals")

    def empty_grid(self, t: Table) -> Markup:
        return self._blocks(t, lambda c: Markup(""), "grid")

    def _blocks(self, t: Table, cell, css: str) -> Markup:
        """One table, or one per column block (see col_blocks) one under the other."""
        blocks = col_blocks(t.m)
        if len(blocks) == 1:
            return self._table(t, cell, css)
        parts = [self._table(Table([row[a:b] for row in t.cells], t.rows,
                                   t.cols[a:b] if t.cols else [str(j + 1) for j in range(a, b)]), cell, css)
                 for a, b in blocks]
        return Markup('<span class="blocks">') + Markup("").join(parts) + Markup("</span>")

    def _table(self, t: Table, cell, css: str) -> Markup:
        head = [escape(c) for c in t.cols] if t.cols else [str(j + 1) for j in range(t.m)]
        br = css == "matrix"  # bracket columns left and right of the entries
        numbered = not br or bool(t.rows)  # a matrix numbers no rows that have no labels
        out = [Markup(f'<table class="{css}">')]
        if not (br and not t.cols):  # a matrix has a head row only for its column labels
            out.append(Markup("<thead><tr>"))
            if numbered:
                out.append(Markup("<th></th>"))
            if br:
                out.append(Markup("<th></th>"))
            out += [Markup("<th>%s</th>") % h for h in head]
            out.append(Markup("<th></th></tr></thead>" if br else "</tr></thead>"))
        out.append(Markup("<tbody>"))
        for i, row in enumerate(t.cells):
            out.append(Markup("<tr>"))
            if numbered:
                out.append(Markup("<th>%s</th>") % (t.rows[i] if t.rows else str(i + 1)))
            if br:
                out.append(Markup('<td class="lb"></td>'))
            out += [Markup("<td>") + cell(c) + Markup("</td>") for c in row]
            if br:
                out.append(Markup('<td class="rb"></td>'))
            out.append(Markup("</tr>"))
        out.append(Markup("</tbody></table>"))
        return Markup("").join(out)

    def math(self, latex: str) -> Markup:
        return Markup(mathml(latex))

    def display(self, latex: str) -> Markup:
        """A display formula in a div; a long one (a worked sum) is marked
        ``long``/``longer`` so that print CSS sets it smaller instead of
        cutting it off (a printed page has no scrollbar)."""
        size = "" if len(latex) < 110 else " long" if len(latex) < 200 else " longer"
        return Markup(f'<div class="display{size}">') + Markup(mathml(latex, True)) + Markup("</div>")

    def text(self, s: str) -> Markup:
        return escape(s)

    def prose(self, s: str) -> Markup:
        return Markup("").join(self.math(p) if is_math else self.text(p) for is_math, p in prose_parts(s))
