"""The exceptions users can meet.  The CLI prints each as one line, exit 2.

Every error about an argument or an input is also a built-in one, so that
library users can catch what they expect: a wrong type or shape is an
:class:`ArgumentError` (a ``TypeError``); a value that cannot work
(:class:`ParamError`, :class:`InputError`, :class:`ShapeError`,
:class:`UnknownKindError`, :class:`GenerationError`) is a ``ValueError``; an
unknown step name is an :class:`UnknownStepError` (a ``ValueError`` and a
``LookupError``, never a ``KeyError``).

Every message names *where* the problem is (file, field, row/column) so the
user can fix it without reading a traceback.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every non-printable character (newline, tab, ANSI escape,
    ...) shown as its Python escape (``\\n``, ``\\x1b``), so that a message
    naming user text is one line that cannot drive a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class WorksheetError(Exception):
    """Base of every error caused by user input or usage (exit code 2)."""


class ArgumentError(WorksheetError, TypeError):
    """A library function called with an argument of the wrong type or shape
    (``worksheet.check("attention", ...)``, a matrix nested three deep); the
    message names the argument."""


class UnknownStepError(WorksheetError, ValueError, LookupError):
    """A step (or input) name that the problem does not have.  A LookupError
    and a ValueError, never a KeyError: the message is a sentence that names
    the problem's steps, not a bare key."""


class UnknownKindError(WorksheetError, ValueError):
    """A problem kind that is not in the registry."""


class ParamError(WorksheetError, ValueError):
    """A parameter value that cannot work (e.g. d_k not a perfect square)."""


class InputError(WorksheetError, ValueError):
    """A value in an input or answer file that cannot be read."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        row: int | None = None,
        col: int | None = None,
    ):
        where = []
        if file:
            where.append(printable(str(file)))
        if field:
            where.append(printable(str(field)))
        if row is not None:
            where.append(f"row {row}")
        if col is not None:
            where.append(f"column {col}")
        self.file, self.field, self.row, self.col = file, field, row, col
        self.reason = message
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


def in_file(exc: WorksheetError, file: str | None) -> WorksheetError:
    """The same error, saying which file it is about (if it does not yet)."""
    if not file:
        return exc
    if isinstance(exc, InputError):
        if exc.file:
            return exc
        return InputError(exc.reason, file=file, field=exc.field, row=exc.row, col=exc.col)
    return type(exc)(f"{file}: {exc}")


class ShapeError(WorksheetError, ValueError):
    """Matrices whose shapes do not fit together."""


class GenerationError(WorksheetError, ValueError):
    """Hand-friendly numbers could not be found within the retry budget."""


class OutputError(WorksheetError):
    """An output file exists (without --force) or cannot be written."""


class MissingExtraError(WorksheetError, ImportError):
    """An optional part of worksheet needs a package that is not installed
    (``to_sympy()`` needs sympy, the optional extra ``sympy``)."""


class VerificationError(AssertionError):
    """The exact and the float64 computation disagree: a bug, not user error."""
