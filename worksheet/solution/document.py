"""A document is what one output file shows: a titled list of problems.

``build`` makes one per sheet (or per variant); renderers turn it into text.
A document receives the texts of the conventions it states, format-neutral
(inline LaTeX between ``$``), so every format prints the same words; the kinds
declare them (:func:`worksheet.kinds.conventions` picks a sheet's).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import notebook
from .maths.nodes import Prose
from .maths.reading import as_prose
from .problem import Problem


@dataclass
class Document:
    """``title``, ``instructions``, each of ``conventions`` and :attr:`rounding` are
    :class:`~worksheet.solution.maths.nodes.Prose` (strings given are read once)."""

    title: Prose
    problems: list[Problem]
    seed: int | None = None
    numbers: str = "hand"
    course: str = ""
    date: str = ""
    instructions: Prose = Prose()
    variant: str = ""  # variant id, when building variants
    paper: str = "a4"
    conventions: tuple[Prose, ...] = ()  # the texts the sheet states (worksheet.kinds.conventions gives them)
    compact: bool = False  # a study sheet: two columns, smaller type and matrices (tex/pdf)
    duplex: bool = False  # two-sided printing: the document padded to an even page count (tex/pdf)

    def __post_init__(self):
        self.title = as_prose(self.title)
        self.instructions = as_prose(self.instructions)
        self.conventions = tuple(as_prose(c) for c in self.conventions)
        self._rounding: tuple = ()
        if any(p.steps for p in self.problems):  # solved problems: read now, not when a renderer asks
            _ = self.rounding  # (an outline, see below, has none: its rounding is read if it is asked for)

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
    def rounding(self) -> Prose:
        """The one line every sheet prints on how to round and how close an answer
        must be (prose): :mod:`worksheet.policy.pencil`'s chain.  (Read when the
        document is made, and again only if its number mode or tables change.)"""
        from ..policy.pencil import line_for

        key = (self.numbers, self.table_functions)
        if not self._rounding or self._rounding[0] != key:
            self._rounding = (key, as_prose(line_for(*key)))
        return self._rounding[1]

    @property
    def table_functions(self) -> tuple[str, ...]:
        """The functions whose tables the sheet prints (``exp``, ``sin``, ...), read off the
        first argument of each table (``e^{-1}``, ``\\sin\\left(1\\right)``); a standard grid table is of one function."""
        found = [
            table_function(arg)
            for p in self.problems
            for aid in p.aids
            for arg, _ in (aid.entries[:1] if aid.grid else aid.entries)
        ]
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
