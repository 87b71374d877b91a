"""Page layout of the printed sheets and keys (issue 18, "Page layout" and
"HTML print"), measured on real output: every kind alone (hand and
calculator, sheet and key, seeds 1 and 2) compiled as one file per mode,
the --compact key, two-problem documents, and the midterm printed both from
LaTeX and from headless Chromium.

1. No heading (problem or step) and no caption ("To 4 decimals:", "Exact:")
   is the last thing on a page: its formula, grid or table follows on the
   same page.
2. No page is more than half empty unless a problem ends there (the next
   page starts a problem), a section of tables ends there (the front tables
   of an exam's variants) or it is the last page of its document.
3. Nothing is set smaller than 85% to fit the line: a worked line too wide
   is broken into lines, a matrix or table into narrower column blocks
   (LaTeX logs each fitted scale: see tests/layout_util.py).
4. The midterm printed from Chromium takes at most 1.3 times the pages of
   the PDF; its fractions are display size, its minus signs are signs, and
   every decimal of a key's table prints whole.

Tests that need LaTeX or poppler skip when it is missing and fail under
WORKSHEET_REQUIRE_LATEX=1; the Chromium test skips without Chromium and fails
under WORKSHEET_REQUIRE_CHROMIUM=1 (as .ci/run sets both)."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest

import layout_util as lu
from pdf_util import page_count, pdf_text, require_latex
from worksheet import kinds
from worksheet.build import ProblemSpec, build_document
from worksheet.render import get
from worksheet.render import pdf as pdfmod
from worksheet.render.latex import breakable, narrower_blocks

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REQUIRE_CHROMIUM = os.environ.get("WORKSHEET_REQUIRE_CHROMIUM") == "1"

# a problem's or a step's heading: "4. Scores (scores)", find-the-mistake's "a. The mistake (mistake)", "(11) ..."
HEADING = re.compile(r"^(Problem \d+:|(\d+\.|[a-c]\.|\(\d+\)) .*\([\w.]*[A-Za-z][\w.]*\))")
CAPTION = re.compile(r"^(To \d+ decimals|Full precision|Exact:)")  # words above a table or matrix
MIN_SCALE = 0.85
HTML_PAGES_PER_PDF_PAGE = 1.3


def _docs(numbers: str, seeds=(1, 2), **fields):
    return [build_document([k], seed=s, options={"numbers": numbers}, **fields) for k in kinds.names() for s in seeds]


# every document set compiled once (one LaTeX run each), by name
CASES = {
    "hand-sheet": (lambda: _docs("hand"), False),
    "hand-key": (lambda: _docs("hand"), True),
    "calculator-sheet": (lambda: _docs("calculator"), False),
    "calculator-key": (lambda: _docs("calculator"), True),
    # the reported case: a 2-problem key whose page 2 was half empty
    "attention+lstm-key": (lambda: [build_document(["attention", "lstm-cell"], seed=s) for s in (1, 2, 3)], True),
    "attention+lstm-sheet": (lambda: [build_document(["attention", "lstm-cell"], seed=s) for s in (1, 2, 3)], False),
    "encoder+decoder-key": (lambda: [build_document(["encoder-block", "decoder-block"], seed=1)], True),
    # givens taller than the rest of the first page (a block's whole worked solution): the
    # problem starts below the conventions, not on page 2 with page 1 left empty
    "find-the-mistake-decoder-sheet": (
        lambda: [build_document([ProblemSpec("find-the-mistake", {"of": "decoder-block"})], seed=1)],
        False,
    ),
}
COMPACT = {
    "compact-hand-key": (lambda: _docs("hand", seeds=(1,), compact=True), True),
    "compact-calculator-key": (lambda: _docs("calculator", seeds=(1,), compact=True), True),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """name -> (Compiled, pages), each compiled the first time it is asked for."""
    cache: dict[str, tuple] = {}
    folder = tmp_path_factory.mktemp("layout")

    def get_case(name: str):
        if name not in cache:
            require_latex()
            make, key = {**CASES, **COMPACT}[name]
            result = pdfmod.compile_tex(get("tex").render_many(make(), key=key), f"{name}.tex")
            path = folder / f"{name}.pdf"
            path.write_bytes(result.pdf)
            pages = lu.pages(path, result.pages) if name in CASES else None
            cache[name] = (result, pages)
        return cache[name]

    return get_case


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_heading_or_caption_is_alone_at_the_foot_of_a_page(compiled, name):
    _, pages = compiled(name)
    lone = [
        (p.number, p.last_line.text)
        for p in pages
        if p.last_line and (HEADING.match(p.last_line.text) or CAPTION.match(p.last_line.text))
    ]
    assert not lone, lone


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_page_is_more_than_half_empty_unless_a_problem_ends_there(compiled, name):
    """Point 2.  A section of tables ends like a problem: its last page may be part
    empty.  A lecturer prints the standard tables once, as the statistical tables of
    an exam: at the front of an exam's variants (the first variant then starts on a
    page of its own, so the tables can be handed out or stapled apart), or after a
    single sheet's problems (on pages of their own, as a book's tables flow: see
    templates/tex/tables.tex.j2); the file's last page is the last of its document."""
    _, pages = compiled(name)
    assert len(pages) >= 3
    half = []
    started = False  # has a problem begun on this page or before (else the page is the sheet's head only)
    for p, following in zip(pages, pages[1:] + [None]):
        started = started or any(x.text.startswith("Problem ") for x in p.lines)
        if p.fill >= 0.5 or p.last_of_doc or following is None:
            continue
        if following.first_of_doc and not started:
            continue  # the tables at the front of the variants end here: the first variant starts a page
        if started and any(x.text.startswith("Problem ") for x in following.lines[:3]):
            continue  # the problem ended here: the next one starts on a new page
        half.append((p.number, round(p.fill, 2)))
    assert not half, half


@pytest.mark.parametrize("name", sorted(CASES) + sorted(COMPACT))
def test_nothing_is_set_below_85_percent_to_fit(compiled, name):
    result, _ = compiled(name)
    scales = lu.fit_scales(result.log)
    small = [(s, line) for s, line in scales if s < MIN_SCALE]
    assert not small, small
    assert all(w <= 10 for w in result.overfull), result.overfull  # and nothing runs into the margin


def test_the_compact_key_breaks_wide_worked_lines_instead_of_shrinking_them(compiled):
    """The --compact key's column is narrow: some worked lines do not fit it
    even at 85%; they are broken into lines (no scale below 85% is logged,
    see above), and their pieces are on the page."""
    result, _ = compiled("compact-calculator-key")
    assert lu.fit_scales(result.log)  # some lines were fitted at all: the case is exercised
    tex = get("tex").render_many(COMPACT["compact-calculator-key"][0](), key=True)
    assert r"\fitline[{" in tex and r"\cdot\nobreak" in tex


def test_the_attention_lstm_key_fills_its_second_page(compiled):
    """The page that was half empty: step 6 (attention weights) went whole
    to page 3; now it starts on page 2, which is filled."""
    _, pages = compiled("attention+lstm-key")
    first = 1 if any("Tables" in x.text for x in pages[0].lines) else 0  # the tables page at the front
    assert pages[first + 1].fill > 0.8
    assert any("Attention weights" in x.text for x in pages[first + 1].lines)


def test_a_worked_line_breaks_after_relations_and_sums_not_inside_products_or_brackets():
    line = r"\sigma^2_{1} = \frac{1}{4}\left((1 - 2)^2 + (3 - 2)^2\right) = 1 \cdot 2"
    out = breakable(line)
    assert r"\bigl(" in out and r"\bigr)" in out and r"\left(" not in out
    assert r"1 \cdot\nobreak 2" in out
    # brackets around a fraction stay one group; words of text may break
    assert breakable(r"x = \left(\frac{1}{2}\right)") == r"x = \left(\frac{1}{2}\right)"
    assert r"\text{wrong}\allowbreak\ \text{entry}" in breakable(r"\text{wrong entry}")
    assert breakable(r"\leftarrow") == r"\leftarrow"


def test_narrower_column_blocks_keep_every_column_once():
    for m in (3, 4, 8, 10, 16, 64):
        for blocks in narrower_blocks(m):
            assert [j for a, b in blocks for j in range(a, b)] == list(range(m))
            assert len(blocks) > 1


# -- 4. HTML print ----------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        exe = shutil.which(name)
        if exe:
            return exe
    if REQUIRE_CHROMIUM:
        pytest.fail("Chromium is missing but WORKSHEET_REQUIRE_CHROMIUM=1")
    pytest.skip("Chromium is not installed")


def print_html(page: Path, out: Path) -> Path:
    """``page`` printed to PDF by headless Chromium (its print CSS, A4 as the
    page asks), without the browser's header and footer."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                _chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--no-pdf-header-footer",
                f"--print-to-pdf={out}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=180,
            check=True,
        )
    return out


@pytest.fixture(scope="module")
def midterm_pdf(tmp_path_factory):
    """examples/midterm.toml (4 variants) as PDF and HTML, built by the CLI."""
    from click.testing import CliRunner

    from worksheet.cli import main

    require_latex()
    out = tmp_path_factory.mktemp("midterm")
    res = CliRunner().invoke(
        main, ["build", "--spec", str(EXAMPLES / "midterm.toml"), "--format", "pdf,html", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def midterm(midterm_pdf):
    """The midterm, and its HTML printed by Chromium."""
    _chromium()
    for name in ("midterm", "midterm-key"):
        print_html(midterm_pdf / f"{name}.html", midterm_pdf / f"{name}-printed.pdf")
    return midterm_pdf


@pytest.mark.parametrize("name, column", [("midterm", "pages"), ("midterm-key", "key_pages")])
def test_the_midterm_pdf_has_no_lone_heading_and_no_half_empty_page(midterm_pdf, name, column):
    """Points 1 and 2 for a whole exam: every variant's sheet and key (their
    page ranges from midterm-variants.csv)."""
    with open(midterm_pdf / "midterm-variants.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ranges = {i: tuple(map(int, r[column].split("-"))) for i, r in enumerate(rows, 1)}
    pages = lu.pages(midterm_pdf / f"{name}.pdf", ranges)
    assert len(pages) == max(last for _, last in ranges.values())
    for p, following in zip(pages, pages[1:] + [None]):
        line = p.last_line
        assert not (line and (HEADING.match(line.text) or CAPTION.match(line.text))), (p.number, line.text)
        starts_problem = following is not None and any(x.text.startswith("Problem ") for x in following.lines[:3])
        assert p.fill >= 0.5 or p.last_of_doc or starts_problem, (p.number, p.fill)


@pytest.mark.parametrize("name", ["midterm", "midterm-key"])
def test_the_midterm_printed_from_chromium_takes_at_most_1_3_times_the_pdf_pages(midterm, name):
    html_pages, pdf_pages = page_count(midterm / f"{name}-printed.pdf"), page_count(midterm / f"{name}.pdf")
    assert html_pages <= HTML_PAGES_PER_PDF_PAGE * pdf_pages, (html_pages, pdf_pages)
    if name == "midterm-key":  # the solutions are unfolded on paper
        assert "To 4 decimals" in pdf_text(midterm / f"{name}-printed.pdf")


def test_no_heading_or_caption_ends_a_page_of_the_key_printed_from_chromium(midterm):
    """A long solution goes on over a page break in print, but a step's
    heading stays with its first lines and a caption with its table."""
    pages = pdf_text(midterm / "midterm-key-printed.pdf").split("\f")
    assert len(pages) > 10
    lone = []
    for n, page in enumerate(pages, 1):
        lines = [x.strip() for x in page.splitlines() if x.strip()]
        if lines and (HEADING.match(lines[-1]) or CAPTION.match(lines[-1]) or re.match(r"^\d+\. ", lines[-1])):
            lone.append((n, lines[-1]))
    assert not lone, lone


def test_every_decimal_of_the_printed_key_tables_prints_whole(midterm):
    """Cells are wide enough for their numbers: no decimal of a key's table
    wraps inside its cell on paper."""
    page = (midterm / "midterm-key.html").read_text()
    cells = set()
    for table in re.findall(r'<table class="decimals">(.*?)</table>', page, re.S):
        cells |= {unescape(c) for c in re.findall(r"<td>([^<]+)</td>", table)}
    assert len(cells) > 20
    printed = set(pdf_text(midterm / "midterm-key-printed.pdf").split())
    assert cells <= printed, sorted(cells - printed)[:10]


def _maths(html: str):
    """The maths of matrix and table cells and of displays (not the inline
    maths of a sentence, whose fractions are text size as in TeX)."""
    for m in re.finditer(r'(?:<td>|<div class="display">)(<math\b[^>]*>.*?</math>)', html, re.S):
        yield ET.fromstring(m[1].replace("&nbsp;", "\u00a0"))


SCRIPTS = {"msup", "msub", "msubsup", "munder", "mover", "munderover"}


@pytest.mark.parametrize("name", ["midterm", "midterm-key"])
def test_html_fractions_are_display_size_and_minus_signs_are_signs(midterm, name):
    """A fraction in a display or a matrix cell is display size (unless it is
    inside an exponent or index); no ASCII hyphen
    stands for a minus, and a minus after "(", "=" or "≈" is a sign: grouped
    with what it negates, or a prefix operator."""
    html = (midterm / f"{name}.html").read_text()
    small, seen = [], 0
    for math in _maths(html):
        seen += 1
        if math.get("display") == "block" or math.get("displaystyle") == "true":
            continue
        parents = {c: p for p in math.iter() for c in p}
        for frac in math.iter("mfrac"):
            node, scripted = frac, False
            while node in parents:
                node = parents[node]
                scripted |= node.tag in SCRIPTS or node.get("displaystyle") == "true"
            if not scripted:
                small.append(ET.tostring(math, encoding="unicode")[:120])
    assert seen > 50 and not small, small
    assert "<mn>-" not in html and "<mo>-</mo>" not in html
    assert not re.search("<mo[^>]*>[(=\u2248]</mo><mo>\u2212</mo>", html)


def _printed_fills(path: Path) -> list[float]:
    """Each printed page's lowest ink as a share of the page's height (20 dpi grey)."""
    out = subprocess.run(["pdftoppm", "-gray", "-r", "20", str(path)], capture_output=True, check=True).stdout
    fills, at = [], 0
    while at < len(out):
        m = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", out[at:])
        w, h = int(m[1]), int(m[2])
        start = at + m.end()
        px, at = out[start : start + w * h], start + w * h
        inked = [y for y in range(h) if min(px[y * w : (y + 1) * w]) < 128]
        fills.append((inked[-1] + 1) / h if inked else 0.0)
    return fills


@pytest.mark.parametrize("name", ["midterm", "midterm-key"])
def test_no_printed_html_page_is_more_than_half_empty_unless_its_variant_ends_there(midterm, name):
    """Point 2 for the HTML printed from Chromium: a page is at least half
    full, unless the next page starts another variant (each variant starts a
    new page, its first page naming it in the header) or it is the last."""
    printed = midterm / f"{name}-printed.pdf"
    fills = _printed_fills(printed)
    texts = pdf_text(printed).split("\f")  # pdftotext ends every page with a form feed
    starts = [bool(re.search(r"Variant v\d+", t)) for t in texts[: len(fills)]]
    assert sum(starts) == 4  # the midterm's 4 variants, each naming itself once
    half = [(k + 1, round(f, 2)) for k, f in enumerate(fills) if f < 0.5 and k + 1 < len(fills) and not starts[k + 1]]
    assert not half, half


_BBOX_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="[\d.]+">([^<]*)</word>')
_BBOX_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)


def _column_last_lines(pdf: Path) -> list[tuple[int, int, str]]:
    """(page, column, text of the column's last line) for a two-column PDF;
    the running header (top 6%) and the footer line ("page N") left out."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    out = []
    for n, (w, h, body) in enumerate(_BBOX_PAGE.findall(xml), 1):
        words = [(float(x), float(y), unescape(t)) for x, y, t in _BBOX_WORD.findall(body)]
        foot = {round(y) for _, y, t in words if t == "page"}
        for col in (0, 1):
            mine = [
                (x, y, t)
                for x, y, t in words
                if (x >= float(w) / 2) == bool(col) and y > 0.06 * float(h) and round(y) not in foot
            ]
            if mine:
                bottom = max(y for _, y, _ in mine)
                line = [t for x, y, t in sorted(mine) if y > bottom - 3]
                out.append((n, col, " ".join(line)))
    return out


@pytest.mark.parametrize("name", sorted(COMPACT))
def test_no_compact_column_ends_with_a_heading_or_a_caption(compiled, name, tmp_path):
    """Point 1 in the --compact keys' two columns: every column's last line
    is not a step or problem heading, nor a caption whose table went on to the
    next column."""
    result, _ = compiled(name)
    pdf = tmp_path / f"{name}.pdf"
    pdf.write_bytes(result.pdf)
    last = _column_last_lines(pdf)
    assert len(last) > 10  # both columns of many pages were read
    lone = [(n, col, text) for n, col, text in last if HEADING.match(text) or CAPTION.match(text)]
    assert not lone, lone
