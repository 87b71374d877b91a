r"""A block's names for its parts' symbols, as substitution on the maths tree.

A block (encoder, decoder) copies the steps of its parts (multi-head
attention, layer norm, feed-forward) and renames their matrices so that one
symbol means one thing on its page: the feed-forward's ``H`` is the block's
``U``, the second Add & Norm's ``R`` is ``R_2`` and its entries ``r^{[2]}_{ij}``
(docs/reference.md, "Conventions").  A renaming is a list of *rules*; a rule
looks at one node and gives its replacement, or None.  :func:`rename` applies
them in order, each to the whole tree, top down; a rule never sees inside
what it replaced, words (text leaves) are never renamed, and neither is a
one-letter superscript (``W^O`` keeps its O) or what stands under an accent
(``\hat{X}`` is renamed whole, by its own rule).

The rules that blocks need: :func:`symbol` (a matrix), :func:`entry` (its
entries), :func:`add_norm` (Add & Norm k's symbols), :func:`scripted` (a
symbol's scripts rewritten), and :func:`decimals` (a carried chain's
fractions written as the decimals the student carries).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from fractions import Fraction
from typing import Callable, Sequence

from ..exact import is_rational, to_latex
from ..solution.maths import Code, Maths, Node, Prose, as_prose, as_tree, read_latex
from ..solution.maths.build import number
from ..solution.maths.nodes import (
    Accent,
    BigOp,
    Fence,
    Frac,
    Ident,
    Middle,
    Named,
    Num,
    Op,
    Prime,
    Rel,
    Row,
    Script,
    Space,
    Sqrt,
    Table,
    Text,
    Value,
)
from ..solution.number_format import terminating_places

__all__ = [
    "Rule",
    "symbol",
    "entry",
    "add_norm",
    "feed_forward",
    "scripted",
    "rename",
    "renaming",
    "Renaming",
    "rename_prose",
    "decimals",
    "decimals_walk",
    "kept_decimals_walk",
    "one",
]

Rule = Callable[[Node], "Node | None"]


def one(x: Maths) -> Node:
    """The single node of a formula (``"H'"`` is one Script), or its row."""
    t = as_tree(x)
    return t.items[0] if type(t) is Row and len(t.items) == 1 else t


def _base(n: Node) -> Node:
    return n.base if type(n) is Script else n


def symbol(letter: str, new: Maths) -> Rule:
    """A matrix ``letter`` (``X``, ``H'``) renamed ``new`` (``Y_1``, ``U'``), also with
    scripts of its own (``X^\top``); not its entries (:func:`entry`), not ``H`` in ``H'``."""
    old, rep = one(letter), one(new)
    primed = type(old) is Script and type(old.sup) is Prime

    def rule(n: Node) -> Node | None:
        if n == old:
            return rep
        if primed or type(n) is not Script or n.base != old or type(n.sup) is Prime:
            return None
        if type(rep) is Script and rep.sup is None and n.sub is None:  # X^T -> Y_1^T
            return Script(rep.base, rep.sub, n.sup)
        return Script(rep, n.sub, n.sup)

    rule.needs, rule.gives = _idents(old), _idents(rep)
    return rule


def entry(letter: str, new: Maths) -> Rule:
    """The entries of a matrix renamed with it: ``f_{11}`` -> ``o_{11}`` for
    ``entry("f", "o")``; ``h'_{12}`` -> ``u'_{12}``; ``x_{11}`` -> ``y^{[1]}_{11}``.
    A new symbol with a subscript of its own separates the entry's indices:
    ``o_{11}`` -> ``{O_f}_{1,1}`` (``{O_f}_{11}`` would read as O_f11)."""
    old, rep = one(letter), one(new)
    primed = type(old) is Script and type(old.sup) is Prime
    base = old.base if primed else old

    def rule(n: Node) -> Node | None:
        if type(n) is not Script or n.sub is None or n.base != base:
            return None
        if primed != (type(n.sup) is Prime) or (not primed and n.sup is not None):
            return None
        if type(rep) is Script and rep.sub is not None:  # {O_f}_{1,1}
            sub = n.sub
            if type(sub) is Num and len(sub.text) == 2:
                sub = Row((Num(sub.text[0]), Op(","), Num(sub.text[1])))
            return Script(rep, sub)
        if type(rep) is Script:  # y^{[1]}_{11}, u'_{12}
            return Script(rep.base, n.sub, rep.sup)
        return Script(rep, n.sub, n.sup)

    rule.needs, rule.gives = _idents(base), _idents(rep)
    return rule


def scripted(base: Maths, change: Callable[[Node | None, Node | None], "tuple | None"]) -> Rule:
    """A rule for the scripts of ``base``: ``change(sub, sup)`` gives the new
    ``(sub, sup)``, or a whole node in ``("node", n)``, or None to leave it."""
    b = one(base)

    def rule(n: Node) -> Node | None:
        if type(n) is Script and n.base == b:
            out = change(n.sub, n.sup)
        elif n == b:
            out = change(None, None)
        else:
            return None
        if out is None:
            return None
        if out[0] == "node":
            return out[1]
        sub, sup = out
        return b if sub is None and sup is None else Script(b, sub, sup)

    rule.needs = rule.gives = _idents(b)  # (new scripts: numbers and brackets, or b itself)
    return rule


_X_HAT, _MATRIX_HAT, _TWO = Accent(Ident("x"), "^"), Accent(Ident("X"), "^"), Num("2")


def add_norm(k: int, x: tuple[str, str] | None, sublayer: tuple[str, str]) -> tuple[Rule, ...]:
    """The rules that index Add & Norm ``k``'s symbols by ``k`` in a block (docs/reference.md, "Conventions").

    A whole matrix or column carries ``k`` as a subscript, as the block's
    ``\\gamma_k`` and ``\\beta_k`` do: ``R_k``, ``\\mu_k``, ``\\sigma^2_k``,
    ``\\hat{X}_k``, ``Y_k``.  Its entries carry ``k`` in square brackets, as a
    head ``h``'s ``Q_h`` has entries ``q^{(h)}_{ij}``: ``r^{[k]}_{ij}``,
    ``\\mu^{[k]}_i``, ``(\\sigma^{[k]}_i)^2``, ``\\hat{x}^{[k]}_{ij}``,
    ``y^{[k]}_{ij}``, ``\\gamma^{[k]}_j``; so ``\\mu_1`` is Add & Norm 1's column
    of means and ``\\mu^{[1]}_2`` the mean of its token 2, never the other way.
    ``x``: the (matrix, entry letter) the part's ``X`` is in the block (``("Y_1",
    "y^{[1]}")``), None when it is the block's own X; ``sublayer``: the same for
    the part's ``F``, the sublayer output added back (``("O_c", "{O_c}")``).
    Our own output is renamed before ``X``, so that ``X``'s new entries
    ``y^{[k-1]}`` are not renamed again.
    """
    kk, bracket = Num(str(k)), read_latex(f"[{k}]")

    def column(sub, sup):  # mu_i -> mu^{[k]}_i; mu -> mu_k
        if sup is not None:
            return None
        return (sub, bracket) if sub is not None else (kk, None)

    def variance(sub, sup):  # sigma^2_i -> (sigma^{[k]}_i)^2; sigma^2 -> sigma^2_k
        if sup != _TWO:
            return None
        if sub is None:
            return (kk, sup)
        sigma = Script(Ident("σ"), sub, bracket)
        return ("node", Row((Op("("), sigma, Script(Op(")"), None, Num("2")))))

    def entries(sub, sup):  # gamma_j -> gamma^{[k]}_j
        return (sub, bracket) if sub is not None and sup is None else None

    def hat_x(n: Node) -> Node | None:
        if type(n) is Script and n.base == _X_HAT and n.sub is not None and n.sup is None:
            return Script(n.base, n.sub, bracket)
        if n == _MATRIX_HAT:
            return Script(n, kk)
        return None

    hat_x.needs, hat_x.gives = frozenset("xX"), frozenset()

    own = (
        symbol("Y", f"Y_{k}"),
        entry("y", f"y^{{[{k}]}}"),
        symbol("R", f"R_{k}"),
        entry("r", f"r^{{[{k}]}}"),
        scripted(r"\mu", column),
        scripted(r"\sigma", variance),
        hat_x,
        scripted(r"\gamma", entries),
        scripted(r"\beta", entries),
    )
    inputs = (symbol("X", x[0]), entry("x", x[1])) if x is not None else ()
    return own + inputs + (symbol("F", sublayer[0]), entry("f", sublayer[1]))


def feed_forward(k: int) -> tuple[Rule, ...]:
    """The feed-forward part's rules in a block, after Add & Norm ``k``: its input X is
    ``Y_k`` (entries ``y^{[k]}``), its hidden layer ``U'``/``U`` (H is the encoder's
    output in a decoder), its output ``O_f``."""
    return (
        symbol("X", f"Y_{k}"),
        symbol("H'", "U'"),
        symbol("H", "U"),
        symbol("O", "O_f"),
        entry("x", f"y^{{[{k}]}}"),
        entry("h'", "u'"),
        entry("h", "u"),
        entry("o", "{O_f}"),
    )


# -- applying rules ------------------------------------------------------------
_SHARED: dict[Node, Node] = {}  # renamed symbols (nodes hash by value): equal ones are one node
# leaves no rule that looks for symbols by name can match (they hold no symbol either)
_INERT = frozenset((Num, Op, Rel, Space, Text, Prime, BigOp, Middle, Named))


class _Walk:
    """One rule applied top down (:func:`_apply`), remembering what it did to each node it
    met: keyed by the node's id, with the node kept beside its result, so an id is never
    read for another node.  ``inert``: node types the rule never matches and that hold
    nothing it could (returned unwalked); ``needs``: the names of the symbols it looks for
    (a symbol of another name is returned unwalked)."""

    __slots__ = ("rule", "inert", "needs", "seen")
    LIMIT = 1 << 15  # nodes remembered at most (a kept walk meets every problem's lines: bounded)

    def __init__(self, rule: Rule, inert: frozenset = frozenset(), needs: frozenset | None = None):
        self.rule, self.inert, self.needs, self.seen = rule, inert, needs, {}

    def __call__(self, n: Node, atom: bool = True) -> Node:
        kind = type(n)
        if kind in self.inert or (kind is Ident and self.needs is not None and n.name not in self.needs):
            return n
        key = id(n) if atom else -id(n) - 1
        hit = self.seen.get(key)
        if hit is not None and hit[0] is n:
            return hit[1]
        out = self._applied(n, kind, atom)
        if len(self.seen) >= self.LIMIT:
            self.seen.clear()
        self.seen[key] = (n, out)
        return out

    def _applied(self, n: Node, kind: type, atom: bool) -> Node:
        if atom or kind is not Ident:
            new = self.rule(n)
            if new is not None:
                if type(new) is Script:  # one node for each renamed symbol: printed once, on any page
                    new = _SHARED.setdefault(new, new) if len(_SHARED) < 65536 else new
                return new
        if kind is Row:
            items: list[Node] = []
            same = True
            for c in n.items:
                new = self(c)
                if new is not c:
                    same = False
                if type(new) is Row and type(c) is not Row:
                    items.extend(new.items)
                else:
                    items.append(new)
            return n if same else Row(tuple(items))
        if kind is Script:
            base = self(n.base, False)
            sub = None if n.sub is None else self(n.sub)
            sup = None if n.sup is None else self(n.sup, False)
            return n if base is n.base and sub is n.sub and sup is n.sup else Script(base, sub, sup)
        if kind is Frac:
            num, den = self(n.num), self(n.den)
            return n if num is n.num and den is n.den else Frac(num, den)
        if kind is Table:
            rows = tuple(tuple(self(c) for c in cells) for cells in n.rows)
            same = all(a is b for new, old in zip(rows, n.rows) for a, b in zip(new, old))
            return n if same else Table(rows, n.kind)
        if kind is Sqrt or kind is Fence:
            body = self(n.body)
            return n if body is n.body else dataclasses.replace(n, body=body)
        return n  # a leaf; \hat{X} is renamed whole by a rule of its own, never inside


def _apply(n: Node, rule: Rule, atom: bool = True) -> Node:
    """``n`` with ``rule`` applied top down; a Row a rule returns inside a row is spliced in.
    ``atom``: a lone symbol here may be renamed (not a script's base, which the rules see
    with its scripts, nor a one-letter superscript: ``W^O`` keeps its O).  A subtree the
    rule leaves alone comes back as the same node (so the LaTeX a row or a script keeps
    stays with it)."""
    return _Walk(rule)(n, atom)


def _idents(n: Node) -> frozenset:
    """The names of the symbols (:class:`Ident`) anywhere in ``n``, and the marks
    ``#value`` and ``#frac`` where it holds an exact value or a fraction.  A rule's
    ``needs`` are names of this kind: a tree without them is left alone, unwalked;
    its ``gives``, the names its replacements bring.  (One pass over the tree, no
    set per node.)"""
    out: set[str] = set()
    stack = [n]
    while stack:
        x = stack.pop()
        kind = type(x)
        if kind is Ident:
            out.add(x.name)
        elif kind is Row:
            stack.extend(x.items)
        elif kind is Value:
            out.add("#value")
        elif x is None or kind in _INERT:
            continue
        elif kind is Script:
            stack.extend((x.base, x.sub, x.sup))
        elif kind is Table:
            stack.extend(c for cells in x.rows for c in cells)
        else:
            if kind is Frac:
                out.add("#frac")
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if isinstance(getattr(x, f), Node))
    return frozenset(out)


class Renaming:
    """Rules applied in order, each to the whole tree (:func:`rename`), remembering
    across calls what each rule did to a node: a block renames all the lines of a part
    with one Renaming, and those lines share their symbols' nodes."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = tuple(rules)
        self._walks = [
            _Walk(r, _INERT, r.needs) if getattr(r, "needs", None) is not None else _Walk(r) for r in self.rules
        ]

    def __call__(self, x: Maths) -> Node:
        t = as_tree(x)
        present = None  # the names in t (_idents), once a rule asks
        for rule, walk in zip(self.rules, self._walks):
            needs = walk.needs  # the symbols the rule looks for: skip a tree without them
            if needs is not None:
                if present is None:
                    present = _idents(t)
                if present.isdisjoint(needs):
                    continue
            new = walk(t)
            if new is not t:
                gives = getattr(rule, "gives", None)  # what its replacements bring (a superset is safe)
                present = None if present is None or gives is None else present | gives
                t = new
        return t

    def prose(self, text: str | Prose) -> Prose:
        """Prose (a title, a note) with the rules applied to each of its formulas
        (words and code are never renamed); a string is read first."""
        p = as_prose(text)
        if not self.rules or all(type(x) in (Text, Code) for x in p.parts):
            return p
        return Prose(tuple(x if type(x) in (Text, Code) else self._formula(x) for x in p.parts))

    def _formula(self, x: Node) -> Node:
        """A formula of prose renamed, in the printer's own spelling (as every renamed line
        is), not in the spelling it was read from (``b_{1}``, not ``b_1``)."""
        t = self(x)
        return Row(t.items) if type(t) is Row else t


def renaming(rules: Sequence[Rule]) -> Renaming:
    """The :class:`Renaming` of a block's rules, kept while they are the same rules (a
    block's are module constants): what each rule did to a shared node (a symbol, an
    entry, a number) is remembered from one problem to the next.  (Rules in a list:
    a Renaming of their own.)"""
    try:
        return _kept_renaming(rules)
    except TypeError:
        return Renaming(rules)


@lru_cache(maxsize=64)
def _kept_renaming(rules: tuple) -> Renaming:
    return Renaming(rules)


def rename(x: Maths, rules: Sequence[Rule]) -> Node:
    """The formula with every rule applied, in order."""
    return Renaming(rules)(x)


def rename_prose(text: str | Prose, rules: Sequence[Rule]) -> Prose:
    """Prose (a title, a note) with the rules applied to each of its formulas
    (words and code are never renamed); a string is read first."""
    return Renaming(rules).prose(text)


# -- a carried chain's numbers as decimals ---------------------------------------------
@lru_cache(maxsize=16384)
def _decimal(q: Fraction) -> Node | None:
    """A terminating fraction with a denominator above 4 as the decimal the student
    writes (at least 4 places, as the tables print carried values), else None."""
    places = terminating_places(q, 16)
    if q.denominator <= 4 or places is None:
        return None
    return number(_digits(q, max(places, 4)))


def _digits(q: Fraction, places: int) -> str:
    sign = "-" if q < 0 else ""
    q = abs(q)
    digits = str(q.numerator * (10**places // q.denominator)).rjust(places + 1, "0")
    return sign + digits[:-places] + "." + digits[-places:]


def _decimal_rule(n: Node) -> Node | None:
    if type(n) is Frac and type(n.num) is Num and type(n.den) is Num and "." not in n.num.text + n.den.text:
        return _decimal(Fraction(int(n.num.text), int(n.den.text)))
    if type(n) is Value:
        v = n.value
        if is_rational(v):
            return _decimal(Fraction(v))
        return _irrational_decimals(to_latex(v))
    return None


@lru_cache(maxsize=16384)
def _irrational_decimals(latex: str) -> Node | None:
    """An irrational exact value (by its LaTeX) with its fractions as decimals, or None
    when it has none (kept: a chain's values recur on its lines)."""
    if "\\frac" in latex:  # e^{-\frac{1837}{10000}}: the exponent as the student carries it
        return _apply(read_latex(latex), _decimal_rule)
    return None


def decimals(x: Maths, walk: Callable[[Node], Node] | None = None) -> Node:
    """Carried values in a worked line as the decimals the student writes:
    ``\\frac{12889}{10000}`` is ``1.2889`` and ``\\frac{2407}{1000}`` ``2.4070`` (a
    terminating fraction with a denominator above 4; ``\\frac{1}{4}`` and ``\\frac{7}{2}`` stay).
    ``walk``: one :func:`decimals_walk` for the lines of one part (it remembers the nodes
    they share); a line with no exact value and no fraction comes back as the same node."""
    return (walk or decimals_walk())(as_tree(x))


def decimals_walk() -> Callable[[Node], Node]:
    """The walk :func:`decimals` makes (symbols, operators and digits passed by unread)."""
    return _Walk(_decimal_rule, _INERT | {Ident})


@lru_cache(maxsize=1)
def kept_decimals_walk() -> Callable[[Node], Node]:
    """One :func:`decimals_walk` for every block's lines, remembering from one problem
    to the next what it made of a node (its memory bounded, see ``_Walk.LIMIT``)."""
    return decimals_walk()
