r"""Formulas to MathML for the HTML pages, the notebook and QTI: each LaTeX
formula that a kind writes is read into the maths tree
(:func:`worksheet.solution.maths.read_latex`) and printed by the MathML
printer (:mod:`worksheet.solution.maths.mathml`), which spaces it as TeX
does.  No converter of LaTeX text is involved: user text inside
``\text{...}`` is a text leaf of its own characters, escaped once, by the
printer.
"""

from __future__ import annotations

from functools import lru_cache

from markupsafe import escape

from ..solution.maths import Maths, MathsError, Node, mathml_formula, read_latex, to_mathml_inner

__all__ = ["mathml", "formula_inner", "FALLBACKS", "THIN"]

THIN = "0.1667em"  # the thin space of a named operator beside an ordinary symbol (\mathop)


def mathml(latex: Maths, display: bool = False) -> str:
    """MathML of a formula, a tree or LaTeX; the escaped LaTeX in ``<code>`` if
    it cannot be read (tests assert that never happens for what the kinds write)."""
    if isinstance(latex, Node):
        return mathml_formula(latex, display)
    return _mathml_of_text(latex, display)


@lru_cache(maxsize=8192)
def _mathml_of_text(latex: str, display: bool) -> str:
    """(cached by the text: a kind's symbols and formulas recur on every page)"""
    try:
        return mathml_formula(read_latex(latex), display)
    except MathsError:
        FALLBACKS.append(latex)
        return f'<code class="tex">{escape(latex)}</code>'


FALLBACKS: list[str] = []  # LaTeX that could not be read (tests assert it stays empty)


def formula_inner(latex: Maths) -> str:
    """The MathML (inside ``<math>``) of a formula, a tree or LaTeX."""
    return to_mathml_inner(latex) if isinstance(latex, Node) else _inner_of_text(latex)


@lru_cache(maxsize=8192)
def _inner_of_text(latex: str) -> str:
    return to_mathml_inner(read_latex(latex))
