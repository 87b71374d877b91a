"""The types a kind's parameters may declare, and their converters.

A ``Params`` field's annotation names its type (``int``, ``bool``, ``str``,
``Fraction``, ``tuple[str, ...]``, ``tuple[int, ...]``, each optionally
``| None``); :data:`TYPES` maps each to a :class:`ParamType` (after click's:
``convert`` a value from a file or the command line, ``fail`` with one line
naming the field).  :func:`declared` reads a Params class's annotations once
(``typing.get_type_hints``); ``Params.from_options``, ``worksheet list KIND``
and the practice app all ask it, never the annotation's text.

A new parameter type is one :class:`ParamType` and one line of :data:`TYPES`.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any, Mapping, NoReturn

from ..policy.errors import InputError
from ..policy.integer_text import digit_limit, digits, shown, too_long
from ..policy.safetext import check_labels

__all__ = ["ParamType", "Declared", "TYPES", "BOOL", "WHOLE", "TEXT", "EXACT", "LABELS", "WHOLES", "declared"]


class ParamType:
    """How values of one declared type are read (click's ``ParamType``)."""

    name = "value"  # what the type is called

    def convert(self, value: Any, where: Mapping[str, Any]) -> Any:
        """``value`` (from a file, a spec or the command line) as this type;
        ``where`` (``file=``, ``field=``) names it in an error."""
        return value

    def check(self, value: Any, field: str) -> None:
        """Checks a value of this type must pass however it was made (the labels')."""

    def fail(self, message: str, where: Mapping[str, Any]) -> NoReturn:
        """One line naming the file and field: an :class:`InputError`."""
        raise InputError(message, **where)


class Bool(ParamType):
    name = "true or false"

    def convert(self, value, where):
        if isinstance(value, bool):
            return value
        self.fail(f"must be true or false, not {shown(value)}", where)


class Whole(ParamType):
    name = "whole number"

    def convert(self, value, where):
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"must be a whole number, not {shown(value)}", where)
        if too_long(value):
            self.fail(f"a whole number of {digits(value)} digits, more than the limit of {digit_limit()} digits", where)
        return value


class Text(ParamType):
    name = "text"

    def convert(self, value, where):
        if not isinstance(value, str):
            self.fail(f"must be text, not {shown(value)}", where)
        return value


class Exact(ParamType):
    name = "exact number"

    def convert(self, value, where):
        from ..parse import exact_from_json  # local: keeps parse off the start-up path

        if isinstance(value, Fraction):
            return value
        try:
            return exact_from_json(value)
        except ValueError as exc:
            self.fail(str(exc), where)


class Labels(ParamType):
    name = "list of labels"

    def convert(self, value, where):
        if isinstance(value, str):
            value = value.split()
        if not isinstance(value, (list, tuple)) or not all(isinstance(x, (str, int)) for x in value):
            self.fail("must be a list of labels", where)
        if any(isinstance(x, int) and too_long(x) for x in value):
            self.fail(f"a label is a whole number of more than the limit of {digit_limit()} digits", where)
        return check_labels([str(x) for x in value], **where)

    def check(self, value, field):
        if value is not None:  # printable, bounded, no $ (see worksheet.policy.safetext)
            check_labels(value, field=field)


class Wholes(ParamType):
    name = "list of whole numbers"

    def convert(self, value, where):
        if isinstance(value, str):
            words = value.replace(",", " ").split()
            if not all(re.fullmatch(r"[+-]?[0-9]{1,9}", w) for w in words):
                self.fail(f"must be a list of whole numbers, not {shown(value)}", where)
            value = [int(x) for x in words]
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(x, int) and not isinstance(x, bool) for x in value
        ):
            self.fail("must be a list of whole numbers", where)
        return tuple(value)


BOOL, WHOLE, TEXT, EXACT, LABELS, WHOLES = Bool(), Whole(), Text(), Exact(), Labels(), Wholes()

# a declared type -> its converter
TYPES: dict[Any, ParamType] = {
    bool: BOOL,
    int: WHOLE,
    str: TEXT,
    Fraction: EXACT,
    tuple[str, ...]: LABELS,
    tuple[int, ...]: WHOLES,
}


@dataclass(frozen=True)
class Declared:
    """A field's declared type: its converter, and whether None is allowed."""

    type: ParamType
    optional: bool


@functools.cache
def declared(params_cls: type) -> dict[str, Declared]:
    """Each field of a Params class -> its :class:`Declared` type, read once;
    a TypeError for a type :data:`TYPES` does not know (the kind's mistake)."""
    hints = typing.get_type_hints(params_cls)
    out = {}
    for f in fields(params_cls):
        hint = hints[f.name]
        args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else ()
        optional = type(None) in args
        if args:
            rest = [a for a in args if a is not type(None)]
            if len(rest) != 1:
                raise TypeError(f"{params_cls.__qualname__}.{f.name}: one type, or one type | None")
            hint = rest[0]
        if hint not in TYPES:
            raise TypeError(
                f"{params_cls.__qualname__}.{f.name}: no converter for {hint!r} (worksheet.kinds.param_types)"
            )
        out[f.name] = Declared(TYPES[hint], optional)
    return out
