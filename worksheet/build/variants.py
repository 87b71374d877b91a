"""Variants: versions of one sheet, one per student, built on every core.

Variant k (1-based) is the ordinary sheet built with :func:`variant_seed`
(seed, k), named :func:`~worksheet.build.output.variant_id` (v01, v02, ...); one that
repeats the given matrices of an earlier variant is drawn again.
:func:`render_variants` builds and renders them in forked worker processes
(in chunks; a worker ignores Ctrl-C, the main process cancels what is left),
which send back only text (each variant's part of every file, see
:func:`worksheet.build.output.render_parts`), never exact values; the files are the
same, byte for byte, whatever the number of processes.
"""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from .sheets import DEFAULT_KINDS, build_document, check_seed
from ..solution.document import Document
from ..policy.errors import GenerationError, ParamError
from ..exact import key as _exact_key
from ..solution.problem import Problem
from .output import Rendered, join_parts, render_documents, render_parts, variant_id
from .spec import ProblemSpec

T = TypeVar("T")


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
    return tuple(
        (name, tuple(tuple(_exact_key(x) for x in row) for row in q.exact)) for name, q in problem.inputs.items()
    )


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
    def of(
        cls, problems, count: int, *, seed: int = 1, options: dict | None = None, title: str | None = None, **doc_fields
    ) -> "VariantPlan":
        if count < 1:
            raise ParamError(f"--variants must be at least 1, not {count}")
        check_seed(seed)
        specs = tuple(p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems)
        return cls(specs, count, seed, options, title, doc_fields)

    def build(self, k: int, attempt: int = 0) -> Document:
        return build_document(
            self.specs,
            seed=variant_seed(self.seed, k, attempt),
            options=self.options,
            title=self.title,
            variant_id=variant_id(k, self.count),
            **self.doc_fields,
        )


def _all_different(
    plan: VariantPlan, first_tries: Iterable[T], retry: Callable[[int, int], T], keys: Callable[[T], tuple]
) -> Iterator[T]:
    """The variants in order, each drawn again (the next ``attempt``) while it
    repeats the given matrices of an earlier one in some problem."""
    seen: list[set] = [set() for _ in plan.specs]
    for k, item in enumerate(first_tries, 1):
        attempt = 0
        while any(key and key in s for key, s in zip(keys(item), seen)):  # () : nothing given (a question)
            attempt += 1
            if attempt == MAX_VARIANT_TRIES:
                i = next(i for i, (key, s) in enumerate(zip(keys(item), seen)) if key and key in s)
                raise GenerationError(too_few_variants(plan, i, len(seen[i])))
            item = retry(k, attempt)
        for key, s in zip(keys(item), seen):
            s.add(key)
        yield item


SIZES = ("seq_len", "d_model", "d_k", "d_ff", "vocab_size", "enc_len", "dec_len", "d_h", "d_in", "steps")


def too_few_variants(plan: VariantPlan, i: int, found: int) -> str:
    """Why problem ``i`` cannot have ``plan.count`` different variants, and what to change:
    first what keeps hand mode (larger sizes, fewer variants), then calculator mode."""
    from .. import kinds

    spec = plan.specs[i]
    where = spec.where or f"problem {i + 1}"
    try:
        fields = kinds.get(spec.kind).Params.field_names()
    except Exception:  # pragma: no cover - the kind was built, so it is known
        fields = []
    sizes = [f for f in SIZES if f in fields]
    mode = (dict(plan.options or {}) | spec.options).get("numbers", "hand")
    hint = (f"keep hand mode with a larger size ({' or '.join(sizes[:2])}" if sizes else "keep hand mode") + (
        f"), ask for at most {found} variants or give another seed"
        if sizes
        else f": ask for at most {found} variants or give another seed"
    )
    last = "; or use calculator numbers (numbers = \"calculator\", --numbers calculator)" if mode == "hand" else ""
    return (
        f"{where} ({spec.kind}) can supply only {found} different variants with these settings "
        f"in {mode} mode, not {plan.count}: {hint}{last}"
    )


def _given_keys(doc: Document) -> tuple:
    return tuple(_given_key(p) for p in doc.problems)


def build_variants(
    problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS,
    count: int = 2,
    *,
    seed: int = 1,
    options: dict | None = None,
    title: str | None = None,
    progress=None,
    **doc_fields,
) -> list[Document]:
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
        from ..render.base import forget_tables

        doc = self.plan.build(k, attempt)
        if self.split:
            own = render_documents(
                [doc],
                self.formats,
                name=f"{self.name}-{doc.variant}",
                templates=self.templates,
                compile_pdf=False,
                bank=self.name,
            )
            piece = _Piece(doc.outline(), _given_keys(doc), {}, own)
        else:
            parts = render_parts(doc, k - 1, self.plan.count, self.formats, self.templates, bank=self.name)
            piece = _Piece(doc.outline(), _given_keys(doc), parts, None)
        forget_tables()  # this variant is rendered in every format: its tables are not needed again
        return piece


@dataclass
class _Piece:
    """One variant as the parent process needs it: no exact values, only text."""

    outline: Document
    keys: tuple  # its given matrices (no two variants share them)
    parts: dict  # its parts of the combined files (see render_parts)
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
    chunks = [ks[i : i + size] for i in range(0, len(ks), size)]
    pool = ProcessPoolExecutor(
        min(jobs, len(chunks)), mp_context=multiprocessing.get_context("fork"), initializer=_quiet_worker
    )
    try:
        with _interrupt_between_pieces() as asked:
            for pieces in pool.map(partial(_chunk, job), chunks):
                if asked.is_set():
                    raise KeyboardInterrupt
                yield from pieces
    finally:
        with _no_interrupts():  # a second Ctrl-C must not break the clean-up (it would hang)
            pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def _interrupt_between_pieces():
    """Ctrl-C while the pool works is noted and raised between two pieces, never
    inside the pool's own code: a KeyboardInterrupt raised while ``pool.map``
    holds one of its locks left ``shutdown`` waiting for ever.  Outside the main
    thread nothing changes (signals reach only the main thread)."""
    import signal
    import threading

    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield asked
        return
    old = signal.signal(signal.SIGINT, lambda signum, frame: asked.set())
    try:
        yield asked
    finally:
        signal.signal(signal.SIGINT, old)
    if asked.is_set():  # pressed after the last piece: the build still stops
        raise KeyboardInterrupt


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


def render_variants(
    problems: Sequence[str | ProblemSpec],
    count: int,
    formats: Iterable[str],
    *,
    name: str = "worksheet",
    templates: Path | None = None,
    split: bool = False,
    jobs: int | None = None,
    progress=None,
    seed: int = 1,
    options: dict | None = None,
    title: str | None = None,
    **doc_fields,
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
    files, sources = join_parts(outlines, [p.parts for p in pieces], formats, name=name, templates=templates)
    return outlines, [(name, Rendered(files, {}, sources))]


# ---------------------------------------------------------------- one variant again


def find_variant(ident: str, count: int, seed: int = 1) -> int:
    """The number k (1-based) of a variant of ``count`` named by its id (``v17``),
    by the seed printed on its sheet, or by its number (``17``)."""
    text = str(ident).strip().lower()
    ids = f"{variant_id(1, count)} … {variant_id(count, count)}"
    number_text = text[1:] if text.startswith("v") else text
    if len(text) > 40 or (number_text.isdigit() and len(number_text) > 12):  # no id or sheet seed is this long
        what = f"a whole number of {len(number_text)} digits" if number_text.isdigit() else "too long"
        raise ParamError(f"--variant: {what}, not a variant id ({ids}) or the seed printed on a sheet")
    if text.startswith("v") and text[1:].isdigit():
        k = int(text[1:])
        if not 1 <= k <= count:
            raise ParamError(f"--variant {ident}: there are {count} variants ({ids})")
        return k
    if not text.isdigit():
        raise ParamError(f"--variant {ident}: give a variant id ({ids}) or the seed printed on its sheet")
    number = int(text)
    for k in range(1, count + 1):  # the seed printed on a sheet
        for attempt in range(MAX_VARIANT_TRIES):
            if variant_seed(seed, k, attempt) == number:
                return k
    if 1 <= number <= count:  # "17", as in v17
        return number
    return _no_variant(ident, count, ids, seed)


def _no_variant(ident, count, ids, seed):
    raise ParamError(
        f"--variant {ident}: none of the {count} variants ({ids}) of seed {seed} has the "
        f"number or the sheet seed {ident}"
    )


def render_variant(
    problems: Sequence[str | ProblemSpec],
    count: int,
    k: int,
    formats: Iterable[str],
    *,
    name: str = "worksheet",
    templates: Path | None = None,
    seed: int = 1,
    options: dict | None = None,
    title: str | None = None,
    **doc_fields,
) -> tuple[list[Document], list[tuple[str, Rendered]]]:
    """Variant ``k`` of ``count`` alone, rendered into its own files exactly as
    ``render_variants(..., split=True)`` renders it (byte for byte): the variants
    before it are built (not rendered) to know which draws they took, so a
    variant that was drawn again is drawn again here too."""
    plan = VariantPlan.of(problems, count, seed=seed, options=options, title=title, **doc_fields)
    if not 1 <= k <= count:
        raise ParamError(f"variant {k}: there are {count} variants")
    job = _Job(plan, tuple(formats), templates, name, True)
    seen: list[set] = [set() for _ in plan.specs]
    with _fewer_collections():
        for j in range(1, k + 1):
            attempt = 0
            keys = _given_keys(plan.build(j))
            while any(key and key in s for key, s in zip(keys, seen)):
                attempt += 1
                if attempt == MAX_VARIANT_TRIES:
                    i = next(i for i, (key, s) in enumerate(zip(keys, seen)) if key and key in s)
                    raise GenerationError(too_few_variants(plan, i, len(seen[i])))
                keys = _given_keys(plan.build(j, attempt))
            for key, s in zip(keys, seen):
                s.add(key)
        piece = job.piece(k, attempt)
    return [piece.outline], [(f"{name}-{piece.outline.variant}", piece.own)]


def count_of_key(path: Path, seed: int, default: int | None) -> int:
    """How many variants the full build wrote, as its key NAME.json in the -o folder
    says (so --variant v17 needs no --variants N): its ids v01..vN, and the seed of
    its first variant drawn from --seed.  Without that key: ``default`` (a spec's)."""
    import json

    from ..check import read_key

    if not path.is_file():
        if default:
            return default
        raise ParamError(
            f"--variant needs --variants N, a spec with variants, or the key of the full build ({path}) in -o"
        )
    ids = list(read_key(path).variants)
    count = len(ids)
    if ids == [""] or ids != [variant_id(k, count) for k in range(1, count + 1)]:
        raise ParamError(f"--variant: {path} is not the key of a build with --variants; give --variants N")
    first = json.loads(path.read_text(encoding="utf-8"))["variants"][0].get("seed")
    if first not in {variant_seed(seed, 1, attempt) for attempt in range(50)}:
        raise ParamError(f"--variant: {path} was built with another --seed; give that seed (or --variants N)")
    return count
