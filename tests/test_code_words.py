"""Words of code in prose (issue 18 §3): find-the-mistake's intro lists the
mistake codes as code (typewriter in tex, <code> in html and Moodle,
backticks in Markdown), as the key's step names are set; user text never
becomes code or markup.  And the key's "first wrong entry" line is set as
TeX sets a signed number, with the chain's value where it differs."""

from __future__ import annotations

import pytest

import worksheet
from worksheet.build import build_document, render_document
from worksheet.policy.safetext import TextError, check_label, check_line, check_paragraph
from worksheet.render import get
from worksheet.render.notebook import document
from worksheet.solution.problem import CODE_CLOSE, CODE_OPEN, code

CODES = ("no-scaling", "scaled-by-d_k")


def test_the_mistake_codes_on_offer_are_code_in_every_printed_format():
    files = render_document(build_document(["find-the-mistake"], seed=1), ["tex", "html", "md", "moodle"])
    # typewriter, breakable after its hyphens (a list of long codes must not run into the margin)
    assert (
        r"one of: \texttt{no-\allowbreak{}scaling}, \texttt{scaled-\allowbreak{}by-\allowbreak{}d\_k},"
        in files["worksheet.tex"]
    )
    assert "one of: <code>no-scaling</code>, <code>scaled-by-d_k</code>," in files["worksheet.html"]
    assert "one of: `no-scaling`, `scaled-by-d_k`," in files["worksheet.md"]
    assert "one of: &lt;code&gt;no-scaling&lt;/code&gt;," in files["worksheet-moodle.xml"]  # HTML inside the XML
    for text in files.values():
        assert CODE_OPEN not in text and CODE_CLOSE not in text


@pytest.mark.parametrize("check", [check_label, check_line, check_paragraph])
def test_no_user_text_may_hold_the_code_marks(check):
    for s in (code("x"), f"a {CODE_OPEN}b", f"c{CODE_CLOSE}"):
        with pytest.raises(TextError):
            check(s, field="tokens")


def test_a_users_label_that_looks_like_code_stays_text():
    p = worksheet.problem("attention", tokens=["`rm`", "<code>b</code>", "c"], seq_len=3)
    html = get("html").render(document(p), key=False)
    assert "&lt;code&gt;b&lt;/code&gt;" in html and "<code>b</code>" not in html
    assert "<code>rm</code>" not in html
    tex = get("tex").render(document(p), key=False)
    assert r"\texttt{rm}" not in tex


def test_the_first_wrong_entry_is_a_signed_number_with_the_chains_value_beside_the_exact_one():
    p = build_document(["find-the-mistake"], seed=1).problems[0]
    (line,) = [w for s in p.steps for w in map(str, s.work) if w.startswith(r"\text{First wrong entry")]
    assert r"\text{, the right value is } {-0.7881}" in line  # braced: no binary minus after the words
    assert r"\text{ (}{-0.7880}\text{ with the sheet's tables and rounding)}" in line
    html = get("html").render(document(p), key=True)
    assert "<mrow><mo>\u2212</mo><mn>0.7881</mn></mrow>" in html
