"""Presentation MathML of a maths tree (the HTML pages, the notebook, QTI
and the practice page), spaced as TeX spaces the same formula:

* a sign (``= −1``, ``(−2)``) is grouped with what it signs, so MathML sets
  it as a prefix with no space;
* a named operator (``softmax``, ``max``) has a thin space to an ordinary
  neighbour and none before ``(`` or beside a relation or an operator;
* ``\\left( ... \\right)`` around flat content is a pair of text-size
  parentheses (a browser's stretchy fence has wide side bearings);
* a relation that opens a formula (``≤ 0``) has no space on its left;
* a comma in a script (``s₁,₂``) has no space after it;
* ``{b_1}_3``, entry 3 of b₁: the outer index hangs lower, a little apart;
* a prime stands beside its base, or over a subscript (``S'_{ij}``) at the
  base's size, as TeX sets ``S'_{ij}``;
* capital Greek is upright, as in TeX.

Text leaves are ``<mtext>`` with every markup character escaped: the one
place where user text meets MathML.  Exact values print through
:func:`worksheet.exact.mathml.to_mathml`.
"""

from __future__ import annotations


from ...exact.mathml import text as mtext
from ...exact import to_latex
from .nodes import BigOp, Code, Ident, Named, Node, Num, Op, Prime, Rel, Row, Script, Space, Text, Value
from .printer import OPENING, Printer, is_sign, is_tall
from .reading import read_latex

__all__ = ["MathMLPrinter", "to_mathml_inner", "formula", "prose_html"]

THIN = "0.1667em"
_CAPITAL_GREEK = frozenset("ΓΔΘΛΞΠΣΥΦΨΩ")
_PRIMES = {1: "\u2032", 2: "\u2033", 3: "\u2034"}


_VALUES: dict[tuple[str, bool], str] = {}  # an exact value's (LaTeX, in a script) -> its MathML
_IDENTS: dict = {}  # a symbol -> its MathML (an Ident hashes by its name)
_OPS: dict[str, str] = {}  # an operator's symbol -> its MathML


def _esc(s: str) -> str:
    if "&" in s or "<" in s or ">" in s:
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s


def _operator(node: Node) -> bool:
    """A named or big operator, or one with scripts (``max_j``)."""
    kind = type(node)
    return kind is Named or kind is BigOp or (kind is Script and _operator(node.base))


def _one(parts: list[str]) -> str:
    """One element of the parts: itself if there is one, else an <mrow>."""
    return parts[0] if len(parts) == 1 else "<mrow>" + "".join(parts) + "</mrow>"


class MathMLPrinter(Printer):
    """MathML elements of a tree (no ``<math>`` around them)."""

    def __init__(self, in_script: bool = False):
        self.in_script = in_script

    def one(self, node: Node) -> str:
        """The node as exactly one element (a script, a numerator)."""
        return _one(self.parts(node))

    def parts(self, node: Node) -> list[str]:
        items = self.items(node)
        out: list[str] = []
        k = 0
        while k < len(items):
            it = items[k]
            kind = type(it)
            if kind is Op and it.symbol in "\u2212+" and is_sign(items, k) and k + 1 < len(items):
                nxt = items[k + 1]
                if _operator(nxt):  # -tanh x: a prefix sign, and the operator spaced as one
                    out.append(f'<mo form="prefix">{it.symbol}</mo>')
                    k += 1
                    continue
                out.append(f"<mrow><mo>{it.symbol}</mo>{self(nxt)}</mrow>")
                k += 2
                continue
            if kind is Named or (kind is Script and type(it.base) is Named):
                out.append(self._named(it, items, k))
            elif kind is Rel and k == 0:
                out.append(f'<mo lspace="0">{_esc(it.symbol)}</mo>')
            elif kind is Op and it.symbol == "," and self.in_script:
                out.append('<mo rspace="0">,</mo>')  # s_{1,2}: TeX puts no space after a comma in a script
            elif kind is Op and it.symbol == ":" and self.in_script:
                out.append("<mi>:</mi>")  # W_{:,1}: all rows, a symbol
            elif kind is Num:  # the leaves, looked up here rather than dispatched (every line's loop)
                out.append("<mn>" + it.text + "</mn>")
            elif kind is Op:
                out.append(_OPS.get(it.symbol) or self._print_Op(it))
            elif kind is Ident:
                out.append(_IDENTS.get(it) or self._print_Ident(it))
            elif kind is Script and it.mathml is not None and not self.in_script:
                out.append(it.mathml)
            else:
                out.append(self(it))
            k += 1
        return out

    # -- atoms ------------------------------------------------------------------
    def _print_Row(self, node: Row) -> str:
        return _one(self.parts(node)) if node.items else "<mrow></mrow>"

    def _print_Ident(self, node: Ident) -> str:
        if node.name in _CAPITAL_GREEK or (node.upright and len(node.name) == 1):
            out = f'<mi mathvariant="normal">{_esc(node.name)}</mi>'
        else:
            out = f"<mi>{_esc(node.name)}</mi>"
        if len(_IDENTS) < 4096:
            _IDENTS[node] = out
        return out

    def _print_Num(self, node: Num) -> str:
        return f"<mn>{node.text}</mn>"

    def _print_Value(self, node: Value) -> str:
        """An exact value in a line: the tree of its LaTeX, so that it is spaced as
        every other formula is (``3 tanh(x)``, brackets sized to a fraction); kept by
        its LaTeX, as the same numbers recur on a page."""
        latex = to_latex(node.value)
        key = (latex, self.in_script)
        out = _VALUES.get(key)
        if out is None:
            out = self.one(read_latex(latex))
            if len(_VALUES) < 65536:
                _VALUES[key] = out
        return out

    def _print_Op(self, node) -> str:
        if node.symbol in OPENING or node.symbol in ")]}⟩⌋⌉":
            out = f'<mo stretchy="false">{_esc(node.symbol)}</mo>'
        else:
            out = f"<mo>{_esc(node.symbol)}</mo>"
        if len(_OPS) < 1024:
            _OPS[node.symbol] = out
        return out

    def _print_Rel(self, node) -> str:
        return f"<mo>{_esc(node.symbol)}</mo>"

    def _print_Named(self, node) -> str:
        return f'<mo lspace="0" rspace="0">{_esc(node.name)}</mo>'

    def _named(self, node, items, k) -> str:
        """A named operator (or one with a script: ``max_j``), spaced as ``\\mathop``."""
        before = items[k - 1] if k else None
        after = items[k + 1] if k + 1 < len(items) else None
        left = "0" if before is None or type(before) in (Op, Rel, Named, Space) else THIN
        right = (
            "0"
            if after is None
            or type(after) in (Rel, Space)
            or (type(after) is Op and after.symbol not in "\u2212+")
            or type(after).__name__ == "Fence"
            else THIN
        )
        name = node.base.name if type(node) is Script else node.name
        mo = f'<mo lspace="{left}" rspace="{right}">{_esc(name)}</mo>'
        if type(node) is Script:
            return self._scripted(mo, node)
        return mo

    def _print_BigOp(self, node) -> str:
        return f"<mo>{node.symbol}</mo>"

    def _print_Space(self, node: Space) -> str:
        return f'<mspace width="{node.em}"/>'

    def _print_Text(self, node) -> str:
        return mtext(node.text.replace(" ", "\u00a0"))

    def _print_Code(self, node) -> str:
        """A word of code (in prose: see :func:`prose_html`)."""
        return "<code>" + _html(node.text) + "</code>"

    def _print_Prose(self, node) -> str:
        """Prose as HTML: see :func:`prose_html`."""
        return prose_html(node)

    def _print_Prime(self, node: Prime) -> str:
        return f'<mo lspace="0" rspace="0">{_PRIMES.get(node.count, "′" * node.count)}</mo>'

    def _print_Middle(self, node) -> str:
        return f'<mo stretchy="true" fence="true" lspace="0.05em" rspace="0.05em">{_esc(node.symbol)}</mo>'

    # -- structures ---------------------------------------------------------------
    def script(self, node: Node) -> str:
        """A sub- or superscript: commas in it without space after them."""
        return _IN_SCRIPT.one(node)

    def _print_Script(self, node: Script) -> str:
        """(Kept on the node outside a script, as its LaTeX is: a symbol such as ``s_{12}``
        is one shared node, printed on every line.)"""
        if self.in_script:
            return self._scripted(self.one(node.base), node)
        if node.mathml is None:
            object.__setattr__(node, "mathml", self._scripted(self.one(node.base), node))
        return node.mathml

    def _scripted(self, base: str, node: Script) -> str:
        sub, sup = node.sub, node.sup
        if type(node.base) is Script and sub is not None and sup is None:
            # {b_1}_3: entry 3 of b_1, its index lower and a little apart
            inner = f'<mpadded voffset="-0.2em"><mrow><mspace width="0.1em"/>{self.script(sub)}</mrow></mpadded>'
            return f"<msub>{base}{inner}</msub>"
        if type(sup) is Prime:
            if sub is None:
                return f"<mrow>{base}{self(sup)}</mrow>"
            prime = _PRIMES.get(sup.count, "′" * sup.count)
            over = f'<mpadded voffset="-.45em"><mo scriptlevel="-1" lspace="0" rspace="0">{prime}</mo></mpadded>'
            return f"<msubsup>{base}{self.script(sub)}{over}</msubsup>"
        if sup is None:
            return f"<msub>{base}{self.script(sub)}</msub>"
        if sub is None:
            return f"<msup>{base}{self.script(sup)}</msup>"
        return f"<msubsup>{base}{self.script(sub)}{self.script(sup)}</msubsup>"

    def _print_Frac(self, node) -> str:
        return f"<mfrac>{self.one(node.num)}{self.one(node.den)}</mfrac>"

    def _print_Sqrt(self, node) -> str:
        return f"<msqrt>{''.join(self.parts(node.body))}</msqrt>"

    def _print_Accent(self, node) -> str:
        return f'<mover accent="true">{self.one(node.body)}<mo>{_esc(node.accent)}</mo></mover>'

    def _print_Fence(self, node) -> str:
        body = "".join(self.parts(node.body))
        if is_tall(node.body):
            left = f'<mo stretchy="true" fence="true" form="prefix">{_esc(node.open)}</mo>' if node.open else ""
            right = f'<mo stretchy="true" fence="true" form="postfix">{_esc(node.close)}</mo>' if node.close else ""
        else:
            left = f'<mo stretchy="false">{_esc(node.open)}</mo>' if node.open else ""
            right = f'<mo stretchy="false">{_esc(node.close)}</mo>' if node.close else ""
        return f"<mrow>{left}{body}{right}</mrow>"

    def _print_Table(self, node) -> str:
        align = ' columnalign="left"' if node.kind == "cases" else ""
        body = "".join(
            "<mtr>" + "".join(f"<mtd{align}>{''.join(self.parts(c))}</mtd>" for c in cells) + "</mtr>"
            for cells in node.rows
        )
        if node.kind == "cases":
            return f'<mrow><mo stretchy="true" fence="true" form="prefix">{{</mo><mtable>{body}</mtable></mrow>'
        brackets = {"bmatrix": "[]", "pmatrix": "()", "matrix": ""}[node.kind]
        if not brackets:
            return f"<mtable>{body}</mtable>"
        return f"<mrow><mo>{brackets[0]}</mo><mtable>{body}</mtable><mo>{brackets[1]}</mo></mrow>"


_PRINTER = MathMLPrinter()
_IN_SCRIPT = MathMLPrinter(in_script=True)


def to_mathml_inner(node: Node) -> str:
    """The MathML inside ``<math>`` of a formula."""
    return "".join(_PRINTER.parts(node))


def _html(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;").replace("'", "&#39;")


def prose_html(node) -> str:
    """Prose (:class:`~.nodes.Prose`) as HTML: words escaped, code in ``<code>``,
    each formula a ``<math>`` element."""
    out = []
    for part in node.parts:
        kind = type(part)
        if kind is Text:
            out.append(_html(part.text))
        elif kind is Code:
            out.append(_PRINTER(part))
        else:
            out.append(formula(part))
    return "".join(out)


def formula(node: Node, display: bool = False) -> str:
    """A whole ``<math>`` element of a formula."""
    head = '<math display="block">' if display else "<math>"
    return head + to_mathml_inner(node) + "</math>"
