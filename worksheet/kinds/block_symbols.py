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
from fractions import Fraction
from typing import Callable, Sequence

from ..exact import is_rational, to_latex
from ..solution.maths import Code, Maths, Node, Prose, Text, as_prose, as_tree, read_latex
from ..solution.maths.build import number
from ..solution.maths.nodes import Accent, Fence, Frac, Ident, Num, Op, Prime, Row, Script, Sqrt, Table, Value
from ..solution.number_format import terminating_places

__all__ = [
    "Rule",
    "symbol",
    "entry",
    "add_norm",
    "feed_forward",
    "scripted",
    "rename",
    "rename_prose",
    "decimals",
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

    return rule


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
        if sup != Num("2"):
            return None
        if sub is None:
            return (kk, sup)
        sigma = Script(Ident("σ"), sub, bracket)
        return ("node", Row((Op("("), sigma, Script(Op(")"), None, Num("2")))))

    def entries(sub, sup):  # gamma_j -> gamma^{[k]}_j
        return (sub, bracket) if sub is not None and sup is None else None

    def hat_x(n: Node) -> Node | None:
        if type(n) is Script and n.base == Accent(Ident("x"), "^") and n.sub is not None and n.sup is None:
            return Script(n.base, n.sub, bracket)
        if n == Accent(Ident("X"), "^"):
            return Script(n, kk)
        return None

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
def _apply(n: Node, rule: Rule, atom: bool = True) -> Node:
    """``n`` with ``rule`` applied top down; a Row a rule returns inside a row is spliced in.
    ``atom``: a lone symbol here may be renamed (not a script's base, which the rules see
    with its scripts, nor a one-letter superscript: ``W^O`` keeps its O)."""
    kind = type(n)
    if atom or kind is not Ident:
        new = rule(n)
        if new is not None:
            return new
    if kind is Row:
        items: list[Node] = []
        for c in n.items:
            new = _apply(c, rule)
            if type(new) is Row and type(c) is not Row:
                items.extend(new.items)
            else:
                items.append(new)
        return Row(tuple(items))
    if kind is Script:
        return Script(
            _apply(n.base, rule, atom=False),
            None if n.sub is None else _apply(n.sub, rule),
            None if n.sup is None else _apply(n.sup, rule, atom=False),
        )
    if kind is Frac:
        return Frac(_apply(n.num, rule), _apply(n.den, rule))
    if kind is Table:
        return Table(tuple(tuple(_apply(c, rule) for c in cells) for cells in n.rows), n.kind)
    if kind is Sqrt or kind is Fence:
        return dataclasses.replace(n, body=_apply(n.body, rule))
    return n  # a leaf; \hat{X} is renamed whole by a rule of its own, never inside


def rename(x: Maths, rules: Sequence[Rule]) -> Node:
    """The formula with every rule applied, in order."""
    t = as_tree(x)
    for rule in rules:
        t = _apply(t, rule)
    return t


def rename_prose(text: str | Prose, rules: Sequence[Rule]) -> Prose:
    """Prose (a title, a note) with the rules applied to each of its formulas
    (words and code are never renamed); a string is read first."""
    p = as_prose(text)
    if not rules or not any(type(x) not in (Text, Code) for x in p.parts):
        return p
    return Prose(tuple(x if type(x) in (Text, Code) else rename(x, rules) for x in p.parts))


# -- a carried chain's numbers as decimals ---------------------------------------------
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
        latex = to_latex(v)
        if "\\frac" in latex:  # e^{-\frac{1837}{10000}}: the exponent as the student carries it
            return _apply(read_latex(latex), _decimal_rule)
    return None


def decimals(x: Maths) -> Node:
    """Carried values in a worked line as the decimals the student writes:
    ``\\frac{12889}{10000}`` is ``1.2889`` and ``\\frac{2407}{1000}`` ``2.4070`` (a
    terminating fraction with a denominator above 4; ``\\frac{1}{4}`` and ``\\frac{7}{2}`` stay)."""
    return _apply(as_tree(x), _decimal_rule)
