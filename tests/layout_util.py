"""Measure the pages of a compiled sheet or key (tests/test_page_layout.py):
the scales LaTeX logged for formulas and tables fitted to the line, how far
down each page the ink reaches, and each page's text lines.

Pages are read with poppler (pdftoppm for the ink, pdftotext for the text):
the same tools a reader of the PDF uses, so what is measured is what prints."""

from __future__ import annotations

import html
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pdf_util import require_poppler

_FIT = re.compile(r"^worksheet-fit: (\d+) on line (\d+)", re.M)

# the A4 text block of templates/tex/document.tex.j2 (top 2 cm, bottom 1.8 cm)
PAGE_CM = 29.7
TOP_CM = 2.0
BOTTOM_CM = 1.8
DPI = 40


def fit_scales(log: str) -> list[tuple[float, int]]:
    """(scale, line of the .tex) of every formula or table set smaller to fit."""
    return [(int(s) / 1000, int(n)) for s, n in _FIT.findall(log)]


def _pgm_pages(path: Path, dpi: int) -> list[tuple[int, int, bytes]]:
    """Every page as (width, height, 8-bit grey pixels)."""
    exe = require_poppler("pdftoppm")
    out = subprocess.run([exe, "-gray", "-r", str(dpi), str(path)], capture_output=True, check=True).stdout
    pages, at = [], 0
    while at < len(out):
        # a binary PGM: "P5\n<w> <h>\n255\n" then w*h bytes (pdftoppm writes no comments)
        m = re.compile(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s").match(out, at)
        w, h = int(m[1]), int(m[2])
        start = m.end()
        pages.append((w, h, out[start : start + w * h]))
        at = start + w * h
    return pages


def ink_bottoms(path: Path) -> list[tuple[float, float]]:
    """For every page, (page height, lowest ink in the text block), in pt
    from the top of the page; the ink of the running header and footer is
    outside the block and not counted (an empty block gives its top)."""
    out = []
    for w, h, px in _pgm_pages(path, DPI):
        per_pt = h / (PAGE_CM / 2.54 * 72)
        top, bottom = int(TOP_CM / 2.54 * 72 * per_pt), int(h - BOTTOM_CM / 2.54 * 72 * per_pt)
        lowest = top
        for y in range(top, bottom):
            if min(px[y * w : (y + 1) * w]) < 128:
                lowest = y
        out.append((h / per_pt, (lowest + 1) / per_pt))
    return out


_WORD = re.compile(r'<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>')
_PAGE = re.compile(r"<page [^>]*>(.*?)</page>", re.S)


@dataclass
class Line:
    top: float  # pt from the top of the page
    bottom: float
    text: str


def text_lines(path: Path) -> list[list[Line]]:
    """Every page's lines of text, top to bottom: words whose vertical
    middles lie within 3 pt are one line (grids side by side share a line),
    in the order pdftotext reads them."""
    exe = require_poppler("pdftotext")
    xml = subprocess.run([exe, "-bbox-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for page in _PAGE.findall(xml):
        lines: list[Line] = []
        for top, bottom, word in sorted(
            ((float(a), float(b), html.unescape(w)) for a, b, w in _WORD.findall(page)), key=lambda t: t[0] + t[1]
        ):
            mid = (top + bottom) / 2
            if lines and abs((lines[-1].top + lines[-1].bottom) / 2 - mid) <= 3:
                last = lines[-1]
                lines[-1] = Line(min(last.top, top), max(last.bottom, bottom), last.text + " " + word)
            else:
                lines.append(Line(top, bottom, word))
        pages.append(lines)
    return pages


@dataclass
class Page:
    number: int  # absolute, 1-based
    height: float  # pt
    lines: list[Line]  # in the text block (no running header or footer)
    ink: float  # the lowest ink in the text block, pt from the top of the page
    last_of_doc: bool  # the last page of its document (variant)
    first_of_doc: bool = False  # the first page of its document (variant)

    @property
    def fill(self) -> float:
        """How far down the text block the ink reaches: 0 empty, 1 full."""
        top = TOP_CM / 2.54 * 72
        return (self.ink - top) / (self.height - BOTTOM_CM / 2.54 * 72 - top)

    @property
    def last_line(self) -> Line | None:
        """The page's last line of text when nothing is printed below it
        (no grid, rule or formula more than 4 pt lower): what a reader sees
        at the foot of the page."""
        if self.lines and self.ink - self.lines[-1].bottom <= 4:
            return self.lines[-1]
        return None


def pages(path: Path, ranges: dict[int, tuple[int, int]]) -> list[Page]:
    """The pages of a PDF compiled from several documents whose page ranges
    are ``ranges`` (:attr:`worksheet.render.pdf.Compiled.pages`)."""
    inks = ink_bottoms(path)
    texts = text_lines(path)
    lasts = {last for _, last in ranges.values()}
    firsts = {first for first, _ in ranges.values()}
    top, out = TOP_CM / 2.54 * 72, []
    for n, ((height, ink), lines) in enumerate(zip(inks, texts), 1):
        body = [x for x in lines if x.top >= top - 2 and x.bottom <= height - BOTTOM_CM / 2.54 * 72 + 2]
        out.append(Page(n, height, body, ink, n in lasts, n in firsts))
    return out
