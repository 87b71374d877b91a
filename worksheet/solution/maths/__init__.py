"""Formulas and worked lines as trees (sympy's printing: one tree, a printer
per output).

* :mod:`.nodes` -- the nodes (:class:`~.nodes.Row`, :class:`~.nodes.Ident`,
  :class:`~.nodes.Frac`, :class:`~.nodes.Text`, ...), :func:`~.nodes.substitute`
  and :func:`~.nodes.walk`;
* :mod:`.latex`, :mod:`.mathml`, :mod:`.plain` -- the printers: LaTeX (sheets,
  keys, PDF, JSON), presentation MathML (HTML, notebook, QTI, practice),
  plain Unicode (a terminal);
* :mod:`.reading` -- the LaTeX that kinds still write, read into a tree.

A printer never parses another printer's output: every format prints the tree.
"""

from .latex import to_latex_text
from .mathml import formula as mathml_formula
from .mathml import to_mathml_inner
from .nodes import MathsError, Node, Row, Text, substitute, walk
from .reading import read_latex
from .plain import to_text

__all__ = [
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
