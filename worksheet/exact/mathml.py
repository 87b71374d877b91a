"""The MathML printer: exact values straight to presentation MathML
(:data:`to_mathml`), over the same printer base as :data:`.printing.to_str`
and :data:`.printing.to_latex` (sympy's ``MathMLPrinter`` beside its
``LatexPrinter``), so the HTML of a key never round-trips through LaTeX.

Every value prints as exactly one MathML element (a bare ``<mn>``, or an
``<mrow>``/``<mfrac>``/... around several), ready to sit in a table cell, a
script or a fraction.  The typography is the LaTeX printer's, with what
MathML needs spelled out:

* a proper minus, U+2212 (``<mo>−</mo>``), never a hyphen; ``-oo`` is
  ``−∞``;
* a rational is a fraction (``<mfrac>``); whether it is drawn display size
  is up to the container (``displaystyle`` on the table, see
  :func:`matrix`);
* ``\\cdot`` between numbers (``2 \\cdot 10^{2/5}``), juxtaposition with an
  invisible times otherwise (``2 \\sqrt{3}``);
* ``e^{x}``, ``\\sqrt{n}``, ``\\sin(x)`` with the function application
  character, parentheses around sums and fractions inside products.

:func:`text` is how a label (user text) becomes MathML: ``<mtext>`` with
``&``, ``<``, ``>`` and quotes escaped, so nothing a user writes is markup.
"""

from __future__ import annotations

from fractions import Fraction

from .core import HALF, ONE
from .nodes import Add, Func, Mul, Pow, _neg
from .printing import _num_den, _Printer
from .tree import mul, power

__all__ = ["to_mathml", "text", "number", "matrix", "entry", "MINUS"]

MINUS = "<mo>\u2212</mo>"
_TIMES = "<mo>\u22c5</mo>"  # \cdot
_INVISIBLE_TIMES = "<mo>\u2062</mo>"
_APPLY = "<mo>\u2061</mo>"  # function application: sin⁡(x)
_OPEN, _CLOSE = '<mo stretchy="false">(</mo>', '<mo stretchy="false">)</mo>'


def _escape(s: str) -> str:
    return (
        s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#39;")
    )


def text(s: str) -> str:
    """User text (a label) as ``<mtext>``, every markup character escaped."""
    return f"<mtext>{_escape(str(s))}</mtext>"


def number(s: str) -> str:
    """A decimal written as text (``"-0.2500"``, ``"-inf"``) as MathML: one
    ``<mn>`` with a proper minus (a number in a column, as :func:`entry`);
    anything that is not a plain decimal is text."""
    neg = s.startswith("-")
    body = s[1:] if neg else s
    if body in ("inf", "oo"):
        return f"<mrow>{MINUS}<mi>\u221e</mi></mrow>" if neg else "<mi>\u221e</mi>"
    if body and body.replace(".", "", 1).isdigit() and body.isascii():
        return f"<mn>\u2212{body}</mn>" if neg else f"<mn>{body}</mn>"
    return text(s)


def _row(*items: str) -> str:
    return items[0] if len(items) == 1 else "<mrow>" + "".join(items) + "</mrow>"


class _MathMLPrinter(_Printer):
    """Presentation MathML; each call returns one element."""

    name = "mathml"
    _rationals: dict = {}

    neg_inf = f"<mrow>{MINUS}<mi>\u221e</mi></mrow>"

    def rational(self, q):
        n, d = q.numerator, q.denominator
        core = f"<mn>{abs(n)}</mn>" if d == 1 else f"<mfrac><mn>{abs(n)}</mn><mn>{d}</mn></mfrac>"
        return f"<mrow>{MINUS}{core}</mrow>" if n < 0 else core

    def join(self, items):
        out = [items[0]]
        for item in items[1:]:
            # 2 \sqrt{3} reads better than 2 \cdot \sqrt{3}; keep \cdot between numbers
            out.append(_TIMES if item.startswith(("<mn>", "<msup><mn>", "<mfrac><mn>")) else _INVISIBLE_TIMES)
            out.append(item)
        return _row(*out)

    def paren(self, s):
        return f"<mrow>{_OPEN}{s}{_CLOSE}</mrow>"

    def fraction(self, top, bottom):
        return f"<mfrac>{top}{bottom}</mfrac>"

    def _Add(self, x: Add) -> str:
        parts = [x.const] if x.const._numerator != 0 else []
        parts += list(x.terms)
        out = [self(parts[0])]
        for t in parts[1:]:
            if _neg(t):
                out += [MINUS, self(mul(-1, t))]
            else:
                out += ["<mo>+</mo>", self(t)]
        return _row(*out)

    def _Mul(self, x: Mul) -> str:
        num, den, cn, cd = _num_den(x)
        top = self.product(cn, num)
        body = top if not den and cd == 1 else self.fraction(top, self.product(cd, den))
        return f"<mrow>{MINUS}{body}</mrow>" if x.coeff._numerator < 0 else body

    def _Pow(self, x: Pow) -> str:
        if x.exponent == HALF:
            return f"<msqrt>{self(x.base)}</msqrt>"
        if x.exponent < 0:
            return self.fraction("<mn>1</mn>", self(power(x.base, -x.exponent)))
        base = self(x.base)
        if not (isinstance(x.base, Fraction) and x.base > 0 and x.base.denominator == 1):
            base = self.paren(base)
        e = x.exponent
        e_s = (
            f"<mn>{e.numerator}</mn>"
            if e.denominator == 1
            else f"<mrow><mn>{e.numerator}</mn><mo>/</mo><mn>{e.denominator}</mn></mrow>"
        )
        return f"<msup>{base}{e_s}</msup>"

    def _Func(self, x: Func) -> str:
        if x.name == "exp":
            return "<mi>e</mi>" if x.arg is ONE or x.arg == 1 else f"<msup><mi>e</mi>{self(x.arg)}</msup>"
        return f"<mrow><mi>{x.name}</mi>{_APPLY}{self.paren(self(x.arg))}</mrow>"


to_mathml = _MathMLPrinter()


def matrix(rows, *, cell=None, symbol: str = "") -> str:
    """``symbol = [rows]`` as the inside of a ``<math>``: a table in brackets
    drawn by the browser (stretchy ``[`` and ``]`` around an ``<mtable>``,
    not the deprecated ``<mfenced>``), fractions display size.  ``cell``
    prints one entry (default :data:`to_mathml`); ``symbol`` is MathML
    already (the quantity's name), '' for none."""
    cell = cell or to_mathml
    body = "".join("<mtr>" + "".join(f"<mtd>{cell(x)}</mtd>" for x in row) + "</mtr>" for row in rows)
    head = f"{symbol}<mo>=</mo>" if symbol else ""
    table = '<mtable displaystyle="true">' if "<mfrac>" in body else "<mtable>"
    return f'<mrow>{head}<mrow><mo stretchy="true">[</mo>{table}{body}</mtable><mo stretchy="true">]</mo></mrow></mrow>'


def entry(x) -> str:
    """A matrix entry: as :data:`to_mathml`, but a negative integer is one
    number (``<mn>−1</mn>``), as a column of numbers is set."""
    if type(x) is Fraction and x._denominator == 1 and x._numerator < 0:
        return f"<mn>\u2212{-x._numerator}</mn>"
    return to_mathml(x)
