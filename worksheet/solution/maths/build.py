r"""Constructors for formulas and worked lines, so that a kind writes a tree
as easily as it wrote LaTeX::

    eq(entry("s", 0, 1), dot(q, k), Value(x))       # s_{12} = 1 ⋅ 0 + 2 ⋅ 1 = 2
    line(sym("A"), "=", call("softmax", sym("S", prime=1)))

* :func:`sym` -- a symbol with scripts: ``sym("W", sup="Q")``, ``sym("alpha", sub=(1, 2))``,
  ``sym("S", prime=1)``, ``sym("head", sub=1, upright=True)``;
* :func:`entry` -- entry (i, j) of a matrix, 0-based: ``entry("s", 0, 1)`` is ``s_{12}``
  (``s_{10,2}`` past 9);
* :func:`number` -- a number as printed: a string of digits (``"-0.25"``), an
  exact value (:class:`~.nodes.Value`), an int;
* :func:`line` -- atoms side by side; a string among them is a relation or
  an operator (``"="``, ``"≈"``, ``"+"``, ``"⋅"``);
* :func:`eq`, :func:`approx_eq` -- sides joined by ``=`` / ``≈``;
* :func:`join` -- terms joined by an operator;
* :func:`paren`, :func:`fenced` (brackets sized to their content), :func:`frac`,
  :func:`sqrt`, :func:`power`, :func:`call`, :func:`named` (an operator's name on its
  own: ``max_j``), :func:`hat`, :func:`indexed` (``(x)_{i}``), :func:`pair` (``1,0``),
  :func:`text`, :func:`quad`, :func:`thin`, :func:`thick`;
* :func:`prose` -- words with inline formulas: ``prose("Divide by ", sqrt(sym("d", sub="k")), ".")``.

Words inside a formula are :func:`text` (a :class:`~.nodes.Text` leaf):
a user's label goes in there and nowhere else.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Iterable

from .nodes import (
    Code,
    Prose,
    Table,
    Accent,
    BigOp,
    Fence,
    Frac,
    Ident,
    Named,
    Node,
    Num,
    Op,
    Prime,
    Rel,
    Row,
    Script,
    Space,
    Sqrt,
    Text,
    Value,
    row,
)
from .reading import GREEK_LETTERS, _words

__all__ = [
    "prose",
    "code",
    "sym",
    "entry",
    "indices",
    "number",
    "line",
    "eq",
    "approx_eq",
    "join",
    "paren",
    "frac",
    "sqrt",
    "power",
    "call",
    "text",
    "quad",
    "thin",
    "thick",
    "total",
    "atom",
    "named",
    "hat",
    "fenced",
    "indexed",
    "pair",
    "brackets",
    "norm",
    "row_matrix",
    "word_space",
]

RELATIONS = frozenset("=≈≤≥<>≠→∈")
OPERATORS = frozenset("+−⋅×⊙/,;:|")
_ASCII = {"-": "\u2212", "*": "⋅", "~": "≈", "<=": "≤", ">=": "≥", "->": "→"}


# Nodes are immutable, so the constructors below share the nodes they make from
# plain arguments (names, digits, index strings): a kind builds thousands of lines.
@lru_cache(maxsize=4096)
def _ident(name: str, upright: bool = False) -> Ident:
    return Ident(GREEK_LETTERS.get(name, name), upright)


def atom(x) -> Node:
    """A node from a node, an int, an exact value or a number's digits."""
    if isinstance(x, Node):
        return x
    if isinstance(x, (int, str)):
        return number(x)
    return Value(x)


def _script(x) -> Node | None:
    """A script from a node, an int, a string (``"ij"``, ``":,1"``, ``"(1)"``) or a tuple of them."""
    if x is None or isinstance(x, Node):
        return x
    return _plain_script(x)


@lru_cache(maxsize=8192, typed=True)
def _plain_script(x) -> Node:
    if isinstance(x, int):
        return Num(str(x))
    if isinstance(x, tuple):
        return indices(*x)
    items: list[Node] = []
    for c in str(x):
        if c.isdigit():
            if items and type(items[-1]) is Num:
                items[-1] = Num(items[-1].text + c)
                continue
            items.append(Num(c))
        elif c.isalpha():
            items.append(_ident(c))
        elif c == "-":
            items.append(Op("\u2212"))
        else:
            items.append(Op(c))
    return items[0] if len(items) == 1 else Row(tuple(items))


def indices(*xs) -> Node:
    """Indices side by side (``12``), or with commas when one passes 9 (``10,2``) or is not a number."""
    parts = [_script(x) for x in xs]
    plain = all(type(p) is Num and len(p.text) == 1 for p in parts)
    if plain:
        return Num("".join(p.text for p in parts))
    out: list[Node] = []
    for k, p in enumerate(parts):
        if k:
            out.append(Op(","))
        out.append(p)
    return Row(tuple(out))


def sym(name: str | Node, sub=None, sup=None, *, prime: int = 0, upright: bool = False) -> Node:
    """A symbol with scripts: ``sym("alpha", sub=(1, 2))`` is α₁₂; a Greek name
    is its letter; ``prime``: S′; ``upright``: a word such as head."""
    if type(name) is str and not isinstance(sub, Node) and not isinstance(sup, Node):
        return _plain_sym(name, sub, sup, prime, upright)
    try:
        return _plain_sym(name, sub, sup, prime, upright)  # nodes hash by value: shared too
    except TypeError:  # an unhashable script (a list): made afresh
        return _sym(name, sub, sup, prime, upright)


@lru_cache(maxsize=8192, typed=True)
def _plain_sym(name: str, sub, sup, prime: int, upright: bool) -> Node:
    return _sym(name, sub, sup, prime, upright)


def _sym(name, sub, sup, prime: int, upright: bool) -> Node:
    base = name if isinstance(name, Node) else _ident(name, upright or (len(name) > 1 and name not in GREEK_LETTERS))
    sup_node = Prime(prime) if prime else _script(sup)
    if prime and sup is not None:  # s'^{(1)}: the primed symbol in braces, then its superscript
        base, sup_node = Script(base, None, Prime(prime)), _script(sup)
    sub_node = _script(sub)
    if sub_node is None and sup_node is None:
        return base
    return Script(base, sub_node, sup_node)


def entry(name: str | Node, i: int, j: int | None = None) -> Node:
    """Entry (i, j) of a matrix, 0-based: ``s_{12}``; of a vector (``j`` None): ``s_{1}``.
    (Shared, as :func:`sym`'s nodes are: a symbol's entries recur on every line, and a
    shared node keeps its printed LaTeX and MathML.)"""
    try:
        return _entry(name, i, j)
    except TypeError:  # an unhashable name: made afresh
        return _entry.__wrapped__(name, i, j)


@lru_cache(maxsize=16384, typed=True)
def _entry(name: str | Node, i: int, j: int | None) -> Node:
    base = name if isinstance(name, Node) else sym(name)
    if type(base) is Row and len(base.items) == 1:
        base = base.items[0]
    sub = Num(str(i + 1)) if j is None else indices(i + 1, j + 1)
    if type(base) is Script and base.sub is None:  # h' or W^O: the entry's index joins the symbol's scripts
        return Script(base.base, sub, base.sup)
    return Script(base, sub)


def number(x) -> Node:
    """A number's digits (``"0.25"``, ``"-1"``, an int) as printed, with its sign."""
    return _number(str(x))


@lru_cache(maxsize=8192)
def _number(s: str) -> Node:
    if s.startswith("-"):
        return Row((Op("\u2212"), Num(s[1:])))
    return Num(s)


@lru_cache(maxsize=4096)
def _word(x: str) -> Node:
    """A string in a line: a relation, an operator, or a number's digits."""
    s = _ASCII.get(x, x)
    if s in RELATIONS:
        return Rel(s)
    if s in OPERATORS:
        return Op(s)
    return number(s)


def line(*items) -> Row:
    """Atoms side by side; a string is a relation (``"="``, ``"≈"``), an operator
    (``"+"``, ``"-"``, ``"*"`` for ⋅) or a number's digits.  Rows are spliced in."""
    out: list[Node] = []
    put, add = out.extend, out.append
    for x in items:  # _put, inline: the builders' innermost loop
        kind = type(x)
        n = _word(x) if kind is str else x if isinstance(x, Node) else atom(x)
        if type(n) is Row:
            put(n.items)
        else:
            add(n)
    first = items[0] if items else None
    if type(first) is Row and len(first.items) > 2 and len(out) > len(first.items):
        return Row(tuple(out), head=first)  # its atoms begin this row: printed once (see Row)
    return Row(tuple(out))


def join(terms: Iterable, op: str = "+") -> Row:
    """The terms joined by an operator (as :func:`line` of the terms and operators)."""
    sep = _word(op)
    out: list[Node] = []
    for k, t in enumerate(terms):
        if k:
            out.append(sep)
        _put(out, t)
    return Row(tuple(out))


def _put(out: list[Node], x) -> None:
    """Add ``x`` to a line's atoms: a string as :func:`_word`, a row spliced in."""
    n = _word(x) if type(x) is str else x if isinstance(x, Node) else atom(x)
    if type(n) is Row:
        out.extend(n.items)
    else:
        out.append(n)


def eq(*sides) -> Row:
    """``a = b = c``."""
    return join(sides, "=")


def approx_eq(*sides) -> Row:
    """``a ≈ b ≈ c``."""
    return join(sides, "≈")


def paren(x) -> Row:
    """``(x)``, in parentheses of the text size."""
    return row(Op("("), atom(x), Op(")"))


def frac(num, den) -> Frac:
    return Frac(atom(num), atom(den))


def sqrt(x) -> Sqrt:
    return Sqrt(atom(x))


def power(base, exponent) -> Script:
    """``base^exponent`` (``power("e", x)`` is e^x).  (Shared when its parts hash cheaply, as
    :func:`sym`'s nodes are: ``e^{-1}`` recurs on every softmax line.)"""
    if not _plain(exponent):  # an exact value, or a row that may hold one: made afresh
        return _power(base, exponent)
    try:
        return _shared_power(base, exponent)
    except TypeError:  # an unhashable part: made afresh
        return _power(base, exponent)


_PLAIN_ATOMS = (Ident, Num, Op, Named, Prime)


def _plain(x) -> bool:
    """Is ``x`` cheap to hash and printed as its value says: digits, a name or a rational
    value (an irrational exact value is neither: two equal ones may print differently,
    and hashing one costs what building a line does; a row costs more to check and hash
    than to build)."""
    kind = type(x)
    if kind is Value:
        return type(x.value) in (int, Fraction)
    return kind in (str, int) or kind in _PLAIN_ATOMS


def _power(base, exponent) -> Script:
    b = _ident(base) if isinstance(base, str) and not base.lstrip("-").replace(".", "").isdigit() else atom(base)
    return Script(b, None, atom(exponent) if not isinstance(exponent, str) else _script(exponent))


_shared_power = lru_cache(maxsize=8192, typed=True)(_power)


def call(name: str, *args, sub=None, sized: bool = False) -> Row:
    """A named operator applied: ``softmax(S′)``, ``max_j(...)``; ``tanh``, ``exp``, ... are TeX's own.
    ``sized``: brackets sized to the argument (``tanh\\left(...\\right)``)."""
    op: Node = Named(name)
    if sub is not None:
        op = Script(op, _script(sub))
    arg = join(args, ",") if len(args) != 1 else atom(args[0])
    return row(op, fenced(arg) if sized else paren(arg))


def total(sub=None, sup=None) -> Node:
    """The summation sign, with its limits: ``total("k")`` is ∑ₖ (shared, as :func:`power`'s)."""
    try:
        return _total(sub, sup)
    except TypeError:
        return _total.__wrapped__(sub, sup)


@lru_cache(maxsize=1024, typed=True)
def _total(sub, sup) -> Node:
    op = BigOp("∑")
    return op if sub is None and sup is None else Script(op, _script(sub), _script(sup))


def text(words: str) -> Text:
    """Words in a formula (a label a user typed among them): always text."""
    return Text(str(words))


def quad() -> Space:
    return Space("1em")


def thin() -> Space:
    """TeX's thin space ``\\,`` (between the factors of a product written with letters)."""
    return Space("0.1667em")


def thick() -> Space:
    """TeX's thick space ``\\;``."""
    return Space("0.2778em")


def named(name: str, sub=None) -> Node:
    """A named operator on its own, ``max_j`` in ``max_j s_j`` (:func:`call` adds an argument;
    shared, as :func:`power`'s)."""
    try:
        return _named(name, sub)
    except TypeError:
        return _named.__wrapped__(name, sub)


@lru_cache(maxsize=1024, typed=True)
def _named(name: str, sub) -> Node:
    op: Node = Named(name)
    return op if sub is None else Script(op, _script(sub))


def hat(x) -> Accent:
    """``x`` under a hat: ŷ."""
    return Accent(atom(x), "^")


def fenced(x) -> Fence:
    """``x`` in parentheses sized to it (``\\left( ... \\right)``)."""
    return Fence("(", atom(x), ")")


def indexed(x, i) -> Row:
    """``(x)_{i}``: entry ``i`` of a bracketed expression, the index on its closing bracket, as TeX sets it."""
    return row(Op("("), atom(x), Script(Op(")"), _script(i)))


def pair(a, b) -> Row:
    """The index ``a,b``, always with its comma (``θ_{1,0}``, never ``θ_{10}``)."""
    return line(a, ",", b)


def brackets(*items) -> Row:
    """``[s, h_j]``: items side by side in text-size square brackets (a row vector written out)."""
    return row(Op("["), join(items, ","), Op("]"))


def norm(x) -> Row:
    """``‖x‖``, the length of a vector."""
    return row(Op("‖"), atom(x), Op("‖"))


def row_matrix(cells) -> Table:
    """A one-row bracketed matrix of nodes or exact values."""
    return Table((tuple(atom(c) for c in cells),))


def word_space() -> Space:
    """TeX's ``\\ ``: a word's space between two pieces of a formula (``(1) Q``)."""
    return Space("0.25em")


def prose(*pieces) -> Prose:
    """Prose from pieces: a string is words (a word of code marked in it by
    :func:`worksheet.solution.problem.code` is :class:`~.nodes.Code`; a ``$`` is a
    dollar, never maths), a :class:`~.nodes.Prose` is spliced in, a
    :class:`~.nodes.Text` or :class:`~.nodes.Code` is a part, and any other node is
    an inline formula: ``prose("Divide by ", sqrt(sym("d", sub="k")), " and round.")``."""
    parts: list[Node] = []
    for x in pieces:
        if isinstance(x, Prose):
            parts.extend(x.parts)
        elif isinstance(x, str):
            _words(x, parts)
        elif isinstance(x, Node):
            parts.append(x)
        else:
            raise TypeError(f"a piece of prose is words (str) or a formula (a node), not {type(x).__name__}")
    return Prose(tuple(parts))


def code(word: str) -> Code:
    """A word of code in prose (a mistake code such as ``no-scaling``)."""
    return Code(word)
