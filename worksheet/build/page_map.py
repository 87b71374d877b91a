"""The page map of an exam, ``NAME-variants.csv``: which pages of the combined
PDFs (or which file, with --split) hold each variant.

``variant,seed,pages,key_pages`` (``file`` with --split; ``duplex`` when
every variant is padded to an even page count, see ``--duplex``).  The
pages come from the PDFs compiled in this build; a build that compiles no
PDF (Moodle or Markdown added to the folder of a PDF exam) keeps those of the
map already there, when that map is of the same variants and seeds and the
PDFs it describes are still beside it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Sequence

from ..policy.csv_cells import csv_text
from ..solution.document import Document

Pages = dict[int, tuple[int, int]]  # variant index (1-based) -> first, last page


def variants_csv(
    docs: Sequence[Document],
    sheet_pages: Pages | None = None,
    key_pages: Pages | None = None,
    files: Sequence[str] | None = None,
    duplex: bool = False,
) -> str:
    """``variant,seed,pages,key_pages`` (page ranges in the PDFs, empty without PDF);
    with ``files`` (--split) a column names each variant's student file; with
    ``duplex`` a last column says that each range is padded to an even count."""

    def rng(pages, i):
        if not pages or i not in pages:
            return ""
        first, last = pages[i]
        return f"{first}-{last}" if last != first else str(first)

    rows = [["variant", "seed", "pages", "key_pages"] + (["file"] if files else []) + (["duplex"] if duplex else [])]
    for i, d in enumerate(docs, 1):
        rows.append(
            [d.variant, d.seed, rng(sheet_pages, i), rng(key_pages, i)]
            + ([files[i - 1]] if files else [])
            + (["yes"] if duplex else [])
        )
    return csv_text(rows)  # no cell a spreadsheet runs as a formula (worksheet.policy.csv_cells)


def _ranges(column: list[str]) -> Pages | None:
    """``{index: (first, last)}`` from a column of ``3`` / ``3-6`` cells; None if one is not a range."""
    out: Pages = {}
    for i, cell in enumerate(column, 1):
        if not cell:
            continue
        first, _, last = cell.partition("-")
        if not first.isdigit() or not (last or first).isdigit():
            return None
        out[i] = (int(first), int(last or first))
    return out


def previous_pages(path: Path, docs: Sequence[Document], files: Sequence[str] | None, pdfs: Sequence[Path]):
    """``(sheet pages, key pages, duplex)`` of the map at ``path`` when it is a map of
    these variants (the same ids, seeds and files, in order) and every PDF in ``pdfs``
    is there; otherwise None.  An unreadable or foreign file is simply not used."""
    if not pdfs or not all(p.is_file() for p in pdfs):
        return None
    try:
        old = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    new = list(csv.DictReader(io.StringIO(variants_csv(docs, files=files))))
    who = ("variant", "seed") + (("file",) if files else ())
    if len(old) != len(new) or any(o.get(k) != n[k] for o, n in zip(old, new) for k in who):
        return None
    sheet, key = _ranges([o.get("pages") or "" for o in old]), _ranges([o.get("key_pages") or "" for o in old])
    if sheet is None or key is None:
        return None
    return sheet, key, all(o.get("duplex") == "yes" for o in old)


def page_map(
    out: Path,
    name: str,
    docs: Sequence[Document],
    sheet_pages: Pages | None,
    key_pages: Pages | None,
    files: Sequence[str] | None = None,
    pdfs: Sequence[Path] = (),
) -> str:
    """The text of ``NAME-variants.csv`` in ``out``: the pages compiled now, or
    (none compiled) those the existing map knows of the ``pdfs`` beside it."""
    duplex = bool(docs and getattr(docs[0], "duplex", False))
    if not sheet_pages and not key_pages:
        known = previous_pages(out / f"{name}-variants.csv", docs, files, pdfs)
        if known is not None:
            sheet_pages, key_pages, duplex = known
    return variants_csv(docs, sheet_pages, key_pages, files=files, duplex=duplex)
