r"""The parser of exact values as written in answer files: :func:`parse_exact`
and the shared work :class:`Budget` (limits: :mod:`worksheet.parse`).

Exact values (:func:`parse_exact`); whitespace is allowed between any tokens::

    entry    := ('-' | '−') infinity          (only as the whole entry: -oo)
              | expr
    expr     := term (('+' | '-') term)*
    term     := unary (('*' | '/' | '\cdot' | '\times' | '·' | '×' | '⋅') unary | implied)*
    implied  := unary                         (right after a number: 2e^-1, 2 sqrt(3), 2√3, 2(1+e))
    unary    := ('+' | '-')* power            (so -e^2 is -(e^2))
    power    := atom (('^' | '**') ('+' | '-')* atom | superscript)*   (right-associative)
    superscript := ('⁺' | '⁻' | '⁰' ... '⁹')+  (e⁻² is e^(-2), as the text sheets print it)
    atom     := decimal                       (unsigned, see worksheet.parse.numbers;
                                               2e-3 is a number)
              | 'e' | 'E'                     (Euler's number, exp(1))
              | func group                    (exp(x), sqrt{x}, \sin(x), σ(x), ...)
              | '√' atom                      (√3, √(1+e), 1/√3)
              | '\frac' group group           (\frac{a}{b} is a/b)
              | group
    func     := ['\'] ('exp' | 'sqrt' | 'sin' | 'cos' | 'tanh' | 'sigma') | 'sigmoid' | 'σ'
                                              (sigma(x) is the logistic 1/(1 + e^-x))
    group    := '(' expr ')' | '{' expr '}'   ('\left(' and '\right)' also work)
    infinity := 'oo' | 'inf' | 'infinity' | '∞' | '\infty'   (any case)

``−`` (U+2212) is read as ``-``.  An ``e`` directly after the digits of a
number and followed by a digit (or a sign and a digit) is a decimal exponent
(``2e-3`` is 0.002); otherwise ``e`` is Euler's number (``e^-3``, ``2*e^-3``).
A number directly followed by ``e``, a function, ``√`` or ``(`` is multiplied by
it (``2e^-1``, ``2 e^{-1}``, ``2sqrt(2)``, ``2(3)``), as the sheets print it;
two numbers side by side (``2 3``) are an error.

Powers: ``e^x`` and ``exp(a)^x`` are ``exp(a*x)`` for any exact ``x``; any
other base needs a rational exponent whose numerator and denominator are at
most 1000 in magnitude.  Roots of negative numbers are errors.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, NoReturn

from ..exact import (
    NEG_INF,
    Add,
    Exact,
    Expr,
    Func,
    Mul,
    Pow,
    add,
    cos,
    exp,
    mul,
    power,
    sin,
    tanh,
)
from .guards import _bits, _children, _node_float, _radicand_cost, _root_cost, _weight
from .numbers import (
    MAX_BITS,
    MAX_DEPTH,
    MAX_POWER,
    MAX_RADICAND,
    MAX_TEXT_CHARS,
    MAX_TREE_DEPTH,
    ParseError,
)
from .tokens import _CLOSER, _OPERAND_START, _show, _Token, _tokenize

_IMPLIED = frozenset({"e", "func", "("})  # what may follow a number with no '*' (2e^-1, 2√3, 2(1+e))

_ROOT_BUDGET = 100_000  # trial divisions exact.py may spend on square roots (~40 ms)
_WORK_BUDGET = 12_000  # tree nodes exact.py's constructors may walk (~30 ms)


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
            if tok.kind in _IMPLIED and self.tokens[self.i - 1].kind == "num":
                factors.append(self.unary())  # 2e^-1, 2 sqrt(3), 2(1+e): a number times what follows
                continue
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
            arg = self.root_of(tok) if tok.text == "\u221a" else self.group()  # √3 as well as sqrt(3)
            if tok.value == "sqrt":
                return self.raise_to(arg, Fraction(1, 2), tok.pos)
            if tok.value == "sigma":  # the logistic sigma(x) = 1/(1 + e^-x)
                denominator = self.sum([Fraction(1), self.call(tok.pos, exp, self.negate(arg, tok.pos))], tok.pos)
                return self.raise_to(denominator, Fraction(-1), tok.pos)
            return self.call(tok.pos, _FUNCTIONS[tok.value], arg)
        if tok.kind == "frac":
            top = self.group()
            bar = self.peek.pos
            return self.product([top, self.raise_to(self.group(), Fraction(-1), bar)], tok.pos)
        self.unexpected(tok)

    def root_of(self, tok: _Token) -> Exact:
        """The argument of ``√``: the atom after it (``√3``, ``√(1+e)``), one level deeper."""
        self.enter(tok.pos)
        arg = self.atom()
        self.depth -= 1
        return arg

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
    """Parse an exact value as written in an answer file (grammar: the module docstring).

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
        if (
            budget is not None
            and exc.reason == "expression too costly to evaluate"
            and (roots < _ROOT_BUDGET or nodes < _WORK_BUDGET)
        ):
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
