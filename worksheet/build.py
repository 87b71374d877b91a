"""The library behind the commands: build documents, solve files, write them.

The CLI only parses options and calls these; a notebook can do the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from . import kinds, render
from .document import Document
from .errors import GenerationError, InputError, ParamError, ShapeError, WorksheetError, in_file
from .files import write_all
from .model import Problem

DEFAULT_KINDS = ("attention",)
SPEC_RE = re.compile(r"^(?P<kind>[a-z0-9-]+)(?::(?P<opts>.*))?$")


@dataclass(frozen=True)
class ProblemSpec:
    """One problem of a sheet: a kind and its own options (and, from an exam
    spec, its points and the lecturer's prompt, printed after the kind's intro)."""

    kind: str
    options: dict
    points: Any = None
    prompt: str = ""

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
    return problem


def build_document(problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS, *, seed: int = 1,
                   options: dict | None = None, title: str | None = None,
                   variant: int = 0, variant_id: str = "", **doc_fields) -> Document:
    """Generate and solve the problems of one sheet, in the order given."""
    options = dict(options or {})
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
        return kind.solve(inputs, params)
    except (InputError, ShapeError, ParamError) as exc:
        raise in_file(exc, label) from None


def output_names(name: str, fmt: str) -> dict[str, str]:
    """File names per role: the JSON file is the key; other formats have both."""
    ext = render.get(fmt).ext if fmt in render.FORMATS else fmt
    if fmt == "json":
        return {"key": f"{name}.json"}
    return {"sheet": f"{name}.{ext}", "key": f"{name}-key.{ext}"}


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
    return tuple((name, q.exact) for name, q in problem.inputs.items())


MAX_VARIANT_TRIES = 50


def build_variants(problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS, count: int = 2, *,
                   seed: int = 1, options: dict | None = None, title: str | None = None,
                   progress=None, **doc_fields) -> list[Document]:
    """``count`` versions of the same sheet, one per student.

    Variant k (1-based) is the sheet built with :func:`variant_seed` (seed, k):
    same kinds, sizes and number mode, so equally hard, and reproducible.  No
    two variants give the same matrices in the same problem: a variant that
    repeats one is drawn again (the next ``attempt``).  ``progress(1)`` is
    called after each variant.
    """
    if count < 1:
        raise ParamError(f"--variants must be at least 1, not {count}")
    specs = [p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems]
    seen: list[set] = [set() for _ in specs]
    docs = []
    for k in range(1, count + 1):
        for attempt in range(MAX_VARIANT_TRIES):
            doc = build_document(specs, seed=variant_seed(seed, k, attempt), options=options,
                                 title=title, variant_id=variant_id(k, count), **doc_fields)
            keys = [_given_key(p) for p in doc.problems]
            if not any(key in s for key, s in zip(keys, seen)):
                break
        else:
            raise GenerationError(
                f"only {k - 1} different variants found: these problems have too few different "
                f"hand-friendly numbers for {count} variants; use larger sizes or --numbers calculator")
        for key, s in zip(keys, seen):
            s.add(key)
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


def _json_text(docs: Sequence[Document]) -> str:
    from .render import json as rj

    if not _is_variants(docs):
        return rj.dumps(rj.document(docs[0]))
    first = docs[0]
    return rj.dumps({"title": first.title, "numbers": first.numbers,
                     "variants": [{"id": d.variant, "seed": d.seed,
                                   "problems": [rj.problem(p) for p in d.problems]} for d in docs]})


def render_documents(docs: Sequence[Document], formats: Iterable[str], *, name: str = "worksheet",
                     templates: Path | None = None, roles=("sheet", "key"),
                     compile_pdf: bool = True) -> Rendered:
    """Render one document, or the variants of an exam into one combined file
    per format and role (each variant starts on a new page in PDF).

    PDFs are compiled in parallel, one LaTeX per core (a missing LaTeX or a
    LaTeX error raises, see :mod:`worksheet.render.pdf`).  With
    ``compile_pdf=False`` the PDF entries of ``files`` are empty and
    ``latex_sources`` holds what to compile.
    """
    docs = list(docs)
    files: dict[str, str | bytes] = {}
    sources: dict[str, str] = {}
    tex: dict[bool, str] = {}  # the LaTeX of sheet/key, shared by the tex and pdf formats

    def latex(key: bool) -> str:
        if key not in tex:
            tex[key] = render.get("tex", templates).render_many(docs, key=key)
        return tex[key]

    for fmt in formats:
        if fmt == "json":
            files[f"{name}.json"] = _json_text(docs)
            continue
        renderer = render.get(fmt, templates)
        for role, filename in output_names(name, fmt).items():
            if role not in roles:
                continue
            key = role == "key"
            if fmt == "pdf":
                sources[filename[:-4] + ".tex"] = latex(key)
                files[filename] = b""  # filled in below, keeps the order of files
            elif fmt == "tex":
                files[filename] = latex(key)
            else:
                files[filename] = renderer.render_many(docs, key=key)
    pages: dict[str, dict[int, tuple[int, int]]] = {}
    if sources and compile_pdf:
        from .render.pdf import compile_all

        for tex_name, result in compile_all(sources).items():
            pdf_name = tex_name[:-4] + ".pdf"
            files[pdf_name] = result.pdf
            pages[pdf_name] = result.pages
    return Rendered(files, pages, sources)


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
    from .render.pdf import LatexError, LatexMissingError

    out = Path(out_dir)
    docs = list(docs)
    formats = list(formats)
    groups = ([(f"{name}-{d.variant}", [d]) for d in docs] if split and _is_variants(docs)
              else [(name, docs)])
    rendered = [render_documents(g, formats, name=n, templates=templates, compile_pdf=False)
                for n, g in groups]
    files: dict[str, str | bytes] = {}
    sources: dict[str, str] = {}
    for r in rendered:
        files.update(r.files)
        sources.update(r.latex_sources)
    pages: dict[str, dict] = {}
    if sources and not force:  # refuse before minutes of LaTeX, not after
        existing = [out / f for f in files if (out / f).exists()]
        if existing:
            from .errors import OutputError

            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise OutputError(f"{existing[0]} already exists{more}; use --force to overwrite")
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
            log = out / (exc.tex_name[:-4] + ".log")
            diag = {log: exc.log}
            tex = out / exc.tex_name
            if force or not tex.exists():
                diag[tex] = exc.source
            write_all(diag, force=True)
            raise LatexError(f"{exc}; log kept in {log}", tex_name=exc.tex_name, log=exc.log,
                             source=exc.source) from None
        for tex_name, result in compiled.items():
            files[tex_name[:-4] + ".pdf"] = result.pdf
            pages[tex_name[:-4] + ".pdf"] = result.pages
    if _is_variants(docs):
        if split:
            ext = next((f for f in ("pdf", "html", "md", "tex") if f in formats), "json")
            sheet = {i: pages.get(f"{n}.pdf", {}).get(1) for i, (n, _) in enumerate(groups, 1)}
            key = {i: pages.get(f"{n}-key.pdf", {}).get(1) for i, (n, _) in enumerate(groups, 1)}
            files[f"{name}-variants.csv"] = variants_csv(
                docs, {i: v for i, v in sheet.items() if v}, {i: v for i, v in key.items() if v},
                files=[f"{n}.{ext}" for n, _ in groups])
        else:
            files[f"{name}-variants.csv"] = variants_csv(docs, pages.get(f"{name}.pdf"),
                                                         pages.get(f"{name}-key.pdf"))
    return write_all({out / f: t for f, t in files.items()}, force=force)
