r"""Safe, exact parsing of numbers from input files and values from answer files.

Nothing here evaluates code: there is no ``eval``, ``exec``, ``sympify`` or
``ast``; :func:`parse_exact` is a small hand-written recursive-descent parser
that builds values only with :mod:`worksheet.exact`'s constructors.  Input and
answer files are untrusted (a TA marks hundreds of them), so every path is
bounded and every failure is a :class:`ValueError` (:class:`ParseError`) with a
one-phrase message:

* text: at most 2000 characters (``input too long``); a number token at most
  100 (``number too long``), its decimal exponent at most 1000 in magnitude;
* nesting: at most 50 open groups, function calls and ``^`` in a chain, and
  an expression tree at most 120 levels deep (``too deeply nested``), far
  below Python's recursion limit, also when the value is printed later;
* exponents ``p/q`` with ``|p|, q <= 1000`` (``exponent too large``), rationals
  of at most 10,000 bits (``number too large``), roots only of rationals with
  ``|numerator * denominator| <= 10**40``;
* work budgets for what exact.py does with the value (tree nodes it walks,
  trial divisions it spends on square roots): ``expression too costly to
  evaluate``.  Ordinary answers use a tiny fraction of them; any 2000
  character input is parsed or refused in tens of milliseconds.

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
import re
from fractions import Fraction
from typing import Callable, NamedTuple, NoReturn

from .exact import (
    NEG_INF, Add, Exact, Expr, Func, Mul, Pow, add, cos, exp, mul, power, sin, tanh,
)

__all__ = [
    "ParseError", "Budget", "parse_number", "parse_exact", "exact_from_json",
    "format_decimal_places",
    "MAX_NUMBER_CHARS", "MAX_DECIMAL_EXPONENT", "MAX_TEXT_CHARS", "MAX_DEPTH",
    "MAX_TREE_DEPTH", "MAX_POWER", "MAX_BITS", "MAX_RADICAND",
]

MAX_NUMBER_CHARS = 100       # a number (as text) is at most this long
MAX_DECIMAL_EXPONENT = 1000  # |k| in 1.5e<k>
MAX_TEXT_CHARS = 2000        # an answer for parse_exact
MAX_DEPTH = 50               # nested groups, function calls and ^ chains
MAX_POWER = 1000             # |p| and q of a rational exponent p/q
MAX_BITS = 10_000            # bits of a rational's numerator or denominator (~3000 digits)
MAX_RADICAND = 10**40        # numerator * denominator of a rational under a root
MAX_TREE_DEPTH = 120         # levels of the value's expression tree
_ROOT_BUDGET = 100_000       # trial divisions exact.py may spend on square roots (~40 ms)
_WORK_BUDGET = 12_000        # tree nodes exact.py's constructors may walk (~30 ms)
_SQUAREFREE_CAP = 100_000    # exact._squarefree stops trial division here

_NON_FINITE = frozenset({"nan", "inf", "infinity", "oo", "∞"})
_INFINITY_NAMES = frozenset({"oo", "inf", "infinity"})


class ParseError(ValueError):
    """A value that cannot be read.  ``position`` is 1-based (None: the whole text)."""

    def __init__(self, reason: str, position: int | None = None):
        self.reason = reason
        self.position = position
        super().__init__(reason if position is None else f"{reason} at position {position}")


# ---------------------------------------------------------------- plain numbers
# An unsigned decimal.  No nested quantifiers and no two adjacent quantifiers can
# match the same characters, so matching is linear (no catastrophic backtracking).
_DECIMAL = (r"(?:(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]*))?|\.(?P<frac2>[0-9]+))"
            r"(?:[eE](?P<exp>[+-]?[0-9]+))?")
_NUMBER_RE = re.compile(r"(?P<sign>[+-]?)" + _DECIMAL + r"(?:\s*/\s*(?P<den>[0-9]+))?")


class _Decimal(NamedTuple):
    """The parts of a matched :data:`_DECIMAL`."""

    digits: str      # integer and fraction digits run together
    places: int      # digits after the point
    exponent: int    # the decimal exponent (0 without one)
    plain_int: bool  # digits only: no point, no exponent

    @classmethod
    def of(cls, m: re.Match) -> _Decimal:
        frac = m["frac"] if m["frac"] is not None else (m["frac2"] or "")
        exp_text = m["exp"]
        return cls((m["int"] or "") + frac, len(frac), int(exp_text) if exp_text else 0,
                   m["frac"] is None and m["frac2"] is None and exp_text is None)

    def value(self) -> Fraction:
        n = int(self.digits)
        if self.plain_int:
            return Fraction(n)
        shift = self.exponent - self.places
        return Fraction(n * 10**shift) if shift >= 0 else Fraction(n, 10**-shift)


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
    m = _NUMBER_RE.fullmatch(s)
    if m is None:
        if s.lstrip("+-").lower() in _NON_FINITE and len(s) - len(s.lstrip("+-")) <= 1:
            raise ParseError(f"not finite: {text!r}")
        raise ParseError(f"not a number: {text!r}")
    num = _Decimal.of(m)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError("exponent too large")
    value = num.value()
    if m["den"] is not None:
        if not num.plain_int:
            raise ParseError(f"not a number: {text!r}")
        if int(m["den"]) == 0:
            raise ParseError(f"division by zero: {text!r}")
        value /= int(m["den"])
    return -value if m["sign"] == "-" else value


def exact_from_json(value: object) -> Fraction:
    """An exact rational from a JSON value: ``int`` (exact) or ``str`` (:func:`parse_number`).

    ``bool``, ``float`` (the caller must read JSON floats as strings) and
    everything else raise :class:`ValueError`; so do ints of more than 100
    digits (``number too long``) and numbers outside the input range of
    :mod:`worksheet.limits` (``|x| <= 10^6``, a denominator of at most
    ``10^12``): ``1e308``, ``10**99`` and ``1e-1000`` are refused here, before
    any arithmetic.
    """
    from .limits import check_number

    if isinstance(value, bool):
        raise ParseError(f"not a number: {str(value).lower()}")
    if isinstance(value, int):
        if abs(value) >= 10**MAX_NUMBER_CHARS:
            raise ParseError("number too long")
        number = Fraction(value)
    elif isinstance(value, str):
        number = parse_number(value)
    elif isinstance(value, float):
        raise ParseError(f"not exact: the float {value!r} (write the number as text)")
    else:
        raise ParseError(f"not a number: {type(value).__name__}")
    why = check_number(number)
    if why:
        raise ParseError(why)
    return number


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
    m = _NUMBER_RE.fullmatch(text.strip())
    if m is None or m["den"] is not None:
        return None
    num = _Decimal.of(m)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        return None
    return num.places - num.exponent


# ---------------------------------------------------------------- tokens
class _Token(NamedTuple):
    kind: str       # num e func frac inf + - * / ^ ( ) { } end
    pos: int        # 1-based
    text: str
    value: object = None  # Fraction for num, function name for func


_TOKEN_RE = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<num>" + _DECIMAL + r")"
    r"|(?P<name>[A-Za-z]+)"
    r"|(?P<cmd>\\[A-Za-z]*)"
    r"|(?P<op>\*\*|[-+*/^(){}\u2212\u221e])"
    r"|(?P<bad>.)",
    re.S,
)
_FUNCS = frozenset({"exp", "sqrt", "sin", "cos", "tanh"})
_LATEX = {
    "sqrt": "func", "exp": "func", "sin": "func", "cos": "func", "tanh": "func",
    "frac": "frac", "dfrac": "frac", "tfrac": "frac",
    "cdot": "*", "times": "*", "infty": "inf",
    "left": None, "right": None,  # \left( ... \right) are plain parentheses
}
_OPS = {"**": "^", "\u2212": "-", "\u221e": "inf"}  # others are their own kind
_OPERAND_START = frozenset({"num", "e", "func", "frac", "inf", "(", "{"})
_CLOSER = {"(": ")", "{": "}"}


def _show(s: str, limit: int = 20) -> str:
    """A token for an error message: quoted, and cut short if long."""
    return repr(s if len(s) <= limit else s[:limit] + "...")


def _tokenize(text: str) -> list[_Token]:
    """Split ``text`` into tokens (linear time); the list ends with an ``end`` token."""
    tokens: list[_Token] = []
    for m in _TOKEN_RE.finditer(text):
        kind, s, pos = m.lastgroup, m.group(), m.start() + 1
        if kind == "space":
            continue
        if kind == "num":
            tokens.append(_number_token(m, pos))
        elif kind == "name":
            tokens.append(_name_token(s, pos))
        elif kind == "cmd":
            if s[1:] not in _LATEX:
                raise ParseError(f"unknown command {_show(s)}", pos)
            kind = _LATEX[s[1:]]
            if kind is not None:
                tokens.append(_Token(kind, pos, s, s[1:] if kind == "func" else None))
        elif kind == "op":
            tokens.append(_Token(_OPS.get(s, s), pos, s))
        else:
            raise ParseError(f"unexpected character {s!r}", pos)
    tokens.append(_Token("end", len(text) + 1, "end of input"))
    return tokens


def _number_token(m: re.Match, pos: int) -> _Token:
    if m.end() - m.start() > MAX_NUMBER_CHARS:
        raise ParseError("number too long", pos)
    num = _Decimal.of(m)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError("exponent too large", pos)
    return _Token("num", pos, m.group(), num.value())


def _name_token(name: str, pos: int) -> _Token:
    if name in ("e", "E"):
        return _Token("e", pos, name)
    if name in _FUNCS:
        return _Token("func", pos, name, name)
    if name.lower() in _INFINITY_NAMES:
        return _Token("inf", pos, name)
    raise ParseError(f"unknown name {_show(name)}", pos)


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
        return _radicand_cost(x.base)  # mul() may merge n**(1/3) * n**(1/6) into sqrt(n)
    if isinstance(x, Mul):
        return sum(_root_cost(f) for f in x.factors)
    if isinstance(x, Func) and x.name == "exp":
        return _root_cost(x.arg)
    return 0


def _radicand_cost(q: Fraction) -> int:
    return min(math.isqrt(abs(q.numerator * q.denominator)) + 1, _SQUAREFREE_CAP)


def _children(x: Expr) -> tuple:
    if isinstance(x, Add):
        return (x.const, *x.terms)
    if isinstance(x, Mul):
        return (x.coeff, *x.factors)
    if isinstance(x, Pow):
        return (x.base, x.exponent)
    if isinstance(x, Func):
        return (x.arg,)
    raise TypeError(f"not an exact value: {x!r}")  # pragma: no cover


_FLOAT_FUNCS = {"exp": math.exp, "sin": math.sin, "cos": math.cos, "tanh": math.tanh}


def _node_float(x: Exact, values: list) -> float | None:
    """The float of ``x`` from its children's floats; None if not a finite real."""
    if any(v is None for v in values):
        return None
    try:
        if isinstance(x, Fraction):
            v = float(x)
        elif isinstance(x, Add):
            v = math.fsum(values)
        elif isinstance(x, Mul):
            v = math.prod(values)
        elif isinstance(x, Pow):
            v = values[0] ** values[1]
        else:
            v = _FLOAT_FUNCS[x.name](values[0])
    except (ArithmeticError, ValueError):
        return None
    return v if isinstance(v, float) and math.isfinite(v) else None


# ---------------------------------------------------------------- the parser
class Budget:
    """Work that several :func:`parse_exact` calls share (e.g. every entry of one file).

    ``roots`` counts trial divisions exact.py may spend on square roots and
    ``nodes`` the tree nodes its constructors may walk, the same units as each
    entry's own budget; when either runs out, :func:`parse_exact` raises
    ``ParseError("too costly to read: ...")``.  Work is counted, never timed,
    so a file gets the same result on every machine.
    """

    def __init__(self, roots: int, nodes: int):
        self.roots = roots
        self.nodes = nodes

    @property
    def spent(self) -> bool:
        return self.roots < 0 or self.nodes < 0


class _Parser:
    """Recursive descent over the token list; one instance per parse.

    Values are built as soon as their syntax is read, through :meth:`call`,
    which turns exact.py's exceptions into positioned :class:`ParseError` and
    enforces the work limits.
    """

    def __init__(self, tokens: list[_Token], shared: Budget | None = None):
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.root_budget = _ROOT_BUDGET if shared is None else min(_ROOT_BUDGET, shared.roots)
        self.work_budget = _WORK_BUDGET if shared is None else min(_WORK_BUDGET, shared.nodes)
        # memos keyed by id(node); each entry also holds the node, so no id is reused
        self.shapes: dict[int, tuple[int, int, Expr]] = {}
        self.floats: dict[int, tuple[float | None, Expr]] = {}

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
        raise ParseError(f"unexpected {_show(tok.text)}", tok.pos)

    def enter(self, pos: int) -> None:
        self.depth += 1
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
            if tok.kind == "/":
                factor = self.raise_to(factor, Fraction(-1), tok.pos)
            factors.append(factor)
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
            self.enter(carets[-1])  # each ^ nests the value one level deeper
            negative = self.signs()
            items.append((negative, self.atom()))
        self.depth = saved_depth
        negative, value = items[-1]
        for k in range(len(items) - 2, -1, -1):
            if negative:
                value = self.negate(value, carets[k])
            negative, base = items[k]
            value = self.raise_to(base, value, carets[k])
        return value  # the first item's sign belongs to unary()

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
            return self.call(tok.pos, _FUNCTIONS[tok.value], arg)
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

    # -- bookkeeping -----------------------------------------------------------
    def shape(self, x: Exact) -> tuple[int, int]:
        """(tree size, tree depth) of ``x``, memoised per node."""
        if not isinstance(x, Expr):
            return 1, 0
        hit = self.shapes.get(id(x))
        if hit is None:
            kids = [self.shape(k) for k in _children(x)]
            hit = self.shapes[id(x)] = (1 + sum(k[0] for k in kids), 1 + max(k[1] for k in kids), x)
        return hit[0], hit[1]

    def float_of(self, x: Exact) -> float | None:
        """``float(x)`` memoised per node; None if not a finite real."""
        if not isinstance(x, Expr):
            return _node_float(x, [])
        hit = self.floats.get(id(x))
        if hit is None:
            hit = self.floats[id(x)] = (_node_float(x, [self.float_of(k) for k in _children(x)]), x)
        return hit[0]

    def spend(self, roots: int, pos: int) -> None:
        self.root_budget -= roots
        if self.root_budget < 0:
            raise ParseError("expression too costly to evaluate", pos)

    # -- building values -------------------------------------------------------
    def call(self, pos: int, fn: Callable[..., Exact], *args) -> Exact:
        """``fn(*args)`` with exact.py's errors turned into positioned ParseErrors.

        exact.py walks (and hashes) its arguments' trees, so the sizes of the
        arguments are charged to a work budget; results deeper than
        MAX_TREE_DEPTH are refused so printing them cannot hit the recursion limit.
        """
        self.work_budget -= sum(self.shape(a)[0] for a in args)
        if self.work_budget < 0:
            raise ParseError("expression too costly to evaluate", pos)
        try:
            result = fn(*args)
        except ZeroDivisionError:
            raise ParseError("division by zero", pos) from None
        except OverflowError:
            raise ParseError("number too large", pos) from None
        except ValueError as exc:  # e.g. "root of a negative number"
            raise ParseError(str(exc) or "invalid value", pos) from None
        self.check_size(result, pos)
        if self.shape(result)[1] > MAX_TREE_DEPTH:
            raise ParseError("too deeply nested", pos)
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

    def sum(self, terms: list[Exact], pos: int) -> Exact:
        return self.call(pos, add, *terms)

    def product(self, factors: list[Exact], pos: int) -> Exact:
        """``mul(*factors)``, guarded.

        Exponentials are merged here with one ``add`` (exact.mul adds their
        arguments one at a time, quadratic in their number).
        """
        flat: list[Exact] = []
        exps: list[Func] = []
        for f in factors:
            if isinstance(f, Mul):
                flat.append(f.coeff)
            for g in f.factors if isinstance(f, Mul) else (f,):
                if isinstance(g, Func) and g.name == "exp":
                    exps.append(g)
                else:
                    flat.append(g)
        if len(exps) == 1:
            flat.append(exps[0])
        elif exps:
            flat.append(self.call(pos, exp, self.sum([g.arg for g in exps], pos)))
        merged: dict[Fraction, Fraction] = {}
        for g in flat:
            if isinstance(g, Pow) and isinstance(g.base, Fraction):
                merged[g.base] = merged.get(g.base, 0) + g.exponent
        if any(e.denominator > MAX_POWER for e in merged.values()):
            raise ParseError("exponent too large", pos)
        if sum(_weight(f) for f in flat) > 2 * MAX_BITS:
            raise ParseError("number too large", pos)
        self.spend(sum(_root_cost(f) for f in flat), pos)
        return self.call(pos, mul, *flat)

    def negate(self, x: Exact, pos: int) -> Exact:
        if isinstance(x, Fraction):
            return -x
        if isinstance(x, Add):  # keep sums as sums: -(1 - e) is -1 + e, not -1*(1 - e)
            terms = [self.product([Fraction(-1), t], pos) for t in x.terms]
            return self.sum([-x.const, *terms], pos)
        return self.product([Fraction(-1), x], pos)

    def raise_to(self, base: Exact, exponent: Exact, pos: int) -> Exact:
        """``base ^ exponent``; ``pos`` is where the operator (or sqrt, /) is."""
        if isinstance(base, Func) and base.name == "exp":
            return self.call(pos, exp, self.product([exponent, base.arg], pos))
        if not isinstance(exponent, Fraction):
            raise ParseError("non-rational exponent", pos)
        factors = base.factors if isinstance(base, Mul) else (base,)
        # power() multiplies the exponents of the Pow factors by this one
        inner = [g.exponent * exponent for g in factors if isinstance(g, Pow)]
        for e in [exponent, *inner]:
            if abs(e.numerator) > MAX_POWER or e.denominator > MAX_POWER:
                raise ParseError("exponent too large", pos)
        if _weight(base) * abs(exponent) > MAX_BITS:
            raise ParseError("number too large", pos)
        cost = 2 * _root_cost(base)
        if exponent.denominator != 1:
            # a Mul's coefficient is rooted in power() and looked at again in its mul()
            cost += self.check_radicand(base, exponent, pos) * (2 if isinstance(base, Mul) else 1)
        self.spend(cost, pos)
        result = self.call(pos, power, base, exponent)
        if exponent.denominator % 2 == 0 and (self.float_of(result) or 0.0) < 0:
            # exact.py writes (x**2)**(1/2) as x; refuse rather than return -|x|
            raise ParseError("root of a negative number", pos)
        return result

    def check_radicand(self, base: Exact, exponent: Fraction, pos: int) -> int:
        """Refuse roots exact.py cannot do (quickly); return their trial-division cost."""
        rational = base.coeff if isinstance(base, Mul) else base
        if not isinstance(rational, Fraction):
            rational = None
        if (self.float_of(base) or 0.0) < 0 or (isinstance(base, Fraction) and base < 0):
            raise ParseError("root of a negative number", pos)
        if rational is None:
            return 0
        if abs(rational.numerator * rational.denominator) > MAX_RADICAND:
            raise ParseError("number under a root too large", pos)
        return _radicand_cost(rational) if exponent.denominator == 2 else 1


_FUNCTIONS: dict[str, Callable[[Exact], Exact]] = {"exp": exp, "sin": sin, "cos": cos, "tanh": tanh}


def parse_exact(text: str, budget: Budget | None = None) -> Exact:
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
    ``exponent too large``, ``number too large``, ``expression too costly to
    evaluate``.  Raises :class:`TypeError` if ``text`` is not a ``str``.

    With a shared :class:`Budget`, the work of this call is also taken from
    it; once it is spent, ``too costly to read`` (this entry and every later one).
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_exact needs a str, not {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise ParseError(f"input too long ({len(text)} characters, at most {MAX_TEXT_CHARS})")
    if budget is not None and budget.spent:
        raise ParseError("too costly to read: the work budget of the file is spent")
    tokens = _tokenize(text)
    if [t.kind for t in tokens] == ["-", "inf", "end"]:
        return NEG_INF
    parser = _Parser(tokens, budget)
    roots, nodes = parser.root_budget, parser.work_budget
    try:
        return parser.entry()
    except ParseError as exc:
        if (budget is not None and exc.reason == "expression too costly to evaluate"
                and (roots < _ROOT_BUDGET or nodes < _WORK_BUDGET)):
            # the file's budget, not this entry's own, ran out
            budget.roots = budget.nodes = -1
            raise ParseError("too costly to read: the work budget of the file is spent") from None
        raise
    except RecursionError:  # pragma: no cover - the depth limits prevent this
        raise ParseError("too deeply nested") from None
    finally:
        if budget is not None and not budget.spent:
            budget.roots -= roots - max(parser.root_budget, 0)
            budget.nodes -= nodes - max(parser.work_budget, 0)
