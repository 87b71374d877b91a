r"""Safe, exact parsing of numbers from input files and values from answer files.

Nothing here evaluates code: there is no ``eval``, ``exec``, ``sympify`` or
``ast``; :func:`parse_exact` is a small hand-written recursive-descent parser
that builds values only with :mod:`worksheet.exact`'s constructors.  Input and
answer files are untrusted (a TA marks hundreds of them), so every path is
bounded: text length, number length, nesting depth, exponent size, the size of
the rationals it builds and the work ``exact`` spends on square roots.  Any
input finishes in a few milliseconds (well under 0.1 s) and every failure is a
:class:`ValueError` with a one-phrase message.

Plain numbers (:func:`parse_number`, also the number tokens of
:func:`parse_exact`)::

    number   := [sign] decimal | [sign] digits ws* '/' ws* digits
    decimal  := (digits ['.' digits*] | '.' digits) [('e' | 'E') [sign] digits]
    digits   := ASCII '0'-'9', at least one

so ``0.2`` is exactly ``1/5``, ``-.5``, ``1.``, ``2.5e-3``, ``1E2`` and
``-3/4`` are numbers; ``nan``, ``inf``, ``0x10``, ``1_000``, ``3/4/5`` are not.
At most 100 characters and a decimal exponent of magnitude at most 1000.

Exact values (:func:`parse_exact`); whitespace is allowed between any tokens::

    entry    := ('-' | '−') infinity          (only as the whole entry: -oo)
              | expr
    expr     := term (('+' | '-') term)*
    term     := unary (('*' | '/' | '\cdot' | '\times') unary)*
    unary    := ('+' | '-')* power            (so -e^2 is -(e^2))
    power    := atom (('^' | '**') ('+' | '-')* atom)*   (right-associative)
    atom     := decimal                       (unsigned, as above; 2e-3 is a number)
              | 'e' | 'E'                     (Euler's number, exp(1))
              | func group                    (exp(x), sqrt{x}, \sin(x), ...)
              | '\frac' group group           (\frac{a}{b} is a/b)
              | group
    func     := ['\'] ('exp' | 'sqrt' | 'sin' | 'cos' | 'tanh')
    group    := '(' expr ')' | '{' expr '}'   ('\left(' and '\right)' also work)
    infinity := 'oo' | 'inf' | 'infinity' | '∞' | '\infty'   (any case)

``−`` (U+2212) is read as ``-``.  An ``e`` directly after the digits of a
number and followed by a digit (or a sign and a digit) is a decimal exponent
(``2e-3``); otherwise ``e`` is Euler's number (``e^-3``, ``2*e^-3``).  A number
directly followed by an operand (``2e``, ``2sqrt(2)``, ``2(3)``) is an error:
there is no implicit multiplication.

Powers: ``e^x`` and ``exp(a)^x`` are ``exp(a*x)`` for any exact ``x``; any
other base needs a rational exponent whose numerator and denominator are at
most 1000 in magnitude.  Roots of negative numbers are errors.

Positions in error messages are 1-based character offsets into the text given
(position 1 is its first character; the end of the text is ``len(text) + 1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, NoReturn

from .exact import (
    NEG_INF, Add, Exact, Expr, Func, Mul, Pow, add, cos, exp, mul, power, sin, tanh,
)

__all__ = [
    "ParseError", "parse_number", "parse_exact", "exact_from_json",
    "format_decimal_places",
    "MAX_NUMBER_CHARS", "MAX_DECIMAL_EXPONENT", "MAX_TEXT_CHARS", "MAX_DEPTH",
    "MAX_POWER", "MAX_BITS", "MAX_RADICAND",
]

MAX_NUMBER_CHARS = 100       # a number (as text) is at most this long
MAX_DECIMAL_EXPONENT = 1000  # |k| in 1.5e<k>
MAX_TEXT_CHARS = 2000        # an answer for parse_exact
MAX_DEPTH = 50               # nested groups, function calls and ^ chains
MAX_POWER = 1000             # |p| and q of a rational exponent p/q
MAX_BITS = 10_000            # bits of a rational's numerator or denominator (~3000 digits)
MAX_RADICAND = 10**40        # numerator * denominator of a rational under a root
_ROOT_BUDGET = 150_000       # trial divisions exact.py may spend on square roots (~50 ms)
_SQUAREFREE_CAP = 100_000    # exact._squarefree stops trial division here

_DIGITS = frozenset("0123456789")
_NON_FINITE = frozenset({"nan", "inf", "infinity", "oo", "∞"})


class ParseError(ValueError):
    """A value that cannot be read.  ``position`` is 1-based (None: the whole text)."""

    def __init__(self, reason: str, position: int | None = None):
        self.reason = reason
        self.position = position
        super().__init__(reason if position is None else f"{reason} at position {position}")


# ---------------------------------------------------------------- plain numbers
@dataclass(frozen=True)
class _Decimal:
    """An unsigned decimal literal found at ``text[start:end]``."""

    end: int
    digits: str      # integer and fraction digits run together
    places: int      # digits after the point
    exponent: int    # the decimal exponent (0 without one)
    plain_int: bool  # digits only: no point, no exponent

    def value(self) -> Fraction:
        shift = self.exponent - self.places
        n = int(self.digits)
        return Fraction(n * 10**shift) if shift >= 0 else Fraction(n, 10**-shift)


def _scan_digits(text: str, i: int) -> int:
    while i < len(text) and text[i] in _DIGITS:
        i += 1
    return i


def _scan_decimal(text: str, i: int) -> _Decimal | None:
    """The unsigned decimal literal starting at ``text[i]``, or None if there is none.

    Linear time, no regular expressions.  Size limits are the caller's job.
    """
    start = i
    i = _scan_digits(text, i)
    int_digits = text[start:i]
    frac_digits, has_point = "", False
    if i < len(text) and text[i] == ".":
        j = _scan_digits(text, i + 1)
        frac_digits, has_point = text[i + 1:j], True
        if not int_digits and not frac_digits:
            return None
        i = j
    if not int_digits and not frac_digits:
        return None
    exponent, has_exp = 0, False
    if i < len(text) and text[i] in "eE":
        j = i + 1
        if j < len(text) and text[j] in "+-":
            j += 1
        if j < len(text) and text[j] in _DIGITS:
            k = _scan_digits(text, j)
            exponent, has_exp, i = int(text[i + 1:k]), True, k
    return _Decimal(i, (int_digits + frac_digits) or "0", len(frac_digits), exponent,
                    not (has_point or has_exp))


def parse_number(text: str) -> Fraction:
    """Read a number as a user types it in an input file, exactly.

    Accepts integers (``-3``, ``+4``), decimals (``0.2`` is exactly 1/5, ``-.5``,
    ``1.``, ``2.5e-3``, ``1E2``) and fractions of integers (``3/4``, ``-3 / 4``),
    with surrounding whitespace.  Raises :class:`ValueError` (a
    :class:`ParseError`) with a short message for anything else:
    ``empty text``, ``number too long`` (more than 100 characters),
    ``exponent too large`` (``1e1001``), ``not finite: 'inf'``,
    ``division by zero: '1/0'``, ``not a number: 'abc'``.  Raises
    :class:`TypeError` if ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_number needs a str, not {type(text).__name__}")
    if len(text) > MAX_NUMBER_CHARS:
        raise ParseError("number too long")
    s = text.strip()
    if not s:
        raise ParseError("empty text")
    i = 1 if s[0] in "+-" else 0
    num = _scan_decimal(s, i)
    if num is None:
        if s[i:].lower() in _NON_FINITE:
            raise ParseError(f"not finite: {text!r}")
        raise ParseError(f"not a number: {text!r}")
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError("exponent too large")
    value = num.value()
    j = _skip_space(s, num.end)
    if j < len(s):
        den = _scan_decimal(s, _skip_space(s, j + 1)) if s[j] == "/" else None
        if den is None or not (num.plain_int and den.plain_int) or den.end != len(s):
            raise ParseError(f"not a number: {text!r}")
        if int(den.digits) == 0:
            raise ParseError(f"division by zero: {text!r}")
        value /= int(den.digits)
    return -value if s[0] == "-" else value


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def exact_from_json(value: object) -> Fraction:
    """An exact rational from a JSON value: ``int`` (exact) or ``str`` (:func:`parse_number`).

    ``bool``, ``float`` (the caller must read JSON floats as strings) and
    everything else raise :class:`ValueError`; so do ints of more than 100
    digits (``number too long``).
    """
    if isinstance(value, bool):
        raise ParseError(f"not a number: {str(value).lower()}")
    if isinstance(value, int):
        if abs(value) >= 10**MAX_NUMBER_CHARS:
            raise ParseError("number too long")
        return Fraction(value)
    if isinstance(value, str):
        return parse_number(value)
    if isinstance(value, float):
        raise ParseError(f"not exact: the float {value!r} (write the number as text)")
    raise ParseError(f"not a number: {type(value).__name__}")


def format_decimal_places(text: object) -> int | None:
    """Digits after the decimal point in a plain decimal or integer, else None.

    ``'0.88'`` -> 2, ``'3'`` -> 0, ``'-0.50'`` -> 2, ``'1.'`` -> 0 (an ``int``
    -> 0).  Scientific notation counts the places of the value's last written
    digit: ``'2.5e-3'`` -> 4, ``'1.5e1'`` -> 0, ``'1e2'`` -> -2 (negative: the
    last written digit is left of the point).  Fractions (``'3/4'``),
    expressions and anything :func:`parse_number` rejects give None.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return 0
    if not isinstance(text, str) or len(text) > MAX_NUMBER_CHARS:
        return None
    s = text.strip()
    num = _scan_decimal(s, 1 if s[:1] in ("+", "-") else 0)
    if num is None or num.end != len(s) or abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        return None
    return num.places - num.exponent


# ---------------------------------------------------------------- tokens
@dataclass(frozen=True)
class _Token:
    kind: str       # num e func frac inf + - * / ^ ( ) { } end
    pos: int        # 1-based
    text: str
    value: object = None  # Fraction for num, function name for func


_FUNCS = frozenset({"exp", "sqrt", "sin", "cos", "tanh"})
_LATEX = {
    "sqrt": "func", "exp": "func", "sin": "func", "cos": "func", "tanh": "func",
    "frac": "frac", "dfrac": "frac", "tfrac": "frac",
    "cdot": "*", "times": "*", "infty": "inf",
    "left": None, "right": None,  # \left( ... \right) are plain parentheses
}
_SINGLE = {"+": "+", "-": "-", "−": "-", "/": "/", "^": "^",
           "(": "(", ")": ")", "{": "{", "}": "}", "∞": "inf"}
_OPERAND_START = frozenset({"num", "e", "func", "frac", "inf", "(", "{"})
_CLOSER = {"(": ")", "{": "}"}


def _tokenize(text: str) -> list[_Token]:
    """Split ``text`` into tokens (linear time); the list ends with an ``end`` token."""
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
            i = _number_token(text, i, tokens)
        elif c.isascii() and c.isalpha():
            j = i
            while j < n and text[j].isascii() and text[j].isalpha():
                j += 1
            tokens.append(_name_token(text[i:j], i + 1))
            i = j
        elif c == "\\":
            j = i + 1
            while j < n and text[j].isascii() and text[j].isalpha():
                j += 1
            name = text[i + 1:j]
            if name not in _LATEX:
                raise ParseError(f"unknown command {text[i:j] or chr(92)!r}", i + 1)
            kind = _LATEX[name]
            if kind is not None:
                tokens.append(_Token(kind, i + 1, text[i:j], name if kind == "func" else None))
            i = j
        elif c == "*":
            double = text.startswith("**", i)
            tokens.append(_Token("^" if double else "*", i + 1, "**" if double else "*"))
            i += 2 if double else 1
        elif c in _SINGLE:
            tokens.append(_Token(_SINGLE[c], i + 1, c))
            i += 1
        else:
            raise ParseError(f"unexpected character {c!r}", i + 1)
    tokens.append(_Token("end", n + 1, "end of input"))
    return tokens


def _number_token(text: str, i: int, tokens: list[_Token]) -> int:
    num = _scan_decimal(text, i)
    assert num is not None  # the caller saw a digit
    if num.end - i > MAX_NUMBER_CHARS:
        raise ParseError("number too long", i + 1)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError("exponent too large", i + 1)
    tokens.append(_Token("num", i + 1, text[i:num.end], num.value()))
    return num.end


def _name_token(name: str, pos: int) -> _Token:
    if name in ("e", "E"):
        return _Token("e", pos, name)
    if name in _FUNCS:
        return _Token("func", pos, name, name)
    if name.lower() in _NON_FINITE:
        return _Token("inf", pos, name)
    raise ParseError(f"unknown name {name!r}", pos)


# ---------------------------------------------------------------- cost guards
def _bits(q: Fraction) -> int:
    return max(q.numerator.bit_length(), q.denominator.bit_length())


def _weight(x: Exact) -> int:
    """Roughly how many bits of rationals ``mul``/``power`` of ``x`` may compute with."""
    if isinstance(x, Fraction):
        return _bits(x)
    if isinstance(x, Pow) and isinstance(x.base, Fraction):
        return math.ceil(_bits(x.base) * abs(x.exponent))
    if isinstance(x, Mul):
        return _bits(x.coeff) + sum(_weight(f) for f in x.factors)
    return 0


def _root_cost(x: Exact) -> int:
    """Trial divisions exact.py may redo for the rational roots at the top of ``x``."""
    if isinstance(x, Pow) and isinstance(x.base, Fraction):
        return _radicand_cost(x.base) if x.exponent.denominator == 2 else 1
    if isinstance(x, Mul):
        return sum(_root_cost(f) for f in x.factors)
    if isinstance(x, Func) and x.name == "exp":
        return _root_cost(x.arg)
    return 0


def _radicand_cost(q: Fraction) -> int:
    return min(math.isqrt(abs(q.numerator * q.denominator)) + 1, _SQUAREFREE_CAP)


def _float_or_none(x: Exact) -> float | None:
    try:
        v = float(x)
    except (ArithmeticError, ValueError, TypeError):
        return None
    return v if math.isfinite(v) else None


# ---------------------------------------------------------------- the parser
class _Parser:
    """Recursive descent over the token list; one instance per parse."""

    def __init__(self, tokens: list[_Token]):
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.budget = _ROOT_BUDGET

    # -- token helpers -----------------------------------------------------
    @property
    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def unexpected(self, tok: _Token) -> NoReturn:
        if tok.kind == "end":
            raise ParseError("unexpected end of input", tok.pos)
        if tok.kind == "inf":
            raise ParseError("infinity is only allowed as the whole entry '-oo'", tok.pos)
        raise ParseError(f"unexpected {tok.text!r}", tok.pos)

    def enter(self, pos: int, levels: int = 1) -> None:
        self.depth += levels
        if self.depth > MAX_DEPTH:
            raise ParseError("too deeply nested", pos)

    # -- grammar -------------------------------------------------------------
    def entry(self) -> Exact:
        if self.peek.kind == "end":
            raise ParseError("empty input")
        value = self.expr()
        tok = self.peek
        if tok.kind != "end":
            self.unexpected(tok)
        return value

    def expr(self) -> Exact:
        pos = self.peek.pos
        terms = [self.term()]
        while self.peek.kind in ("+", "-"):
            op = self.take()
            term = self.term()
            terms.append(term if op.kind == "+" else self.negate(term, op.pos))
        return terms[0] if len(terms) == 1 else self.sum(terms, pos)

    def term(self) -> Exact:
        pos = self.peek.pos
        factors = [self.unary()]
        while True:
            tok = self.peek
            if tok.kind in _OPERAND_START:
                raise ParseError("expected an operator", tok.pos)
            if tok.kind not in ("*", "/"):
                break
            self.take()
            factor = self.unary()
            factors.append(factor if tok.kind == "*" else self.raise_to(factor, Fraction(-1), tok.pos))
        return factors[0] if len(factors) == 1 else self.product(factors, pos)

    def signs(self) -> bool:
        """Consume unary signs; True if they make a minus."""
        negative = False
        while self.peek.kind in ("+", "-"):
            negative ^= self.take().kind == "-"
        return negative

    def unary(self) -> Exact:
        pos = self.peek.pos
        negative = self.signs()
        value = self.power()
        return self.negate(value, pos) if negative else value

    def power(self) -> Exact:
        """``a ^ -b ^ c`` is ``a ^ (-(b ^ c))``: collect the chain, fold from the right."""
        items = [(False, self.atom())]
        carets: list[int] = []
        saved_depth = self.depth
        while self.peek.kind == "^":
            carets.append(self.take().pos)
            self.enter(carets[-1])  # each ^ can nest the value one level deeper
            negative = self.signs()
            items.append((negative, self.atom()))
        self.depth = saved_depth
        negative, value = items[-1]
        for k in range(len(items) - 2, -1, -1):
            if negative:
                value = self.negate(value, carets[k])
            negative, base = items[k]
            value = self.raise_to(base, value, carets[k])
        return self.negate(value, carets[0]) if negative and carets else value

    def atom(self) -> Exact:
        tok = self.take()
        if tok.kind == "num":
            return tok.value
        if tok.kind == "e":
            return exp(1)
        if tok.kind in ("(", "{"):
            return self.group_body(tok)
        if tok.kind == "func":
            arg = self.group()
            if tok.value == "sqrt":
                return self.raise_to(arg, Fraction(1, 2), tok.pos)
            return self.call(tok.pos, {"exp": exp, "sin": sin, "cos": cos, "tanh": tanh}[tok.value], arg)
        if tok.kind == "frac":
            top = self.group()
            bar = self.peek.pos
            return self.product([top, self.raise_to(self.group(), Fraction(-1), bar)], tok.pos)
        self.unexpected(tok)

    def group(self) -> Exact:
        tok = self.take()
        if tok.kind not in ("(", "{"):
            raise ParseError("expected '(' or '{'", tok.pos)
        return self.group_body(tok)

    def group_body(self, opener: _Token) -> Exact:
        self.enter(opener.pos)
        value = self.expr()
        tok = self.take()
        if tok.kind != _CLOSER[opener.kind]:
            if tok.kind == "end":
                raise ParseError(f"expected {_CLOSER[opener.kind]!r}", tok.pos)
            self.unexpected(tok)
        self.depth -= 1
        return value

    # -- building values -----------------------------------------------------
    def call(self, pos: int, fn: Callable[..., Exact], *args) -> Exact:
        """``fn(*args)`` with exact.py's errors turned into positioned ParseErrors."""
        try:
            result = fn(*args)
        except ZeroDivisionError:
            raise ParseError("division by zero", pos) from None
        except OverflowError:
            raise ParseError("number too large", pos) from None
        except ValueError as exc:  # e.g. "root of a negative number"
            raise ParseError(str(exc).split(" at position")[0] or "invalid value", pos) from None
        self.check_size(result, pos)
        return result

    def check_size(self, x: Exact, pos: int) -> None:
        coeffs = []
        if isinstance(x, Fraction):
            coeffs.append(x)
        elif isinstance(x, Mul):
            coeffs.append(x.coeff)
        elif isinstance(x, Add):
            coeffs.append(x.const)
            coeffs += [t.coeff for t in x.terms if isinstance(t, Mul)]
        if any(_bits(c) > MAX_BITS for c in coeffs):
            raise ParseError("number too large", pos)

    def spend(self, cost: int, pos: int) -> None:
        self.budget -= cost
        if self.budget < 0:
            raise ParseError("expression too costly to evaluate", pos)

    def sum(self, terms: list[Exact], pos: int) -> Exact:
        return self.call(pos, add, *terms)

    def product(self, factors: list[Exact], pos: int) -> Exact:
        if sum(_weight(f) for f in factors) > 2 * MAX_BITS:
            raise ParseError("number too large", pos)
        self.spend(sum(_root_cost(f) for f in factors), pos)
        return self.call(pos, mul, *factors)

    def negate(self, x: Exact, pos: int) -> Exact:
        if isinstance(x, Fraction):
            return -x
        if isinstance(x, Add):  # keep sums as sums: -(1 - e) is -1 + e, not -1*(1 - e)
            return self.sum([-x.const, *(self.product([Fraction(-1), t], pos) for t in x.terms)], pos)
        return self.product([Fraction(-1), x], pos)

    def raise_to(self, base: Exact, exponent: Exact, pos: int) -> Exact:
        """``base ^ exponent``; ``pos`` is where the operator (or sqrt, /) is."""
        if isinstance(base, Func) and base.name == "exp":
            arg = self.product([exponent, base.arg], pos)
            return self.call(pos, exp, arg)
        if not isinstance(exponent, Fraction):
            raise ParseError("non-rational exponent", pos)
        if abs(exponent.numerator) > MAX_POWER or exponent.denominator > MAX_POWER:
            raise ParseError("exponent too large", pos)
        if _weight(base) * abs(exponent) > MAX_BITS:
            raise ParseError("number too large", pos)
        cost = 2 * _root_cost(base)
        if exponent.denominator != 1:
            cost += self.check_radicand(base, exponent, pos)
        self.spend(cost, pos)
        result = self.call(pos, power, base, exponent)
        if exponent.denominator % 2 == 0 and (_float_or_none(result) or 0.0) < 0:
            # exact.py writes (x**2)**(1/2) as x; refuse rather than return -|x|
            raise ParseError("root of a negative number", pos)
        return result

    def check_radicand(self, base: Exact, exponent: Fraction, pos: int) -> int:
        """Refuse roots exact.py cannot do (quickly); return their trial-division cost."""
        rational = base if isinstance(base, Fraction) else base.coeff if isinstance(base, Mul) else None
        if rational is not None:
            if rational < 0 and isinstance(base, Fraction):
                raise ParseError("root of a negative number", pos)
            if abs(rational.numerator * rational.denominator) > MAX_RADICAND:
                raise ParseError("number under a root too large", pos)
        if not isinstance(base, Fraction) and (_float_or_none(base) or 0.0) < 0:
            raise ParseError("root of a negative number", pos)
        if rational is None:
            return 0
        return _radicand_cost(rational) if exponent.denominator == 2 else 1


def parse_exact(text: str) -> Exact:
    """Parse an exact value as written in an answer file (grammar: module docstring).

    Returns a ``Fraction``, an :class:`~worksheet.exact.Expr` built with
    exact.py's constructors, or ``NEG_INF`` for ``-oo`` (``-inf``,
    ``-infinity``, ``-∞``, ``-\\infty``) given as the whole entry.  Accepts every
    string :func:`worksheet.exact.to_str` prints (and LaTeX-ish ``e^{1/2}``,
    ``\\sqrt{2}``, ``\\frac{a}{b}``).  Never evaluates code.

    Raises :class:`ValueError` (a :class:`ParseError`, with ``.reason`` and a
    1-based ``.position``) for anything else, e.g. ``unexpected ')' at position
    5``, ``expected an operator at position 2``, ``non-rational exponent``,
    ``division by zero``, ``root of a negative number``, ``too deeply nested``,
    ``input too long`` (over 2000 characters), ``number too long``,
    ``exponent too large``, ``number too large``.  Raises :class:`TypeError`
    if ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_exact needs a str, not {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ParseError(f"input too long ({len(text)} characters, at most {MAX_TEXT_CHARS})")
    tokens = _tokenize(text)
    if [t.kind for t in tokens] == ["-", "inf", "end"]:
        return NEG_INF
    try:
        return _Parser(tokens).entry()
    except RecursionError:  # pragma: no cover - the depth limit should prevent this
        raise ParseError("too deeply nested") from None
