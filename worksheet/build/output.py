"""Output files: what a build names, renders and writes, and the PDF path.

:func:`render_documents` turns one document, or the variants of an exam,
into ``{file name: text}`` (one combined file per format and role); the
parts of each variant (:func:`render_parts`) are joined in order (:func:`join_parts`),
so they may be rendered in worker processes (see :mod:`worksheet.build.variants`).
:func:`write_rendered` compiles the PDFs and writes every file, all or
nothing, with the low-level file code of :mod:`worksheet.policy.files`; when LaTeX
is missing the .tex sources are written instead, when it fails its log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from .. import render
from ..solution.document import Document
from ..policy.files import refuse_changed, write_all, write_changed
from .page_map import page_map, variants_csv  # noqa: F401 (variants_csv: the package's face)


# ---------------------------------------------------------------- file names


def variant_id(k: int, count: int) -> str:
    """The printed id of variant ``k`` (1-based) of ``count``: v01, v02, ... (v001 past 99).

    It also names a variant's files (``NAME-v01.md`` with --split)."""
    return f"v{k:0{max(2, len(str(count)))}d}"


def output_names(name: str, fmt: str) -> dict[str, str]:
    """File names per role, as the format declares its artefacts (see worksheet.render.artefacts)."""
    return render.get(fmt).files(name)


def planned_files(name: str, formats: Iterable[str], variants: int = 0, split: bool = False) -> list[str]:
    """The files a build writes, known before building (so that a big build
    refuses an existing file at once, not after the work)."""
    groups = [f"{name}-{variant_id(k, variants)}" for k in range(1, variants + 1)] if split else [name]
    files = [f for g in groups for fmt in formats for f in output_names(g, fmt).values()]
    return files + ([f"{name}-variants.csv"] if variants else [])


# ---------------------------------------------------------------- rendering


@dataclass
class Rendered:
    """Files to write (``{name: text or bytes}``) and, for variants, the CSV rows."""

    files: dict[str, str | bytes]
    pdf_pages: dict[str, dict[int, tuple[int, int]]]  # PDF file -> variant index -> pages
    latex_sources: dict[str, str]  # tex file name -> source, for PDF outputs


def _is_variants(docs: Sequence[Document]) -> bool:
    return len(docs) > 1 or bool(docs and docs[0].variant)


def render_parts(
    doc: Document,
    index: int,
    count: int,
    formats: Iterable[str],
    templates: Path | None,
    roles=("sheet", "key"),
    variants: bool = True,
    bank: str = "worksheet",
) -> dict[tuple[str, str], object]:
    """Document ``index`` of ``count`` rendered for a combined file:
    ``{(format, role): its part}``, each format's parts made once (a PDF
    joins the LaTeX's parts).  See :func:`join_parts`."""
    parts: dict[tuple[str, str], object] = {}
    for fmt in formats:
        f = render.get(fmt, templates)
        src = f.parts_from
        for a in f.chosen(roles):
            if (src.name, a.role) not in parts:
                parts[src.name, a.role] = src.part(doc, index, count, a.role, variants=variants, bank=bank)
    return parts


def join_parts(
    outlines: Sequence[Document],
    parts: Sequence[dict],
    formats: Iterable[str],
    *,
    name: str,
    templates: Path | None,
    roles=("sheet", "key"),
    variants: bool = True,
) -> tuple[dict[str, str | bytes], dict[str, str]]:
    """The files of :func:`render_parts` of every document, in order, each
    joined by its format.  Returns (files, LaTeX sources of compiled formats)."""
    files: dict[str, str | bytes] = {}
    sources: dict[str, str] = {}
    joined: dict[tuple[str, str], str | bytes] = {}  # the LaTeX is shared by tex and pdf

    for fmt in formats:
        f = render.get(fmt, templates)
        src = f.parts_from
        for a in f.chosen(roles):
            if (src.name, a.role) not in joined:
                own = [p[src.name, a.role] for p in parts]
                joined[src.name, a.role] = src.join(outlines, own, a.role, variants=variants)
            filename = a.file(name)
            if f.compiled:  # compiled later from its source; keeps the order of files
                sources[filename[: -len(f.ext)] + src.ext] = joined[src.name, a.role]
                files[filename] = b""
            else:
                files[filename] = joined[src.name, a.role]
    return files, sources


def render_documents(
    docs: Sequence[Document],
    formats: Iterable[str],
    *,
    name: str = "worksheet",
    templates: Path | None = None,
    roles=("sheet", "key"),
    compile_pdf: bool = True,
    bank: str | None = None,
) -> Rendered:
    """Render one document, or the variants of an exam into one combined file
    per format and role (each variant starts on a new page in PDF).

    PDFs are compiled in parallel, one LaTeX per core (a missing LaTeX or a
    LaTeX error raises, see :mod:`worksheet.render.pdf`).  With
    ``compile_pdf=False`` the PDF entries of ``files`` are empty and
    ``latex_sources`` holds what to compile.
    """
    from ..policy.safetext import check_file_name

    check_file_name(name, field="name")
    docs = list(docs)
    formats = list(formats)
    variants = _is_variants(docs)
    parts = [
        render_parts(d, i, len(docs), formats, templates, roles, variants, bank or name) for i, d in enumerate(docs)
    ]
    outlines = [d.outline() for d in docs]
    files, sources = join_parts(
        outlines, parts, formats, name=name, templates=templates, roles=roles, variants=variants
    )
    return _compiled(files, sources, compile_pdf)


def render_document(
    doc: Document,
    formats: Iterable[str],
    *,
    name: str = "worksheet",
    templates: Path | None = None,
    roles=("sheet", "key"),
) -> dict[str, str | bytes]:
    """``{file name: text}`` for every format and role asked for (bytes for PDF)."""
    return render_documents([doc], formats, name=name, templates=templates, roles=roles).files


def _compiled(files: dict, sources: dict, compile_pdf: bool) -> Rendered:
    pages: dict[str, dict[int, tuple[int, int]]] = {}
    if sources and compile_pdf:
        from ..render.pdf import compile_all

        for tex_name, result in compile_all(sources).items():
            pdf_name = tex_name[:-4] + ".pdf"
            files[pdf_name] = result.pdf
            pages[pdf_name] = result.pages
    return Rendered(files, pages, sources)


# ---------------------------------------------------------------- writing


def write_documents(
    docs: Sequence[Document],
    formats: Iterable[str],
    out_dir: Path | str = "output",
    *,
    name: str = "worksheet",
    force: bool = False,
    templates: Path | None = None,
    split: bool = False,
    progress=None,
) -> list[Path]:
    """Write one document, or variants (combined, or one set of files per
    variant with ``split``) plus ``NAME-variants.csv``; all or nothing.

    With PDF asked for: when LaTeX is missing, every other file and the .tex
    sources are still written, then :class:`LatexMissingError` is raised; when
    LaTeX fails, nothing but its log (``NAME.log`` or ``NAME-key.log``) and the
    failing .tex are written, and :class:`LatexError` is raised.
    """
    from ..policy.safetext import check_file_name

    check_file_name(name, field="name")
    docs = list(docs)
    formats = list(formats)
    groups = [(f"{name}-{d.variant}", [d]) for d in docs] if split and _is_variants(docs) else [(name, docs)]
    rendered = [
        (n, render_documents(g, formats, name=n, templates=templates, compile_pdf=False, bank=name)) for n, g in groups
    ]
    return write_rendered(
        [d.outline() for d in docs], rendered, formats, out_dir, name=name, force=force, split=split, progress=progress
    )


def write_document(
    doc: Document,
    formats: Iterable[str],
    out_dir: Path | str = "output",
    *,
    name: str = "worksheet",
    force: bool = False,
    templates: Path | None = None,
) -> list[Path]:
    return write_documents([doc], formats, out_dir, name=name, force=force, templates=templates)


# long: all-or-nothing writing of a build: refusals, temporary files, PDFs and renames in one transaction
def write_rendered(
    docs: Sequence[Document],
    rendered: Sequence[tuple[str, Rendered]],
    formats: Iterable[str],
    out_dir: Path | str = "output",
    *,
    name: str = "worksheet",
    force: bool = False,
    split: bool = False,
    table: bool = True,
    progress=None,
) -> list[Path]:
    """Compile the PDFs of ``rendered`` (see :func:`render_variants`) and write
    every file, plus ``NAME-variants.csv`` for variants (unless ``table`` is
    False: one variant rebuilt on its own), as :func:`write_documents`;
    ``progress(1)`` after each PDF is compiled.  A file already there with the
    same bytes is left as it is (the result's ``unchanged``); one with other
    bytes is refused without ``force``, the text files before LaTeX runs."""
    from ..render.pdf import LatexError, LatexMissingError

    out = Path(out_dir)
    formats = list(formats)
    groups = [n for n, _ in rendered]
    files: dict[str, str | bytes] = {}
    sources: dict[str, str] = {}
    for _, r in rendered:
        files.update(r.files)
        sources.update(r.latex_sources)
    from ..policy.safetext import check_file_name

    for f in (name, *files):  # plain names only: nothing is written outside out_dir
        check_file_name(f, field="name" if f == name else "file name")
    pages: dict[str, dict] = {}
    pdf_names = {t[:-4] + ".pdf" for t in sources}
    if not force:  # a file with other bytes is refused before minutes of LaTeX, not after
        refuse_changed({out / f: t for f, t in files.items() if f not in pdf_names})
    if sources:
        from ..render.pdf import compile_all

        try:
            compiled = compile_all(sources, progress=progress)
        except LatexMissingError as exc:
            keep = {f: t for f, t in files.items() if not f.endswith(".pdf")}
            keep.update(sources)
            written = write_changed({out / f: t for f, t in keep.items()}, force=force)
            raise LatexMissingError(
                f"{exc}; wrote the LaTeX instead: {', '.join(str(p) for p in written if p.suffix == '.tex')}"
            ) from None
        except LatexError as exc:
            # the log and the failing .tex are kept, but an existing file only with --force
            log, tex = out / (exc.tex_name[:-4] + ".log"), out / exc.tex_name
            diag = {p: t for p, t in ((log, exc.log), (tex, exc.source)) if force or not os.path.lexists(p)}
            write_all(diag, force=force)
            kept = (
                f"; log kept in {log}"
                if log in diag
                else f"; {log} already exists, so the log was not written (use --force)"
            )
            raise LatexError(f"{exc}{kept}", tex_name=exc.tex_name, log=exc.log, source=exc.source) from None
        for tex_name, result in compiled.items():
            files[tex_name[:-4] + ".pdf"] = result.pdf
            pages[tex_name[:-4] + ".pdf"] = result.pages
    if _is_variants(docs) and table:
        if split:
            student = min(formats, key=lambda f: render.get(f).student_rank)  # the first of the best
            sheet = {i: pages.get(f"{n}.pdf", {}).get(1) for i, n in enumerate(groups, 1)}
            key = {i: pages.get(f"{n}-key.pdf", {}).get(1) for i, n in enumerate(groups, 1)}
            files[f"{name}-variants.csv"] = page_map(
                out,
                name,
                docs,
                {i: v for i, v in sheet.items() if v},
                {i: v for i, v in key.items() if v},
                files=[next(iter(output_names(n, student).values())) for n in groups],
                pdfs=[out / f"{n}{role}.pdf" for n in groups for role in ("", "-key")],
            )
        else:
            files[f"{name}-variants.csv"] = page_map(
                out,
                name,
                docs,
                pages.get(f"{name}.pdf"),
                pages.get(f"{name}-key.pdf"),
                pdfs=[out / f"{name}.pdf", out / f"{name}-key.pdf"],
            )
    return write_changed({out / f: t for f, t in files.items()}, force=force)
