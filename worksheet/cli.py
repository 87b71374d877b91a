"""The command line: a thin layer that parses options and calls the library.

Nothing heavy is imported at start-up: ``worksheet --help`` and ``worksheet
list`` load neither numpy, jinja2 nor sympy.  Every user error becomes one
line on stderr and exit code 2 (``check`` uses 1 for answers marked wrong).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import __version__
from .errors import WorksheetError

FORMAT_HELP = "comma list of md, tex, json"


class WorksheetGroup(click.Group):
    """A group that reports every error as one line: ``error: ...``."""

    def main(self, args=None, prog_name=None, **extra):
        extra.pop("standalone_mode", None)
        try:
            rc = super().main(args=args, prog_name=prog_name or "worksheet", standalone_mode=False, **extra)
        except WorksheetError as exc:
            _fail(str(exc))
        except click.exceptions.Abort:
            _fail("aborted", 1)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        sys.exit(rc if isinstance(rc, int) else 0)


def _fail(message: str, code: int = 2):
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _formats(value: str, allowed=None) -> list[str]:
    from .render import FORMATS

    allowed = allowed or list(FORMATS)
    out = [f.strip().lower() for f in value.split(",") if f.strip()]
    for f in out:
        if f not in allowed:
            raise WorksheetError(f"unknown format '{f}'; choose from {', '.join(allowed)}")
    if not out:
        raise WorksheetError("--format needs at least one format")
    return list(dict.fromkeys(out))


def size_options(f):
    """The options every command shares for kind parameters."""
    opts = [
        click.option("--numbers", type=click.Choice(["hand", "calculator"]), default=None,
                     help="hand (default): numbers to do by hand; calculator: decimals, any d_k"),
        click.option("--seq-len", type=int, help="number of tokens n"),
        click.option("--d-model", type=int, help="embedding width"),
        click.option("--d-k", type=int, help="query/key width (hand mode: a perfect square)"),
        click.option("--heads", type=int, help="number of heads (multi-head kinds)"),
        click.option("--causal/--no-causal", default=None, help="mask future tokens (j > i)"),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _kind_options(kw: dict) -> dict:
    keys = ("numbers", "seq_len", "d_model", "d_k", "heads", "causal")
    return {k: kw[k] for k in keys if kw.get(k) is not None}


@click.group(cls=WorksheetGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="worksheet")
def main():
    """Worked examples of Transformer attention, exact, with answer keys."""


@main.command("list")
@click.option("--examples", is_flag=True, help="list the reference examples from the lectures instead")
def list_cmd(examples):
    """List every problem kind (or reference example), one line each."""
    if examples:
        from .reference import EXAMPLES

        rows = {name: f"[{ex.kind}] {ex.summary}" for name, ex in EXAMPLES.items()}
    else:
        from .kinds import KINDS

        rows = {name: summary for name, (_, summary) in KINDS.items()}
    width = max(map(len, rows))
    for name, summary in rows.items():
        click.echo(f"{name:<{width}}  {summary}")


@main.command()
@click.argument("kinds", nargs=-1)
@click.option("--seed", type=int, default=1, show_default=True, help="seed of the random numbers")
@click.option("--format", "formats", default="md,tex,json", show_default=True, help=FORMAT_HELP)
@click.option("-o", "--out", default="output", show_default=True, help="output folder, or - for stdout")
@click.option("--name", default="worksheet", show_default=True, help="base name of the files")
@click.option("--force", is_flag=True, help="overwrite existing files")
@click.option("--title", default=None, help="title printed on the sheet")
@size_options
def build(kinds, seed, formats, out, name, force, title, **kw):
    """Build a student sheet and an answer key.

    KINDS are problem kinds (see 'worksheet list'), default attention; give
    several for one sheet with several problems.  Settings for one problem
    only: KIND:key=value,... e.g. attention:seq-len=4,causal=true
    """
    from .build import build_document, render_document, write_document

    fmts = _formats(formats)
    if out == "-" and len(fmts) != 1:
        raise WorksheetError("-o - writes one format to stdout; give exactly one with --format")
    doc = build_document(kinds or ("attention",), seed=seed, options=_kind_options(kw), title=title)
    if out == "-":
        files = render_document(doc, fmts, name=name, roles=("sheet",))
        click.echo(next(iter(files.values())), nl=False)
        return
    for path in write_document(doc, fmts, out, name=name, force=force):
        click.echo(f"wrote {path}")


@main.command()
@click.argument("kind", required=False)
@click.option("-i", "--input", "input_file", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON or TOML file of named matrices")
@click.option("--example", help="a reference example instead of a file (see 'worksheet list --examples')")
@click.option("--format", "fmt", default="md", show_default=True, help="md, tex or json")
@click.option("-o", "--out", default="-", show_default=True, help="output file, or - for stdout")
@click.option("--force", is_flag=True, help="overwrite an existing output file")
@click.option("--causal/--no-causal", default=None, help="mask future tokens (overrides the file)")
def solve(kind, input_file, example, fmt, out, force, causal):
    """Worked solution of KIND for the numbers in a file (or a reference example)."""
    from .build import solve_example, solve_file
    from .document import Document
    from .files import write_all
    from .render import get

    formats = _formats(fmt)
    if len(formats) != 1:
        raise WorksheetError("solve writes one format; give one with --format")
    options = {"causal": causal}
    if example:
        if input_file or kind:
            raise WorksheetError("give either --example NAME or KIND --input FILE, not both")
        problem = solve_example(example, options)
    elif kind and input_file:
        problem = solve_file(kind, input_file, options)
    else:
        raise WorksheetError("solve needs KIND --input FILE (or --example NAME)")
    doc = Document(f"Worked solution: {problem.title}", [problem], seed=None, numbers="own")
    text = get(formats[0]).render(doc, key=True)
    if out == "-":
        click.echo(text, nl=False)
    else:
        write_all({Path(out): text}, force=force)
        click.echo(f"wrote {out}")


if __name__ == "__main__":  # pragma: no cover
    main()
