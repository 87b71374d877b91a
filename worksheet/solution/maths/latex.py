r"""LaTeX of a maths tree: the sheets, keys and PDF, and the JSON's
``formula``.  Symbols are written with their commands (``\alpha``,
``\cdot``), scripts in braces, a text leaf as ``\text{...}`` with every
character that LaTeX would read as markup escaped
(:func:`worksheet.solution.number_format.text_escape`).  Reading what it
prints gives the same tree (:func:`worksheet.solution.maths.reading.read_latex`).
"""

from __future__ import annotations


from ...exact import to_latex
from ..number_format import text_escape
from .nodes import BigOp, Code, Fence, Frac, Ident, Named, Node, Num, Op, Prime, Rel, Row, Script, Space, Text, Value
from .printer import Printer, is_sign
from .reading import ACCENTS, GREEK_LETTERS, OPERATORS, RELATIONS, SPACES, SYMBOLS

__all__ = ["LatexPrinter", "to_latex_text"]


def _reverse(table: dict) -> dict:
    out: dict = {}
    for command, symbol in table.items():
        out.setdefault(symbol, command)
    return out


_COMMAND = {
    **_reverse(GREEK_LETTERS),
    **_reverse(SYMBOLS),
    **{s: c for s, c in _reverse(OPERATORS).items() if c.isalpha()},
    **_reverse(RELATIONS),
}
_COMMAND.update({"…": "dots", "|": "vert", "‖": "Vert", "⋅": "cdot", "→": "to", "≤": "le", "≥": "ge", "≠": "ne"})
_PLAIN = {"\u2212": "-", "<": "<", ">": ">", "{": "\\{", "}": "\\}", "=": "=", "(": "(", ")": ")"}
_SPACE = {em: c for c, em in SPACES.items()}
_ACCENT = {a: c for c, a in ACCENTS.items() if c not in ("overline",)}
_NAMED = frozenset("exp log ln sin cos tan tanh max min arg det lim sup inf".split())


def _symbol(s: str) -> str:
    if s in _PLAIN:
        return _PLAIN[s]
    c = _COMMAND.get(s)
    return f"\\{c}" if c else s


_PM = "\u2212+"
_BINARY = "\u2212+⋅×"
_TIMES = "⋅×"
_IDENTS: dict = {}  # a symbol -> its LaTeX (an Ident hashes by its name)
_LEAF = {s: _symbol(s) for s in "+\u2212⋅×⊙/,;:|()[]{}=≈≤≥<>≠→∈‖!"}  # operators and relations, printed once


class LatexPrinter(Printer):
    """LaTeX as the kinds write it: one space between atoms, none inside
    brackets, after a sign, before a comma, inside a script, or between an
    operator's name and its parenthesis."""

    def __init__(self, in_script: bool = False):
        self.in_script = in_script

    def _print_Row(self, node: Row) -> str:  # noqa: C901 - the hot loop: spacing decided inline, not called
        # the hot loop of every page: leaves and kept scripts are looked up here, not
        # dispatched, and the common spacing (two atoms, neither an operator) is decided inline
        items = node.items
        methods, in_script = self._methods, self.in_script
        head = node.head
        if head is None or in_script:
            out, start, before = [], 0, None
        else:  # its first atoms are its head's: printed once, kept on the head (no atom looks ahead)
            if head.latex is None:
                object.__setattr__(head, "latex", self._print_Row(head))
            out, start = [head.latex], len(head.items)
            before = items[start - 1]
        for k in range(start, len(items)):
            it = items[k]
            kind = type(it)
            if kind is Num:
                s = it.text
            elif kind is Op or kind is Rel:
                s = _LEAF.get(it.symbol) or _symbol(it.symbol)
            elif kind is Script and it.latex is not None and not in_script:
                s = it.latex
            elif kind is Ident:
                s = _IDENTS.get(it) or self._print_Ident(it)
            elif kind is Value:
                s = to_latex(it.value)
            elif kind is Row:
                s = "{" + self._print_Row(it) + "}"
            else:
                s = (methods.get(kind) or getattr(type(self), "_print_" + kind.__name__))(self, it)
            if k:
                kb = type(before)
                if in_script:  # s_{1,2}: a space only around a binary plus or minus
                    if ((kind is Op and it.symbol in _PM) or (kb is Op and before.symbol in _PM)) and (
                        _binary(items, k) or _binary(items, k - 1)
                    ):
                        out.append(" ")
                elif kb is not Op:  # (_space_before, decided here: this loop prints every line)
                    if kind is not Op and kind is not Fence and kind is not Script:
                        out.append(" ")  # two atoms: x y, = 2, 2 \cdot (the common case)
                    elif kind is Op and it.symbol in _BINARY:
                        out.append(" ")  # x \cdot, 2 +, = -1
                    elif _after_atom(it, kind, before, kb):
                        out.append(" ")
                elif before.symbol in _OPENING:
                    pass  # (x
                elif before.symbol in _TIMES and kind is not Op and kind is not Script:
                    out.append(" ")  # \cdot 2, \times (x)
                elif before.symbol in _PM and is_sign(items, k - 1):
                    pass  # -1
                elif (kind is not Op and kind is not Script) or not _closes(it, kind):
                    out.append(" ")  # + 2, ) =
            out.append(s)
            before = it
        return "".join(out)

    def group(self, node: Node, bare_digit: bool = False) -> str:
        """A script's argument: a single letter bare (``d_k``), a digit bare in a
        power (``x^2``), else in braces (``x_{1}``, ``s_{12}``)."""
        s = _SCRIPT(node)
        bare = len(s) == 1 and (s.isalpha() or (bare_digit and s.isdigit()))
        return s if bare or s in ("\\top", "\\prime") else "{" + s + "}"

    def _print_Ident(self, node: Ident) -> str:
        s = _IDENTS.get(node)
        if s is None:
            s = _symbol(node.name)
            s = f"\\mathrm{{{s}}}" if node.upright else s
            if len(_IDENTS) < 4096:
                _IDENTS[node] = s
        return s

    def _print_Num(self, node) -> str:
        return node.text

    def _print_Value(self, node) -> str:
        return to_latex(node.value)

    def _print_Op(self, node) -> str:
        return _symbol(node.symbol)

    def _print_Rel(self, node) -> str:
        return _symbol(node.symbol)

    def _print_Named(self, node) -> str:
        return f"\\{node.name}" if node.name in _NAMED else f"\\operatorname{{{node.name}}}"

    def _print_BigOp(self, node) -> str:
        return {"∑": "\\sum", "∏": "\\prod"}[node.symbol]

    def _print_Space(self, node: Space) -> str:
        c = _SPACE[node.em]
        return f"\\{c}"

    def _print_Text(self, node) -> str:
        return f"\\text{{{text_escape(node.text)}}}"

    def _print_Prime(self, node: Prime) -> str:
        return "'" * node.count

    def _print_Middle(self, node) -> str:
        return f"\\middle{_delim(node.symbol)}"

    def _print_Script(self, node: Script) -> str:
        """Superscript first (``m^{(1)}_{11}``, ``W^O_{:,1}``), as the kinds write it; a prime at its base.
        (Kept on the node: a symbol such as ``s_{12}`` is one shared node, printed on every line.)"""
        if self.in_script:  # (a base row is spaced as in a script here: not what is kept)
            return self._script_latex(node)
        if node.latex is None:
            object.__setattr__(node, "latex", self._script_latex(node))
        return node.latex

    def _script_latex(self, node: Script) -> str:
        base = self._print_Ident(node.base) if type(node.base) is Ident else self(node.base)
        if type(node.base) in (Script, Row):
            base = "{" + base + "}"
        if type(node.base) is BigOp:  # \sum_{j=1}^{4}
            sub = "" if node.sub is None else "_" + self.group(node.sub)
            return base + sub + ("" if node.sup is None else "^" + self.group(node.sup))
        out = base
        if type(node.sup) is Prime:
            out += self(node.sup)
        elif node.sup is not None:
            out += "^" + self.group(node.sup, bare_digit=True)
        if node.sub is not None:
            out += "_" + self.group(node.sub)
        return out

    def _print_Frac(self, node) -> str:
        return f"\\frac{{{self(node.num)}}}{{{self(node.den)}}}"

    def _print_Sqrt(self, node) -> str:
        return f"\\sqrt{{{self(node.body)}}}"

    def _print_Accent(self, node) -> str:
        return f"\\{_ACCENT[node.accent]}{{{self(node.body)}}}"

    def _print_Fence(self, node) -> str:
        return f"\\left{_delim(node.open)}{self(node.body)}\\right{_delim(node.close)}"

    def _print_Code(self, node) -> str:
        """A word of code in prose: typewriter."""
        return f"\\texttt{{{text_escape(node.text)}}}"

    def _print_Prose(self, node) -> str:
        """Prose in a LaTeX document (text mode): words escaped, each formula in ``$...$``."""
        out = []
        for part in node.parts:
            kind = type(part)
            if kind is Text:
                out.append(text_escape(part.text))
            elif kind is Code:
                out.append(self(part))
            else:
                out.append("$" + to_latex_text(part) + "$")
        return "".join(out)

    def _print_Table(self, node) -> str:
        body = " \\\\ ".join(" & ".join(self(c) for c in cells) for cells in node.rows)
        return f"\\begin{{{node.kind}}} {body} \\end{{{node.kind}}}"


def _delim(s: str) -> str:
    if not s:
        return "."
    if s in "()[]|/":
        return s
    return {"{": "\\{", "}": "\\}"}.get(s) or "\\" + _COMMAND.get(s, "vert")


_OPENING = "([{"
_CLOSING = ")]},"


def _closes(it: Node, kind: type) -> bool:
    """Is ``it`` a closing bracket or a comma, alone or with scripts (``)^2``)?"""
    while kind is Script:
        it = it.base
        kind = type(it)
    return kind is Op and it.symbol in _CLOSING


def _after_atom(it: Node, kind: type, before: Node, kb: type) -> bool:
    """A space between an atom (not an operator) and ``it``, an operator that is not
    binary, a fence or a script?"""
    if _closes(it, kind):
        return False  # x), x, (x - 1)^2
    if kind is Fence and kb in (Named, Frac, Script, Ident):
        return False  # \sin\left(1\right), \frac{1}{4}\left(...\right)
    if kind is Op and it.symbol == "(" and (kb is Named or (kb is Script and type(before.base) is Named)):
        return False  # \tanh(x)
    return True


def _binary(items: tuple, k: int) -> bool:
    """Is ``items[k]`` a binary plus or minus (not a sign)?"""
    it = items[k]
    return type(it) is Op and it.symbol in "\u2212+" and not is_sign(items, k)


_PRINTER = LatexPrinter()
_SCRIPT = LatexPrinter(in_script=True)


def to_latex_text(node: Node) -> str:
    """The LaTeX of a formula; a row keeps its LaTeX once printed (see :class:`~.nodes.Row`)."""
    if type(node) is Row:
        if node.latex is None:
            object.__setattr__(node, "latex", _PRINTER(node))
        return node.latex
    return _PRINTER(node)


Node.__str__ = to_latex_text  # str(node) is its LaTeX (see Node)
