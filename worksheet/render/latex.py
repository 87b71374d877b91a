"""LaTeX: a standalone article compiled by pdflatex (texlive-latex-recommended)."""

from __future__ import annotations

from .base import Table, TemplateRenderer, is_number

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "'": "'",
}


_TEX_TABLE = str.maketrans(_TEX_SPECIAL)


def tex_escape(s: str) -> str:
    return str(s).translate(_TEX_TABLE)


class LatexRenderer(TemplateRenderer):
    name = "tex"
    ext = "tex"
    # delimiters that do not fight TeX braces
    env_options = dict(block_start_string="((*", block_end_string="*))",
                       variable_start_string="(((", variable_end_string=")))",
                       comment_start_string="((=", comment_end_string="=))")

    def label(self, s: str) -> str:
        return rf"\text{{{tex_escape(s)}}}"

    def matrix(self, symbol: str, t: Table) -> str:
        body = r" \\ ".join(" & ".join(row) for row in t.cells)
        tall = any(r"\frac" in c for row in t.cells for c in row)
        # fractions need taller rows; labels then share one array so rows align
        stretch = r"\fracrows " if tall else ""
        if t.cols or (t.rows and tall):
            head = (" & " + " & ".join(self.label(c) for c in t.cols) + r" \\ \hline ") if t.cols else ""
            rows = r" \\ ".join(
                " & ".join([self.label(t.rows[i]) if t.rows else str(i + 1)] + row)
                for i, row in enumerate(t.cells))
            inner = (rf"\begin{{array}}{{r|{'c' * t.m}}}{head if head else ' '}{rows} \end{{array}}")
            return rf"\fitmath{{{symbol} = {{{stretch}{inner}}}}}" if tall else rf"\fitmath{{{symbol} = {inner}}}"
        labels = ""
        if t.rows:
            labels = (r"\begin{array}{r}" + r" \\ ".join(self.label(r) for r in t.rows)
                      + r"\end{array}")
        if tall:
            return rf"\fitmath{{{symbol} = {{{stretch}\begin{{bmatrix}} {body} \end{{bmatrix}}}}}}"
        return rf"\fitmath{{{symbol} = {labels}\begin{{bmatrix}} {body} \end{{bmatrix}}}}"

    def table(self, t: Table, math: bool) -> str:
        wrap = (lambda c: f"${c}$") if math else (
            lambda c: r"$-\infty$" if c == "-inf" else f"${c}$" if is_number(c) else tex_escape(c))
        head = " & ".join([""] + [tex_escape(c) for c in t.cols]) if t.cols else \
            " & ".join([""] + [str(j + 1) for j in range(t.m)])
        rows = [" & ".join([tex_escape(t.rows[i]) if t.rows else str(i + 1)] + [wrap(c) for c in row])
                for i, row in enumerate(t.cells)]
        return ("\\begin{tabular}{l" + "r" * t.m + "}\n\\toprule\n" + head + r" \\" + "\n\\midrule\n"
                + (" \\\\\n".join(rows)) + " \\\\\n\\bottomrule\n\\end{tabular}")

    def empty_grid(self, t: Table) -> str:
        """An answer grid: cells 2 cm wide (narrower when many columns must fit)
        and 1.25 cm high, room for a handwritten fraction."""
        head = " & ".join([""] + [tex_escape(c) for c in t.cols]) if t.cols else \
            " & ".join([""] + [str(j + 1) for j in range(t.m)])
        rows = [" & ".join([r"\answerbox " + (tex_escape(t.rows[i]) if t.rows else str(i + 1))]
                           + [""] * t.m)
                for i in range(t.n)]
        return (f"\\setgridcell{{{t.m}}}%\n\\begin{{tabular}}{{l|*{{{t.m}}}{{p{{\\gridcell}}|}}}}\n"
                + head + r" \\ \hline" + "\n"
                + (" \\\\ \\hline\n".join(rows)) + " \\\\ \\hline\n\\end{tabular}")

    def math(self, latex: str) -> str:
        return f"${latex}$"

    def display(self, latex: str) -> str:
        return rf"\[ \fitmath{{{latex}}} \]"

    def text(self, s: str) -> str:
        return tex_escape(s)
