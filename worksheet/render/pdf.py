"""PDF: the LaTeX renderer's output compiled by latexmk (or pdflatex).

LaTeX runs in a fresh temporary folder with ``-interaction=nonstopmode
-halt-on-error -no-shell-escape`` and may not open files outside it (see
:func:`latex_env`); only a finished PDF comes back (as bytes,
for :func:`worksheet.policy.files.write_all`).  Nothing here changes the layout:
that is ``templates/tex``.

Debian packages: texlive-latex-base, texlive-latex-recommended, lmodern and
latexmk (pdflatex alone works too).  The templates need one LaTeX pass
(``\\nofiles``: no .aux, which would make latexmk run LaTeX a second time
for nothing, doubling the time of a 300-variant exam); a lecturer's template
that refers back to itself (\\ref, a table of contents, total pages) gets
the passes it needs from latexmk, or two pdflatex runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..solution.document import Document
from ..policy.errors import WorksheetError
from .artefacts import Format

DEBIAN_PACKAGES = ("texlive-latex-base", "texlive-latex-recommended", "lmodern", "latexmk")
LATEX_FLAGS = ("-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape")
TIMEOUT = 900  # seconds for one compilation (a 300-variant exam takes well under a minute)

_MARK = re.compile(r"\\variantpage\{(\d+)\}\{(first|last)\}\{(\d+)\}")
_OVERFULL = re.compile(r"Overfull \\hbox \(([\d.]+)pt too wide\)")


class LatexMissingError(WorksheetError):
    """Neither latexmk nor pdflatex is installed."""


class LatexError(WorksheetError):
    """LaTeX stopped on an error; ``log`` holds its whole log."""

    def __init__(self, message: str, *, tex_name: str, log: str, source: str):
        super().__init__(message)
        self.tex_name = tex_name
        self.log = log
        self.source = source


@dataclass
class Compiled:
    """A finished PDF and what its log and .aux tell."""

    pdf: bytes
    log: str
    pages: dict[int, tuple[int, int]] = field(default_factory=dict)  # variant index (1-based) -> first, last page

    @property
    def overfull(self) -> list[float]:
        """Widths (pt) of every ``Overfull \\hbox`` LaTeX reported."""
        return [float(x) for x in _OVERFULL.findall(self.log)]


def engine() -> tuple[str, str] | None:
    """("latexmk", path) or ("pdflatex", path), whichever is installed first."""
    for name in ("latexmk", "pdflatex"):
        path = shutil.which(name)
        if path and (name != "latexmk" or shutil.which("pdflatex")):
            return name, path
    return None


def missing_message() -> str:
    return (
        "no LaTeX found (latexmk or pdflatex) to make PDFs; install it, e.g. on Debian/Ubuntu: "
        f"apt-get install {' '.join(DEBIAN_PACKAGES)}"
    )


def first_error(log: str) -> str:
    """The first ``! ...`` line of a LaTeX log, with the ``l.N`` line that follows it."""
    lines = log.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("!"):
            where = next((w.split(" ", 1)[0] for w in lines[k + 1 : k + 12] if re.match(r"l\.\d+", w)), "")
            return f"{line}{' (' + where + ')' if where else ''}"
    return "LaTeX stopped without an error message"


def read_pages(aux: str) -> dict[int, tuple[int, int]]:
    """Page ranges of the documents (variants) from the marks the template writes."""
    marks: dict[int, dict[str, int]] = {}
    for index, which, page in _MARK.findall(aux):
        marks.setdefault(int(index), {})[which] = int(page)
    return {i: (m.get("first", 0), m.get("last", m.get("first", 0))) for i, m in sorted(marks.items())}


_REFERS_BACK = re.compile(
    r"\\(page)?ref\b|\\eqref|\\cite|\\tableofcontents|\\listof|"
    r"\\PreviousTotalPages|lastpage|hyperref|\\label"
)


def needs_second_pass(source: str) -> bool:
    """Does the LaTeX refer back to itself (references, a table of contents,
    total pages)?  worksheet's templates do not, so one pass is enough; a
    lecturer's own templates (--templates) may."""
    return bool(_REFERS_BACK.search(source))


def latex_env() -> dict[str, str]:
    """The environment of a LaTeX run.

    * ``openin_any=p`` and ``openout_any=p`` (kpathsea's "paranoid"): LaTeX
      may read and write only files below its working folder or found in the
      TeX installation, never an absolute path or one with ``..``.  With
      ``-no-shell-escape`` this is the second line of defence behind the
      escaping of every user text: even a missed escape cannot read
      ``/etc/passwd`` into a PDF (tested).
    * ``SOURCE_DATE_EPOCH`` and ``FORCE_SOURCE_DATE=1``: the PDF's dates and
      its trailer ``/ID`` (pdfTeX derives it from the date and the file name)
      are fixed, so the same command and seed give a byte-identical PDF
      (tested).  The date is the caller's ``SOURCE_DATE_EPOCH`` when it is a
      whole number, otherwise 0 (1 January 1970).
    * ``max_print_line``: log lines unwrapped, easier to read and parse.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    return {
        **os.environ,
        "max_print_line": "10000",
        "openin_any": "p",
        "openout_any": "p",
        "SOURCE_DATE_EPOCH": epoch if epoch.isdigit() else "0",
        "FORCE_SOURCE_DATE": "1",
    }


def compile_tex(source: str, tex_name: str = "worksheet.tex") -> Compiled:
    """Compile one LaTeX source in a temporary folder; raise on any error."""
    found = engine()
    if found is None:
        raise LatexMissingError(missing_message())
    name, exe = found
    stem = Path(tex_name).stem
    env = latex_env()
    with tempfile.TemporaryDirectory(prefix="worksheet-latex-") as tmp:
        folder = Path(tmp)
        (folder / f"{stem}.tex").write_text(source, encoding="utf-8")
        if name == "latexmk":  # reruns LaTeX as often as the document needs
            runs = [[exe, "-pdf", "-norc", "-silent", *LATEX_FLAGS, f"{stem}.tex"]]
        else:
            runs = [[exe, *LATEX_FLAGS, f"{stem}.tex"]] * (2 if needs_second_pass(source) else 1)
        for cmd in runs:
            try:
                proc = subprocess.run(
                    cmd,
                    cwd=folder,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=TIMEOUT,
                    env=env,
                )
            except subprocess.TimeoutExpired:
                raise LatexError(
                    f"LaTeX took longer than {TIMEOUT} s on {tex_name}",
                    tex_name=tex_name,
                    log=_read(folder / f"{stem}.log"),
                    source=source,
                ) from None
            log = _read(folder / f"{stem}.log") or proc.stdout + proc.stderr
            pdf = folder / f"{stem}.pdf"
            if proc.returncode != 0 or not pdf.exists():
                raise LatexError(
                    f"LaTeX failed on {tex_name}: {first_error(log)}", tex_name=tex_name, log=log, source=source
                )
        return Compiled(pdf.read_bytes(), log, read_pages(_read(folder / f"{stem}.pages")))


def compile_all(sources: dict[str, str], workers: int | None = None, progress=None) -> dict[str, Compiled]:
    """Compile ``{tex file name: source}`` in parallel (one LaTeX per core);
    ``progress(1)`` is called as each file is done (a progress bar's update)."""
    if not sources:
        return {}
    if engine() is None:
        raise LatexMissingError(missing_message())
    workers = max(1, min(len(sources), workers or os.cpu_count() or 1))
    if workers == 1:
        out = {}
        for n, s in sources.items():
            out[n] = compile_tex(s, n)
            if progress is not None:
                progress(1)
        return out
    from concurrent.futures import as_completed

    with ThreadPoolExecutor(workers) as pool:
        futures = {n: pool.submit(compile_tex, s, n) for n, s in sources.items()}
        if progress is not None:
            for _ in as_completed(futures.values()):
                progress(1)
        return {n: f.result() for n, f in futures.items()}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


class PdfRenderer(Format):
    """Renders the LaTeX of a document and compiles it; ``render`` returns bytes.
    A build joins the LaTeX's parts (``parts_from``) and compiles them (``compiled``)."""

    name = "pdf"
    ext = "pdf"
    binary = True
    compiled = True
    student_rank = 0

    @property
    def parts_from(self) -> Format:
        return self.tex

    def __init__(self, templates=None):
        from . import get

        self.tex = get("tex", templates)

    def source(self, docs: Sequence[Document], *, key: bool) -> str:
        return self.tex.render_many(docs, key=key)

    def render_many(self, docs: Sequence[Document], *, key: bool) -> bytes:
        return compile_tex(self.source(docs, key=key)).pdf

    def render(self, doc: Document, *, key: bool) -> bytes:
        return self.render_many([doc], key=key)
