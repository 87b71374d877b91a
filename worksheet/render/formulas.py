r"""LaTeX formulas to MathML for the HTML pages (split from :mod:`worksheet.render.html`).

Formulas and worked lines are LaTeX strings converted by ``latex2mathml``,
cached by pieces (:func:`convert_inner`); user text inside ``\text{...}``
never goes through the converter (:func:`take_texts`).  After the
conversion the MathML is spaced as TeX spaces the same formula
(:func:`formula_inner`): signs grouped with their numbers, named operators
(``softmax``, ``max``) spaced like ``\mathop``, parentheses of the text
size around flat content, no space before a relation
that opens a formula (``\le 0``), primes beside their base and stacked
over a subscript (``S'_{c,1}``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import escape

from ..exact import mathml as ml
from ..policy.safetext import GREEK

_MATH = {False: "<math>", True: '<math display="block">'}  # inline is what <math> is
_CELL = '<math displaystyle="true">'  # a matrix entry in a table cell: fractions display size


@lru_cache(maxsize=8192)
def mathml(latex: str, display: bool = False) -> str:
    """MathML of a LaTeX formula (cached by its text); the escaped LaTeX in
    ``<code>`` if it cannot be converted."""
    try:
        return _MATH[display] + formula_inner(latex) + "</math>"
    except Exception:  # noqa: BLE001 - any converter failure: show the LaTeX source instead
        FALLBACKS.append(latex)
        return f'<code class="tex">{escape(latex)}</code>'


FALLBACKS: list[str] = []  # LaTeX the converter could not read (tests assert it stays empty)


@lru_cache(maxsize=8192)
def formula_inner(latex: str) -> str:
    r"""The MathML (inside ``<math>``) of a LaTeX formula: its ``\text{...}``
    arguments taken out (:func:`take_texts`), the rest converted piece by
    piece (:func:`convert_inner`), the texts put back escaped."""
    skeleton, texts = take_texts(latex)
    inner = _opening_relation(_operators(_flat_fences(_signs(convert_inner(skeleton)))))
    if "<mo>,</mo>" in inner:  # a comma between indices (s_{1,2}): no space after it, as TeX sets scripts
        inner = _script_commas(inner)
    if "<msub><mrow><msub>" in inner:  # {b_1}_{3}: entry 3 of b_1, set apart from b_1's own index
        inner = _SUB_OF_SUB.sub(
            r'\1<mpadded voffset="-0.2em"><mrow><mspace width="0.1em"/>\2</mrow></mpadded></msub>', inner
        )
    if _CAPITAL_GREEK.search(inner):  # \Theta, \Sigma: upright, as TeX sets capital Greek (a browser slants it)
        inner = _CAPITAL_GREEK.sub(r'<mi mathvariant="normal">\1</mi>', inner)
    if "\u2026</mo>" in inner or "\u22ef</mo>" in inner:  # \dots, \cdots: symbols, not operators with thick spaces
        inner = inner.replace("<mo>\u2026</mo>", "<mi>\u2026</mi>").replace("<mo>\u22ef</mo>", "<mi>\u22ef</mi>")
    if texts:
        inner = _PLACEHOLDER.sub(lambda m: ml.text(texts[ord(m[1]) - 0xE000]).replace(" ", "\u00a0"), inner)
    return inner


# A minus after an opening parenthesis, a relation or an operator is a sign
# (TeX sets "= -2" and "(-1)" without space): grouped with its number it is
# the first child of its row, which MathML sets as a prefix, not as a binary
# minus with space around (the converter leaves it loose: "( − 1)").
_MINUS_TOKEN = re.compile(
    "<mo>\u2212</mo>(<m[ni]>[^<]*</m[ni]>|<mfrac><m[ni]>[^<]*</m[ni]><m[ni]>[^<]*</m[ni]></mfrac>)"
)
_MINUS_LOOSE = re.compile("<mo>\u2212</mo>(?=<m)")
_SIGN_AFTER = tuple(f">{c}</mo>" for c in "([{=\u2248\u2264\u2265+\u2212\u22c5\u00b7\u00d7/,:") + (
    ">&lt;</mo>",
    ">&gt;</mo>",
)


def _signs(markup: str) -> str:
    """Each minus that follows an opening parenthesis, a relation or an
    operator, grouped with its number, letter or simple fraction (``= -1/4``)
    into one <mrow>."""
    if "<mo>\u2212</mo><m" not in markup:
        return markup
    out = _MINUS_TOKEN.sub(
        lambda g: f"<mrow><mo>\u2212</mo>{g[1]}</mrow>" if g.string.endswith(_SIGN_AFTER, 0, g.start()) else g[0],
        markup,
    )
    # a sign before anything bigger (-(2/(1+e)), -e^x): a prefix operator, no space after it
    return _MINUS_LOOSE.sub(
        lambda g: '<mo form="prefix">\u2212</mo>' if g.string.endswith(_SIGN_AFTER, 0, g.start()) else g[0], out
    )


# A named operator (\operatorname{softmax}, \max) is an <mo> to the
# converter, which a browser spaces as an unknown operator: a thick space on
# each side ("= softmax (z)", with its relation's space on top).  TeX spaces
# it as \mathop: a thin space to an ordinary neighbour, none before "(" and
# none beside a relation or an operator, whose own space is enough.
_NAMED_OP = re.compile(r"<mo>([A-Za-z]{2,})</mo>")
_SCRIPTED = ("<msub>", "<munder>", "<msubsup>", "<munderover>", "<msup>", "<mover>")
_OPEN_NEXT = (
    '<mo stretchy="false">(</mo>',
    "<mo>(</mo>",
    '<mrow><mo stretchy="true" fence="true" form="prefix">(',
    '<mrow><mo stretchy="false">(',
)
_TAG = re.compile(r"<(/?)(m[a-z]+)[^>]*?(/?)>")
THIN = "0.1667em"


def _element_end(markup: str, at: int) -> int:
    """The index just past the element that opens at ``markup[at]``."""
    depth = 0
    for m in _TAG.finditer(markup, at):
        if m[3]:
            continue  # <mspace/>
        depth += -1 if m[1] else 1
        if depth == 0:
            return m.end()
    return len(markup)


def _operators(markup: str) -> str:
    r"""Each named operator spaced as TeX spaces ``\mathop`` (see above); a
    script on it (``\max_j``) goes with it."""
    if "<mo>" not in markup or _NAMED_OP.search(markup) is None:
        return markup
    out, at = [], 0
    for m in _NAMED_OP.finditer(markup):
        start = m.start()
        scripted = markup.endswith(_SCRIPTED, 0, start)
        begin = markup.rindex("<", 0, start) if scripted else start
        end = _element_end(markup, begin) if scripted else m.end()
        before = markup[:begin]
        left = "0" if not before or before.endswith("</mo>") or before.endswith("<mrow>") else THIN
        after = markup[end:]
        right = "0" if not after or after.startswith(_OPEN_NEXT) or after.startswith(("<mo>", "</")) else THIN
        out.append(markup[at:start] + f'<mo lspace="{left}" rspace="{right}">{m[1]}</mo>')
        at = m.end()
    return "".join(out) + markup[at:]


# the indices of a subscript, such as 1,2 in s_{1,2}, a^z_{1,1} or \theta_{\mathrm{pos},i}:
# TeX puts no space after a comma in a script (a browser: a thin one, "z_{1, 2}")
_INDEX_COMMA = '<mo rspace="0">,</mo>'
_SCRIPTS = re.compile("<(msub|msup|msubsup)>")


def _script_commas(markup: str) -> str:
    """Each comma in a script (after the base of an msub, msup or msubsup) without space after it."""
    out, at = [], 0
    for m in _SCRIPTS.finditer(markup):
        if m.start() < at:
            continue  # inside a script already done
        base_end = _element_end(markup, m.end())
        end = _element_end(markup, m.start())
        out.append(markup[at:base_end] + markup[base_end:end].replace("<mo>,</mo>", _INDEX_COMMA))
        at = end
    return "".join(out) + markup[at:]


_CAPITAL_GREEK = re.compile("<mi>([\u0393\u0394\u0398\u039b\u039e\u03a0\u03a3\u03a5\u03a6\u03a8\u03a9])</mi>")
# {b_1}_{3}, {W_1}_{:,3}: TeX hangs the outer index lower than the inner one and a
# little apart; a browser sets both level, "b_{13}", which reads as row 1, column 3
_SCRIPT = r"(?:<m[ino]>[^<]*</m[ino]>|<mrow>(?:(?!</?mrow>)[^\n])*</mrow>)"
_SUB_OF_SUB = re.compile(rf"(<msub><mrow><msub>{_SCRIPT}{_SCRIPT}</msub></mrow>)({_SCRIPT})</msub>")


# \left( ... \right) around a flat sum (no fraction, script or root): TeX sets
# parentheses of the text size there; a browser draws a stretchy fence with
# the wide side bearings of Latin Modern Math's size variants ("( 0.25 + 1 )").
_FENCE_OPEN = '<mrow><mo stretchy="true" fence="true" form="prefix">('
_FENCE_CLOSE = '<mo stretchy="true" fence="true" form="postfix">)</mo></mrow>'
_TALL = re.compile("<(?:mfrac|msup|msub|msubsup|munder|mover|munderover|msqrt|mroot|mtable|mpadded)[ >]")


def _flat_fences(markup: str) -> str:
    """Each stretchy pair of parentheses around flat content made of the text size."""
    if _FENCE_OPEN not in markup:
        return markup
    at = 0
    while (start := markup.find(_FENCE_OPEN, at)) >= 0:
        end = _element_end(markup, start)
        group = markup[start:end]
        if group.endswith(_FENCE_CLOSE) and _TALL.search(group) is None:
            flat = (
                '<mrow><mo stretchy="false">('
                + group[len(_FENCE_OPEN) : -len(_FENCE_CLOSE)]
                + '<mo stretchy="false">)</mo></mrow>'
            )
            markup = markup[:start] + flat + markup[end:]
        at = start + 1
    return markup


# A relation that opens a formula ("every exponent $\le 0$") has nothing on
# its left: TeX puts no space there, the browser its relation space.
_RELATIONS = "=\u2248\u2264\u2265\u2260\u2261\u223c\u2243\u221d\u2208\u2192\u21d2\u226a\u226b"
_OPENING_RELATION = re.compile("^<mo>([" + _RELATIONS + "]|&lt;|&gt;)</mo>")


def _opening_relation(markup: str) -> str:
    return _OPENING_RELATION.sub(r'<mo lspace="0">\1</mo>', markup, count=1)


# -- user text inside formulas: never given to the converter ----------------
_TEXT_CMD = re.compile(r"\\text(?:rm)?\{")
# the escapes of worksheet.solution.number_format.text_escape and worksheet.steps.worklines.latex_text, read back
_TEXT_ESCAPE = re.compile(r"\\(text[a-z]+|[~^])\{\}|\\([$&%#_{} ])")
_TEXT_NAMED = {
    "textbackslash": "\\",
    "textless": "<",
    "textgreater": ">",
    "textasciitilde": "~",
    "textasciicircum": "^",
    "~": "~",
    "^": "^",
}
_PLACEHOLDER = re.compile("<mtext>([\ue000-\ue0ff])</mtext>")
MAX_TEXTS = 256  # \text{...} per formula (placeholders U+E000..U+E0FF)


def _unescape_text(raw: str) -> str:
    r"""The characters a ``\text{...}`` argument stands for (``\textless{}`` is
    ``<``, ``\_`` is ``_``); any other backslash is shown as it is."""
    return _TEXT_ESCAPE.sub(lambda m: _TEXT_NAMED.get(m[1], m[0]) if m[1] else m[2], raw)


def take_texts(latex: str) -> tuple[str, list[str]]:
    r"""``latex`` with the argument of each ``\text{...}`` replaced by a
    placeholder character, and the arguments' characters, in order."""
    if "\\text" not in latex:
        return latex, []
    out, texts, at = [], [], 0
    while (m := _TEXT_CMD.search(latex, at)) is not None:
        end = _group(latex, m.end() - 1)  # just past the argument's closing brace
        if end < 0 or len(texts) >= MAX_TEXTS:  # unbalanced or too many: the converter cannot have it
            raise ValueError("a \\text{...} without its closing brace, or too many of them")
        i = end - 1
        out.append(latex[at : m.start()] + "\\text{" + chr(0xE000 + len(texts)) + "}")
        texts.append(_unescape_text(latex[m.end() : i]))
        at = i + 1
    out.append(latex[at:])
    return "".join(out), texts


# -- the converter, by cached pieces ----------------------------------------
# A formula's top-level pieces (split at spaces outside braces, \left..\right
# and environments) convert to consecutive children of the one <mrow> the
# converter makes of the whole, so the whole is the pieces' conversions
# joined (tests/test_mathml.py checks it on every kind's formulas and lines).
# A formula that switches style or aligns (\displaystyle, \over, &, \\ at
# the top level) converts whole.
_WHOLE_ONLY = re.compile(
    r"\\(?:displaystyle|textstyle|scriptstyle|scriptscriptstyle|over|atop|choose|limits"
    r"|nolimits|begin|end|\\)(?![A-Za-z])|&"
)
_ARG_CMD = re.compile(
    r"\\(?:d?t?frac|sqrt|text|textrm|math[a-z]+|boldsymbol|operatorname|hat|bar|tilde|vec|dot"
    r"|overline|underline|left|right|[bB]ig[lr]?|mid)$"
)
_OPENERS = re.compile(r"\\left(?![A-Za-z])")
_CLOSERS = re.compile(r"\\right(?![A-Za-z])")


_BMATRIX = re.compile(r"\\begin\{bmatrix\}((?:(?!\\begin|\\end).)*)\\end\{bmatrix\}", re.S)


def pieces(latex: str) -> list[str] | None:
    """The top-level pieces of a formula, or None if it must convert whole.
    A ``bmatrix`` (not nested) is one piece."""
    m = _BMATRIX.search(latex)
    if m:
        before, after = pieces(latex[: m.start()]), pieces(latex[m.end() :])
        if (
            before is None
            or after is None
            or (after and after[0][0] in "^_'")
            or (before and (before[-1][-1] in "^_\\" or _ARG_CMD.search(before[-1])))
        ):
            return None  # a script or an argument that belongs to the matrix: convert whole
        return before + [m.group()] + after
    if _WHOLE_ONLY.search(latex):
        return None
    # (spaces are nothing in maths: this only makes \frac{1}{4}\left(...\right) two pieces)
    latex = latex.replace("}\\left(", "} \\left(")
    out: list[str] = []
    depth, glue = 0, False
    for word in latex.split(" "):
        if not word:
            continue
        if out and (depth or glue or word[0] in "^_'"):
            out[-1] += " " + word
        else:
            out.append(word)
        glue = word[-1] in "^_\\"
        if "\\" in word:
            glue = glue or _ARG_CMD.search(word) is not None
            depth += word.count("\\}") - word.count("\\{")
            if "\\left" in word or "\\right" in word:
                depth += len(_OPENERS.findall(word)) - len(_CLOSERS.findall(word))
        if "{" in word or "}" in word:
            depth += word.count("{") - word.count("}")
    return out if depth == 0 else None


def convert_inner(latex: str) -> str:
    """What the converter puts inside ``<math><mrow>...</mrow></math>`` for
    ``latex``, from cached pieces where it may."""
    if not latex.strip():
        return ""  # an empty group: \frac{}{1}, \left(\right)
    parts = pieces(latex)
    if not parts:  # convert whole
        return _convert(latex)
    return "".join(_convert(p) for p in parts)


_OUTER = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow>'


_DECIMAL = re.compile(r"(-?)([0-9]+(?:\.[0-9]+)?)")


def _group(latex: str, at: int) -> int:
    """The index just past the ``{...}`` group opening at ``latex[at]``, or -1."""
    if at >= len(latex) or latex[at] != "{":
        return -1
    depth, i = 0, at
    while i < len(latex):
        c = latex[i]
        if c == "\\":
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        i += 1
        if depth == 0:
            return i
    return -1


def _fenced(body: str) -> bool:
    r"""Is every \left in ``body`` closed by its \right inside it (so that
    ``\left(`` + body + ``\right)`` is one fenced group)?"""
    depth = 0
    for m in re.finditer(r"\\(left|right)(?![A-Za-z])", body):
        depth += 1 if m[1] == "left" else -1
        if depth < 0:
            return False
    return depth == 0


@lru_cache(maxsize=16384)
def _convert(latex: str) -> str:
    r"""One piece's MathML (cached), as latex2mathml makes it, unwrapped,
    cleaned and compacted.  The shapes that the exact values of worked lines
    take (a decimal, ``\frac{A}{B}``, ``e^{X}``) are assembled from their
    parts' cached conversions, which is what the converter does with them
    (tests/test_mathml.py compares), so a new fraction costs only its new parts."""
    m = _DECIMAL.fullmatch(latex)
    if m:
        return ("<mo>−</mo>" if m[1] else "") + f"<mn>{m[2]}</mn>"
    if latex.startswith("\\frac{"):
        mid = _group(latex, 5)
        if mid > 0 and _group(latex, mid) == len(latex):
            return _compact(
                f"<mfrac><mrow>{convert_inner(latex[6 : mid - 1])}</mrow>"
                f"<mrow>{convert_inner(latex[mid + 1 : -1])}</mrow></mfrac>"
            )
    if latex.startswith("\\left(") and latex.endswith("\\right)") and _fenced(latex[6:-7]):
        return (
            f'<mrow><mo stretchy="true" fence="true" form="prefix">(</mo>{convert_inner(latex[6:-7])}'
            f'<mo stretchy="true" fence="true" form="postfix">)</mo></mrow>'
        )
    if latex.startswith("e^{") and _group(latex, 2) == len(latex):
        return _compact(f"<msup><mi>e</mi><mrow>{convert_inner(latex[3:-1])}</mrow></msup>")
    if latex.startswith("\\sqrt{") and _group(latex, 5) == len(latex):
        return _compact(f"<msqrt><mrow>{convert_inner(latex[6:-1])}</mrow></msqrt>")
    m = _SUBSCRIPTED.match(latex)
    if m and _group(latex, m.end() - 1) == len(latex) and (len(m[1]) == 1 or m[1][1:] in GREEK):
        return _compact(f"<msub>{_convert(m[1])}<mrow>{convert_inner(latex[m.end() : -1])}</mrow></msub>")
    if latex.startswith("\\begin{bmatrix}") and _BMATRIX.fullmatch(latex):
        rows = latex[len("\\begin{bmatrix}") : -len("\\end{bmatrix}")].split("\\\\")
        body = "".join(
            "<mtr>" + "".join(f"<mtd>{convert_inner(c.strip())}</mtd>" for c in row.split("&")) + "</mtr>"
            for row in rows
        )
        return f"<mo>[</mo><mtable>{body}</mtable><mo>]</mo>"
    if len(latex) > 1:  # a parenthesis is a token of its own: (-0.25  0.5)^2
        if latex[0] == "(" and latex[1] not in "^_' ":
            return _convert("(") + _convert(latex[1:])
        m = _CLOSING.search(latex)
        if m and m.start() > 0 and not latex[: m.start()].endswith(("\\right", "\\")):
            return _convert(latex[: m.start()]) + _convert(latex[m.start() :])
    return _latex2mathml(latex)


_SUBSCRIPTED = re.compile(r"([A-Za-z]|\\[A-Za-z]+)_\{")  # s_{12}, \alpha_{1k}
_CLOSING = re.compile(r"\)+(?:\^(?:[0-9]|\{[0-9]+\}))?$")


def _latex2mathml(latex: str) -> str:
    """One conversion by latex2mathml, unwrapped, cleaned and compacted."""
    from latex2mathml.converter import convert

    out = convert(latex, display="inline")
    if not (out.startswith(_OUTER) and out.endswith("</mrow></math>")):
        raise ValueError(f"unexpected converter output for {latex!r}")
    return _compact(_primes(strip_unsafe(out[len(_OUTER) : -len("</mrow></math>")])))


# attributes MathML must never carry here: links (latex2mathml turns \href
# into an href), scripts, styles.  The maths allow-list (worksheet.policy.safetext)
# already keeps \href and \style out; this is the second line of defence.
_UNSAFE_ATTR = re.compile(
    r"""\s(?:[\w:-]*href|src|action|formaction|style|on[a-z]+)\s*=\s*("[^"]*"|'[^']*'|[^\s>]*)""", re.I
)


def strip_unsafe(markup: str) -> str:
    """MathML with every link, script and style attribute removed."""
    return _UNSAFE_ATTR.sub("", markup)


# The converter writes every character as a reference (&#x0003D; for =) and
# wraps single tokens in <mrow>: the same MathML, several times the bytes.
_CHAR_REF = re.compile(r"&#x([0-9A-Fa-f]{1,6});")
_KEEP_REF = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_LONE_TOKEN = re.compile(r"<mrow>(<(m[ino])>[^<]*</\2>)</mrow>")


def _compact(markup: str) -> str:
    markup = _CHAR_REF.sub(lambda m: _KEEP_REF.get(c := chr(int(m[1], 16)), c), markup)
    # infinity is a symbol, not an operator (the converter's <mo> spaces it like one: "− ∞")
    return _LONE_TOKEN.sub(r"\1", markup).replace("<mo>\u221e</mo>", "<mi>\u221e</mi>")


_PRIME = r"(?:<mrow>)?<mi>&#x02032;</mi>(?:</mrow>)?"
_PRIME_SUP = re.compile(r"<msup>(<mi>[^<]*</mi>)" + _PRIME + "</msup>")
# (the subscript: one token, or one <mrow> without another inside, so a match never runs into the next element)
_PRIME_SUBSUP = re.compile(
    r"<msubsup>(<mi>[^<]*</mi>)(<m[in]>[^<]*</m[in]>|<mrow>(?:(?!</?mrow>).)*</mrow>)" + _PRIME + "</msubsup>"
)
_PRIME_MO = '<mo lspace="0" rspace="0">&#x02032;</mo>'
# over a subscript: the prime at the size of its base (as beside a base without
# one), lowered to where TeX sets the superscript \prime of S'_{c,1}
_PRIME_OVER = '<mpadded voffset="-.45em"><mo scriptlevel="-1" lspace="0" rspace="0">&#x02032;</mo></mpadded>'


def _primes(m: str) -> str:
    """S' as S followed by a prime at the base line: the converter makes the
    prime a superscript, and the prime glyph, already raised, then prints
    small and high like an acute accent (S´).  ``S'_{ij}``: the prime and
    the subscript stacked on S, as TeX sets them (a prime beside S with the
    subscript after it reads as two marks apart), the prime as big as beside
    a bare S."""
    if "&#x02032;" not in m:
        return m
    m = _PRIME_SUP.sub(lambda g: f"<mrow>{g[1]}{_PRIME_MO}</mrow>", m)
    return _PRIME_SUBSUP.sub(lambda g: f"<msubsup>{g[1]}{g[2]}{_PRIME_OVER}</msubsup>", m)
