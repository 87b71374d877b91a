"""The practice pages as HTML: the HTML renderer's filters (MathML formulas
and matrices, escaped text) over the templates in ``templates/practice/``,
plus the answer cells.

Every answer cell is an ``<input>`` with ``data-step``, ``data-row`` and
``data-col`` (1-based) and a label a screen reader reads ("weights, row Je,
column suis"); beside it an element with ``data-verdict-for`` (the cell's
id) that holds its verdict, in words and a symbol, once there is one.
"""

from __future__ import annotations

from typing import Mapping

from markupsafe import Markup

from ..solution.problem import Step
from ..render.base import col_blocks
from ..render.html import HtmlRenderer, label_html

VERDICT_TEXT = {
    "right": ("\u2713", "right"),
    "carried": ("\u21aa", "carried forward"),  # right for the student's own earlier cells
    "mistake": ("\u2717", "mistake"),
    "wrong": ("\u2717", "wrong"),
    "unreadable": ("?", "could not read"),  # check's verdict: never wrong, the reason beside it
}


def cell_id(step: str, row: int, col: int) -> str:
    return f"cell-{step}-{row}-{col}"


def cell_label(s: Step, row: int, col: int) -> str:
    """What a screen reader reads for a cell: ``weights, row Je, column suis``."""
    r = s.rows[row - 1] if s.rows else str(row)
    c = s.cols[col - 1] if s.cols else str(col)
    return f"{s.name}, row {r}, column {c}"


def verdict_inner(verdict: str, mistake: str | None = None) -> Markup:
    symbol, words = VERDICT_TEXT[verdict]
    if verdict == "mistake" and mistake:
        words = mistake
    return Markup('<span class="sym" aria-hidden="true">%s</span> %s') % (symbol, words)


class PracticeRenderer(HtmlRenderer):
    """The HTML renderer's filters, with the practice templates and answer cells."""

    name = "practice"
    ext = "html"

    def __init__(self, templates=None):
        super().__init__(templates)
        self._pages: dict = {}
        self.env.auto_reload = False  # templates are read once, when the app is made
        self.env.filters.update(cells=self.cells, solution=self.solution_of)
        self.env.globals.update(verdict_inner=verdict_inner, cell_id=cell_id)

    def page_template(self, name: str):
        """A template of templates/practice/, compiled once and kept."""
        t = self._pages.get(name)
        if t is None:
            t = self._pages[name] = self._load(name)
        return t

    def page(self, name: str, **context) -> str:
        return self.page_template(name).render(**context)

    def cells(
        self, s: Step, values: Mapping[str, str] | None = None, verdicts: Mapping[str, dict] | None = None
    ) -> Markup:
        """The answer grid of a step: one labelled input per entry, in reading
        order (column blocks one under the other for a wide matrix)."""
        values, verdicts = values or {}, verdicts or {}
        n, m = s.shape
        heads = [label_html(c) for c in s.cols] if s.cols else [str(j + 1) for j in range(m)]
        out = []
        listed = Markup("")
        if s.choices:  # a label step (a token, a step name, a mistake code): offer its options
            listed = Markup(' list="choices-%s"') % s.name
            out.append(Markup('<datalist id="choices-%s">') % s.name)
            out += [Markup('<option value="%s"></option>') % c for c in s.choices]
            out.append(Markup("</datalist>"))
        for a, b in col_blocks(m):
            out.append(Markup('<table class="grid answers"><thead><tr><th></th>'))
            out += [Markup('<th scope="col">%s</th>') % heads[j] for j in range(a, b)]
            out.append(Markup("</tr></thead><tbody>"))
            for i in range(1, n + 1):
                out.append(Markup('<tr><th scope="row">%s</th>') % (s.rows[i - 1] if s.rows else str(i)))
                for j in range(a + 1, b + 1):
                    cid = cell_id(s.name, i, j)
                    v = verdicts.get(cid)
                    attrs = Markup(' data-verdict="%s"') % v["verdict"] if v else Markup("")
                    if v and v.get("mistake"):
                        attrs += Markup(' data-mistake="%s"') % v["mistake"]
                    inner = verdict_inner(v["verdict"], v.get("mistake")) if v else Markup("")
                    out.append(
                        Markup(
                            '<td><input type="text" id="%s" name="%s" value="%s" data-step="%s" data-row="%d" '
                            'data-col="%d" aria-label="%s" aria-describedby="v-%s" autocomplete="off" '
                            'spellcheck="false" size="7"%s>'
                            '<span class="verdict" id="v-%s" data-verdict-for="%s"%s>%s</span></td>'
                        )
                        % (
                            cid,
                            cid,
                            values.get(cid, ""),
                            s.name,
                            i,
                            j,
                            cell_label(s, i, j),
                            cid,
                            listed + (Markup(' class="label"') if s.choices else Markup("")),
                            cid,
                            cid,
                            attrs,
                            inner,
                        )
                    )
                out.append(Markup("</tr>"))
            out.append(Markup("</tbody></table>"))
        return Markup("").join(out)

    def solution_of(self, s: Step) -> Markup:
        """The worked lines of a step, its exact matrix and decimals (as on the key)."""
        return Markup(self.page_template("solution.html.j2").render(s=s))
