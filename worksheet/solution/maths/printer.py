"""The printers' base: one method ``_print_<Node>`` per node type (sympy's
``Printer``), and the facts about a row that every printer asks: is this
minus a sign, is this atom tall."""

from __future__ import annotations

from ...exact import to_latex
from .nodes import Accent, BigOp, Fence, Frac, Middle, Named, Node, Op, Rel, Row, Script, Space, Sqrt, Table, Value

__all__ = ["Printer", "is_sign", "is_tall", "OPENING"]

OPENING = frozenset("([{⟨⌊⌈")  # an Op that opens a bracket
_SIGN_AFTER = frozenset("([{=+−⋅×/,:;⊙") | OPENING


class Printer:
    """Print a tree: ``printer(node)``.  A subclass defines ``_print_Row``,
    ``_print_Ident``, ... for every node type (tests check that it does)."""

    def __call__(self, node: Node) -> str:
        return getattr(self, "_print_" + type(node).__name__)(node)

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
    first in its row, or after an opening bracket, a relation, an operator
    or a named operator (``= -1``, ``(-2)``, ``tanh -x``)?"""
    before = _skip_spaces(items, k)
    if before is None:
        return True
    kind = type(before)
    if kind is Rel or kind is Named or kind is BigOp or kind is Middle:
        return True
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
