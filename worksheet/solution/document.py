"""A document is what one output file shows: a titled list of problems.

``build`` makes one per sheet (or per variant); renderers turn it into text.
The texts of the conventions a sheet states live here, format-neutral
(inline LaTeX between ``$``), so every format prints the same words; which of
them a sheet states is for its problems' kinds to say
(:func:`worksheet.kinds.conventions`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import notebook
from .problem import Problem

# every convention a sheet may state, by key (format-neutral: inline LaTeX between $)
CONVENTION_TEXT = {
    "rows": r"Tokens are rows (row-vector convention): $Q = X W^Q$, $K = X W^K$, $V = X W^V$.",
    "token_rows": r"Tokens are rows (row-vector convention): row $i$ of $X$ is token $i$.",
    "scores": r"Scores $S = Q K^\top$: row $i$ is query $i$, column $j$ is key $j$; "
    r"scaled scores are $S' = S / \sqrt{d_k}$.",
    "self_scores": r"Scores $S = X X^\top$ (no weights, no scaling): row $i$ is query $i$, column $j$ key $j$; "
    r"output $= A X$.",
    "softmax": r"The softmax runs along each row (over the keys), so every row of weights sums to 1.",
    "softmax_form": r"Softmax by hand: subtract the row maximum $m_i$, "
    r"$\alpha_{ij} = e^{s_{ij} - m_i} / \sum_k e^{s_{ik} - m_i}$ (every exponent $\le 0$).",
    "softmax_form_e": r"Softmax by hand: subtract the maximum score $m = \max_k e_k$, "
    r"$\alpha_j = \exp(e_j - m) / \sum_k \exp(e_k - m)$ (every exponent $\le 0$; $\exp(x) = e^x$, "
    r"as $e_j$ names a score).",
    "output": r"Output $Z = A V$: row $i$ is query $i$'s weighted sum of the values.",
    "causal": r"Causal mask: entries with $j > i$ become $-\infty$ before the softmax, so their weights are exactly 0.",
    "heads": r"Head $h$ uses the $h$-th block of $d_k$ columns of $W^Q$, $W^K$, $W^V$; "
    r"$\mathrm{concat} = [\mathrm{head}_1 \cdots \mathrm{head}_H]$, output $= \mathrm{concat}\, W^O$.",
    "cross": r"Cross-attention: the queries come from the decoder, the keys and values from the encoder output.",
    "alignment_scores": r"Alignment: $e_j = \mathrm{score}(s, h_j)$, $\alpha = \operatorname{softmax}(e)$ over the "
    r"encoder states, context $c = \sum_j \alpha_j h_j$.",
    "one_query": r"One query's scores $s$ form one row; the softmax runs along it, so the weights sum to 1.",
    "vocab": r"The softmax runs over the vocabulary, so the probabilities sum to 1; tokens are numbered "
    r"from 1, as the columns.",
    "pe": r"$\mathrm{PE}_{\mathrm{pos},2i} = \sin(\mathrm{pos} / \mathrm{base}^{2i/d_\mathrm{model}})$, "
    r"$\mathrm{PE}_{\mathrm{pos},2i+1} = \cos(\cdot)$ of the same angle: positions and columns "
    r"count from 0, angles are in radians.",
    "layer_norm": r"Layer norm works on each token (row) across its $d$ features, with the population "
    r"variance (divide by $d$): $y = \gamma (x - \mu) / \sqrt{\sigma^2 + \varepsilon} + \beta$.",
    "ffn": r"Feed-forward: $\mathrm{ReLU}(X W_1 + b_1) W_2 + b_2$, each token (row) on its own; "
    r"a bias row is added to every row.",
    "recurrent": r"Recurrent cells: rows are time steps; a gate is $\sigma(a) = 1 / (1 + e^{-a})$ of its "
    r"pre-activation, and $\odot$ multiplies entry by entry.",
    "exact": r"Exact answers are given where they are short; decimals are rounded to 4 places.",
}
# a calculator sheet says the same without "by hand" (it has no tables to read)
CALCULATOR_TEXT = {
    "softmax_form_e": r"Softmax: $\alpha_j = \exp(e_j - m) / \sum_k \exp(e_k - m)$ with $m$ the largest score "
    r"(subtracting it changes nothing and keeps every exponent $\le 0$).",
    "softmax_form": r"Softmax: $\alpha_{ij} = e^{s_{ij} - m_i} / \sum_k e^{s_{ik} - m_i}$ with $m_i$ the row "
    r"maximum (subtracting it changes nothing and keeps every exponent $\le 0$).",
}


@dataclass
class Document:
    title: str
    problems: list[Problem]
    seed: int | None = None
    numbers: str = "hand"
    course: str = ""
    date: str = ""
    instructions: str = ""
    variant: str = ""  # variant id, when building variants
    paper: str = "a4"
    conventions: tuple[str, ...] = ()  # the texts the sheet states (worksheet.kinds.conventions)
    compact: bool = False  # a study sheet: two columns, smaller type and matrices (tex/pdf)
    duplex: bool = False  # two-sided printing: the document padded to an even page count (tex/pdf)

    def __post_init__(self):
        if self.numbers == "calculator":  # a calculator sheet says it without "by hand"
            swap = {CONVENTION_TEXT[k]: v for k, v in CALCULATOR_TEXT.items()}
            self.conventions = tuple(swap.get(c, c) for c in self.conventions)

    def outline(self) -> "Document":
        """This document without its problems' inputs and steps (kind, title,
        points and settings stay): what the head and foot of a file see, and
        cheap to send between processes."""
        return replace(
            self,
            problems=[
                Problem(
                    p.kind,
                    p.title,
                    p.params,
                    seed=p.seed,
                    intro=p.intro,
                    points=p.points,
                    aids=[a for a in p.aids if a.grid],  # the standard tables: printed once, see standard_tables
                )
                for p in self.problems
            ],
        )

    def _repr_html_(self) -> str:
        """Jupyter: the answer key, worked solutions unfolded (see :mod:`.notebook`)."""
        return notebook.show(self, "html")

    def _repr_markdown_(self) -> str:
        """Jupyter: the answer key in Markdown (see :mod:`.notebook`)."""
        return notebook.show(self, "md")

    @property
    def rounding(self) -> str:
        """The one line every sheet prints on how to round and how close an answer
        must be (format-neutral, inline LaTeX): :mod:`worksheet.policy.pencil`'s chain."""
        from ..policy.pencil import line_for

        return line_for(self.numbers, self.table_functions)

    @property
    def table_functions(self) -> tuple[str, ...]:
        """The functions whose tables the sheet prints (``exp``, ``sin``, ...), read off the
        first argument of each table (``e^{-1}``, ``\\sin\\left(1\\right)``)."""
        found = []
        for p in self.problems:
            for aid in p.aids:
                for arg, _ in aid.entries:
                    found.append(table_function(arg))
        return tuple(dict.fromkeys(f for f in found if f))

    @property
    def total_points(self):
        """The sum of the problems' points (exam specs), or None when none has points."""
        points = [p.points for p in self.problems if p.points is not None]
        if not points:
            return None
        total = sum(points)
        return int(total) if float(total).is_integer() else total


def table_function(arg: str) -> str | None:
    """The function of a table's argument cell: ``e^{-1}`` -> exp, ``\\sigma(2)`` -> sigma."""
    if arg.startswith("e^"):
        return "exp"
    for f in ("sigma", "tanh", "sqrt", "sin", "cos"):
        if arg.startswith("\\" + f):
            return f
    return None


def standard_tables(docs) -> list:
    """The standard tables (an :class:`~worksheet.solution.problem.Aid` with a ``grid``,
    the same for every variant) of ``docs``' problems, each once, in order: what a file
    prints on its tables page (at the front of an exam's variants, at the end of one sheet)."""
    out, seen = [], set()
    for d in docs:
        for p in d.problems:
            for a in p.aids:
                if a.grid and a.title not in seen:
                    seen.add(a.title)
                    out.append(a)
    return out
