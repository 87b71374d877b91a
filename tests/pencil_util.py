"""A reader of the arithmetic we print, for tests that redo a sheet by hand.

Our worked lines and tables print numbers in a small, known LaTeX form:
integers, decimals, ``\\frac{a}{b}``, products with ``\\cdot``, sums,
parentheses, ``e^{x}``, ``\\sigma(x)``, ``\\tanh(x)``, ``\\sqrt{x}``,
``\\sin\\left(x\\right)``, ``\\cos\\left(x\\right)``.  :func:`value` reads such
an expression to an exact :class:`Fraction`, taking every function value from
a :class:`Tables` (what the sheet prints, at its printed places) -- never
from a float, never through sympy.  Anything else (a symbol such as
``z_{11}``, ``\\sum``) raises :class:`Unreadable`: the caller skips that part.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

FUNCS = ("exp", "sigma", "tanh", "sqrt", "sin", "cos")


class Unreadable(ValueError):
    """Not an expression of printed numbers."""


class NotOnSheet(ValueError):
    """A function value the sheet's tables do not print."""


def exact_value(func: str, x: Fraction) -> Fraction | None:
    """The value of ``func(x)`` when it is rational (e^0, √ of a square, ...), else None."""
    if func in ("exp", "cos") and x == 0:
        return Fraction(1)
    if func in ("sin", "tanh") and x == 0:
        return Fraction(0)
    if func == "sigma" and x == 0:
        return Fraction(1, 2)
    if func == "sqrt" and x >= 0:
        n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
        if n * n == x.numerator and d * d == x.denominator:
            return Fraction(n, d)
    return None


def float_value(func: str, x: float) -> float:
    return {
        "exp": math.exp,
        "tanh": math.tanh,
        "sqrt": math.sqrt,
        "sin": math.sin,
        "cos": math.cos,
        "sigma": lambda a: 1 / (1 + math.exp(-a)),
    }[func](x)


def grid_round(func: str, x: Fraction) -> Fraction:
    """Where a grid table is read: x to 2 decimals; √x from 10 on (its table steps by 0.1) to 1."""
    fine = round_half_away(x, 2)
    return round_half_away(x, 1) if func == "sqrt" and fine >= 10 else fine


@dataclass
class Tables:
    """The function values a sheet prints: ``{func: {argument: value}}`` (exact Fractions)."""

    values: dict[str, dict[Fraction, Fraction]] = field(default_factory=dict)
    used: list = field(default_factory=list)
    odd: set = field(default_factory=set)  # functions whose title gives the value at -x from x's
    grid: set = field(default_factory=set)  # functions printed on the grid of every 0.01

    @classmethod
    def of(cls, problem) -> "Tables":
        t = cls()
        for aid in problem.aids:
            if r"\sigma(-x) = 1 - \sigma(x)" in aid.title:
                t.odd.add("sigma")
            if r"\tanh(-x) = -\tanh x" in aid.title:
                t.odd.add("tanh")
            if aid.grid:  # a table of every 0.01: an argument is rounded to 2 decimals first
                t.grid.add(call(aid.entries[0][0])[0])
        # tables whose arguments are other tables' values (e^{tanh(1) - tanh(2)} for the
        # additive score) are read after those: up to three rounds
        pending = [(arg, val) for aid in problem.aids for arg, val in aid.entries]
        for _ in range(3):
            left = []
            for arg, val in pending:
                try:
                    func, x = _plain_call(arg)  # most arguments read no table: parsed once per process
                except (Unreadable, NotOnSheet):
                    try:
                        func, x = call(arg, t)
                    except (Unreadable, NotOnSheet):
                        left.append((arg, val))
                        continue
                t.values.setdefault(func, {})[x] = _plain_value(val)
            pending = left
        return t

    def lookup(self, func: str, x: Fraction) -> Fraction:
        if func in self.grid:  # the sheet's rule: an argument is read rounded to the grid's 2 decimals
            x = grid_round(func, x)
        exact = exact_value(func, x)
        if exact is not None:
            return exact
        table = self.values.get(func, {})
        if x in table:
            self.used.append((func, x))
            return table[x]
        if x < 0 and func in self.odd and -x in table:  # the rule the table's title prints
            self.used.append((func, -x))
            return 1 - table[-x] if func == "sigma" else -table[-x]
        raise NotOnSheet(f"{func}({x}) is not in the sheet's tables")

    def lookup_float(self, func: str, x: float) -> float:
        """A function value for a float argument (a student's own rounded number):
        the table entry whose argument it is (to 1e-9), or the exact value."""
        if func in self.grid:  # the sheet's rule: round the argument to the table's 2 decimals
            x = float(grid_round(func, Fraction(x).limit_denominator(10**9)))
        for arg, val in self.values.get(func, {}).items():
            if abs(float(arg) - x) <= 1.01e-4:  # the student's 4-place value of an exact argument
                return float(val)
        exact = exact_value(func, Fraction(x).limit_denominator(10**6))
        if exact is not None and abs(float(Fraction(x).limit_denominator(10**6)) - x) < 1e-12:
            return float(exact)
        if x < 0 and func in self.odd:  # tanh(-x) = -tanh x, sigma(-x) = 1 - sigma(x): the title's rule
            return -self.lookup_float(func, -x) if func == "tanh" else 1 - self.lookup_float(func, -x)
        raise NotOnSheet(f"{func}({x!r}) is not in the sheet's tables")


def round_half_away(x: Fraction, places: int) -> Fraction:
    n = x * 10**places
    whole = int(n)
    if abs(n - whole) * 2 >= 1:
        whole += 1 if n > 0 else -1
    return Fraction(whole, 10**places)


# ---------------------------------------------------------------- tokens
_TOKEN = re.compile(
    r"\s*(\\left\(|\\right\)|\\frac|\\cdot|\\sigma|\\tanh|\\sqrt|\\sin|\\cos|\\exp"
    r"|\\times|\\,|\\!|\\;|\d+(?:\.\d+)?|[-+(){}^]|−|\\[A-Za-z]+|.)"
)


def tokens(text: str) -> list[str]:
    out = []
    for m in _TOKEN.finditer(text):
        t = m.group(1)
        if t in (r"\,", r"\!", r"\;"):
            continue
        if t == "−":
            t = "-"
        out.append(t)
    return [t for t in out if t.strip()]


class _Parser:
    def __init__(self, text: str, tables: Tables | None):
        self.t = tokens(text)
        self.i = 0
        self.tables = tables
        self.funcs = 0  # function values read

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise Unreadable(f"expected {want!r}, found {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> Fraction:
        v = self.expr()
        if self.peek() is not None:
            raise Unreadable(f"unexpected {self.peek()!r}")
        return v

    def expr(self) -> Fraction:
        v = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            w = self.term()
            v = v + w if op == "+" else v - w
        return v

    def term(self) -> Fraction:
        v = self.unary()
        while True:
            tok = self.peek()
            if tok in (r"\cdot", r"\times"):
                self.take()
                v *= self.unary()
            elif tok is not None and (
                tok in ("(", r"\left(", "{", r"\frac", r"\sigma", r"\tanh", r"\sqrt", r"\sin", r"\cos", "e")
                or tok[0].isdigit()
            ):
                v *= self.power()  # implicit product: 2 e^{-1}
            else:
                return v

    def unary(self) -> Fraction:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Fraction:
        base = self.atom()
        if self.peek() == "^":
            if base is _E:  # e^{-1}, or e^0 (a single digit needs no braces)
                self.take()
                return self.func("exp", self.group() if self.peek() == "{" else self.number())
            self.take()
            e = self.group() if self.peek() == "{" else self.number()
            if e.denominator != 1:
                raise Unreadable("a fractional power")
            return base ** int(e)
        if base is _E:
            raise Unreadable("e alone")
        return base

    def group(self) -> Fraction:
        self.take("{")
        v = self.expr()
        self.take("}")
        return v

    def number(self) -> Fraction:
        tok = self.take()
        if not tok[0].isdigit():
            raise Unreadable(tok)
        return Fraction(tok)

    def func(self, name: str, x: Fraction) -> Fraction:
        self.funcs += 1
        if self.tables is None:
            raise Unreadable("a function value with no tables")
        return self.tables.lookup(name, x)

    def atom(self):
        tok = self.peek()
        if tok is None:
            raise Unreadable("end")
        if tok[0].isdigit():
            return self.number()
        if tok == "e":
            self.take()
            return _E
        if tok == "(":
            self.take()
            v = self.expr()
            self.take(")")
            return v
        if tok == r"\left(":
            self.take()
            v = self.expr()
            self.take(r"\right)")
            return v
        if tok == "{":
            return self.group()
        if tok == r"\frac":
            self.take()
            a = self.group()
            b = self.group()
            if b == 0:
                raise Unreadable("division by 0")
            return a / b
        if tok == r"\sqrt":
            self.take()
            return self.func("sqrt", self.group())
        if tok in (r"\sigma", r"\tanh", r"\sin", r"\cos"):
            self.take()
            name = tok[1:]
            if self.peek() == r"\left(":
                self.take()
                x = self.expr()
                self.take(r"\right)")
            else:
                self.take("(")
                x = self.expr()
                self.take(")")
            return self.func(name, x)
        raise Unreadable(f"not a number: {tok!r}")


_E = object()


def value(text: str, tables: Tables | None = None) -> Fraction:
    """The exact value of printed arithmetic (function values from ``tables``)."""
    return _Parser(text, tables).parse()


def call(text: str, tables: Tables | None = None) -> tuple[str, Fraction]:
    """A table's argument cell such as ``e^{-\\frac{1}{2}}`` or ``\\sigma(-1)``: (func, argument);
    an argument holding function values reads them from ``tables``."""
    p = _Parser(text, tables)
    tok = p.peek()
    if tok == "e":
        p.take()
        p.take("^")
        x = p.group() if p.peek() == "{" else p.number()  # e^{-1}, e^0
        name = "exp"
    elif tok in (r"\sigma", r"\tanh", r"\sin", r"\cos", r"\sqrt"):
        p.take()
        name = tok[1:]
        if name == "sqrt":
            x = p.group()
        elif p.peek() == r"\left(":
            p.take()
            x = p.expr()
            p.take(r"\right)")
        else:
            p.take("(")
            x = p.expr()
            p.take(")")
    else:
        raise Unreadable(f"not a table argument: {text!r}")
    if p.peek() is not None:
        raise Unreadable(f"not a table argument: {text!r}")
    return name, x


@functools.cache
def _plain_call(text: str) -> tuple[str, Fraction]:
    """:func:`call` of an argument that reads no table (the same text, the same answer:
    the standard grids are printed on every sheet); one that does raises :class:`Unreadable`."""
    return call(text)


@functools.cache
def _plain_value(text: str) -> Fraction:
    return value(text)


def places(text: str) -> int | None:
    """Decimal places of a plain decimal literal (``-0.7881`` -> 4, ``3`` -> 0), else None."""
    m = re.fullmatch(r"\s*[-−]?\s*(\d+)(?:\.(\d+))?\s*", text)
    if not m:
        return None
    return len(m.group(2) or "")


# ---------------------------------------------------------------- worked lines
_REL = re.compile(r"\\approx|(?<![<>\\])=")


def split_relations(line: str) -> list[tuple[str, str]]:
    """``a = b \\approx c`` -> [("", a), ("=", b), ("\\approx", c)], split at the top level
    (not inside braces or parentheses)."""
    parts, rels = [], [""]
    depth, start, i = 0, 0, 0
    while i < len(line):
        c = line[i]
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        elif depth == 0:
            m = _REL.match(line, i)
            if m:
                parts.append(line[start:i])
                rels.append(m.group(0))
                i = m.end()
                start = i
                continue
        i += 1
    parts.append(line[start:])
    return list(zip(rels, parts))


def strip_line(line: str) -> str:
    """A worked line without the parts that are words, not arithmetic."""
    line = re.sub(r"\\quad.*$", "", line)  # "(64 terms)" notes
    return re.sub(r"\\text\{[^{}]*\}", " ", line)


class _Exact(Tables):
    """Function values to 30 digits (an exact form's value), as a Fraction."""

    def lookup(self, func: str, x: Fraction) -> Fraction:
        exact = exact_value(func, x)
        if exact is not None:
            return exact
        import mpmath

        with mpmath.workdps(30):
            a = mpmath.mpf(x.numerator) / x.denominator
            v = {
                "exp": mpmath.exp,
                "tanh": mpmath.tanh,
                "sqrt": mpmath.sqrt,
                "sin": mpmath.sin,
                "cos": mpmath.cos,
                "sigma": lambda t: 1 / (1 + mpmath.exp(-t)),
            }[func](a)
            return Fraction(mpmath.nstr(v, 28, strip_zeros=False, min_fixed=-100, max_fixed=100))


def true_value(text: str) -> Fraction | None:
    """The value of printed arithmetic with every function value to 30 digits (None if unreadable)."""
    try:
        return _Parser(text, _Exact()).parse()
    except (Unreadable, ZeroDivisionError, ValueError):
        return None


def rounds_to(x: Fraction, printed: Fraction, p: int) -> bool:
    """Is ``printed`` (``p`` places) ``x`` rounded to ``p`` places (either way at a tie)?"""
    return abs(x - printed) <= Fraction(1, 2 * 10**p)


def check_line(line: str, tables: Tables) -> tuple[int, list[str]]:
    """Check a worked line's printed arithmetic: (pairs checked, problems found).

    Between two readable neighbours ``A rel B``: when ``B`` is a plain decimal
    with p places, ``A`` (its function values from the sheet's tables) rounds
    to it at p places; when ``rel`` is ``=`` and neither side reads a table,
    the two are equal.  An unreadable part (a symbol) breaks the chain.
    """
    parts = split_relations(strip_line(line))
    checked, bad = 0, []
    prev = None  # (text, value, funcs)
    for rel, text in parts:
        try:
            p = _Parser(text, tables)
            v = p.parse()
            cur = (text.strip(), v, p.funcs)
        except NotOnSheet:  # an exact form (sigma(2) = 1/(1 + e^{-2})): its exact value
            try:
                p = _Parser(text, _Exact())
                cur = (text.strip(), p.parse(), p.funcs)
            except (Unreadable, ZeroDivisionError, ValueError):
                prev = None
                continue
        except (Unreadable, ZeroDivisionError):
            prev = None
            continue
        if prev is not None:
            pl = places(cur[0])
            if pl is not None and pl > 0 or (pl == 0 and rel == r"\approx"):
                checked += 1
                if not rounds_to(prev[1], cur[1], pl):
                    bad.append(f"{prev[0]} {rel} {cur[0]}: the printed terms give {float(prev[1]):.6f}")
                elif prev[2] and true_value(prev[0]) is not None and not rounds_to(true_value(prev[0]), cur[1], pl):
                    # e^{-1}/(1 + e^{-1}) ~ 0.2690 holds with the table's 0.3679, but its value is 0.26894:
                    # a line that names functions must round their true value; 0.3679/1.3679 ~ 0.2690 is
                    # how a chain writes the numbers that give its result
                    bad.append(f"{prev[0]} {rel} {cur[0]}: its exact value is {float(true_value(prev[0])):.6f}")
            elif rel == "=" and prev[2] == 0 and cur[2] == 0:
                checked += 1
                if prev[1] != cur[1]:
                    bad.append(f"{prev[0]} = {cur[0]}: {prev[1]} != {cur[1]}")
        prev = cur
    return checked, bad
