"""The printers' base: one method ``_print_<Node>`` per node type (sympy's
``Printer``), and the facts about a row that every printer asks: is this
minus a sign, is this atom tall."""

from __future__ import annotations

from ...exact import to_latex
from .reading import read_latex
from .nodes import (
    Accent,
    Ident,
    Num,
    BigOp,
    Fence,
    Frac,
    Middle,
    Named,
    Node,
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

__all__ = ["Printer", "is_sign", "is_tall", "OPENING"]

OPENING = frozenset("([{⟨⌊⌈")  # an Op that opens a bracket
_SIGN_AFTER = frozenset("([{=+−⋅×/,:;⊙") | OPENING


class Printer:
    """Print a tree: ``printer(node)``.  A subclass defines ``_print_Row``,
    ``_print_Ident``, ... for every node type (tests check that it does)."""

    def __call__(self, node: Node) -> str:
        try:
            method = self._methods[type(node)]
        except KeyError:
            method = self._methods[type(node)] = getattr(type(self), "_print_" + type(node).__name__)
        return method(self, node)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._methods = {}  # node type -> its _print_ method, looked up once per printer class

    def items(self, node: Node) -> tuple[Node, ...]:
        """The atoms of a node read as a row."""
        return node.items if type(node) is Row else (node,)


def _skip_spaces(items: tuple[Node, ...], k: int) -> Node | None:
    """The atom before index ``k`` that is not a space, or None."""
    while k > 0:
        k -= 1
        if type(items[k]) is not Space:
            return items[k]
    return None


def is_sign(items: tuple[Node, ...], k: int) -> bool:
    """Is the minus (or plus) at ``items[k]`` a sign, not a binary operator:
    first in its row, or after an opening bracket, a relation, an operator,
    a named operator or words (``= -1``, ``(-2)``, ``tanh -x``, ``with -∞``)?"""
    before = _skip_spaces(items, k)
    if before is None:
        return True
    kind = type(before)
    if kind is Rel or kind is Named or kind is BigOp or kind is Middle or kind is Text:
        return True  # (after words: "with −∞")
    return kind is Op and before.symbol in _SIGN_AFTER


_TALL = (Frac, Sqrt, Table, BigOp)


def is_tall(node: Node) -> bool:
    """Does the node rise above a line of text (a fraction, a root, a script
    with more than a prime, a matrix), anywhere inside it?"""
    kind = type(node)
    if kind in _TALL:
        return True
    if kind is Value:  # an exact value: tall when it prints a fraction, a root or a power
        latex = to_latex(node.value)
        return "\\frac" in latex or "\\sqrt" in latex or "^" in latex
    if kind is Script:
        return node.sub is not None or type(node.sup).__name__ != "Prime" or is_tall(node.base)
    if kind is Row:
        return any(is_tall(c) for c in node.items)
    if kind is Fence or kind is Accent:
        return is_tall(node.body)
    return False


def width(node: Node) -> float:
    """About how wide the formula prints, in characters of text: a fraction as wide
    as its wider part, a script at two thirds of its size, a relation or a binary
    operator with its spaces.  (To choose a smaller print size for a long line.)"""
    return _WIDTH.get(type(node), _other_width)(node)


def _row_width(node: Row) -> float:
    table = _WIDTH
    return sum(table.get(type(c), _other_width)(c) for c in node.items)


def _script_width(node: Script) -> float:
    scripts = [width(x) for x in (node.sub, node.sup) if x is not None]
    return width(node.base) + 0.7 * max(scripts, default=0)


def _table_width(node: Table) -> float:
    return sum(max((width(c) for c in col), default=0) + 1 for col in zip(*node.rows)) + 2


def _op_width(node: Op) -> float:
    return 2.5 if node.symbol in "+−⋅×⊙" else 1


_VALUE_WIDTH: dict[str, float] = {}  # an exact value's LaTeX -> its width (the same numbers recur)


def _value_width(node: Value) -> float:  # as it prints: the tree of its LaTeX
    latex = to_latex(node.value)
    out = _VALUE_WIDTH.get(latex)
    if out is None:
        out = width(read_latex(latex))
        if len(_VALUE_WIDTH) < 65536:
            _VALUE_WIDTH[latex] = out
    return out


def _other_width(node: Node) -> float:
    for attr in ("name", "text", "symbol"):
        if hasattr(node, attr):
            return len(getattr(node, attr))
    return 1


_WIDTH = {
    Row: _row_width,
    Frac: lambda n: max(width(n.num), width(n.den)) + 0.5,
    Script: _script_width,
    Sqrt: lambda n: width(n.body) + 1,
    Fence: lambda n: width(n.body) + 2,
    Accent: lambda n: width(n.body),
    Table: _table_width,
    Rel: lambda n: 2.5,
    Op: _op_width,
    Value: _value_width,
    Ident: lambda n: len(n.name),
    Num: lambda n: len(n.text),
    Text: lambda n: len(n.text),
    Named: lambda n: len(n.name),
    BigOp: lambda n: 1,
    Middle: lambda n: 1,
    Space: lambda n: 1,
    Prime: lambda n: 1,
}
