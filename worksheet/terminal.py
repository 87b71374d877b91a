"""What the command line shows on a terminal, apart from the commands
themselves (:mod:`worksheet.cli`): every error as one line on stderr,
writes to standard output that fail with one line (or quietly for a closed
pipe), the progress bars of long builds, where the examples are, and the
formats a ``--format`` list names.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import click

from .policy.errors import WorksheetError, printable

__all__ = [
    "WorksheetGroup",
    "StdoutError",
    "long_number_message",
    "fail",
    "echo",
    "flush",
    "stdout_failed",
    "PROGRESS_FROM",
    "with_latex",
    "with_progress",
    "examples_folder",
    "formats",
    "solve_format",
    "TERMINAL_FORMAT",
]


class StdoutError(Exception):
    """Standard output could not be written."""

    def __init__(self, exc: OSError):
        super().__init__(exc.strerror or str(exc))
        self.errno = exc.errno


def long_number_message(exc: click.BadParameter) -> str | None:
    """Our message for an option whose whole number has more digits than Python
    converts (click would print all of them, then Python's advice)."""
    import re

    from .policy.integer_text import digit_limit

    run = max((len(m) for m in re.findall(r"[0-9]+", str(exc.message))), default=0)
    limit = digit_limit()
    if not limit or run <= limit:
        return None
    name = exc.param_hint or (exc.param.opts[0] if exc.param is not None and exc.param.opts else "a value")
    if isinstance(name, (list, tuple)):
        name = name[0]
    return f"{name}: a whole number of {run} digits, more than the limit of {limit} digits"


def fail(message: str, code: int = 2):
    """One line on stderr (control characters escaped), then exit."""
    click.echo(f"error: {printable(message)}", err=True)
    sys.exit(code)


def echo(text: str, nl: bool = True) -> None:
    """Write to standard output; a failed write raises :class:`StdoutError`."""
    try:
        click.echo(text, nl=nl)
    except OSError as exc:
        raise StdoutError(exc) from None


def flush() -> None:
    try:
        sys.stdout.flush()
    except OSError as exc:
        raise StdoutError(exc) from None


def stdout_failed(exc: StdoutError):
    """Standard output is broken: make sure the interpreter's own flush at exit
    cannot fail again (a second message), then one line, or quietly for a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):  # not a real file (e.g. under a test runner)
        pass
    if exc.errno == errno.EPIPE:
        sys.exit(141)
    fail(f"cannot write to standard output: {exc}")


PROGRESS_FROM = 10  # variants from which a build shows a progress bar (on a terminal)


def with_latex(pdfs: int, write, *args, **kw):
    """``write`` the files, with a progress bar over the PDFs LaTeX compiles when stderr is a terminal."""
    if pdfs and sys.stderr.isatty():
        with click.progressbar(length=pdfs, label="compiling PDF with LaTeX", file=sys.stderr, show_pos=True) as bar:
            return write(*args, progress=bar.update, **kw)
    return write(*args, **kw)


def with_progress(make, problems, count, *args, **kw):
    """``make`` variants, with a progress bar on stderr when it is a terminal and there are many."""
    if count >= PROGRESS_FROM and sys.stderr.isatty():
        with click.progressbar(length=count, label="building variants", file=sys.stderr) as bar:
            return make(problems, count, *args, progress=bar.update, **kw)
    return make(problems, count, *args, **kw)


def examples_folder() -> Path:
    """``examples/`` of a source checkout, or the copy inside the wheel."""
    here = Path(__file__).resolve().parent  # worksheet/ (the wheel) or a checkout
    for candidate in (here / "examples", here.parent / "examples"):
        if candidate.is_dir():
            return candidate
    raise WorksheetError("the examples/ folder is missing from this installation")


class WorksheetGroup(click.Group):
    """A group that reports every error as one line: ``error: ...``."""

    def main(self, args=None, prog_name=None, **extra):
        extra.pop("standalone_mode", None)
        try:
            rc = super().main(args=args, prog_name=prog_name or "worksheet", standalone_mode=False, **extra)
            flush()
        except WorksheetError as exc:
            fail(str(exc))
        except StdoutError as exc:
            stdout_failed(exc)
        except click.exceptions.Abort as exc:
            if isinstance(exc.__context__, KeyboardInterrupt):
                fail("interrupted", 130)
            fail("aborted", 1)
        except click.BadParameter as exc:
            fail(long_number_message(exc) or exc.format_message(), exc.exit_code)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted", 130)
        sys.exit(rc if isinstance(rc, int) else 0)


def formats(value: str, allowed=None) -> list[str]:
    """The formats of a ``--format`` comma list, checked, each once."""
    from .render import FORMATS

    allowed = allowed or list(FORMATS)
    out = [f.strip().lower() for f in value.split(",") if f.strip()]
    for f in out:
        if f not in allowed:
            raise WorksheetError(f"unknown format '{f}'; choose from {', '.join(allowed)}")
    if not out:
        raise WorksheetError("--format needs at least one format")
    return list(dict.fromkeys(out))


TERMINAL_FORMAT = "text"  # what `worksheet solve` writes to a terminal when no --format is given
SOLVE_FORMAT = "md"  # ... and to a pipe or a file: unchanged, so nothing downstream breaks


def solve_format(fmt: str | None, out: str, isatty: bool) -> str:
    """The ``--format`` of ``worksheet solve``: the one given; else plain text
    when the solution goes to a terminal (``-o -`` and standard output is a
    tty), Markdown when it goes to a pipe or a file."""
    if fmt is not None:
        return fmt
    return TERMINAL_FORMAT if out == "-" and isatty else SOLVE_FORMAT
