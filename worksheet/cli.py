"""The command line: a thin layer that parses options and calls the library.

Nothing heavy is imported at start-up: ``worksheet --help`` and ``worksheet
list`` load neither numpy, jinja2 nor sympy.  Every user error becomes one
line on stderr and exit code 2 (``check`` uses 1 for answers marked wrong);
control characters in it (a newline or an ANSI escape in a field name) are
shown escaped, so one error is always one line.  Ctrl-C exits with 130.
When standard output cannot be written (a full disk, ``> /dev/full``), one
line and exit code 2; a closed pipe (``| head``) ends quietly with 141, as a
shell reports SIGPIPE.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from . import __version__
from .policy.errors import WorksheetError, printable
from .policy.limits import MAX_SEED
from .render import FORMATS
from .terminal import PROGRESS_FROM, WorksheetGroup, examples_folder
from .terminal import formats as _formats
from .terminal import solve_format as _solve_format
from .terminal import echo as _echo
from .terminal import with_latex as _with_latex
from .terminal import with_progress as _with_progress

FORMAT_HELP = (
    f"comma list of {', '.join(FORMATS)} (moodle: a Moodle XML question bank, qti: a QTI 2.1 package, "
    "text: plain text for a terminal)"
)


def _get_format(name: str):
    """The format called ``name`` (see worksheet.render.artefacts), imported when asked for."""
    from .render import get

    return get(name)


def _title(value: str | None, field: str) -> str | None:
    """A one-line title whose ``$...$`` formulas use only the allowed maths
    (see worksheet.policy.safetext.check_title)."""
    from .policy.safetext import check_title

    return value if value is None else check_title(value, field=field)


def size_options(f):
    """The options every command shares for kind parameters."""
    opts = [
        click.option(
            "--numbers",
            type=click.Choice(["hand", "calculator"]),
            default=None,
            help="hand (default): numbers to do by hand; calculator: decimals, any d_k",
        ),
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
    """Worked examples of Transformer attention, exact, with answer keys.

    \b
    Examples:
      worksheet list
      worksheet build attention --causal --seed 7
      worksheet examples my-course
      worksheet build --spec my-course/midterm.toml --variants 40 --format pdf -o midterm
      worksheet template midterm/midterm.json -o answers
      worksheet check midterm/midterm.json --answers-dir answers

    Shell completion (bash): eval "$(_WORKSHEET_COMPLETE=bash_source worksheet)"
    """


@main.command("list")
@click.argument("kind", required=False)
@click.option("--examples", is_flag=True, help="list the reference examples from the lectures instead")
def list_cmd(kind, examples):
    """List the problem kinds, or show one kind's parameters.

    With KIND: its parameters (defaults, the values hand and calculator
    mode accept, what each means), what hand and calculator mode draw, and
    the mistakes 'worksheet check' names.

    \b
    Examples:
      worksheet list
      worksheet list attention
      worksheet list --examples
    """
    if kind is not None:
        if examples:
            raise WorksheetError("give either KIND or --examples, not both")
        from .kinds.catalogue import describe, kind_info

        _echo(describe(kind_info(kind)), nl=False)
        return
    if examples:
        from .kinds.lecture_examples import EXAMPLES

        rows = {name: f"[{ex.kind}] {ex.summary}" for name, ex in EXAMPLES.items()}
    else:
        from .kinds import KINDS

        rows = {name: summary for name, (_, summary) in KINDS.items()}
    width = max(map(len, rows))
    for name, summary in rows.items():
        _echo(f"{name:<{width}}  {summary}")


# long: the build command: click's options resolved and dispatched in one place
@main.command()
@click.argument("kinds", nargs=-1)
@click.option(
    "--spec",
    "spec_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="exam spec file (TOML): title, course, sections with points; see examples/ "
    "('worksheet examples DIR' copies them out)",
)
@click.option(
    "--seed", type=click.IntRange(0, MAX_SEED), default=None, help="seed of the random numbers, 0 or more  [default: 1]"
)
@click.option("--format", "formats", default="md,tex,json", show_default=True, help=FORMAT_HELP)
@click.option("-o", "--out", default="output", show_default=True, help="output folder, or - for stdout")
@click.option("--name", default=None, help="base name of the files  [default: worksheet]")
@click.option("--force", is_flag=True, help="overwrite existing files with other content (same bytes: up to date)")
@click.option(
    "--title",
    default=None,
    callback=lambda ctx, param, value: _title(value, "--title"),
    help="title printed on the sheet (one line of plain text)",
)
@click.option(
    "--variants",
    type=click.IntRange(1, 2000),
    default=None,
    help="N versions, one per student (ids v01, v02, ...), plus NAME-variants.csv",
)
@click.option("--split", is_flag=True, help="with --variants: one file per variant, not one combined file")
@click.option(
    "--variant",
    "only",
    default=None,
    metavar="ID",
    help="rebuild only this variant's files (v17, or the seed printed on its "
    "sheet), the same bytes as --split writes; how many variants: --variants N, else the "
    "key NAME.json the full build wrote in -o, else the spec's",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="processes building --variants (same files whatever the number)  [default: one per core from 24 problems on]",
)
@click.option("--paper", type=click.Choice(["a4", "letter"]), default=None, help="paper size of tex/pdf  [default: a4]")
@click.option(
    "--compact/--no-compact",
    default=None,
    help="tex/pdf study sheet: two columns, smaller type and matrices, every worked line kept",
)
@click.option(
    "--duplex/--no-duplex",
    default=None,
    help="tex/pdf for two-sided printing: each variant padded to an even page count",
)
@click.option(
    "--templates",
    "templates",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="folder with a copy of templates/ to restyle the sheets",
)
@size_options
def build(
    kinds,
    spec_file,
    seed,
    formats,
    out,
    name,
    force,
    title,
    variants,
    split,
    only,
    jobs,
    paper,
    compact,
    duplex,
    templates,
    **kw,
):
    """Build a student sheet and an answer key.

    KINDS are problem kinds (see 'worksheet list'), default attention; give
    several for one sheet with several problems.  Settings for one problem
    only: KIND:key=value,... e.g. attention:seq-len=4,causal=true.  An
    option such as --heads applies to every problem whose kind has it, and
    is an error when none has it.

    \b
    Examples:
      worksheet build attention --causal --seed 7
      worksheet build attention layer-norm:eps=1/10 --format md,pdf -o week5
      worksheet build --spec examples/midterm.toml --variants 40 --format pdf,json -o midterm
      worksheet build --spec examples/midterm.toml --variants 40 --variant v17 --format pdf -o midterm
      worksheet build --spec examples/midterm.toml --variants 40 --format moodle -o moodle
      worksheet build self-attention-basic next-token --compact --format pdf -o study
    """
    from .build import (
        build_document,
        build_variants,
        render_documents,
        render_variants,
        resolve_build,
        write_documents,
        write_rendered,
    )

    fmts = _formats(formats)
    if out == "-" and len(fmts) != 1:
        raise WorksheetError("-o - writes one format to stdout; give exactly one with --format")
    if out == "-" and _get_format(fmts[0]).binary:
        raise WorksheetError(f"-o - writes text; write {fmts[0]} files to a folder with -o DIR")
    if templates is not None and not templates.is_dir():
        raise WorksheetError(f"--templates {templates}: no such folder")
    plan = resolve_build(
        spec_file,
        kinds,
        seed=seed,
        options=_kind_options(kw),
        title=title,
        variants=variants,
        name=name,
        paper=paper,
        split=split,
        compact=compact,
        duplex=duplex,
    )
    from .build import check_problems

    check_problems(plan.problems, plan.options)  # parameter errors come before "output exists"
    counted = variants  # --variants N, as given
    name, variants, args = plan.name, plan.variants, plan.document_args()
    k = None
    if only is not None:
        if out == "-":
            raise WorksheetError("--variant writes that variant's files; give a folder with -o DIR")
        if not counted:  # the key of the full build knows how many (a spec's count is only its default)
            from .build import count_of_key

            variants = count_of_key(Path(out) / f"{name}.json", plan.seed, variants)
        from .build import find_variant

        k = find_variant(only, variants, plan.seed)
    if out == "-":
        if variants:
            docs = _with_progress(build_variants, plan.problems, variants, **args)
        else:
            docs = [build_document(plan.problems, **args)]
        files = render_documents(docs, fmts, name=name, templates=templates, roles=("sheet",)).files
        _echo(next(iter(files.values())), nl=False)
        return
    started = time.monotonic()
    compiled = sum(len(f.artefacts()) for f in map(_get_format, fmts) if f.compiled)  # the PDFs of one sheet
    pdfs = compiled * (variants if (split and variants) else 1)
    if k is not None:
        from .build import render_variant

        outlines, rendered = render_variant(plan.problems, variants, k, fmts, name=name, templates=templates, **args)
        pdfs = compiled
        paths = _with_latex(
            pdfs, write_rendered, outlines, rendered, fmts, out, name=name, force=force, split=True, table=False
        )
    elif variants:
        outlines, rendered = _with_progress(
            render_variants,
            plan.problems,
            variants,
            fmts,
            name=name,
            templates=templates,
            split=split,
            jobs=jobs,
            **args,
        )
        paths = _with_latex(pdfs, write_rendered, outlines, rendered, fmts, out, name=name, force=force, split=split)
    else:
        doc = build_document(plan.problems, **args)
        paths = _with_latex(pdfs, write_documents, [doc], fmts, out, name=name, force=force, templates=templates)
    _report_written(paths)
    if (pdfs or (variants or 0) >= PROGRESS_FROM) and not sys.stderr.isatty():  # one summary line, for logs
        count = 1 if k is not None else (variants or 1)
        problems = count * len(plan.problems)
        click.echo(
            f"built {count} sheet{'s' * (count != 1)} ({problems} problem{'s' * (problems != 1)}), "
            f"{len(paths)} files{f', {pdfs} PDFs compiled' if pdfs else ''}, "
            f"in {time.monotonic() - started:.1f} s",
            err=True,
        )


def _report_written(paths):
    """``wrote PATH`` per file written, ``up to date: PATH`` per file already there byte for byte."""
    same = set(getattr(paths, "unchanged", ()))
    for path in paths:
        _echo(f"{'up to date:' if path in same else 'wrote'} {printable(str(path))}")


@main.command()
@click.argument("kind", required=False)
@click.option(
    "-i",
    "--input",
    "input_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON or TOML file of named matrices",
)
@click.option("--example", help="a reference example instead of a file (see 'worksheet list --examples')")
@click.option(
    "--format",
    "fmt",
    default=None,
    help="md, tex, json, html or pdf (pdf only to a file: -o FILE.pdf), or text (plain text for a terminal)  "
    "[default: text on a terminal, else md]",
)
@click.option(
    "-o",
    "--out",
    default="-",
    show_default=True,
    help="output file (the format's extension is added to a name without one), or - for stdout",
)
@click.option("--force", is_flag=True, help="overwrite an existing output file")
@click.option("--causal/--no-causal", default=None, help="mask future tokens (overrides the file)")
def solve(kind, input_file, example, fmt, out, force, causal):
    """Worked solution for your own numbers, or a lecture's.

    KIND's worked solution for the numbers in a file, or a reference example
    (see 'worksheet list --examples').  The file is JSON or TOML: named matrices (see 'worksheet list KIND' for
    the inputs) and optional parameters; numbers are read exactly (0.2 is
    1/5), never evaluated.

    \b
    Examples:
      worksheet solve attention --input examples/mine.toml
      worksheet solve --example thinking-machines --format text | less
      worksheet solve attention -i examples/mine.toml --format json -o mine.json
      worksheet solve --example thinking-machines --format pdf -o tm.pdf
    """
    from .build import solve_example, solve_file
    from .kinds import conventions
    from .policy.files import write_all
    from .render import get
    from .solution.document import Document

    formats = _formats(_solve_format(fmt, out, sys.stdout.isatty()))
    if len(formats) != 1:
        raise WorksheetError("solve writes one format; give one with --format")
    if get(formats[0]).binary and out == "-":  # never binary on stdout (a terminal or a pipe)
        raise WorksheetError(f"-o - writes text; write {formats[0]} to a file with -o FILE.{get(formats[0]).ext}")
    options = {"causal": causal}
    if causal is not None and (kind or example):
        from .build import check_problems
        from .kinds.lecture_examples import EXAMPLES

        of = kind or (EXAMPLES[example].kind if example in EXAMPLES else None)
        if of:
            check_problems([of], {"causal": causal})  # --causal on a kind without a mask is an error
    if example:
        if input_file or kind:
            raise WorksheetError("give either --example NAME or KIND --input FILE, not both")
        problem = solve_example(example, options)
    elif kind and input_file:
        problem = solve_file(kind, input_file, options)
    else:
        raise WorksheetError("solve needs KIND --input FILE (or --example NAME)")
    doc = Document(
        f"Worked solution: {problem.title}", [problem], seed=None, numbers="own", conventions=conventions([problem])
    )
    text = get(formats[0]).render(doc, key=True)
    if out == "-":
        _echo(text, nl=False)
    else:
        path = Path(out)
        if not path.suffix:  # -o tm --format pdf writes tm.pdf
            path = path.with_name(f"{path.name}.{get(formats[0]).ext}")
        write_all({path: text}, force=force)
        _echo(f"wrote {printable(str(path))}")


@main.command()
@click.argument("key", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("answers", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--answers-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="mark every answer file (*.toml, *.json, *.csv) in this folder",
)
@click.option(
    "--summary",
    type=click.Path(dir_okay=False, path_type=Path),
    help="class summary CSV for --answers-dir (default DIR/summary.csv)",
)
@click.option("--force", is_flag=True, help="overwrite an existing summary CSV")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="report for people (text) or for tools (json)",
)
@click.option(
    "--rtol", type=float, help="accept |given - expected| <= atol + rtol |expected| (replaces the default rules)"
)
@click.option("--atol", type=float, help="absolute tolerance (see --rtol)")
@click.option("--moodle-responses", type=click.Path(dir_okay=False, path_type=Path), help="a quiz's Responses report")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), help="folder for --moodle-responses")
def check(key, answers, answers_dir, summary, force, fmt, rtol, atol, moodle_responses, out):
    """Mark answers step by step against a key, in points.

    ANSWERS (TOML, JSON or CSV) is marked against KEY (the JSON key).

    ANSWERS holds a matrix per step name (scores = [[1, 2], [3, 4]]), under
    [1], [2], ... when the key has several problems; CSV lines are
    problem,step,row,col,value.  Entries: integers, decimals, fractions,
    -inf, or exact forms such as 1/(1+e^-2).

    Each step is correct, carried forward (right for your own earlier
    answers), incorrect (with the likely mistake) or missing; a line that
    cannot be read is reported with its number and the rest is marked.  Exit
    code 0 when every step is correct or carried forward, 1 otherwise, 2 when
    a file cannot be read at all or was made for another key or variant.  With
    --answers-dir: exit 0 when every file could be marked; a file that cannot be
    (unreadable, or made for another key) is reported in its row of the
    summary, the rest are marked, and the exit code is 1.  KEY and ANSWERS
    swapped: the message says so.
    A key from an exam spec marks in the spec's points.

    \b
    Examples:
      worksheet check mine.json examples/answers.toml
      worksheet check midterm/midterm.json alice.csv --format json
      worksheet check midterm/midterm.json --answers-dir answers --summary marks.csv
      worksheet check quiz.json --moodle-responses responses.csv -o marks
    """
    from .check import Tolerance, check_answers, check_folder

    Tolerance(rtol, atol)  # validates before any file is read
    if moodle_responses is not None or out is not None:  # docs/moodle-responses.md
        from .check.responses_marks import check_moodle_responses, refuse_mixed

        refuse_mixed(moodle_responses, answers, answers_dir, summary)
        marks = check_moodle_responses(key, moodle_responses, out, force=force, tolerance=Tolerance(rtol, atol))
        _echo(marks.to_json() if fmt == "json" else marks.text(), nl=False)
        return marks.exit_code
    if answers_dir is not None:
        if answers is not None:
            raise WorksheetError("give either ANSWERS or --answers-dir DIR, not both")
        report = check_folder(key, answers_dir, summary=summary, force=force, rtol=rtol, atol=atol)
    elif answers is None:
        raise WorksheetError("check needs KEY ANSWERS (or KEY --answers-dir DIR)")
    else:
        if summary is not None:
            raise WorksheetError("--summary goes with --answers-dir")
        from .check.swapped import key_first

        report = check_answers(key_first(key, answers), answers, rtol=rtol, atol=atol)
    _echo(report.to_json() if fmt == "json" else report.text(), nl=False)
    return report.exit_code


@main.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="address to listen on (0.0.0.0: every interface, for a class)",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="port (0: any free one)")
@click.option("--no-browser", is_flag=True, help="do not open a browser")
@click.option(
    "--spec",
    "spec_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="serve only this exam spec's kinds and settings (a revision page for a class)",
)
@click.option("--focus", default=None, help="comma list of mistake codes to practise (from a check report)")
def practice(host, port, no_browser, spec_file, focus):
    """Practise in the browser, each cell checked as you leave it.

    A local web app: prints the address and opens the browser (unless
    --no-browser).  Each cell's verdict comes from the same marking as
    'worksheet check': right, right for your earlier cells (error carried
    forward), a named mistake, or wrong.  Stop it with Ctrl-C.

    \b
    Examples:
      worksheet practice
      worksheet practice --spec examples/midterm.toml --host 0.0.0.0
      worksheet practice --focus no-scaling,softmax-over-columns
    """
    try:
        from .practice import Scope, check_focus, serve
    except ModuleNotFoundError as exc:  # the web stack is an extra
        raise WorksheetError(
            f"worksheet practice needs {exc.name}: pip install 'attention-worksheet[practice]'"
        ) from None
    from .practice.exercises import RequestError

    try:
        codes = check_focus(focus)
    except RequestError as exc:
        raise WorksheetError(f"--focus: {exc}") from None
    scope = Scope.from_spec(spec_file, codes) if spec_file is not None else Scope(focus=codes)
    try:
        serve(host, port, open_browser=not no_browser, scope=scope, announce=_echo)
    except OSError as exc:
        raise WorksheetError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None


@main.command()
@click.argument("key", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", default="answers", show_default=True, help="folder for the answer files")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["toml", "csv"]),
    default="toml",
    show_default=True,
    help="answer file format (both are read by 'worksheet check')",
)
@click.option("--force", is_flag=True, help="overwrite existing answer files")
def template(key, out, fmt, force):
    """Write blank answer files for a key, one per variant.

    KEY is the JSON key of a build.  Each file holds every cell the student fills in, blank, with the
    variant's id and fingerprint (check refuses it against another key or variant); a student fills
    it in for 'worksheet check KEY FILE'.  Files are named KEY-answers-v01.toml, ...
    (KEY-answers.toml for a key without variants).

    \b
    Examples:
      worksheet build --spec examples/midterm.toml --format json -o midterm
      worksheet template midterm/midterm.json -o midterm/answers
      worksheet template midterm/midterm.json --format csv -o midterm/answers
      worksheet check midterm/midterm.json --answers-dir midterm/answers
    """
    from .check.template import template_files
    from .policy.files import write_all

    files = template_files(key, fmt)
    paths = write_all({Path(out) / name: text for name, text in files.items()}, force=force)
    for path in paths:
        _echo(f"wrote {printable(str(path))}")


@main.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="overwrite files of the same name")
def examples(folder, force):
    """Copy the example specs and answer files into FOLDER.

    The exam specs (midterm, study sheet, decoder and recurrent cells), an
    input file for 'worksheet solve' and sample answers for 'worksheet
    check': the files the README's tour and '--spec' refer to.

    \b
    Examples:
      worksheet examples my-course
      worksheet build --spec my-course/midterm.toml --format pdf -o midterm
    """
    from .policy.files import write_all

    source = examples_folder()
    files = {
        Path(folder) / p.name: p.read_bytes()
        for p in sorted(source.iterdir())
        if p.is_file() and not p.name.startswith(".")
    }
    for path in write_all(files, force=force):
        _echo(f"wrote {printable(str(path))}")


if __name__ == "__main__":  # pragma: no cover
    main()
