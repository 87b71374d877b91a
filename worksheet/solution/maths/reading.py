r"""Our LaTeX read into the maths tree: the bridge while kinds still write
formulas as LaTeX strings.

:func:`read_latex` reads the LaTeX that the kinds write and that a title
or prompt may hold (the allow-list of :mod:`worksheet.policy.safetext`):
letters, digits, ``^ _ '``, brace groups, fractions and roots, Greek,
operators and relations, named operators, ``\left ... \middle ...
\right``, ``\text{...}`` (its escapes read back to the characters they
stand for, so a label is a :class:`~.nodes.Text` leaf of its own
characters), accents, spaces, and the ``bmatrix`` and ``cases``
environments.  Anything else is a :class:`~.nodes.MathsError`, never a
guess.  Time and memory are bounded: at most :data:`MAX_CHARS` characters
and :data:`MAX_DEPTH` nested groups.

This is not a parser of LaTeX at large, and it never evaluates anything:
it reads symbols into nodes.  As kinds build their trees directly, fewer
strings pass through it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...policy.safetext import GREEK, math_problem
from .nodes import (
    CODE_CLOSE,
    CODE_OPEN,
    Accent,
    BigOp,
    Code,
    Fence,
    Frac,
    Ident,
    MathsError,
    Middle,
    Named,
    Node,
    Num,
    Op,
    Prime,
    Prose,
    Rel,
    Row,
    Script,
    Space,
    Sqrt,
    Table,
    Text,
)

__all__ = [
    "read_latex",
    "read_prose",
    "as_prose",
    "read_text",
    "MAX_PROSE_CHARS",
    "MAX_CHARS",
    "MAX_DEPTH",
    "GREEK_LETTERS",
]

MAX_CHARS = 20_000  # a formula longer than this is not ours
MAX_DEPTH = 40  # nested groups
MAX_PROSE_CHARS = 100_000  # prose longer than this is not ours (a spec's prompt is at most 4000)

_GREEK_CHARS = (
    "alpha α beta β gamma γ delta δ epsilon ϵ varepsilon ε zeta ζ eta η theta θ vartheta ϑ iota ι kappa κ "
    "lambda λ mu μ nu ν xi ξ pi π varpi ϖ rho ρ varrho ϱ sigma σ varsigma ς tau τ upsilon υ phi ϕ varphi φ "
    "chi χ psi ψ omega ω Gamma Γ Delta Δ Theta Θ Lambda Λ Xi Ξ Pi Π Sigma Σ Upsilon Υ Phi Φ Psi Ψ Omega Ω"
).split()
GREEK_LETTERS = dict(zip(_GREEK_CHARS[::2], _GREEK_CHARS[1::2]))
assert set(GREEK_LETTERS) == GREEK

SYMBOLS = {  # commands that stand for a symbol (an Ident)
    "infty": "∞",
    "top": "⊤",
    "intercal": "⊺",
    "partial": "∂",
    "nabla": "∇",
    "dots": "…",
    "ldots": "…",
    "cdots": "⋯",
    "vdots": "⋮",
    "ddots": "⋱",
    "forall": "∀",
    "exists": "∃",
    "ast": "∗",
    "star": "⋆",
}
OPERATORS = {
    "cdot": "⋅",
    "times": "×",
    "div": "÷",
    "pm": "±",
    "mp": "∓",
    "circ": "∘",
    "odot": "⊙",
    "otimes": "⊗",
    "oplus": "⊕",
    "cup": "∪",
    "cap": "∩",
    "mid": "∣",
    "vert": "|",
    "lvert": "|",
    "rvert": "|",
    "Vert": "‖",
    "lVert": "‖",
    "rVert": "‖",
    "langle": "⟨",
    "rangle": "⟩",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "lceil": "⌈",
    "rceil": "⌉",
    "{": "{",
    "}": "}",
    "|": "‖",
}
RELATIONS = {
    "approx": "≈",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "lt": "<",
    "gt": ">",
    "ne": "≠",
    "neq": "≠",
    "equiv": "≡",
    "sim": "∼",
    "propto": "∝",
    "ll": "≪",
    "gg": "≫",
    "in": "∈",
    "notin": "∉",
    "subset": "⊂",
    "subseteq": "⊆",
    "to": "→",
    "rightarrow": "→",
    "leftarrow": "←",
    "mapsto": "↦",
    "Rightarrow": "⇒",
    "Leftarrow": "⇐",
    "leftrightarrow": "↔",
}
NAMED = frozenset("exp log ln sin cos tan tanh max min arg det lim sup inf".split())
BIG = {"sum": "∑", "prod": "∏"}
SPACES = {",": "0.1667em", ":": "0.2222em", ";": "0.2778em", " ": "0.25em", "!": "-0.1667em", "quad": "1em"}
SPACES["qquad"] = "2em"
ACCENTS = {"hat": "^", "bar": "¯", "overline": "¯", "tilde": "~", "vec": "→", "dot": "˙", "underline": "_"}
STYLES = frozenset("mathrm mathbf mathit mathcal mathbb boldsymbol".split())
DELIMS = {"(": "(", ")": ")", "[": "[", "]": "]", "|": "|", ".": "", "/": "/"}
CHAR_OPS = frozenset("+-*/,;:!?()[]|.")
CHAR_RELS = {"=": "=", "<": "<", ">": ">"}
ENVIRONMENTS = frozenset(("bmatrix", "pmatrix", "matrix", "cases"))

_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([0-9]+(?:\.[0-9]+)?)|(\s+)|(.)", re.S)
# the escapes of a \text{...} argument (worksheet.solution.number_format.text_escape, latex_text), read back
_TEXT_ESCAPE = re.compile(r"\\(text[a-z]+|[~^])\{\}|\\([$&%#_{} ])")
_TEXT_NAMED = {
    "textbackslash": "\\",
    "textless": "<",
    "textgreater": ">",
    "textasciitilde": "~",
    "textasciicircum": "^",
    "textbar": "|",
    "~": "~",
    "^": "^",
}


def read_text(raw: str) -> str:
    r"""The characters a ``\text{...}`` argument stands for (``\textless{}`` is
    ``<``, ``\_`` is ``_``); any other backslash is shown as it is."""
    return _TEXT_ESCAPE.sub(lambda m: _TEXT_NAMED.get(m[1], m[0]) if m[1] else m[2], raw)


@lru_cache(maxsize=16384)
def read_latex(latex: str) -> Row:
    """The tree of a formula written in our LaTeX (see the module's docstring)."""
    if len(latex) > MAX_CHARS:
        raise MathsError(f"a formula of {len(latex)} characters (at most {MAX_CHARS})")
    reader = _Reader(latex)
    out = reader.row(end=None)
    return out


@lru_cache(maxsize=8192)
def read_prose(text: str) -> Prose:
    """Prose written as words with inline ``$...$`` formulas and words of code
    (between :data:`~.nodes.CODE_OPEN` and :data:`~.nodes.CODE_CLOSE`, which only
    a kind writes): a kind's literal text, a user's title or prompt.

    A formula becomes a tree only when :func:`worksheet.policy.safetext.math_problem`
    accepts it and :func:`read_latex` reads it; its tree keeps its own text, so
    ``str(read_prose(s)) == s`` always.  Anything else stays words, shown as its
    own characters, ``$`` and all: a formula off the allow-list or that the
    reader refuses, an empty ``$$`` and an unclosed last ``$`` (with the text
    after it).  User text never becomes structure.  Cached by the text: the
    same conventions and notes recur on every problem."""
    if type(text) is Prose:
        return text
    text = str(text)
    if len(text) > MAX_PROSE_CHARS:
        raise MathsError(f"prose of {len(text)} characters (at most {MAX_PROSE_CHARS})")
    parts: list[Node] = []
    pieces = text.split("$")
    last = len(pieces) - 1
    for i, piece in enumerate(pieces):
        if not i % 2:
            _words(piece, parts)
        elif i == last:  # an odd number of $: the last opens nothing
            _words("$" + piece, parts)
        else:
            formula = _formula(piece)
            if formula is None:
                _words("$" + piece + "$", parts)
            else:
                parts.append(formula)
    return Prose(tuple(parts))


def as_prose(x) -> Prose:
    """The :class:`~.nodes.Prose` of a text with inline ``$...$`` (read once, see
    :func:`read_prose`), or the Prose itself."""
    return x if type(x) is Prose else read_prose(x)


def _formula(latex: str) -> Row | None:
    """The tree of a formula in prose, keeping its text (see :func:`read_prose`), or None."""
    if not latex.strip() or math_problem(latex) is not None:
        return None
    try:
        tree = read_latex(latex)
    except MathsError:
        return None
    return Row(tree.items, latex=latex)  # its own row: the shared tree of read_latex keeps its printed text


_CODE = re.compile(f"{CODE_OPEN}([^{CODE_OPEN}{CODE_CLOSE}]*){CODE_CLOSE}")


def _words(s: str, parts: list[Node]) -> None:
    """Words, and the words of code marked in them, added to ``parts`` (no empty words;
    an empty word of code is kept, so the text reads back, and printed as nothing)."""
    pieces = _CODE.split(s) if CODE_OPEN in s else (s,)
    for k, piece in enumerate(pieces):
        if k % 2:
            parts.append(Code(piece))
        elif piece:
            parts.append(Text(piece))


class _Reader:
    """One pass over the tokens of a formula."""

    def __init__(self, latex: str):
        self.src = latex
        self.tokens = [m for m in _TOKEN.finditer(latex) if m[3] is None]  # spaces are nothing in maths
        self.at = 0
        self.depth = 0

    def fail(self, why: str) -> MathsError:
        where = self.tokens[self.at].start() + 1 if self.at < len(self.tokens) else len(self.src)
        return MathsError(f"cannot read the formula at character {where}: {why}")

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        if tok is None:
            raise self.fail("it ends too early")
        self.at += 1
        return tok

    # -- rows and groups ------------------------------------------------------
    def row(self, end: str | None, stop=()) -> Row:
        """Atoms up to the character ``end`` (taken) or, at the top, the end
        of the formula; at a command in ``stop`` (not taken)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"groups nested more than {MAX_DEPTH} deep")
        items: list[Node] = []
        while True:
            tok = self.peek()
            if tok is None:
                if end is not None:
                    raise self.fail(f"a group is not closed (no {end})")
                break
            if end is not None and tok[4] == end:
                self.at += 1
                break
            if tok[1] in stop or tok[4] in stop:
                break
            self.scripts(items)
        self.depth -= 1
        return Row(tuple(items))

    def group(self) -> Node:
        """One argument: a brace group, or a single token."""
        tok = self.peek()
        if tok is not None and tok[4] == "{":
            self.at += 1
            r = self.row("}")
            return r.items[0] if len(r.items) == 1 else r
        items: list[Node] = []
        self.atom(items)
        if len(items) != 1:
            raise self.fail("an argument is missing")
        return items[0]

    def raw_group(self) -> str:
        """The source text of a brace group (for ``\\text`` and environment names)."""
        tok = self.take()
        if tok[4] != "{":
            raise self.fail("a { is missing")
        start, depth = tok.end(), 1
        while depth:
            tok = self.take()
            depth += (tok[4] == "{") - (tok[4] == "}")
        return self.src[start : tok.start()]

    # -- scripts ----------------------------------------------------------------
    def scripts(self, items: list[Node]) -> None:
        """The next atom with the scripts and primes that follow it."""
        self.atom(items)
        sub = sup = None
        primes = 0
        while (tok := self.peek()) is not None and tok[4] in ("^", "_", "'"):
            self.at += 1
            if tok[4] == "'":
                primes += 1
            elif tok[4] == "_" and sub is None:
                sub = self.group()
            elif tok[4] == "^" and sup is None:
                sup = self.group()
            else:
                raise self.fail(f"a second {tok[4]} on one symbol")
        if sub is None and sup is None and not primes:
            return
        if primes:
            if sup is not None:
                raise self.fail("a prime and a superscript on one symbol")
            sup = Prime(primes)
        base = items.pop() if items else Row()
        items.append(Script(base, sub, sup))

    # -- atoms ------------------------------------------------------------------
    def atom(self, items: list[Node]) -> None:
        tok = self.take()
        command, number, char = tok[1], tok[2], tok[4]
        if number is not None:
            items.append(Num(number))
        elif command is not None:
            self.command(command, items)
        elif char.isalpha() and char.isascii():
            items.append(Ident(char))
        elif char == "{":
            r = self.row("}")
            items.append(r.items[0] if len(r.items) == 1 else r)
        elif char == "-":
            items.append(Op("\u2212"))
        elif char in CHAR_RELS:
            items.append(Rel(CHAR_RELS[char]))
        elif char in CHAR_OPS:
            items.append(Op(char))
        elif char == "&":
            raise self.fail("& outside a matrix")
        else:
            raise self.fail(f"{char!r} is not read in a formula")

    # long: one branch per family of commands, each a line or two (the tables above hold the members)
    def command(self, name: str, items: list[Node]) -> None:  # noqa: C901, PLR0912
        if name in GREEK_LETTERS:
            items.append(Ident(GREEK_LETTERS[name]))
        elif name in SYMBOLS:
            items.append(Ident(SYMBOLS[name]))
        elif name in OPERATORS:
            items.append(Op(OPERATORS[name]))
        elif name in RELATIONS:
            items.append(Rel(RELATIONS[name]))
        elif name in NAMED:
            items.append(Named(name))
        elif name == "operatorname":
            items.append(Named(self._word(self.raw_group())))
        elif name in BIG:
            items.append(BigOp(BIG[name]))
        elif name in SPACES:
            items.append(Space(SPACES[name]))
        elif name in ("frac", "dfrac", "tfrac"):
            items.append(Frac(self.group(), self.group()))
        elif name == "sqrt":
            items.append(Sqrt(self.group()))
        elif name in ("text", "textrm"):
            items.append(Text(read_text(self.raw_group())))
        elif name in STYLES:
            items.append(self._styled(self.group()))
        elif name in ACCENTS:
            items.append(Accent(self.group(), ACCENTS[name]))
        elif name == "left":
            items.append(self._fence())
        elif name == "middle":
            items.append(Middle(self._delimiter()))
        elif name in ("big", "Big", "bigl", "bigr", "Bigl", "Bigr"):
            items.append(Op(self._delimiter() or "."))
        elif name == "prime":
            items.append(Prime(1))
        elif name == "begin":
            items.append(self._environment())
        else:
            raise self.fail(f"\\{name} is not read in a formula")

    def _word(self, raw: str) -> str:
        if not raw.replace(" ", "").isalnum() and not re.fullmatch(r"[A-Za-z0-9 \\-]+", raw):
            raise self.fail(f"an operator name {raw!r}")
        return raw.replace("\\", "")

    def _styled(self, body: Node) -> Node:
        """``\\mathrm{head}``: a word (or letter) set upright."""
        if type(body) is Ident:
            return Ident(body.name, upright=True)
        if type(body) is Row and all(type(c) in (Ident, Num) for c in body.items):
            return Ident("".join(c.name if type(c) is Ident else c.text for c in body.items), upright=True)
        return body

    def _delimiter(self) -> str:
        tok = self.take()
        if tok[4] in DELIMS:
            return DELIMS[tok[4]]
        if tok[1] in OPERATORS:
            return OPERATORS[tok[1]]
        raise self.fail("\\left, \\middle and \\right take a delimiter")

    def _fence(self) -> Fence:
        opening = self._delimiter()
        body = self.row(end=None, stop=("right",))
        if self.peek() is None:
            raise self.fail("\\left has no \\right")
        self.at += 1  # \right
        return Fence(opening, body, self._delimiter())

    def _environment(self) -> Table:
        kind = self.raw_group()
        if kind not in ENVIRONMENTS:
            raise self.fail(f"the environment {kind!r}")
        rows: list[tuple[Node, ...]] = []
        cells: list[Node] = []
        while True:
            r = self.row(end=None, stop=("&", "\\", "end"))
            cells.append(r.items[0] if len(r.items) == 1 else r)
            tok = self.take()
            if tok[4] == "&":
                continue
            rows.append(tuple(cells))
            cells = []
            if tok[1] == "end":
                if self.raw_group() != kind:
                    raise self.fail(f"\\begin{{{kind}}} ends with another \\end")
                break
        return Table(tuple(rows), kind)
