"""The printers: sympy's ``str`` syntax (:data:`to_str`, so that
``sympy.sympify`` of the text gives the same value) and LaTeX for sheets
(:data:`to_latex`).  Each Expr prints once per printer (the text is kept on
the value); rationals' texts are kept in one table per printer.
"""

from __future__ import annotations

from fractions import Fraction

from .core import HALF, ONE
from .nodes import OPERATIONS, Add, Expr, Func, Mul, NegInf, Pow, _neg, exact
from .tree import mul, power

__all__ = ["to_str", "to_latex"]


def _str_rational(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _num_den(x: Mul) -> tuple[list, list, int, int]:
    """Split a product into numerator and denominator factors, and |coefficient|
    into its numerator and denominator."""
    num, den = [], []
    for f in x.factors:
        if isinstance(f, Pow) and f.exponent._numerator < 0:
            den.append(power(f.base, -f.exponent))
        else:
            num.append(f)
    return num, den, abs(x.coeff._numerator), x.coeff._denominator


class _Printer:
    """Shared shape of the str and LaTeX printers (sympy's printing pattern)."""

    name = ""

    def __call__(self, x) -> str:
        if type(x) is Fraction:
            key = (x._numerator, x._denominator)
            text = self._rationals.get(key)
            if text is None:
                if len(self._rationals) >= 1 << 14:
                    self._rationals.clear()
                text = self._rationals[key] = self.rational(x)
            return text
        if isinstance(x, Expr):
            # values are immutable and shared (add/mul are memoised), so each
            # prints once per printer: a key prints its values in md, tex and json
            try:
                printed = x._printed
            except AttributeError:
                printed = x._printed = {}
            text = printed.get(self.name)
            if text is None:
                text = printed[self.name] = getattr(self, "_" + type(x).__name__)(x)
            return text
        if isinstance(x, NegInf):
            return self.neg_inf
        return self.rational(exact(x))  # an int (or a subclass of Fraction)

    def _Add(self, x: Add) -> str:
        parts = [x.const] if x.const._numerator != 0 else []
        parts += list(x.terms)
        out = self(parts[0])
        for t in parts[1:]:
            if _neg(t):
                out += " - " + self(mul(-1, t))
            else:
                out += " + " + self(t)
        return out

    def _Mul(self, x: Mul) -> str:
        num, den, cn, cd = _num_den(x)
        sign = "-" if x.coeff._numerator < 0 else ""
        top = self.product(cn, num)
        if not den and cd == 1:
            return sign + top
        bottom = self.product(cd, den)
        return sign + self.fraction(top, bottom)

    def product(self, c: int, factors: list) -> str:
        """``c * f1 * f2``; a lone sum is left bare for the caller to group."""
        if c == 1 and len(factors) == 1:
            return self(factors[0])
        items = [] if c == 1 and factors else [self.rational(c)]
        items += [self.factor(f) for f in factors]
        return self.join(items)

    def factor(self, f) -> str:
        s = self(f)
        if isinstance(f, Add) or (type(f) is Fraction and f._denominator != 1):
            return self.paren(s)
        return s


class _StrPrinter(_Printer):
    """sympy-compatible ``str`` syntax."""

    name = "str"
    _rationals: dict = {}  # (numerator, denominator) -> text

    neg_inf = "-oo"

    def join(self, items):
        return "*".join(items)

    def rational(self, q):
        return _str_rational(q)

    def paren(self, s):
        return f"({s})"

    def fraction(self, top, bottom):
        top = f"({top})" if " " in top else top  # a*b/c is (a*b)/c already
        bottom = f"({bottom})" if any(c in bottom for c in " */") else bottom
        return f"{top}/{bottom}"

    def _Pow(self, x: Pow) -> str:
        if x.exponent == HALF:
            return f"sqrt({self(x.base)})"
        if x.exponent < 0:
            return f"1/{self.factor(power(x.base, -x.exponent))}"
        base = self(x.base)
        if not isinstance(x.base, Fraction) or x.base < 0 or x.base.denominator != 1:
            base = f"({base})"
        e = x.exponent
        return f"{base}**{_str_rational(e) if e.denominator == 1 else '(' + _str_rational(e) + ')'}"

    def _Func(self, x: Func) -> str:
        return f"{x.name}({self(x.arg)})"


class _LatexPrinter(_Printer):
    """LaTeX for sheets: ``\\frac{1}{1 + e^{-2}}``, ``\\sqrt{3}``."""

    name = "latex"
    _rationals: dict = {}

    neg_inf = r"-\infty"

    def join(self, items):
        # 2 \sqrt{3} reads better than 2 \cdot \sqrt{3}; keep \cdot between numbers
        out = items[0]
        for item in items[1:]:
            out += (r" \cdot " if item[:1].isdigit() else " ") + item
        return out

    def rational(self, q):
        if q.denominator == 1:
            return str(q.numerator)
        sign = "-" if q.numerator < 0 else ""
        return rf"{sign}\frac{{{abs(q.numerator)}}}{{{q.denominator}}}"

    def paren(self, s):
        return rf"\left({s}\right)"

    def fraction(self, top, bottom):
        return rf"\frac{{{top}}}{{{bottom}}}"

    def _Pow(self, x: Pow) -> str:
        if x.exponent == HALF:
            return rf"\sqrt{{{self(x.base)}}}"
        if x.exponent < 0:
            return rf"\frac{{1}}{{{self(power(x.base, -x.exponent))}}}"
        base = self(x.base)
        if not (isinstance(x.base, Fraction) and x.base > 0 and x.base.denominator == 1):
            base = self.paren(base)
        e = x.exponent
        e_s = str(e.numerator) if e.denominator == 1 else f"{e.numerator}/{e.denominator}"
        return f"{base}^{{{e_s}}}"

    def _Func(self, x: Func) -> str:
        if x.name == "exp":
            return "e" if x.arg is ONE or x.arg == 1 else f"e^{{{self(x.arg)}}}"
        return rf"\{x.name}\left({self(x.arg)}\right)"


to_str = _StrPrinter()
to_latex = _LatexPrinter()
OPERATIONS.to_str = to_str  # str() of an Expr
