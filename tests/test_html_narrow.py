"""HTML sheets on a phone (390 px wide): the page never scrolls sideways.  A wide
given matrix (a find-the-mistake solution of 4 decimal columns) or a tables page
(σ and tanh on a grid of every 0.01) scrolls inside its own box, the tables' row
labels kept in view; on paper nothing is clipped."""

from __future__ import annotations

import json
import re

import pytest

from worksheet.build import build_document, render_document

from test_html import run_chromium

_MEASURE = """
<style>body { width: 390px; overflow-x: auto; }</style>
<script>
document.querySelectorAll('details').forEach((d) => { d.open = true; });  // every solution shown
// a phone's width, whatever the headless window's least width: the body is the page
const out = {page: document.body.scrollWidth, view: document.body.clientWidth, boxes: 0};
for (const el of document.querySelectorAll('.given > div, .aidscroll, details.solution')) {
  if (el.scrollWidth > el.clientWidth) out.boxes += 1;  // a box that scrolls on its own
}
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>
"""


@pytest.mark.parametrize(
    "kind, numbers, file",
    [
        ("lstm-cell", "hand", "worksheet.html"),
        ("find-the-mistake:of=attention", "calculator", "worksheet.html"),
        ("multi-head-attention", "hand", "worksheet-key.html"),  # its solutions opened
        ("layer-norm", "calculator", "worksheet-key.html"),
    ],
)
def test_a_sheet_does_not_scroll_sideways_on_a_phone(tmp_path, kind, numbers, file):
    page = render_document(build_document([kind], seed=1, options={"numbers": numbers}), ["html"])[file]
    f = tmp_path / "sheet.html"
    f.write_text(page.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    proc = run_chromium(f, "--window-size=390,900", "--dump-dom")
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout)
    assert found, proc.stderr[-2000:]
    got = json.loads(found[1])
    assert got["page"] <= got["view"], got  # no sideways scrolling of the whole page
    assert got["boxes"] >= 1, got  # what is wider scrolls in its own box


def test_the_boxes_that_scroll_on_screen_show_everything_on_paper():
    page = render_document(build_document(["lstm-cell"], seed=1), ["html"])["worksheet.html"]
    style = re.search(r"<style>.*?</style>", page, re.S)[0]
    screen, printed = style.split("@media print", 1)
    assert ".given > div, .aidscroll { max-width: 100%; overflow-x: auto;" in screen
    assert ".given > div, .aidscroll, details.solution { overflow: visible;" in printed
    assert '<div class="aidscroll"><table class="aidgrid">' in page


_COLUMN = """
<script>
const box = (sel) => document.querySelector(sel).getBoundingClientRect();
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify({sheet: box('article.sheet'), tables: box('section.tables')});
document.body.appendChild(pre);
</script>
"""


def test_the_tables_page_stands_in_the_sheets_column_at_laptop_width(tmp_path):
    """Issue 29: the tables section (after the sheet's article) was flush left at 1280 px."""
    page = render_document(build_document(["lstm-cell"], seed=1, options={"numbers": "hand"}), ["html"])[
        "worksheet.html"
    ]
    assert 'class="tables"' in page
    f = tmp_path / "sheet.html"
    f.write_text(page.replace("</body>", _COLUMN + "</body>"), encoding="utf-8")
    proc = run_chromium(f, "--window-size=1280,900", "--dump-dom")
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout)
    assert found, proc.stderr[-2000:]
    got = json.loads(found[1])
    assert got["sheet"]["left"] > 100  # a centred column at this width
    assert (
        abs(got["tables"]["left"] - got["sheet"]["left"]) < 1
        and abs(got["tables"]["width"] - got["sheet"]["width"]) < 1
    )
