"""Telling a key from an answer file: ``worksheet check ANSWERS KEY`` (the two
swapped) is named as such, not as a key that cannot be read."""

from __future__ import annotations

from pathlib import Path

from ..policy.errors import InputError, WorksheetError, printable
from .key import Key, read_key


def key_first(key: Path | str, answers: Path | str) -> Key:
    """The key read; when it is no key but ``answers`` is one, say that the two are swapped."""
    try:
        return read_key(key)
    except InputError as exc:
        try:
            read_key(answers)
        except WorksheetError:
            raise exc from None
        a, k = printable(str(answers)), printable(str(key))
        raise InputError(
            f"KEY and ANSWERS are swapped: {a} is the key and {k} the answers; "
            f"the key comes first: worksheet check {a} {k}"
        ) from None
