"""The notebook display (worksheet.render.notebook): one self-contained
fragment with its own scoped styles, one title and no headings, bracketed
matrices, user text escaped and out of MathJax's reach, small; and what a
real Jupyter kernel returns for a displayed problem (nbclient)."""

from __future__ import annotations

import importlib
import re
from html.parser import HTMLParser

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import worksheet
from worksheet.policy import safetext
from worksheet.build import build_document
from worksheet.exact.mathml import MINUS

MAX_BYTES = 6500  # a default attention problem's display (its softmax lines write the table's numbers: 0.3679/1.3679)


class Tags(HTMLParser):
    """Start tags with their attributes, and the text, of an HTML fragment."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self._in_style = False
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False if tag == "style" else self._in_style

    def handle_data(self, data):
        if not self._in_style:
            self.text.append(data)


def top_level_selectors(css: str) -> list[str]:
    """The selectors of the top-level rules of a style sheet (nested rules
    are inside their parent's braces)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(css):
        if c == "{":
            if depth == 0:
                out.append(css[start:i].strip())
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
    assert depth == 0 and not css[start:].strip(), css
    return out


def check_fragment(html: str) -> str:
    """What every display must be; returns its root id."""
    tags = Tags(html).tags
    root, attrs = tags[0]
    assert root == "div" and re.fullmatch(r"ws-[0-9a-f]{8}", attrs["id"])
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set(attrs["class"].split())
    rid = attrs["id"]
    assert [a["id"] for _, a in tags if "id" in a] == [rid]  # the one id, nothing else that could clash
    names = {t for t, _ in tags}
    assert not names & {
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "html",
        "head",
        "body",
        "script",
        "link",
        "img",
        "details",
        "iframe",
    }
    style = re.findall(r"<style>(.*?)</style>", html, flags=re.S)
    assert len(style) == 1 and top_level_selectors(style[0]) == [f"#{rid}"]  # every rule scoped to this display
    body = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    assert "$" not in body and "\\" not in body  # nothing a notebook's MathJax could read as TeX
    assert not re.search(r"\s(?:on[a-z]+|href|src|style)=", body)
    return rid


def test_a_default_attention_problem_displays_as_one_small_scoped_fragment():
    html = worksheet.problem("attention")._repr_html_()
    check_fragment(html)
    assert len(html.encode("utf-8")) < MAX_BYTES
    text = "".join(Tags(html).text)
    assert text.count("Scaled dot-product attention") == 1  # one title
    assert html.count('class="t"') == 1


def test_every_display_has_its_own_id():
    p = worksheet.problem("attention", seed=2)
    ids = {check_fragment(p._repr_html_()) for _ in range(5)}
    assert len(ids) == 5


def test_matrices_are_bracketed_and_minus_is_a_minus():
    p = worksheet.problem("attention", seed=2, causal=True)
    html = p._repr_html_()
    mathml_matrices = html.count('<mo stretchy="true">[</mo><mtable')
    css_matrices = html.count('<span class="b"><table>')
    assert mathml_matrices + css_matrices >= len(p.inputs) + len(p.steps)
    assert html.count('<mo stretchy="true">]</mo>') == mathml_matrices
    assert "\u2212" in html and not re.search(r">-[0-9]", html)  # −1, never a hyphen
    assert f"{MINUS}<mi>\u221e</mi>" in html  # the masked scores


@pytest.mark.parametrize("kind", importlib.import_module("worksheet.kinds").names())
def test_every_kind_displays(kind):
    doc = build_document([kind], seed=1)
    check_fragment(doc._repr_html_())


def test_a_document_of_several_problems_has_one_title_and_numbered_problems():
    doc = build_document(["attention", "layer-norm"], seed=1, title="Week 3")
    html = doc._repr_html_()
    check_fragment(html)
    text = "".join(Tags(html).text)
    assert text.count("Week 3") == 1 and "Problem 1: Scaled dot-product attention" in text and "Problem 2:" in text


@given(st.text(min_size=1, max_size=60))
@example("cost in $ and $x^2$")
@example("\\(x\\) and \\[y\\]")
@example("<mtr></math><mphantom>")
@example("a & b \"q\" 'r' ]]>")
@example("$$x$$")
@settings(max_examples=40, deadline=None)
def test_a_title_is_shown_as_written_and_never_typeset(title):
    """Whatever the title, the display is a clean fragment with no $ or
    backslash as text (check_fragment); a title without $ (so without
    maths) shows exactly its characters."""
    try:
        title = safetext.check_title(title, field="title")
    except safetext.TextError:
        return
    html = build_document(["softmax-scaling"], seed=1, title=title)._repr_html_()
    check_fragment(html)
    if "$" not in title:
        assert title.strip() in "".join(Tags(html).text)


@pytest.mark.parametrize("label", ["<mtr>", "</math>", "<mphantom>", "a&b", '"q"', "]]>", "\\(x\\)"])
def test_a_hostile_token_label_is_text_in_the_display(label):
    p = worksheet.problem("attention", seed=1, tokens=["x", label, "z"])
    html = p._repr_html_()
    check_fragment(html)
    assert label in "".join(Tags(html).text)
    assert "<mphantom" not in html and html.count("<math") == html.count("</math>")


# ---------------------------------------------------------------- a real kernel


def test_a_jupyter_kernel_displays_a_problem_as_the_fragment(tmp_path):
    """Run a notebook in a real IPython kernel (nbclient) and read back the
    text/html it displayed: the fragment, as the notebook front end gets it."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import worksheet\np = worksheet.problem('attention')\np"),
        nbformat.v4.new_code_cell(
            "from IPython.display import display\n"
            "display(worksheet.problem('attention', seed=2, tokens=['<mtr>', 'a', "
            "'\\\\(y\\\\)']))"
        ),
    ]
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    first = nb.cells[0].outputs[0]
    assert first["output_type"] == "execute_result"
    html = first["data"]["text/html"]
    rid = check_fragment(html)
    assert len(html.encode("utf-8")) < MAX_BYTES
    assert "text/markdown" in first["data"]  # the Markdown view travels along for front ends without HTML
    second = nb.cells[1].outputs[0]["data"]["text/html"]
    assert check_fragment(second) != rid
    assert "&lt;mtr&gt;" in second and "&#92;(y&#92;)" in second and "\\(" not in second
