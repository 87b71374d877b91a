"""Markdown: GitHub/Jupyter flavour, maths in ``$...$``, matrices as tables."""

from __future__ import annotations

import re

from ..solution.maths import as_latex
from ..solution.problem import MathLabel
from .base import Table, TemplateRenderer, col_blocks, is_number

# Markdown specials (and $, which starts maths in Jupyter and GitHub) get a
# backslash; <, > and & become HTML entities (a backslash does not stop every
# Markdown viewer from reading <script> as HTML, and a label "&amp;" must show
# as "&amp;", not "&").  The blank cells of answer grids are ours, not text.
_MD_SPECIAL = str.maketrans({**{c: "\\" + c for c in "\\`*_{}[]|#$"}, "<": "&lt;", ">": "&gt;", "&": "&amp;"})
_BLANK = "&nbsp;" * 8  # a cell of an answer grid (longer than any label, so never user text)


_TEXT_ARG = re.compile(r"\\text\{[^{}]*\}")


def no_tags(latex: str) -> str:
    """LaTeX for Markdown maths without a ``<`` a viewer could read as an
    HTML tag (a token label "<eos>" in a formula): ``\\textless{}`` inside
    ``\\text{...}`` (as in the cells, worksheet.solution.number_format.text_escape), ``\\lt``
    elsewhere."""
    if "<" not in latex:
        return latex
    latex = _TEXT_ARG.sub(lambda m: m.group().replace("<", r"\textless{}").replace(">", r"\textgreater{}"), latex)
    return latex.replace("<", r"\lt ")


class MarkdownRenderer(TemplateRenderer):
    name = "md"
    ext = "md"
    student_rank = 2

    def matrix(self, symbol: str, t: Table) -> str:
        return self.table(t, math=True)

    def table(self, t: Table, math: bool) -> str:
        """A pipe table; wider than MAX_COLS: one table per column block
        (headed by the column numbers), so no table runs off the page."""
        blocks = col_blocks(t.m)
        if len(blocks) > 1:
            return "\n\n".join(
                self.table(
                    Table(
                        [row[a:b] for row in t.cells],
                        t.rows,
                        t.cols[a:b] if t.cols else [str(j + 1) for j in range(a, b)],
                    ),
                    math,
                )
                for a, b in blocks
            )
        head = [self.label(c) for c in t.cols] if t.cols else [str(j + 1) for j in range(t.m)]
        lines = ["| " + " | ".join([""] + head) + " |", "|" + "---|" * (t.m + 1)]
        for i, row in enumerate(t.cells):
            label = f"**{self.label(t.rows[i])}**" if t.rows else str(i + 1)
            cells = (
                [f"${c}$" for c in row]
                if math
                else ["−∞" if c == "-inf" else c if is_number(c) or c == _BLANK else self.text(c) for c in row]
            )
            lines.append("| " + " | ".join([label] + [c.replace("|", "\\|") for c in cells]) + " |")
        return "\n".join(lines)

    def empty_grid(self, t: Table) -> str:
        return self.table(Table([[_BLANK] * t.m for _ in range(t.n)], t.rows, t.cols), math=False)

    def math(self, latex) -> str:
        return f"${no_tags(as_latex(latex))}$"

    def display(self, latex) -> str:
        return f"$$\n{no_tags(as_latex(latex))}\n$$"

    def label(self, s: str) -> str:
        """A row or column label: text, or maths for a :class:`MathLabel`."""
        return self.math(s) if isinstance(s, MathLabel) else self.text(s)

    def code(self, word: str) -> str:
        return f"`{word}`" if "`" not in word else self.text(word)

    def text(self, s: str) -> str:
        return str(s).translate(_MD_SPECIAL)
