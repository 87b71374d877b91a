"""Number formatting shared by all renderers (format-neutral strings)."""

from __future__ import annotations

import math
from fractions import Fraction

from ..exact import NegInf, to_float, to_latex
from ..exact.rounding import decimal_places


def decimal(x, places: int = 4) -> str:
    """An exact value (or a float) to ``places`` decimals; -oo as -inf; no "-0.0000".

    An exact value is rounded exactly, half away from zero (0.00005 is 0.0001,
    -0.00015 is -0.0002), never through a float, so every machine writes the
    same digits (:func:`worksheet.exact.rounding.decimal_places`); beyond the
    float range it is ``inf``.  A float (a flawed value of find-the-mistake, a
    student's answer) is printed as Python rounds it.
    """
    if isinstance(x, str):
        return x
    if isinstance(x, NegInf):
        return "-inf"
    if type(x) is Fraction and x._numerator.bit_length() - x._denominator.bit_length() < 1000:
        return decimal_places(x, places)  # well inside the float range
    if not isinstance(x, float):
        v = to_float(x)
        if math.isinf(v):
            return "-inf" if v < 0 else "inf"
        return decimal_places(x, places)
    v = x
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    s = f"{v:.{places}f}"
    if s.lstrip("-").strip("0.") == "":
        s = s.lstrip("-")
    return s


def terminating_places(q: Fraction, limit: int = 6) -> int | None:
    """Digits after the point if q is a decimal with at most ``limit`` of them."""
    d = q.denominator
    for p in range(limit + 1):
        if (10**p) % d == 0:
            return p
    return None


def given(x) -> str:
    """How a *given* exact number is shown: 0.2 stays 0.2, 1/3 as a fraction.

    Returns LaTeX (plain digits for integers and decimals).
    """
    if isinstance(x, Fraction):
        p = terminating_places(x)
        if p is not None:
            return decimal_places(x, p) if p else str(x.numerator)
    if isinstance(x, str):  # a label: text, never LaTeX
        return rf"\text{{{text_escape(x)}}}"
    return to_latex(x)


_TEXT_SPECIAL = {
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
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


_TEXT_TABLE = str.maketrans(_TEXT_SPECIAL)


def text_escape(s: str) -> str:
    """Text for LaTeX's ``\text{...}`` (the format-neutral cells are LaTeX): each
    special character replaced by its escape, in one pass, every other kept."""
    return str(s).translate(_TEXT_TABLE)


def exact_latex(x) -> str:
    """LaTeX of an exact step value (fractions stay fractions)."""
    if isinstance(x, str):
        return rf"\text{{{text_escape(x)}}}"
    return to_latex(x)


# what a symbol typed in Unicode (as printed on the sheet) spells in TeX: Greek
# letters by name, superscript and subscript digits, primes, a hat (x-hat is \hat{x})
_UNICODE_TEX = {
    **{g: rf"\{n}" for g, n in zip("αβγδθλμσ", ("alpha", "beta", "gamma", "delta", "theta", "lambda", "mu", "sigma"))},
    "Θ": r"\Theta",
    "ε": r"\varepsilon",
    "µ": r"\mu",
    "′": "'",
    "″": "''",
    "ᵀ": r"^\top",
    **{c: f"^{d}" for c, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")},
    **{c: f"_{d}" for c, d in zip("₀₁₂₃₄₅₆₇₈₉", "0123456789")},
}


def label_key(text: str) -> str:
    """What two spellings of a step's symbol or name share, for ``check``: no font
    commands, braces, dollars, spaces, backslashes or underscores, case folded
    (``Z``, ``$Z$``; ``\\mathrm{head}_{1}``, ``head_1`` and ``head1`` meet), and
    the Unicode a sheet prints read as its TeX (``σ²_1`` is ``\\sigma^2_1``,
    ``X̂₁`` is ``\\hat{X}_1``)."""
    import re

    t = "".join(_UNICODE_TEX.get(c, c) for c in str(text))
    t = re.sub(r"(\w)\u0302", r"\\hat{\1}", t)  # a combining circumflex: the letter's hat
    t = re.sub(r"\\(mathrm|operatorname|text|mathbf|boldsymbol)", "", t)
    t = re.sub(r"[{}$\\\s_]", "", t)
    return t.casefold()
