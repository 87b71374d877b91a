"""The tokens of :func:`~worksheet.parse.parse_exact`: numbers, names,
LaTeX commands and operators, split in linear time with positioned errors."""

from __future__ import annotations

import re
from typing import NamedTuple

from .numbers import _DECIMAL, MAX_DECIMAL_EXPONENT, MAX_NUMBER_CHARS, ParseError, _Decimal

_INFINITY_NAMES = frozenset({"oo", "inf", "infinity"})


class _Token(NamedTuple):
    kind: str  # num e func frac inf + - * / ^ ( ) { } end
    pos: int  # 1-based
    text: str
    value: object = None  # Fraction for num, function name for func


_TOKEN_RE = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<num>" + _DECIMAL + r")"
    r"|(?P<name>[A-Za-z]+)"
    r"|(?P<cmd>\\[A-Za-z]*)"
    r"|(?P<op>\*\*|[-+*/^(){}\u2212\u221e\u00b7\u00d7\u22c5])"
    r"|(?P<greek>[\u221a\u03c3])"
    r"|(?P<sup>[\u207a\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)"
    r"|(?P<bad>.)",
    re.S,
)
_FUNCS = frozenset({"exp", "sqrt", "sin", "cos", "tanh", "sigma", "sigmoid"})
_GREEK = {"\u221a": "sqrt", "\u03c3": "sigma"}  # √3 (its argument needs no brackets), σ(2)
_LATEX = {
    "sqrt": "func",
    "exp": "func",
    "sin": "func",
    "cos": "func",
    "tanh": "func",
    "sigma": "func",
    "frac": "frac",
    "dfrac": "frac",
    "tfrac": "frac",
    "cdot": "*",
    "times": "*",
    "infty": "inf",
    "left": None,
    "right": None,  # \left( ... \right) are plain parentheses
}
_OPS = {
    "**": "^",
    "\u2212": "-",
    "\u221e": "inf",
    "\u00b7": "*",
    "\u00d7": "*",
    "\u22c5": "*",
}  # others: their own kind
# a power in superscripts, as the text sheets print it (e⁻², 2¹⁰): its exponent in plain characters
_SUPERSCRIPT = str.maketrans("\u207a\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079", "+-0123456789")
_OPERAND_START = frozenset({"num", "e", "func", "frac", "inf", "(", "{"})
_CLOSER = {"(": ")", "{": "}"}


def _show(s: str, limit: int = 20) -> str:
    """A token for an error message: quoted, and cut short if long."""
    return repr(s if len(s) <= limit else s[:limit] + "...")


def _tokenize(text: str) -> list[_Token]:
    """Split ``text`` into tokens (linear time); the list ends with an ``end`` token."""
    tokens: list[_Token] = []
    for m in _TOKEN_RE.finditer(text):
        kind, s, pos = m.lastgroup, m.group(), m.start() + 1
        if kind == "space":
            continue
        if kind == "num":
            tokens.append(_number_token(m, pos))
        elif kind == "name":
            tokens.append(_name_token(s, pos))
        elif kind == "cmd":
            if s[1:] not in _LATEX:
                raise ParseError(f"unknown command {_show(s)}", pos)
            kind = _LATEX[s[1:]]
            if kind is not None:
                tokens.append(_Token(kind, pos, s, s[1:] if kind == "func" else None))
        elif kind == "greek":
            tokens.append(_Token("func", pos, s, _GREEK[s]))
        elif kind == "sup":  # e⁻² is e^(-2): the exponent's tokens, each at this position
            try:
                inner = _tokenize(s.translate(_SUPERSCRIPT))[:-1]
            except ParseError as exc:  # (the superscript's own position, not the inner text's)
                raise ParseError(exc.reason, pos) from None
            tokens += [_Token("^", pos, s), _Token("(", pos, s), *(t._replace(pos=pos) for t in inner)]
            tokens.append(_Token(")", pos, s))
        elif kind == "op":
            tokens.append(_Token(_OPS.get(s, s), pos, s))
        else:
            raise ParseError(f"unexpected character {s!r}", pos)
    tokens.append(_Token("end", len(text) + 1, "end of input"))
    return tokens


def _number_token(m: re.Match, pos: int) -> _Token:
    if m.end() - m.start() > MAX_NUMBER_CHARS:
        raise ParseError("number too long", pos)
    num = _Decimal.of(m)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError("exponent too large", pos)
    return _Token("num", pos, m.group(), num.value())


def _name_token(name: str, pos: int) -> _Token:
    if name in ("e", "E"):
        return _Token("e", pos, name)
    if name in _FUNCS:
        return _Token("func", pos, name, "sigma" if name == "sigmoid" else name)
    if name.lower() in _INFINITY_NAMES:
        return _Token("inf", pos, name)
    raise ParseError(f"unknown name {_show(name)}", pos)
