"""Reading untrusted files: a size limit and UTF-8 first, then text for messages
and reports quoted, escaped and cut short; the size limits shared by keys and
answer files."""

from __future__ import annotations

from pathlib import Path

from ..policy.files import read_text

MAX_SIZE = 64  # rows or columns of one answer matrix
MAX_NAME = 100  # characters of a step name or a metadata field
MAX_LABEL = 200  # characters of a token label


def _read_text(path: Path, label: str, limit: int) -> str:
    return read_text(path, label, limit)


def _show(s: object, limit: int = 30) -> str:
    """Untrusted text for a message: quoted, escaped and cut short."""
    s = str(s)
    return repr(s if len(s) <= limit else s[:limit] + "...")


def _shown_entry(s: str, limit: int = 40) -> str:
    """An entry as written, printable and short (for the report)."""
    s = "".join(c if c.isprintable() else "?" for c in s.strip())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


_NON_FINITE = frozenset({"NaN", "Infinity"})


def _json_constant(name: str) -> str:
    """JSON's NaN and Infinity are read as their text, so the entry holding one
    is refused with its step, row and column (-Infinity is -oo, a masked score)."""
    return "-inf" if name == "-Infinity" else name
