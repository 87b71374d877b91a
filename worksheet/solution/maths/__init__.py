"""Formulas and worked lines as trees (sympy's printing: one tree, a printer
per output).

* :mod:`.nodes` -- the nodes (:class:`~.nodes.Row`, :class:`~.nodes.Ident`,
  :class:`~.nodes.Frac`, :class:`~.nodes.Text`, ...), :func:`~.nodes.substitute`
  and :func:`~.nodes.walk`;
* :mod:`.latex`, :mod:`.mathml`, :mod:`.plain` -- the printers: LaTeX (sheets,
  keys, PDF, JSON), presentation MathML (HTML, notebook, QTI, practice),
  plain Unicode (a terminal);
* :mod:`.reading` -- the LaTeX that kinds still write, read into a tree, and
  prose (words with inline ``$...$``) read into a :class:`~.nodes.Prose`.

Prose (an intro, a note, a step's title, a convention) is a
:class:`~.nodes.Prose`: words (:class:`~.nodes.Text`), words of code
(:class:`~.nodes.Code`) and inline formulas (trees).  :func:`as_prose` gives
the Prose of a text (read once, cached) or of a Prose (itself).

A printer never parses another printer's output: every format prints the tree.

A formula in the model (:class:`~worksheet.solution.problem.Step`'s
``formula``, ``work`` and ``latex_name``) is :data:`~.nodes.Maths`: a tree,
or LaTeX from a kind that still writes strings.  :func:`as_tree` and
:func:`as_latex` give either form of either, so a renderer does not care
which it got.
"""

from .latex import to_latex_text
from .mathml import formula as mathml_formula
from .mathml import to_mathml_inner
from .nodes import CODE_CLOSE, CODE_OPEN, Code, Maths, MathsError, Node, Prose, Row, Text, substitute, walk
from .plain import to_text
from .reading import as_prose, read_latex, read_prose


def as_tree(x: Maths) -> Node:
    """The tree of a formula (LaTeX is read, see :mod:`.reading`)."""
    return x if isinstance(x, Node) else read_latex(x)


def as_latex(x: Maths) -> str:
    """The LaTeX of a formula (a tree is printed)."""
    return to_latex_text(x) if isinstance(x, Node) else x


__all__ = [
    "Maths",
    "as_tree",
    "as_latex",
    "as_prose",
    "Prose",
    "Code",
    "CODE_OPEN",
    "CODE_CLOSE",
    "read_prose",
    "MathsError",
    "Node",
    "Row",
    "Text",
    "substitute",
    "walk",
    "read_latex",
    "to_latex_text",
    "to_mathml_inner",
    "mathml_formula",
    "to_text",
]
