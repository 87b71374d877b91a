"""The notebook display (``Problem._repr_html_``, ``Document._repr_html_``):
a worked solution as one self-contained HTML fragment for Jupyter and VS Code.

* **Self-contained and scoped**: one ``<div>`` with an id unique to this
  display (a fresh random id each time, so two displays, or a display and a
  re-run of its cell, never share one) and a ``<style>`` whose every selector
  starts with that id, so it neither changes the notebook's look nor is
  changed by another display's styles.
* **One title**, no ``<h1>`` (nor any heading: a notebook's table of
  contents lists the notebook's own headings, not every displayed problem).
* **Maths is MathML** from the HTML renderer (matrices printed from the exact
  values, in brackets; see :mod:`worksheet.render.html`), which browsers draw
  themselves: nothing for the notebook's MathJax to do.
* **No TeX from plain text**: the fragment carries MathJax's ignore classes
  (``tex2jax_ignore`` for MathJax 2, ``mathjax_ignore`` for MathJax 3), and
  every ``$`` and backslash of its text is written as a character reference
  (``&#36;``, ``&#92;``), so a title such as ``cost in $ \\(x\\)`` is shown
  as written, never typeset.  User text is escaped as on every HTML page.
* **Small**: per step its rule and the exact matrix when its entries are
  short (integers, fractions, roots); else the decimals and the last worked
  line the key has for that step, which shows an exact form (all of them
  are ``problem[step].to_sympy()``); decimals beside a short exact matrix
  only where they add something.  The worked arithmetic of every step is in
  the key that ``worksheet build --format html`` writes, and
  ``_repr_markdown_`` has all of it too;
  matrices in brackets without row labels (the intro names the tokens); no
  answer grids, conventions or page furniture.  A default attention problem
  is under 6 KB (tested).  The full key is ``worksheet build``'s HTML.
"""

from __future__ import annotations

import uuid

from markupsafe import escape

# One rule for the display's root; the rest nested in it (CSS nesting), so
# every selector is scoped to this display's id without repeating it.
CSS = (
    "{R}{{font-family:Georgia,serif;line-height:1.4;"
    "& .t{{font-size:1.2em;font-weight:bold}}"
    "& .m,& code{{color:#555;font-size:.85em}}"
    "& .p{{font-weight:bold;margin-top:1em}}"
    "& .g{{display:flex;flex-wrap:wrap;gap:.4em 1.6em;align-items:center}}"
    "& li{{margin:.6em 0}}"
    "& li>div,& .g>div{{overflow-x:auto;overflow-y:hidden;padding:.15em 0}}"
    "& table{{border-collapse:collapse;font-size:.9em}}"
    "& td{{padding:0 .5em;text-align:right;border:none;background:none}}"
    "& tr{{background:none!important}}"
    "& .b{{display:inline-block;position:relative;vertical-align:middle;padding:0 .3em}}"
    "& .b::before,& .b::after{{content:'';position:absolute;top:0;bottom:0;width:.3em;border:1.5px solid}}"
    "& .b::before{{left:0;border-right:none}}& .b::after{{right:0;border-left:none}}}}"
)


def _matrix(symbol: str, rows, cell, integers: bool = False) -> str:
    """``symbol = [rows]``: one bracketed MathML matrix, or for plain numbers
    (``integers``: integers only, a step's 1/2 stays a fraction) a table of
    text in brackets drawn by CSS, a third of the bytes.  Labels are in the
    intro; a display stays small."""
    from ..exact import mathml as ml
    from .html import formula_inner

    plain = [[_plain(x, integers) for x in row] for row in rows]
    if all(c for row in plain for c in row):
        return _bracketed(symbol, "=", plain)
    return f'<div><math>{ml.matrix(rows, cell=cell, symbol=formula_inner(symbol))}</math></div>'


def _bracketed(symbol: str, relation: str, cells) -> str:
    """``symbol relation [cells]`` with the cells as text in a CSS-bracketed table."""
    from .html import formula_inner

    # (HTML needs no </td> nor </tr>: the next <td>, <tr> or </table> ends them)
    body = "".join("<tr>" + "".join(f"<td>{c}" for c in row) for row in cells)
    return (
        f'<div><math>{formula_inner(symbol)}<mo>{relation}</mo></math>'
        f' <span class="b"><table>{body}</table></span></div>'
    )


def _plain(x, integers: bool) -> str:
    """An integer (or, unless ``integers``, a terminating decimal) as text
    with a proper minus, else ''."""
    from fractions import Fraction

    from ..solution import number_format as fmt

    if type(x) is not Fraction or (x._denominator != 1 if integers else fmt.terminating_places(x) is None):
        return ""
    return fmt.given(x).replace("-", "\u2212")


def _decimals(r, s, relation: str) -> str:
    """``symbol ≈ [decimals]`` of a step (escaped text: a label stays text)."""
    t = r.decimal_table(s)
    return _bracketed(
        s.symbol,
        relation,
        [[str(escape(c.replace("-", "\u2212", 1) if c[:1] == "-" else c)) for c in row] for row in t.cells],
    )


def _display(inner: str) -> str:
    """A formula set as display maths (display-size fractions), left-aligned."""
    return f'<math displaystyle="true">{inner}</math>' if "<mfrac>" in inner else f"<math>{inner}</math>"


def _exact_line(work) -> list[str]:
    """The worked line that shows an entry's exact form (the last with a
    fraction), or the last line."""
    return [next((w for w in reversed(work) if "\\frac" in str(w)), work[-1])] if work else []


def _rounded(s):
    """The cell printer of a step that carries rounded decimals."""
    from ..solution import number_format as fmt
    from ..exact import NegInf
    from ..exact import mathml as ml
    from .html import exact_cell

    return lambda x: exact_cell(x) if isinstance(x, (str, NegInf)) else ml.number(fmt.decimal(x, s.places))


SHORT_ENTRY = 64  # bytes of MathML: an integer, a small fraction, a root; not a softmax weight


def _short(s) -> bool:
    """Every exact entry of a step short enough for the display (else its
    decimals are shown, and its worked line gives one exact entry)."""
    from .html import exact_cell

    return all(len(exact_cell(x)) <= SHORT_ENTRY for row in s.exact for x in row)


def _all_short(s) -> bool:
    """Every entry of a step exact and short (an integer or a small fraction):
    its decimals would add nothing."""
    from fractions import Fraction

    return all(isinstance(x, Fraction) and x.denominator < 10 for row in s.exact for x in row)


def notebook_html(doc) -> str:
    """The worked solutions of ``doc`` as one scoped HTML fragment for a notebook."""
    from . import get
    from .base import TemplateRenderer
    from .html import exact_cell, formula_inner, given_cell

    r = get("html")

    def prose(s: str) -> str:  # the page's prose without its nowrap spans (this style has no such class)
        return TemplateRenderer.prose(r, s)

    root = "ws-" + uuid.uuid4().hex[:8]
    out = [
        f'<div id="{root}" class="tex2jax_ignore mathjax_ignore">',
        "<style>" + CSS.format(R="#" + root) + "</style>",
        f'<div class="t">{prose(doc.title)}</div>',
        f'<p class="m">seed {doc.seed if doc.seed is not None else "—"}, numbers: {escape(doc.numbers)}</p>',
    ]
    many = len(doc.problems) > 1 or (doc.problems and doc.problems[0].title != doc.title)
    for k, p in enumerate(doc.problems, 1):
        if many:
            out.append(f'<div class="p">Problem {k}: {prose(p.title)}</div>')
        if p.intro:
            out.append(f"<p>{prose(p.intro)}</p>")
        out.append(
            '<div class="g">' + "".join(_matrix(q.symbol, q.exact, given_cell) for q in p.inputs.values()) + "</div>"
        )
        out.append("<ol>")
        for s in p.steps:
            out.append(f"<li><b>{prose(s.title)}</b> <code>{escape(s.name)}</code>")
            if s.is_written:
                out.append(f"<p><i>Model answer.</i> {prose(s.written)}</p></li>")
                continue
            short = s.rounded or _short(s)
            # the rule; and when the matrix is shown as decimals, one worked entry with its exact form
            lines = ([s.formula] if s.formula else []) + ([] if short else _exact_line(s.work))
            out += [f"<div>{_display(formula_inner(w))}</div>" for w in lines]
            if short:
                out.append(_matrix(s.symbol, s.exact, exact_cell if not s.rounded else _rounded(s), integers=True))
            if not short or (s.show_decimals and not s.rounded and not _all_short(s)):
                out.append(_decimals(r, s, "=" if s.rounded else "\u2248"))
            if s.note:
                out.append(f"<p><i>{prose(s.note)}</i></p>")
            out.append("</li>")
        out.append("</ol>")
        if p.notes:
            out.append("<p>" + " ".join(str(prose(n)) for n in p.notes) + "</p>")
    out.append("</div>")
    head, body = out[:2], "".join(out[2:])
    # nothing in the text for a notebook's MathJax: no $ and no backslash as characters
    return "".join(head) + body.replace("$", "&#36;").replace("\\", "&#92;")


def show(shown, fmt: str) -> str:
    """A :class:`Problem` or :class:`Document` as Jupyter shows it (this is
    :data:`worksheet.solution.notebook.show`): ``"html"``, the fragment of
    :func:`notebook_html`; ``"md"``, the answer key in Markdown."""
    from ..solution.document import Document
    from . import get

    doc = shown if isinstance(shown, Document) else document(shown)
    if fmt == "html":
        return notebook_html(doc)
    return get("md").render(doc, key=True)


def document(problem):
    """One problem as a document of its own, stating its conventions."""
    from .. import kinds
    from ..solution.document import Document

    numbers = str(problem.params.get("numbers") or "own")
    return Document(
        problem.title, [problem], seed=problem.seed, numbers=numbers, conventions=kinds.conventions([problem], numbers)
    )
