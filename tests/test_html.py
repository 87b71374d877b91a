"""--format html: one self-contained page per sheet and key (no network),
maths as MathML, autoescaped, key steps in <details>; it loads in headless
Chromium without console errors and does not render blank.

Chromium tests skip when it is missing, and fail instead under
WORKSHEET_REQUIRE_CHROMIUM=1 (as .ci/run sets)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from worksheet import kinds
from worksheet.build import build_document, build_variants, render_document, render_documents
from worksheet.render import get
from worksheet.render import html as htmlmod

REQUIRE = os.environ.get("WORKSHEET_REQUIRE_CHROMIUM") == "1"
MATHML_NS = "http://www.w3.org/1998/Math/MathML"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        exe = shutil.which(name)
        if exe:
            return exe
    if REQUIRE:
        pytest.fail("Chromium is missing but WORKSHEET_REQUIRE_CHROMIUM=1")
    pytest.skip("Chromium is not installed")


def run_chromium(page: Path, *args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.resolve().as_uri(),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)


def png_gray(path: Path):
    """Gray levels of an 8-bit RGB/RGBA PNG (a tiny reader: no Pillow needed)."""
    import numpy as np

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if ctype == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif ctype == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.int32)
    for y in range(height):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 255
        else:
            cur = np.zeros_like(line)
            for x in range(len(line)):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                cur[x] = (line[x] + pred) & 255
        out[y] = cur
        prev = cur
    px = out.reshape(height, width, bpp)[:, :, :3].astype(np.float64)
    return px.mean(axis=2)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Sheet and key of one document holding every kind."""
    folder = tmp_path_factory.mktemp("html")
    doc = build_document(kinds.names(), seed=1, title="All kinds <script>alert(1)</script>", course="CS & AI")
    files = render_document(doc, ["html"])
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_one_self_contained_file_per_sheet_and_key(pages):
    for name in ("worksheet.html", "worksheet-key.html"):
        text = (pages / name).read_text()
        assert text.startswith("<!DOCTYPE html>")
        # nothing fetched: no external scripts, styles, fonts or images
        assert not re.search(r"<(script|link|img|iframe)[^>]*\b(src|href)=", text)
        assert "@import" not in text and "url(" not in text
        urls = set(re.findall(r"https?://[^\s\"'<>]+", text))
        assert urls <= {MATHML_NS}, urls


def test_maths_is_mathml_for_every_kind(pages):
    htmlmod.FALLBACKS.clear()
    doc = build_document(kinds.names(), seed=2)
    for key in (False, True):
        text = get("html").render(doc, key=key)
        assert text.count("<math") > 20
        assert 'class="tex"' not in text
    assert htmlmod.FALLBACKS == []


def test_user_text_is_escaped(pages):
    text = (pages / "worksheet.html").read_text()
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "CS &amp; AI" in text


def test_key_steps_are_in_details_and_the_sheet_has_grids(pages):
    key = (pages / "worksheet-key.html").read_text()
    sheet = (pages / "worksheet.html").read_text()
    assert key.count('<details class="solution">') == key.count('<section class="step solved">') > 10
    assert "<details" not in sheet
    steps, grids = sheet.count('<section class="step'), sheet.count('<table class="grid">')
    written = sum(s.is_written for p in build_document(kinds.names(), seed=1).problems for s in p.steps)
    assert steps - written <= grids <= steps  # a written step (softmax-scaling) may get ruled lines instead
    # a step with a grid has its heading beside the grid in print; one with ruled lines, above them
    assert sheet.count('<section class="step answered">') == steps - written
    assert "Name:" in sheet and "Student ID:" in sheet


def test_print_css_starts_each_variant_on_a_new_page():
    docs = build_variants(["attention"], 3, seed=1)
    text = render_documents(docs, ["html"], roles=("sheet",)).files["worksheet.html"]
    assert text.count('<article class="sheet"') == 3
    assert "break-before: page" in text and "@media print" in text
    for v in ("v01", "v02", "v03"):
        assert f"Variant {v}" in text


@pytest.mark.parametrize("name", ["worksheet.html", "worksheet-key.html"])
def test_loads_in_chromium_without_console_errors(pages, name):
    proc = run_chromium(pages / name, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    assert "<math" in proc.stdout and "Problem 1" in proc.stdout


@pytest.mark.parametrize("name", ["worksheet.html", "worksheet-key.html"])
def test_screenshot_is_not_blank(pages, tmp_path, name):
    shot = tmp_path / "shot.png"
    proc = run_chromium(pages / name, f"--screenshot={shot}", "--window-size=800,1000", "--hide-scrollbars")
    assert shot.exists(), proc.stderr[-2000:]
    gray = png_gray(shot)
    assert gray.shape == (1000, 800)
    dark = (gray < 128).mean()
    assert gray.std() > 20 and 0.005 < dark < 0.5, (gray.std(), dark)


def test_png_reader_sees_a_blank_page_as_blank(tmp_path):
    """The check above would catch a blank page."""
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body style='background:#fff'></body></html>")
    shot = tmp_path / "blank.png"
    run_chromium(blank, f"--screenshot={shot}", "--window-size=200,150", "--hide-scrollbars")
    assert png_gray(shot).std() == 0
