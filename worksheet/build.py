"""The library behind the commands: build documents, solve files, write them.

The CLI only parses options and calls these; a notebook can do the same.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from . import kinds, render
from .document import Document
from .errors import GenerationError, InputError, ParamError, ShapeError, WorksheetError, in_file
from .files import refuse_existing, write_all
from .exact import key as _exact_key
from .model import Problem

DEFAULT_KINDS = ("attention",)
T = TypeVar("T")
SPEC_RE = re.compile(r"^(?P<kind>[a-z0-9-]+)(?::(?P<opts>.*))?$")


@dataclass(frozen=True)
class ProblemSpec:
    """One problem of a sheet: a kind and its own options (and, from an exam
    spec, its points and the lecturer's prompt, printed after the kind's intro)."""

    kind: str
    options: dict
    points: Any = None
    prompt: str = ""
    question: str = ""  # a question answered in words: a last, written step
    answer: str = ""  # its model answer
    lines: int = 5  # ruled lines for it on the sheet

    @classmethod
    def parse(cls, text: str) -> "ProblemSpec":
        """``KIND`` or ``KIND:key=value,key=value`` (per-problem settings).

        Keys use the parameter names with - or _ (``seq-len=4``); values
        ``true``/``false`` are booleans, whole numbers are ints, anything
        else is text (decimals such as ``eps=0.1`` are read exactly).
        """
        m = SPEC_RE.match(text.strip())
        if not m:
            raise WorksheetError(f"cannot read problem '{text}': write KIND or KIND:key=value,...")
        options: dict[str, Any] = {}
        for part in filter(None, (m.group("opts") or "").split(",")):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise WorksheetError(f"cannot read setting '{part}' in '{text}': write key=value")
            options[key.strip().replace("-", "_")] = _option_value(value.strip())
        return cls(m.group("kind"), options)


def _option_value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[+-]?\d{1,6}", text):
        return int(text)
    return text


def check_seed(seed) -> int:
    """A seed is a whole number from 0 to 2^32 - 1 (numpy refuses negative ones)."""
    from .limits import MAX_SEED

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ParamError(f"the seed must be a whole number from 0 to {MAX_SEED}, not {seed!r}")
    return seed


def problem_rng(seed: int, index: int, variant: int = 0) -> np.random.Generator:
    """The generator of problem ``index`` (0-based) of variant ``variant``."""
    return np.random.default_rng([seed, variant, index])


def make_problem(spec: ProblemSpec, options: dict, *, seed: int, index: int, variant: int = 0) -> Problem:
    kind = kinds.get(spec.kind)
    merged = {**options, **spec.options}
    unknown = sorted(set(spec.options) - set(kind.Params.field_names()))
    if unknown:
        raise ParamError(f"{spec.kind} has no setting '{unknown[0]}'; it has "
                         f"{', '.join(kind.Params.field_names())}")
    params = kind.Params.from_options(merged)
    inputs = kind.generate(problem_rng(seed, index, variant), params)
    problem = kind.solve(inputs, params, seed=seed)
    problem.points = spec.points
    if spec.prompt:
        problem.intro = f"{problem.intro} {spec.prompt}".strip()
    if spec.question:
        taken = {s.name for s in problem.steps}
        name = next(n for n in ["written"] + [f"written_{k}" for k in range(2, len(taken) + 3)] if n not in taken)
        problem.add_written(name, title=spec.question, answer=spec.answer, lines=spec.lines)
    return problem


def build_document(problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS, *, seed: int = 1,
                   options: dict | None = None, title: str | None = None,
                   variant: int = 0, variant_id: str = "", **doc_fields) -> Document:
    """Generate and solve the problems of one sheet, in the order given."""
    options = dict(options or {})
    check_seed(seed)
    specs = [p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems]
    for s in specs:
        kinds.get(s.kind)  # unknown kinds fail before any work
    probs = [make_problem(s, options, seed=seed, index=i, variant=variant) for i, s in enumerate(specs)]
    if title is None:
        title = probs[0].title if len(probs) == 1 else "Transformer attention worksheet"
    return Document(title, probs, seed=seed, numbers=options.get("numbers") or "hand",
                    variant=variant_id, **doc_fields)


def solve_inputs(kind_name: str, inputs: dict, options: dict | None = None) -> Problem:
    kind = kinds.get(kind_name)
    params = kind.Params.from_options(dict(options or {}))
    return kind.solve(inputs, params)


def solve_file(kind_name: str, path: Path | str, options: dict | None = None) -> Problem:
    """Solve the matrices in a JSON/TOML file; CLI options override the file's."""
    from .inputs import read_table

    return solve_table(kind_name, read_table(path, label=str(path)), options, label=str(path))


def solve_example(name: str, options: dict | None = None) -> Problem:
    """Solve a reference example from the lectures (see worksheet.reference)."""
    from .reference import EXAMPLES

    if name not in EXAMPLES:
        import difflib

        close = difflib.get_close_matches(name, EXAMPLES, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; see 'worksheet list --examples'"
        raise WorksheetError(f"unknown example '{name}'{hint}")
    ex = EXAMPLES[name]
    return solve_table(ex.kind, ex.table, options, label=f"example {name}")


def solve_table(kind_name: str, table: dict, options: dict | None = None, *,
                label: str | None = None) -> Problem:
    """Solve one input table (matrices + parameters), as read from a file."""
    from .inputs import split_table

    kind = kinds.get(kind_name)
    inputs, file_options = split_table(table, kind, file=label)
    merged = {**file_options, **{k: v for k, v in (options or {}).items() if v is not None}}
    # The user's own numbers are taken as they are: hand-mode limits (a perfect
    # square d_k, ...) are for generating, so solving defaults to calculator.
    merged.setdefault("numbers", "calculator")
    try:
        params = kind.Params.from_options(merged, source=label)
        return kind.solve(inputs, params, **_carry(kind))
    except (InputError, ShapeError, ParamError) as exc:
        raise in_file(exc, label) from None


def _carry(kind) -> dict:
    """A kind that can carry decimals (its ``solve`` takes ``carry``) keeps exact
    forms of the user's numbers only while they are short: see
    :data:`worksheet.limits.MAX_EXACT_CHARS` (generated problems are small and
    always exact)."""
    import inspect

    from .blocks import Carry
    from .limits import MAX_EXACT_CHARS

    return {"carry": Carry(limit=MAX_EXACT_CHARS)} if "carry" in inspect.signature(kind.solve).parameters else {}


def output_names(name: str, fmt: str) -> dict[str, str]:
    """File names per role: the JSON file is the key; other formats have both."""
    ext = render.get(fmt).ext if fmt in render.FORMATS else fmt
    if fmt == "json":
        return {"key": f"{name}.json"}
    if fmt == "moodle":  # one file: the questions, with the worked key as their feedback
        return {"sheet": f"{name}-moodle.xml"}
    return {"sheet": f"{name}.{ext}", "key": f"{name}-key.{ext}"}


def planned_files(name: str, formats: Iterable[str], variants: int = 0, split: bool = False) -> list[str]:
    """The files a build writes, known before building (so that a big build
    refuses an existing file at once, not after the work)."""
    groups = [f"{name}-{variant_id(k, variants)}" for k in range(1, variants + 1)] if split else [name]
    files = [f for g in groups for fmt in formats for f in output_names(g, fmt).values()]
    return files + ([f"{name}-variants.csv"] if variants else [])


def render_document(doc: Document, formats: Iterable[str], *, name: str = "worksheet",
                    templates: Path | None = None, roles=("sheet", "key")) -> dict[str, str | bytes]:
    """``{file name: text}`` for every format and role asked for (bytes for PDF)."""
    return render_documents([doc], formats, name=name, templates=templates, roles=roles).files


def write_document(doc: Document, formats: Iterable[str], out_dir: Path | str = "output", *,
                   name: str = "worksheet", force: bool = False,
                   templates: Path | None = None) -> list[Path]:
    return write_documents([doc], formats, out_dir, name=name, force=force, templates=templates)


# ---------------------------------------------------------------- variants

def variant_id(k: int, count: int) -> str:
    """The printed id of variant ``k`` (1-based) of ``count``: v01, v02, ... (v001 past 99)."""
    return f"v{k:0{max(2, len(str(count)))}d}"


def variant_seed(seed: int, k: int, attempt: int = 0) -> int:
    """The seed of variant ``k``: derived from (seed, k), below 10^8 so it is easy to type.

    A variant is an ordinary sheet built with this seed: ``worksheet build
    --seed <variant seed>`` with the same problems gives the same numbers.
    ``attempt`` > 0 draws again when a variant repeated an earlier one.
    """
    state = np.random.SeedSequence([seed, k, attempt]).generate_state(1, dtype=np.uint64)[0]
    return int(state % 100_000_000)


def _given_key(problem: Problem) -> tuple:
    """The given matrices of a problem, hashable (rationals as integer pairs, which hash fast)."""
    return tuple((name, tuple(tuple(_exact_key(x) for x in row) for row in q.exact))
                 for name, q in problem.inputs.items())


MAX_VARIANT_TRIES = 50


@dataclass(frozen=True)
class VariantPlan:
    """How to build variant k of a sheet; small, so it is sent to worker processes."""

    specs: tuple[ProblemSpec, ...]
    count: int
    seed: int = 1
    options: dict | None = None
    title: str | None = None
    doc_fields: dict = field(default_factory=dict)

    @classmethod
    def of(cls, problems, count: int, *, seed: int = 1, options: dict | None = None,
           title: str | None = None, **doc_fields) -> "VariantPlan":
        if count < 1:
            raise ParamError(f"--variants must be at least 1, not {count}")
        check_seed(seed)
        specs = tuple(p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems)
        return cls(specs, count, seed, options, title, doc_fields)

    def build(self, k: int, attempt: int = 0) -> Document:
        return build_document(self.specs, seed=variant_seed(self.seed, k, attempt), options=self.options,
                              title=self.title, variant_id=variant_id(k, self.count), **self.doc_fields)


def _all_different(plan: VariantPlan, first_tries: Iterable[T], retry: Callable[[int, int], T],
                   keys: Callable[[T], tuple]) -> Iterator[T]:
    """The variants in order, each drawn again (the next ``attempt``) while it
    repeats the given matrices of an earlier one in some problem."""
    seen: list[set] = [set() for _ in plan.specs]
    for k, item in enumerate(first_tries, 1):
        attempt = 0
        while any(key in s for key, s in zip(keys(item), seen)):
            attempt += 1
            if attempt == MAX_VARIANT_TRIES:
                raise GenerationError(
                    f"only {k - 1} different variants found: these problems have too few different "
                    f"hand-friendly numbers for {plan.count} variants; use larger sizes or --numbers calculator")
            item = retry(k, attempt)
        for key, s in zip(keys(item), seen):
            s.add(key)
        yield item


def _given_keys(doc: Document) -> tuple:
    return tuple(_given_key(p) for p in doc.problems)


def build_variants(problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS, count: int = 2, *,
                   seed: int = 1, options: dict | None = None, title: str | None = None,
                   progress=None, **doc_fields) -> list[Document]:
    """``count`` versions of the same sheet, one per student.

    Variant k (1-based) is the sheet built with :func:`variant_seed` (seed, k):
    same kinds, sizes and number mode, so equally hard, and reproducible.  No
    two variants give the same matrices in the same problem: a variant that
    repeats one is drawn again (the next ``attempt``).  ``progress(1)`` is
    called after each variant.  To write many variants to files,
    :func:`render_variants` does the same work on every core.
    """
    plan = VariantPlan.of(problems, count, seed=seed, options=options, title=title, **doc_fields)
    docs = []
    for doc in _all_different(plan, (plan.build(k) for k in range(1, count + 1)), plan.build, _given_keys):
        docs.append(doc)
        if progress is not None:
            progress(1)
    return docs


# ---------------------------------------------------------------- rendering and writing

@dataclass
class Rendered:
    """Files to write (``{name: text or bytes}``) and, for variants, the CSV rows."""

    files: dict[str, str | bytes]
    pdf_pages: dict[str, dict[int, tuple[int, int]]]  # PDF file -> variant index -> pages
    latex_sources: dict[str, str]  # tex file name -> source, for PDF outputs


def _is_variants(docs: Sequence[Document]) -> bool:
    return len(docs) > 1 or bool(docs and docs[0].variant)


def _parts(doc: Document, index: int, count: int, formats: Iterable[str], templates: Path | None,
           roles=("sheet", "key"), variants: bool = True, bank: str = "worksheet") -> dict[tuple[str, bool], str]:
    """Document ``index`` of ``count`` rendered for a combined file:
    ``{(format, key?): its part}`` (the JSON part is its entry in ``variants``,
    or the whole JSON of a lone document).  See :func:`_join`."""
    from .render import json as rj

    parts: dict[tuple[str, bool], str] = {}
    for fmt in formats:
        if fmt == "json":
            parts["json", True] = rj.variant_text(doc) if variants else rj.dumps(rj.document(doc))
            continue
        if fmt == "moodle":  # its categories are named after the build (bank), see render.moodle
            parts["moodle", False] = render.get(fmt, templates).body(doc, index, count, bank=bank)
            continue
        src = "tex" if fmt == "pdf" else fmt  # a PDF is compiled from the LaTeX
        for role in output_names(name="", fmt=fmt):
            key = role == "key"
            if role in roles and (src, key) not in parts:
                parts[src, key] = render.get(src, templates).body(doc, index, count, key=key)
    return parts


def _join(outlines: Sequence[Document], parts: Sequence[dict], formats: Iterable[str], *, name: str,
          templates: Path | None, roles=("sheet", "key"), variants: bool = True
          ) -> tuple[dict[str, str | bytes], dict[str, str]]:
    """The files of :func:`_parts` of every document, in order: each format's
    head, the documents' parts, its foot.  Returns (files, LaTeX sources of PDFs)."""
    from .render import json as rj

    files: dict[str, str | bytes] = {}
    sources: dict[str, str] = {}
    joined: dict[tuple[str, bool], str] = {}  # the LaTeX is shared by tex and pdf

    def text(src: str, key: bool) -> str:
        if (src, key) not in joined:
            r = render.get(src, templates)
            joined[src, key] = (r.head(outlines, key=key) + "".join(p[src, key] for p in parts)
                                + r.foot(outlines, key=key))
        return joined[src, key]

    for fmt in formats:
        if fmt == "json":
            files[f"{name}.json"] = (rj.variants_text(outlines[0], [p["json", True] for p in parts])
                                     if variants else parts[0]["json", True])
            continue
        for role, filename in output_names(name, fmt).items():
            if role not in roles:
                continue
            if fmt == "pdf":
                sources[filename[:-4] + ".tex"] = text("tex", role == "key")
                files[filename] = b""  # compiled later; keeps the order of files
            else:
                files[filename] = text(fmt, role == "key")
    return files, sources


def render_documents(docs: Sequence[Document], formats: Iterable[str], *, name: str = "worksheet",
                     templates: Path | None = None, roles=("sheet", "key"),
                     compile_pdf: bool = True, bank: str | None = None) -> Rendered:
    """Render one document, or the variants of an exam into one combined file
    per format and role (each variant starts on a new page in PDF).

    PDFs are compiled in parallel, one LaTeX per core (a missing LaTeX or a
    LaTeX error raises, see :mod:`worksheet.render.pdf`).  With
    ``compile_pdf=False`` the PDF entries of ``files`` are empty and
    ``latex_sources`` holds what to compile.
    """
    docs = list(docs)
    formats = list(formats)
    variants = _is_variants(docs)
    parts = [_parts(d, i, len(docs), formats, templates, roles, variants, bank or name) for i, d in enumerate(docs)]
    outlines = [d.outline() for d in docs]
    files, sources = _join(outlines, parts, formats, name=name, templates=templates, roles=roles,
                           variants=variants)
    return _compiled(files, sources, compile_pdf)


def _compiled(files: dict, sources: dict, compile_pdf: bool) -> Rendered:
    pages: dict[str, dict[int, tuple[int, int]]] = {}
    if sources and compile_pdf:
        from .render.pdf import compile_all

        for tex_name, result in compile_all(sources).items():
            pdf_name = tex_name[:-4] + ".pdf"
            files[pdf_name] = result.pdf
            pages[pdf_name] = result.pages
    return Rendered(files, pages, sources)


# ---------------------------------------------------------------- variants on every core

@dataclass(frozen=True)
class _Job:
    """Build and render variants (in a worker process, or in this one)."""

    plan: VariantPlan
    formats: tuple[str, ...]
    templates: Path | None
    name: str
    split: bool

    def piece(self, k: int, attempt: int = 0) -> "_Piece":
        from .render.base import forget_tables

        doc = self.plan.build(k, attempt)
        if self.split:
            own = render_documents([doc], self.formats, name=f"{self.name}-{doc.variant}",
                                   templates=self.templates, compile_pdf=False, bank=self.name)
            piece = _Piece(doc.outline(), _given_keys(doc), {}, own)
        else:
            parts = _parts(doc, k - 1, self.plan.count, self.formats, self.templates, bank=self.name)
            piece = _Piece(doc.outline(), _given_keys(doc), parts, None)
        forget_tables()  # this variant is rendered in every format: its tables are not needed again
        return piece


@dataclass
class _Piece:
    """One variant as the parent process needs it: no exact values, only text."""

    outline: Document
    keys: tuple  # its given matrices (no two variants share them)
    parts: dict  # its parts of the combined files (see _parts)
    own: Rendered | None  # with --split: its own files


def _chunk(job: _Job, ks: Sequence[int]) -> list[_Piece]:
    return [job.piece(k) for k in ks]


def _can_fork() -> bool:
    """Worker processes are forked (they start at once, with everything
    imported); not on macOS, where forking a process that has loaded system
    libraries is unsafe, nor on Windows, which cannot fork."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def default_jobs(problems: int) -> int:
    """Processes for ``problems`` problems: one per core (at most 8) from 24
    problems on, where worker processes can be forked; otherwise 1."""
    import os

    if problems < 24 or not _can_fork():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, 8))


def _quiet_worker() -> None:
    """Ctrl-C is the main process's to handle (it cancels what is left), so a
    worker does not print a traceback of its own."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _first_tries(job: _Job, jobs: int) -> Iterator[_Piece]:
    """Attempt 0 of every variant, in order; on ``jobs`` processes, in chunks."""
    count = job.plan.count
    yield job.piece(1)  # here: a setting that cannot work fails before any worker starts
    if count == 1:
        return
    if jobs <= 1 or not _can_fork():
        yield from (job.piece(k) for k in range(2, count + 1))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    ks = list(range(2, count + 1))
    size = max(1, min(8, len(ks) // (4 * jobs)))  # small chunks: no worker waits long for the last
    chunks = [ks[i:i + size] for i in range(0, len(ks), size)]
    pool = ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=multiprocessing.get_context("fork"),
                               initializer=_quiet_worker)
    try:
        for pieces in pool.map(partial(_chunk, job), chunks):
            yield from pieces
    finally:
        with _no_interrupts():  # a second Ctrl-C must not break the clean-up (it would hang)
            pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def _no_interrupts():
    """Ignore Ctrl-C for a moment (in the main thread; elsewhere nothing changes)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextmanager
def _fewer_collections():
    """Run Python's cycle collector a twentieth as often (workers inherit it).

    Building a sheet allocates many small objects that form no cycles (exact
    values are trees), so most collections find nothing and cost about 7% of
    a big build; the old thresholds come back afterwards.
    """
    old = gc.get_threshold()
    gc.set_threshold(old[0] * 20, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def render_variants(problems: Sequence[str | ProblemSpec], count: int, formats: Iterable[str], *,
                    name: str = "worksheet", templates: Path | None = None, split: bool = False,
                    jobs: int | None = None, progress=None, seed: int = 1,
                    options: dict | None = None, title: str | None = None, **doc_fields
                    ) -> tuple[list[Document], list[tuple[str, Rendered]]]:
    """Build ``count`` variants (as :func:`build_variants`) and render them,
    on ``jobs`` processes (default: :func:`default_jobs`).

    Returns the variants' outlines and the files as (name, Rendered) groups:
    one combined group, or one per variant with ``split``; PDFs are not
    compiled yet (see :func:`write_rendered`).  The files are the same, byte
    for byte, whatever ``jobs`` is: each variant depends only on (seed, k),
    and the parts are joined in order.
    """
    formats = list(formats)
    plan = VariantPlan.of(problems, count, seed=seed, options=options, title=title, **doc_fields)
    if jobs is None:
        jobs = default_jobs(count * len(plan.specs))
    job = _Job(plan, tuple(formats), templates, name, split)
    pieces = []
    with _fewer_collections():
        for piece in _all_different(plan, _first_tries(job, jobs), job.piece, lambda p: p.keys):
            pieces.append(piece)
            if progress is not None:
                progress(1)
    outlines = [p.outline for p in pieces]
    if split:
        return outlines, [(f"{name}-{p.outline.variant}", p.own) for p in pieces]
    files, sources = _join(outlines, [p.parts for p in pieces], formats, name=name, templates=templates)
    return outlines, [(name, Rendered(files, {}, sources))]


def variants_csv(docs: Sequence[Document], sheet_pages: dict[int, tuple[int, int]] | None = None,
                 key_pages: dict[int, tuple[int, int]] | None = None,
                 files: Sequence[str] | None = None) -> str:
    """``variant,seed,pages,key_pages`` (page ranges in the PDFs, empty without PDF);
    with ``files`` (--split) a last column names each variant's student file."""
    import csv
    import io

    def rng(pages, i):
        if not pages or i not in pages:
            return ""
        first, last = pages[i]
        return f"{first}-{last}" if last != first else str(first)

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["variant", "seed", "pages", "key_pages"] + (["file"] if files else []))
    for i, d in enumerate(docs, 1):
        w.writerow([d.variant, d.seed, rng(sheet_pages, i), rng(key_pages, i)]
                   + ([files[i - 1]] if files else []))
    return out.getvalue()


def write_documents(docs: Sequence[Document], formats: Iterable[str], out_dir: Path | str = "output", *,
                    name: str = "worksheet", force: bool = False, templates: Path | None = None,
                    split: bool = False) -> list[Path]:
    """Write one document, or variants (combined, or one set of files per
    variant with ``split``) plus ``NAME-variants.csv``; all or nothing.

    With PDF asked for: when LaTeX is missing, every other file and the .tex
    sources are still written, then :class:`LatexMissingError` is raised; when
    LaTeX fails, nothing but its log (``NAME.log`` or ``NAME-key.log``) and the
    failing .tex are written, and :class:`LatexError` is raised.
    """
    docs = list(docs)
    formats = list(formats)
    groups = ([(f"{name}-{d.variant}", [d]) for d in docs] if split and _is_variants(docs)
              else [(name, docs)])
    rendered = [(n, render_documents(g, formats, name=n, templates=templates, compile_pdf=False, bank=name))
                for n, g in groups]
    return write_rendered([d.outline() for d in docs], rendered, formats, out_dir, name=name,
                          force=force, split=split)


def write_rendered(docs: Sequence[Document], rendered: Sequence[tuple[str, Rendered]],
                   formats: Iterable[str], out_dir: Path | str = "output", *, name: str = "worksheet",
                   force: bool = False, split: bool = False) -> list[Path]:
    """Compile the PDFs of ``rendered`` (see :func:`render_variants`) and write
    every file, plus ``NAME-variants.csv`` for variants, as :func:`write_documents`."""
    from .render.pdf import LatexError, LatexMissingError

    out = Path(out_dir)
    formats = list(formats)
    groups = [n for n, _ in rendered]
    files: dict[str, str | bytes] = {}
    sources: dict[str, str] = {}
    for _, r in rendered:
        files.update(r.files)
        sources.update(r.latex_sources)
    pages: dict[str, dict] = {}
    if sources and not force:  # refuse before minutes of LaTeX, not after
        refuse_existing(out / f for f in files)
    if sources:
        from .render.pdf import compile_all

        try:
            compiled = compile_all(sources)
        except LatexMissingError as exc:
            keep = {f: t for f, t in files.items() if not f.endswith(".pdf")}
            keep.update(sources)
            written = write_all({out / f: t for f, t in keep.items()}, force=force)
            raise LatexMissingError(f"{exc}; wrote the LaTeX instead: "
                                    f"{', '.join(str(p) for p in written if p.suffix == '.tex')}") from None
        except LatexError as exc:
            # the log and the failing .tex are kept, but an existing file only with --force
            log, tex = out / (exc.tex_name[:-4] + ".log"), out / exc.tex_name
            diag = {p: t for p, t in ((log, exc.log), (tex, exc.source)) if force or not os.path.lexists(p)}
            write_all(diag, force=force)
            kept = (f"; log kept in {log}" if log in diag
                    else f"; {log} already exists, so the log was not written (use --force)")
            raise LatexError(f"{exc}{kept}", tex_name=exc.tex_name, log=exc.log, source=exc.source) from None
        for tex_name, result in compiled.items():
            files[tex_name[:-4] + ".pdf"] = result.pdf
            pages[tex_name[:-4] + ".pdf"] = result.pages
    if _is_variants(docs):
        if split:
            student = next((f for f in ("pdf", "html", "md", "tex", "moodle") if f in formats), "json")
            sheet = {i: pages.get(f"{n}.pdf", {}).get(1) for i, n in enumerate(groups, 1)}
            key = {i: pages.get(f"{n}-key.pdf", {}).get(1) for i, n in enumerate(groups, 1)}
            files[f"{name}-variants.csv"] = variants_csv(
                docs, {i: v for i, v in sheet.items() if v}, {i: v for i, v in key.items() if v},
                files=[next(iter(output_names(n, student).values())) for n in groups])
        else:
            files[f"{name}-variants.csv"] = variants_csv(docs, pages.get(f"{name}.pdf"),
                                                         pages.get(f"{name}-key.pdf"))
    return write_all({out / f: t for f, t in files.items()}, force=force)
