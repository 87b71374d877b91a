"""Markdown: GitHub/Jupyter flavour, maths in ``$...$``, matrices as tables."""

from __future__ import annotations

from .base import Table, TemplateRenderer, col_blocks

_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]<>|#"})


class MarkdownRenderer(TemplateRenderer):
    name = "md"
    ext = "md"

    def matrix(self, symbol: str, t: Table) -> str:
        return self.table(t, math=True)

    def table(self, t: Table, math: bool) -> str:
        """A pipe table; wider than MAX_COLS: one table per column block
        (headed by the column numbers), so no table runs off the page."""
        blocks = col_blocks(t.m)
        if len(blocks) > 1:
            return "\n\n".join(
                self.table(Table([row[a:b] for row in t.cells], t.rows,
                                 t.cols[a:b] if t.cols else [str(j + 1) for j in range(a, b)]), math)
                for a, b in blocks)
        head = [self.text(c) for c in t.cols] if t.cols else [str(j + 1) for j in range(t.m)]
        lines = ["| " + " | ".join([""] + head) + " |",
                 "|" + "---|" * (t.m + 1)]
        for i, row in enumerate(t.cells):
            label = f"**{self.text(t.rows[i])}**" if t.rows else str(i + 1)
            cells = [f"${c}$" for c in row] if math else [
                "−∞" if c == "-inf" else c if c[:1] in "-0123456789" else self.text(c) for c in row]
            lines.append("| " + " | ".join([label] + [c.replace("|", "\\|") for c in cells]) + " |")
        return "\n".join(lines)

    def empty_grid(self, t: Table) -> str:
        return self.table(Table([["&nbsp;" * 8] * t.m for _ in range(t.n)], t.rows, t.cols), math=False)

    def math(self, latex: str) -> str:
        return f"${latex}$"

    def display(self, latex: str) -> str:
        return f"$$\n{latex}\n$$"

    def text(self, s: str) -> str:
        return str(s).translate(_MD_SPECIAL)
