"""LaTeX: a standalone article compiled by pdflatex (texlive-latex-recommended)."""

from __future__ import annotations

import re
from functools import lru_cache

from ..solution.maths import as_latex
from ..solution.problem import MathLabel
from .base import Table, TemplateRenderer, col_blocks, is_number

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "'": "'",
}


_TEX_TABLE = str.maketrans(_TEX_SPECIAL)


def tex_escape(s: str) -> str:
    return str(s).translate(_TEX_TABLE)


def stack(parts: list[str], gap: str) -> str:
    """Column blocks one under the other (one tabular of tabulars, so it can
    be measured and scaled as one box)."""
    if len(parts) == 1:
        return parts[0]
    return "\\begin{tabular}{@{}l@{}}\n" + f" \\\\[{gap}]\n".join(parts) + "\n\\end{tabular}"


_TALL = re.compile(r"\\(frac|dfrac|sum|prod|sqrt|int|begin)\b")
_TEXT = re.compile(r"\\text\{([^{}]* [^{}]*)\}")  # words in a formula: a break between any two
_DELIMS = re.compile(r"\\(left|middle|right)(?![a-zA-Z])")
_LEFT_RIGHT = re.compile(r"\\left\(((?:(?!\\left|\\right).)*)\\right\)")


@lru_cache(maxsize=8192)
def breakable(latex: str) -> str:
    """The form of a worked line that TeX may break into lines: never right
    after a product sign (a factor stays with its factor), after the commas
    of a list and between the words of its text, and brackets around short material (``\\left( ... \\right)``
    with no fraction, sum or root inside: one unbreakable group otherwise)
    as ``\\bigl( ... \\bigr)``, inside which TeX may break."""
    out = latex.replace("\\cdot ", "\\cdot\\nobreak ")
    out = re.sub(r"(?<!\\), ", r",\\allowbreak ", out)
    out = _TEXT.sub(
        lambda m: "".join(r"\allowbreak\ " if w.isspace() else rf"\text{{{w}}}" for w in re.split("( +)", m[1]) if w),
        out,
    )
    if not _TALL.search(out):  # every bracket short: all of them breakable
        return _DELIMS.sub(lambda m: {"left": r"\bigl", "middle": r"\bigm", "right": r"\bigr"}[m[1]], out)
    return _LEFT_RIGHT.sub(lambda m: m[0] if _TALL.search(m[1]) else rf"\bigl({m[1]}\bigr)", out)


# about the widths of what a line holds, in em of the body font: a line of a
# sheet is 17 cm of 11 pt type (about 44 em), a column of a --compact sheet
# 9 cm of 8 pt (about 32 em); anything that might not fit the narrower at 85%
# gets narrower column blocks to fall back on (see \fitalt)
_WIDE_EM = 22.0
_COMMAND = re.compile(r"\\[a-zA-Z]+\s*|[{}^_&\\ ]")


@lru_cache(maxsize=8192)
def cell_em(cell: str) -> float:
    """A rough width (em) of a cell: half an em a visible character; a
    fraction as wide as its longer part."""
    if r"\frac" in cell:
        parts = re.findall(r"\{([^{}]*)\}", cell)
        longest = max((len(_COMMAND.sub("", x)) for x in parts), default=1)
        rest = len(_COMMAND.sub("", re.sub(r"\{[^{}]*\}", "", cell)))
        return 0.5 * (longest + rest) + 0.5
    return 0.5 * len(_COMMAND.sub("", cell)) + 0.3


def table_em(t: Table, a: int, b: int) -> float:
    """A rough width (em) of columns a..b-1 of a table, with its row labels.
    A label counts as at least LABEL_CHARS characters, so that whether a
    matrix gets fallbacks does not depend on the words of short labels."""
    labels = max((_label_em(x) for x in t.rows), default=0.0) if t.rows else 1.0
    cols = [max([cell_em(row[j]) for row in t.cells] + [_label_em(t.cols[j]) if t.cols else 0.5]) for j in range(a, b)]
    return labels + sum(c + 1.0 for c in cols) + 1.0


LABEL_CHARS = 8


def _label_em(label: str) -> float:
    return 0.5 * max(len(label), LABEL_CHARS)


def narrower_blocks(m: int) -> list[list[tuple[int, int]]]:
    """Column blocks to fall back on for a table of ``m`` columns too wide
    for the line: the columns in two, three, ... blocks, down to blocks of 2."""
    out, base = [], len(col_blocks(m))
    k = max(2, -(-m // base) // 2)
    while True:
        blocks = [(a, min(a + k, m)) for a in range(0, m, k)]
        if len(blocks) > base and (not out or len(blocks) > len(out[-1])):
            out.append(blocks)
        if k <= 2:
            return out
        k = k // 2 + k % 2 if k > 3 else 2


def fall_back(options: list, body, last, measured: str) -> str:
    """A matrix or table in the first of ``options`` (column blocks) that
    fits the line at 85% or more: ``\\fitalt`` tries each in turn, the last
    is fitted as it is (``last``); ``measured`` puts a try in a box (a
    matrix in display maths)."""
    out = last(body(options[-1]))
    for blocks in reversed(options[:-1]):
        out = rf"\fitalt{{{measured.format(body(blocks))}}}{{{out}}}"
    return out


class LatexRenderer(TemplateRenderer):
    name = "tex"
    ext = "tex"
    student_rank = 3
    # delimiters that do not fight TeX braces
    env_options = dict(
        block_start_string="((*",
        block_end_string="*))",
        variable_start_string="(((",
        variable_end_string=")))",
        comment_start_string="((=",
        comment_end_string="=))",
    )

    def __init__(self, templates=None):
        super().__init__(templates)
        self.env.filters.update(step_rows=self.step_rows, room=self.room, write_breaks=self.write_breaks)

    # -- page layout ----------------------------------------------------------
    LINE_CM = 16.8  # the line of an A4 page with 2 cm margins (17 cm), less a little
    CELL_CM = 2.43  # one answer cell as printed: 2 cm + padding + rule

    def grid_width(self, s) -> float:
        """Width (cm) a step's answer grid needs at full cell width: \\setgridcell
        keeps 3.2 cm for the row labels and 2 cm cells while the line allows."""
        n, m = s.shape
        labels = s.rows or [str(i + 1) for i in range(n)]
        return max(3.2, 0.21 * max(len(x) for x in labels) + 0.5) + self.CELL_CM * m + 0.1

    def step_rows(self, steps, key: bool, compact: bool = False) -> list[list[tuple]]:
        """The steps of a problem as rows of (number, step, width in cm, heading
        width in cm): on the sheet, neighbouring grids with the same number
        of rows stand side by side when they fit the line at full cell width
        (answer cells are never made smaller to pair them); on the key, and
        for written steps and grids in column blocks, one step per row.  A
        step alone in its row has its heading beside its grid (heading width
        > 0) when the grid leaves room for it: the heading line above the
        grid is saved.  A ``compact`` sheet (two columns) has one step per
        row, its heading above its grid."""
        rows: list[list[tuple]] = []
        for k, s in enumerate(steps, 1):
            i = s.number or f"{k}."  # the heading's number: "4.", or one the step carries ("(11)", "a.")
            single = key or compact or s.is_written or len(col_blocks(s.shape[1])) > 1 or s.shape[0] == 0
            # side by side, a heading stands above its grid in a column as wide as both need (on one
            # line: a narrow column would wrap it, "a. The first wrong / step")
            w = 0.0 if single else max(self.grid_width(s), min(self.heading_cm(i, s), self.LINE_CM / 2))
            last = rows[-1] if rows else None
            if (
                last
                and not single
                and last[0][2]
                and last[0][1].shape[0] == s.shape[0]
                and len(last) < 3
                and sum(x[2] for x in last) + w + 0.5 * len(last) <= self.LINE_CM
                and self.heading_fits(i, s, w)
                and all(self.heading_fits(x[0], x[1], x[2]) for x in last)
            ):
                last.append((i, s, w, 0.0))
            else:
                rows.append([(i, s, w, 0.0)])
        for row in rows:
            i, s, w, _ = row[0]
            if len(row) == 1 and w:
                side = self.LINE_CM - self.natural_width(s) - 0.5
                if side >= self.SIDE_CM and self.heading_fits(i, s, side):
                    row[0] = (i, s, w, round(side, 2))
        return rows

    SIDE_CM = 4.0  # the narrowest heading column beside a grid
    WRAP_CM = 5.5  # a heading may take up to three lines in a column at least this wide

    def heading_fits(self, number: str, s, width: float) -> bool:
        """A step's heading in a column ``width`` cm wide: on one line, or on up to three in a
        column that is not narrow ("1. Residual / connection" in 4 cm is what this prevents)."""
        need = self.heading_cm(number, s)
        return width >= need or (width >= self.WRAP_CM and 3 * width >= need)

    @staticmethod
    def heading_cm(number: str, s) -> float:
        """Width (cm) of a step's heading on one line: its number and title in bold (about
        0.21 cm a character, a formula counted as 4) and its small name (0.13 cm a character).
        A column beside a grid narrower than this would wrap it ("1. Residual / connection")."""
        title = re.sub(r"\$[^$]*\$", "xxxx", s.title)
        return 0.21 * (len(number) + 1 + len(title)) + 0.13 * (len(s.name) + 2) + 0.3

    def natural_width(self, s) -> float:
        """Width (cm) of a step's answer grid as printed with 2 cm cells:
        the row labels (about 0.21 cm a character) and the cells."""
        n, m = s.shape
        if not s.rows and n == 1:  # no row label column (empty_grid)
            return self.CELL_CM * m
        labels = s.rows or [str(i + 1) for i in range(n)]
        return 0.21 * max(len(x) for x in labels) + 0.5 + self.CELL_CM * m

    @staticmethod
    def write_breaks(s) -> list[int]:
        """Where the page may break among a written step's ruled lines on the sheet (before
        line k, 0-based): with 4 or more lines, anywhere that leaves 2 with the heading and
        2 for the next page; such a step is no unbreakable box (it may start a page's last
        few cm, find-the-mistake's corrections under a. and b.)."""
        if not s.is_written or s.lines < 4:
            return []
        return list(range(2, s.lines - 1))

    @staticmethod
    def room(s, key: bool) -> str:
        """Space a step needs below its heading (for \\needspace, so that a
        heading is never the last line of a page), in cm: its grid, or its
        lines.  The key's templates ask for none (a key's step breaks only at
        \\workbreak, after its first worked line); 5 cm for a lecturer's own
        template that still does."""
        if key:
            return "5"
        if s.is_written:  # the heading and the lines it keeps (all of them, or up to the first break)
            return "%.1f" % (0.8 * min([s.lines] + LatexRenderer.write_breaks(s)) + 1.2)
        return "%.1f" % (len(col_blocks(s.shape[1])) * (1.3 * s.shape[0] + 0.8) + 0.9)

    def label(self, s: str) -> str:
        """A row or column label in a matrix (maths mode): text, or maths for a :class:`MathLabel`."""
        return f"{{{s}}}" if isinstance(s, MathLabel) else rf"\text{{{tex_escape(s)}}}"

    def matrix(self, symbol: str, t: Table) -> str:
        """``symbol = [...]``: every matrix (given or answer, labelled or not)
        is the same bracketed array, so they all look alike.  Row labels
        (tokens) stand left of the bracket and column labels above it, in
        the same array, so they line up with the entries.  An ``array`` has
        no column limit (amsmath's ``bmatrix`` stops at 10); a matrix wider
        than MAX_COLS is printed in blocks of BLOCK columns, each headed by
        its column numbers (see col_blocks)."""
        tall = any(r"\frac" in c for row in t.cells for c in row)
        stretch = r"\fracrows " if tall else ""  # fractions need taller rows
        if tall:  # fractions at a readable size (display style), not script-size
            t = Table([[r"\displaystyle " + c for c in row] for row in t.cells], t.rows, t.cols)

        def body(blocks):
            arrays = [self._bracketed(t, a, b, len(blocks) > 1) for a, b in blocks]
            if len(arrays) == 1:
                return f"{symbol} = {{{stretch}{arrays[0]}}}"
            rows = r" \\[6pt] ".join(arrays)
            return rf"{symbol} = {{{stretch}\begin{{array}}[c]{{@{{}}l@{{}}}}{rows}\end{{array}}}}"

        return fall_back(
            [col_blocks(t.m), *self.narrower(t)], body, lambda x: rf"\fitmath{{{x}}}", "$\\displaystyle {}$"
        )

    @staticmethod
    def narrower(t: Table) -> list[list[tuple[int, int]]]:
        """The narrower column blocks to fall back on when ``t`` may be too
        wide for a line (at most two: see :func:`narrower_blocks`)."""
        if max(table_em(t, a, b) for a, b in col_blocks(t.m)) <= _WIDE_EM:
            return []
        return narrower_blocks(t.m)[:2]

    def _bracketed(self, t: Table, a: int, b: int, numbered: bool) -> str:
        """Columns a..b-1 of ``t`` as one array: [row labels] | tick | cells | tick |.
        The brackets are the array's own rules (a vertical rule with short
        ticks from ``\\cline``), so labels and entries share one alignment."""
        k = b - a
        lab = bool(t.rows)
        left = 2 if lab else 1  # the column of the left tick
        right = left + k + 1
        pre = (
            (r"r@{\,}|" if lab else "@{}|")
            + r"@{}p{2.5pt}@{\hspace{1.5pt}}"
            + "c" * k
            + r"@{\hspace{1.5pt}}p{2.5pt}@{}|@{}"
        )
        ticks = rf"\cline{{{left}-{left}}}\cline{{{right}-{right}}}"
        heads = t.cols[a:b] if t.cols else ([str(j + 1) for j in range(a, b)] if numbered else None)
        head = ""
        if heads:
            first = [r"\multicolumn{1}{r@{\,}}{}"] if lab else []
            head = (
                " & ".join(
                    first
                    + [r"\multicolumn{1}{@{}c}{}"]
                    + [self.label(h) if t.cols else r"\scriptstyle " + h for h in heads]
                    + [r"\multicolumn{1}{c@{}}{}"]
                )
                + r" \\"
            )
        body = [
            " & ".join(([self.label(t.rows[i])] if lab else []) + [""] + list(row[a:b]) + [""])
            for i, row in enumerate(t.cells)
        ]
        # one row a line: a big matrix must not make a line longer than TeX reads
        array = rf"\begin{{array}}{{{pre}}}{head}{ticks}" + "\n" + " \\\\\n".join(body) + rf" \\{ticks}\end{{array}}"
        if not heads:
            return array
        # an array is centred on the math axis, its head row included, so the bracket
        # hangs half a row low; raised by half that row (one strut, \arraystretch\baselineskip)
        # ``symbol =`` sits beside the middle of the bracket, with no space added below
        return r"\raisebox{\dimexpr\arraystretch\baselineskip/2\relax}{$" + array + "$}"

    def table(self, t: Table, math: bool) -> str:
        """A decimal table (booktabs); wider than MAX_COLS: one per column block."""
        wrap = (
            (lambda c: f"${c}$")
            if math
            else (lambda c: r"$-\infty$" if c == "-inf" else f"${c}$" if is_number(c) else tex_escape(c))
        )
        return fall_back(
            [col_blocks(t.m), *self.narrower(t)],
            lambda blocks: self._tabulars(t, blocks, wrap),
            lambda x: rf"\fitwide{{{x}}}",
            "{}",
        )

    @staticmethod
    def _tabulars(t: Table, blocks, wrap) -> str:
        out = []
        for a, b in blocks:
            head = (
                " & ".join([""] + [_text_label(c) for c in t.cols[a:b]])
                if t.cols
                else " & ".join([""] + [str(j + 1) for j in range(a, b)])
            )
            rows = [
                " & ".join([_text_label(t.rows[i]) if t.rows else str(i + 1)] + [wrap(c) for c in row[a:b]])
                for i, row in enumerate(t.cells)
            ]
            out.append(
                "\\begin{tabular}{l"
                + "r" * (b - a)
                + "}\n\\toprule\n"
                + head
                + r" \\"
                + "\n\\midrule\n"
                + (" \\\\\n".join(rows))
                + " \\\\\n\\bottomrule\n\\end{tabular}"
            )
        return stack(out, "4pt")

    def empty_grid(self, t: Table) -> str:
        """An answer grid: cells 2 cm wide (narrower when many columns must fit)
        and 1.25 cm high, room for a handwritten fraction; a head row only
        for column labels (tokens), not for plain numbers.  A grid wider than
        MAX_COLS is printed in blocks of BLOCK columns (numbered), one under
        the other, so its cells stay wide enough to write in."""
        out = []
        blocks = col_blocks(t.m)
        labelled = bool(t.rows) or t.n != 1  # a one-row grid with no labels of its own has no label column
        for a, b in blocks:
            k = b - a
            heads = [_text_label(c) for c in t.cols[a:b]] if t.cols else [str(j + 1) for j in range(a, b)]
            head = " & ".join([""] * labelled + heads)
            rows = [
                r"\answerbox " + " & ".join([_text_label(t.rows[i]) if t.rows else str(i + 1)] * labelled + [""] * k)
                for i in range(t.n)
            ]
            # no head row of plain column numbers 1..m unless the grid is in blocks
            top = (head + r" \\ \hline") if t.cols or len(blocks) > 1 else rf"\cline{{{1 + labelled}-{k + labelled}}}"
            out.append(
                f"\\setgridcell{{{k}}}%\n\\begin{{tabular}}{{{'l' if labelled else ''}|*{{{k}}}{{p{{\\gridcell}}|}}}}\n"
                + top
                + "\n"
                + (" \\\\ \\hline\n".join(rows))
                + " \\\\ \\hline\n\\end{tabular}"
            )
        # blocks as paragraphs: a tall grid may go on over a page break
        return "\n\n\\vspace{6pt}\n".join(out)

    def math(self, latex) -> str:
        return f"${as_latex(latex)}$"

    def display(self, latex: str) -> str:
        """A displayed formula (\\fitline): too wide for the line even at 85%,
        TeX breaks it into lines, in the breakable form of :func:`breakable`."""
        latex = as_latex(latex)
        alt = breakable(latex)
        # the optional argument in braces: it may hold a "]"
        return rf"\[ \fitline[{{{alt}}}]{{{latex}}} \]" if alt != latex else rf"\[ \fitline{{{latex}}} \]"

    def text(self, s: str) -> str:
        return tex_escape(s)

    def code(self, word: str) -> str:
        """Typewriter, breakable after each hyphen (TeX breaks no typewriter word by itself,
        and a list of long codes such as ``mask-zero-instead-of-inf`` would run into the margin)."""
        return r"\texttt{" + tex_escape(word).replace("-", r"-\allowbreak{}") + "}"


def _text_label(s: str) -> str:
    """A row or column label in a table (text mode): text, or maths for a :class:`MathLabel`."""
    return f"${s}$" if isinstance(s, MathLabel) else tex_escape(s)
