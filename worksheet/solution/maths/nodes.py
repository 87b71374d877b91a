"""The nodes of a formula or worked line.

A formula is a :class:`Row` of atoms, as it is read left to right:
symbols (:class:`Ident`), numbers (:class:`Num`, or an exact value as
:class:`Value`), operators and relations (:class:`Op`, :class:`Rel`),
named operators (:class:`Named`: ``softmax``, ``max``, ``tanh``), big
operators (:class:`BigOp`: ``∑``), and the structures that hold rows:
:class:`Script` (sub- and superscripts, primes), :class:`Frac`,
:class:`Sqrt`, :class:`Fence` (``\\left( ... \\right)``), :class:`Accent`,
:class:`Table` (a bracketed matrix or cases).  :class:`Text` holds words,
a user's label among them: the one leaf each printer escapes.

:class:`Prose` is words with inline formulas (an intro, a note, a step's
title): :class:`Text` words, :class:`Code` words of code, and formulas.

Nodes are frozen and hashable, so a printer may cache by node, and equal
formulas are equal trees.  Symbols are Unicode (``α``, ``Θ``, ``⋯``), so
MathML and plain text need no table; the LaTeX printer maps them back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ...policy.errors import WorksheetError

__all__ = [
    "MathsError",
    "Node",
    "Row",
    "Ident",
    "Num",
    "Value",
    "Op",
    "Rel",
    "Named",
    "BigOp",
    "Script",
    "Prime",
    "Frac",
    "Sqrt",
    "Fence",
    "Middle",
    "Accent",
    "Space",
    "Text",
    "Code",
    "Table",
    "Prose",
    "CODE_OPEN",
    "CODE_CLOSE",
    "row",
    "substitute",
    "walk",
    "Maths",
]


class MathsError(WorksheetError, ValueError):
    """A formula that cannot be read (a command we do not print, an unclosed group)."""


class Node:
    """Base of every node.  ``str(node)`` is its LaTeX (the text the model's
    formulas have always had, e.g. the JSON's ``"formula"``), as sympy's
    ``str`` of an expression is its printer's: :mod:`.latex` installs it,
    so that this module imports no printer."""

    __slots__ = ()

    # __str__ (the LaTeX printer) is set by .latex, which imports this module


@dataclass(frozen=True, slots=True)
class Row(Node):
    """Atoms side by side (a formula, a script, a numerator).  ``latex``: its LaTeX,
    kept on the row once printed (a line is printed for md, tex and JSON alike),
    as :mod:`worksheet.exact.printing` keeps a value's text on the value.
    ``head``: a row whose atoms begin this one's (:func:`~.build.line` sets it when
    its first part is a row): a shared head, such as the symbols of a worked line
    before its numbers, is printed once and its LaTeX begins every line it heads."""

    items: tuple[Node, ...] = ()
    latex: str | None = field(default=None, compare=False, repr=False)
    head: "Row | None" = field(default=None, compare=False, repr=False)

    def __bool__(self) -> bool:  # an empty formula is no formula (``{% if s.formula %}``)
        return bool(self.items)


@dataclass(frozen=True, slots=True)
class Ident(Node):
    """A symbol: a letter (``S``), a Greek letter (``α``), a word set upright
    (``head``, ``PE``: ``upright``), or a symbol such as ``∞``, ``⊤``, ``⋯``."""

    name: str
    upright: bool = False


@dataclass(frozen=True, slots=True)
class Num(Node):
    """Digits as printed: ``12``, ``0.25`` (a sign is an :class:`Op` before it)."""

    text: str


@dataclass(frozen=True, slots=True)
class Value(Node):
    """An exact value of :mod:`worksheet.exact`, printed by each format's
    exact-value printer."""

    value: object


@dataclass(frozen=True, slots=True)
class Op(Node):
    """A binary operator or punctuation: ``+``, ``−`` (U+2212), ``⋅``, ``×``,
    ``⊙``, ``/``, ``,``, ``;``, ``:``, ``!``, and the plain brackets
    ``( ) [ ] { } | ‖`` that are not a :class:`Fence`."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Rel(Node):
    """A relation: ``=``, ``≈``, ``≤``, ``≥``, ``<``, ``>``, ``≠``, ``→``, ``∈``, ..."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Named(Node):
    """A named operator, set upright and spaced like TeX's ``\\mathop``:
    ``softmax``, ``max``, ``exp``, ``tanh``."""

    name: str


@dataclass(frozen=True, slots=True)
class BigOp(Node):
    """A big operator: ``∑``, ``∏`` (its limits are a :class:`Script`)."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Prime(Node):
    """The primes of ``S'`` (``count`` of them), a superscript of a :class:`Script`."""

    count: int = 1


@dataclass(frozen=True, slots=True)
class Script(Node):
    """``base`` with a subscript and/or a superscript (a :class:`Prime` for ``S'``)."""

    base: Node
    sub: Node | None = None
    sup: Node | None = None
    latex: str | None = field(default=None, compare=False, repr=False)  # kept once printed, as a Row's
    mathml: str | None = field(default=None, compare=False, repr=False)  # and its MathML (outside a script)


@dataclass(frozen=True, slots=True)
class Frac(Node):
    num: Node
    den: Node


@dataclass(frozen=True, slots=True)
class Sqrt(Node):
    body: Node


@dataclass(frozen=True, slots=True)
class Fence(Node):
    """Brackets sized to their content (``\\left( ... \\right)``); ``""`` is no bracket."""

    open: str
    body: Node
    close: str


@dataclass(frozen=True, slots=True)
class Middle(Node):
    """A bar between the two sides of a :class:`Fence` (``\\middle|``)."""

    symbol: str = "|"


@dataclass(frozen=True, slots=True)
class Accent(Node):
    """``body`` under an accent: ``^`` (hat), ``¯`` (bar), ``~`` (tilde), ``→`` (vec), ``˙`` (dot)."""

    body: Node
    accent: str


@dataclass(frozen=True, slots=True)
class Space(Node):
    """A space in ems: thin (1/6), medium (2/9), thick (5/18), a word space
    (1/4), a quad (1), or a negative thin one (-1/6)."""

    em: str


@dataclass(frozen=True, slots=True)
class Text(Node):
    """Words inside a formula, shown as their own characters in every format
    (a label a user typed among them): never markup."""

    text: str


@dataclass(frozen=True, slots=True)
class Code(Node):
    """A word of code in prose (a mistake code such as ``no-scaling``): typewriter
    in tex, ``<code>`` in HTML and Moodle, backticks in Markdown.  Only a kind
    makes one (:func:`worksheet.solution.problem.code`); user text never does."""

    text: str


@dataclass(frozen=True, slots=True)
class Table(Node):
    """A bracketed matrix (``kind="bmatrix"``) or the cases of a definition
    (``kind="cases"``): rows of cells."""

    rows: tuple[tuple[Node, ...], ...]
    kind: str = "bmatrix"


# a word of code in the text form of prose: between two private-use characters, which no
# user text may hold (worksheet.policy.safetext refuses characters that are not printable)
CODE_OPEN, CODE_CLOSE = "\ue100", "\ue101"


class Prose(str, Node):
    """Words with inline formulas and words of code (an intro, a note, a step's
    title, a convention): ``parts`` is a tuple of :class:`Text` (words),
    :class:`Code` (a word of code) and formulas (any other node, usually a
    :class:`Row`).  Each renderer prints the parts (words escaped as text, a
    formula by its maths printer); nothing on the render path reads text again.

    A Prose *is* its text form, the string the model has always held: words,
    each formula between ``$``, code between :data:`CODE_OPEN` and
    :data:`CODE_CLOSE` (so the JSON, Markdown and LaTeX keep their bytes, and
    ``str(prose)``, ``==`` with a string, ``in`` and a template's string
    methods go on working).  Immutable and hashable as that string; its parts
    are read-only.  Make one with :func:`.build.prose` (from pieces) or
    :func:`.reading.read_prose` (from text with ``$...$``)."""

    parts: tuple[Node, ...]

    def __new__(cls, parts: tuple[Node, ...] = ()):
        parts = tuple(parts)
        self = str.__new__(cls, "".join(_source(p) for p in parts))
        object.__setattr__(self, "parts", parts)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("Prose is immutable")

    def __repr__(self) -> str:
        return f"Prose({self.parts!r})"

    def __str__(self) -> str:
        return str.__str__(self)

    def __reduce__(self):
        return (Prose, (self.parts,))


def _source(part: Node) -> str:
    """A part of prose in its text form (see :class:`Prose`)."""
    kind = type(part)
    if kind is Text:
        return part.text
    if kind is Code:
        return CODE_OPEN + part.text + CODE_CLOSE
    return "$" + str(part) + "$"


Maths = Node | str  # a formula in the model: a tree, or (the kinds not yet moved to trees) LaTeX


def row(*items: Node) -> Row:
    """A :class:`Row` of the items, each :class:`Row` among them spliced in."""
    out: list[Node] = []
    for it in items:
        out.extend(it.items if type(it) is Row else (it,))
    return Row(tuple(out))


_CHILDREN = {
    Row: ("items",),
    Script: ("base", "sub", "sup"),
    Frac: ("num", "den"),
    Sqrt: ("body",),
    Fence: ("body",),
    Accent: ("body",),
}


def walk(node: Node):
    """Every node of the tree, parents before their children."""
    yield node
    if type(node) is Prose:
        for c in node.parts:
            yield from walk(c)
        return
    if type(node) is Table:
        for cells in node.rows:
            for c in cells:
                yield from walk(c)
        return
    for name in _CHILDREN.get(type(node), ()):
        child = getattr(node, name)
        if name == "items":
            for c in child:
                yield from walk(c)
        elif child is not None:
            yield from walk(child)


def substitute(node: Node, change: Callable[[Node], Node | None]) -> Node:
    """The tree with each node for which ``change`` gives a node replaced by
    it (its children are not visited): renaming a symbol is
    ``substitute(tree, lambda n: new if n == old else None)``."""
    new = change(node)
    if new is not None:
        return new
    kind = type(node)
    if kind is Row:
        return Row(tuple(substitute(c, change) for c in node.items))
    if kind is Table:
        return Table(tuple(tuple(substitute(c, change) for c in cells) for cells in node.rows), node.kind)
    if kind is Prose:  # its formulas; words and code are never renamed
        return Prose(p if type(p) in (Text, Code) else substitute(p, change) for p in node.parts)
    names = _CHILDREN.get(kind)
    if not names:
        return node
    return replace(
        node, **{n: None if getattr(node, n) is None else substitute(getattr(node, n), change) for n in names}
    )
