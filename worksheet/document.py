"""A document is what one output file shows: a titled list of problems.

``build`` makes one per sheet (or per variant); renderers turn it into text.
The conventions stated on every sheet live here, format-neutral (inline
LaTeX between ``$``), so every format prints the same words.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .model import Problem

CONVENTIONS = (
    r"Tokens are rows (row-vector convention): $Q = X W^Q$, $K = X W^K$, $V = X W^V$.",
    r"Scores $S = Q K^\top$: row $i$ is query $i$, column $j$ is key $j$; scaled scores are $S / \sqrt{d_k}$.",
    r"The softmax runs along each row (over the keys), so every row of weights sums to 1; output $= A V$.",
    r"Causal mask: entries with $j > i$ become $-\infty$ before the softmax, so their weights are exactly 0.",
    r"Exact answers are given where they are short; decimals are rounded to 4 places.",
)


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
    conventions: tuple[str, ...] = field(default=CONVENTIONS)

    def outline(self) -> "Document":
        """This document without its problems' inputs and steps (kind, title,
        points and settings stay): what the head and foot of a file see, and
        cheap to send between processes."""
        return replace(self, problems=[Problem(p.kind, p.title, p.params, seed=p.seed, intro=p.intro,
                                               points=p.points) for p in self.problems])

    def _repr_html_(self) -> str:
        """Jupyter: the answer key (worked solutions unfolded) through the HTML
        renderer; the page's own head (styles) is left out, so the notebook's
        styles stay as they are."""
        from .render import get

        return get("html").body(self, 0, 1, key=True).replace('<details class="solution">',
                                                                '<details class="solution" open>')

    def _repr_markdown_(self) -> str:
        """Jupyter: the answer key through the Markdown renderer."""
        from .render import get

        return get("md").render(self, key=True)

    @property
    def total_points(self):
        """The sum of the problems' points (exam specs), or None when none has points."""
        points = [p.points for p in self.problems if p.points is not None]
        if not points:
            return None
        total = sum(points)
        return int(total) if float(total).is_integer() else total
