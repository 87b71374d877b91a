"""Plain Unicode text of a maths tree, for a terminal: ``α₁₂ = e⁰/(e⁰ + e⁻¹)
≈ 0.7311``, no ``$`` and no backslash.

Scripts are Unicode sub- and superscripts where every character has one
(``s₁₂``, ``e⁻¹``, ``Kᵀ``), else ``_`` and ``^`` before one character
(``W^O``), a subscript word (``d_model``, ``W_hf``) or a bracketed group
(``σ^[1]``), or before parentheses around more (``W_(:,1)``); a fraction
is ``a/b`` with parentheses around a sum; a root is ``√x`` or ``√(...)``; a matrix is ``[a, b; c, d]``.  Text
leaves print as their own characters (a terminal shows no markup).
"""

from __future__ import annotations

import unicodedata

from ...exact import to_latex
from .nodes import (
    Accent,
    BigOp,
    Code,
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
)
from .printer import Printer, is_sign
from .reading import read_latex

__all__ = ["TextPrinter", "to_text"]

_SUB = dict(zip("0123456789+−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUP = dict(zip("0123456789+−=()inTt⊤", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀᵗᵀ"))
_SPACED_OPS = frozenset("+−⋅×⊙÷±∓∘⊗⊕∪∩/")  # a space on each side; , ; : take one after
_ACCENT = {"^": "\u0302", "¯": "\u0304", "~": "\u0303", "→": "\u20d7", "˙": "\u0307", "_": "\u0332"}


class TextPrinter(Printer):
    def __init__(self, in_script: bool = False):
        self.in_script = in_script

    def _join(self, node: Node) -> str:
        items = self.items(node)
        out = ""
        for k, it in enumerate(items):
            kind = type(it)
            piece = self(it)
            if kind is Op and it.symbol in "\u2212+" and is_sign(items, k):
                out += (" " if out and not out.endswith((" ", "(", "[")) else "") + it.symbol
                continue
            if self.in_script:
                out += piece
                continue
            if kind is Op and it.symbol in _SPACED_OPS:
                piece = f" {piece} "
            elif kind is Op and it.symbol in ",;:":
                piece += " "
            elif kind is Rel:
                piece = f" {piece} "
            else:
                prev = items[k - 1] if k else None
                applied = kind is Fence and _named(prev) and not _big(prev)  # tanh(3), as tanh(c₁)
                if prev is not None and _wordy(prev) and _wordy(it) and not applied:
                    piece = " " + piece  # two symbols side by side: Q K, o₁ tanh(c₁)
                nxt = items[k + 1] if k + 1 < len(items) else None
                if _named(it) and nxt is not None and (_big(it) or type(nxt) is not Fence and not _opens(nxt)):
                    piece += " "  # max_j s_j, not max_js_j; ∑ⱼ (x − μ)², not ∑ⱼ(x − μ)²
            out += piece
        return " ".join(out.split(" ")).replace("  ", " ").strip() if type(node) is Row else out

    def _print_Row(self, node: Row) -> str:
        return self._join(node)

    def _print_Ident(self, node: Ident) -> str:
        return node.name

    def _print_Num(self, node: Num) -> str:
        return node.text

    def _print_Value(self, node: Value) -> str:
        """An exact value, as its LaTeX reads (``1/(1 + e⁻²)``, ``√3/2``): our own printer's text, read back."""
        return self(read_latex(to_latex(node.value)))

    def _print_Op(self, node) -> str:
        return node.symbol

    def _print_Rel(self, node) -> str:
        return node.symbol

    def _print_Named(self, node: Named) -> str:
        return node.name

    def _print_BigOp(self, node) -> str:
        return node.symbol

    def _print_Space(self, node: Space) -> str:
        return "  " if node.em in ("1em", "2em") else (" " if not node.em.startswith("-") else "")

    def _print_Text(self, node) -> str:
        return node.text

    def _print_Code(self, node) -> str:
        return node.text

    def _print_Prose(self, node) -> str:
        """Prose as plain text: words and code as their own characters, each formula printed."""
        return "".join(p.text if type(p) in (Text, Code) else to_text(p) for p in node.parts)

    def _print_Prime(self, node: Prime) -> str:
        return "′" * node.count

    def _print_Middle(self, node) -> str:
        return f" {node.symbol} "

    def script(self, node: Node, table: dict) -> str:
        s = _SCRIPT(node)
        if s and all(c in table for c in s):
            return "".join(table[c] for c in s)
        if len(s) == 1 or _one_group(s) or (table is _SUB and s.isalpha()):
            return s  # W^Q, σ^[1], d_model (a subscript word names; it does not multiply)
        return f"({s})"

    def _print_Script(self, node: Script) -> str:
        base = self(node.base)
        if type(node.base) is Script:
            base = f"({base})"
        out = base
        if type(node.sup) is Prime:
            out += self(node.sup)
        if node.sub is not None:
            sub = self.script(node.sub, _SUB)
            out += sub if sub[0] in _SUB.values() else "_" + sub
        if node.sup is not None and type(node.sup) is not Prime:
            sup = self.script(node.sup, _SUP)
            out += sup if sup[0] in _SUP.values() else "^" + sup
        return out

    def _paren(self, node: Node) -> str:
        s = self(node)
        return f"({s})" if _loose(s) else s  # (a + b)/√(c + d), e^(−1/2)/2: no second brackets

    def _print_Frac(self, node) -> str:
        return f"{self._paren(node.num)}/{self._paren(node.den)}"

    def _print_Sqrt(self, node) -> str:
        return "√" + self._paren(node.body)

    def _print_Accent(self, node) -> str:
        return unicodedata.normalize("NFC", self(node.body) + _ACCENT.get(node.accent, ""))

    def _print_Fence(self, node) -> str:
        return f"{node.open}{self(node.body)}{node.close}"

    def _print_Table(self, node) -> str:
        if node.kind == "cases":
            return "{ " + "; ".join(", if ".join(self(c) for c in cells) for cells in node.rows) + " }"
        return "[" + "; ".join(", ".join(self(c) for c in cells) for cells in node.rows) + "]"


_WORDY = (Ident, Num, Value, Named, BigOp, Frac, Sqrt, Accent, Fence)


def _wordy(node: Node) -> bool:
    """Is the atom a symbol, a number or a group (so that two side by side need a space between them)?"""
    if type(node) is Script:
        return _wordy(node.base)
    return type(node) in _WORDY


def _named(node: Node) -> bool:
    return type(node) is Named or type(node) is BigOp or (type(node) is Script and _named(node.base))


_CLOSE = {"(": ")", "[": "]"}


def _one_group(s: str) -> bool:
    """Is ``s`` one bracketed group, ``[1]`` or ``(t−1)`` (a script that needs no parentheses of its own)?"""
    if s[0] not in _CLOSE or s[-1] != _CLOSE[s[0]]:
        return False
    depth = 0
    for k, c in enumerate(s):
        depth += c in "([" and 1 or c in ")]" and -1 or 0
        if depth == 0 and k < len(s) - 1:
            return False
    return depth == 0


def _loose(s: str) -> bool:
    """Does ``s`` have a space or a ``/`` outside its brackets (so that it needs
    brackets as a numerator, a denominator or under a root)?"""
    depth = 0
    for c in s:
        depth += c in "([{" and 1 or c in ")]}" and -1 or 0
        if depth <= 0 and c in " /":
            return True
    return False


def _big(node: Node) -> bool:
    return type(node) is BigOp or (type(node) is Script and _big(node.base))


def _opens(node: Node) -> bool:
    return type(node) is Op and node.symbol in "(["


_PRINTER = TextPrinter()
_SCRIPT = TextPrinter(in_script=True)


def to_text(node: Node) -> str:
    """The plain text of a formula."""
    return _PRINTER(node)
