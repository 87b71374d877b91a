"""Whole numbers too long to print: our own one-line message, never Python's.

Python converts integers to and from text only up to
``sys.get_int_max_str_digits()`` digits (4300 by default; a guard against
quadratic-time conversions).  Beyond it ``int("9" * 5000)``, ``str(10**5000)``
and the JSON and TOML readers raise ``ValueError: Exceeds the limit (4300
digits) for integer string conversion``.  Every number we accept is far
smaller (see :mod:`worksheet.limits`), so such a number is always a user
error, and the message names where it is and the limit:
``in.json, line 3, field X: a whole number of 5000 digits, more than the
limit of 4300 digits``.  :func:`shown` writes any value for a message
without ever failing on a long integer.
"""

from __future__ import annotations

import math
import re
import sys

from .errors import InputError


def digit_limit() -> int:
    """The number of digits Python converts (0 means no limit)."""
    getter = getattr(sys, "get_int_max_str_digits", None)
    return getter() if getter else 0


def digits(n: int) -> int:
    """The number of decimal digits of ``n`` (without converting it to text)."""
    n = abs(int(n))
    if n == 0:
        return 1
    d = int(n.bit_length() * math.log10(2)) + 1  # exact or one too many
    return d if n >= 10 ** (d - 1) else d - 1


def too_long(n: int) -> bool:
    limit = digit_limit()
    return bool(limit) and digits(n) > limit


def shown(value, width: int = 60) -> str:
    """``repr(value)`` for a one-line message: at most ``width`` characters, and
    a whole number too long to print as ``a whole number of N digits``."""
    if isinstance(value, int) and not isinstance(value, bool) and digits(value) > width // 2:
        return f"a whole number of {digits(value)} digits"
    try:
        text = repr(value)
    except ValueError:  # a container holding a long integer
        return f"a {type(value).__name__} holding a number too long to print"
    except RecursionError:
        return f"a {type(value).__name__} nested too deeply to show"
    except Exception:  # noqa: BLE001 - an object whose repr fails: say what it is
        return f"a {type(value).__name__}"
    text = " ".join(text.split())  # one line (a numpy array's repr has several)
    return text if len(text) <= width else text[: width - 3] + "..."


def is_digit_limit_error(exc: BaseException) -> bool:
    """Is ``exc`` Python's ValueError for an integer of too many digits?"""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


_DIGIT_RUN = re.compile(r"[0-9][0-9_]*")
_KEY = re.compile(r"""(?:"((?:[^"\\]|\\.)*)"\s*:|([A-Za-z0-9_-]+)\s*=|"((?:[^"\\]|\\.)*)"\s*=)""")


def long_number_error(text: str, *, file: str | None = None) -> InputError:
    """The error for a file whose reader refused a whole number of too many
    digits: names the line, the field (the nearest key before it) and the limit."""
    limit = digit_limit()
    for m in _DIGIT_RUN.finditer(text):
        count = len(m.group().replace("_", ""))
        if limit and count > limit:
            line = text.count("\n", 0, m.start()) + 1
            keys = list(_KEY.finditer(text, 0, m.start()))
            field = next((g for g in keys[-1].groups() if g is not None), None) if keys else None
            return InputError(
                f"line {line}: a whole number of {count} digits, more than the limit of {limit} digits",
                file=file,
                field=field,
            )
    return InputError(f"a whole number of more than the limit of {limit} digits", file=file)
