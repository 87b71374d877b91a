"""Issue 10, point 1: user text never becomes LaTeX, HTML or Markdown markup.

Labels (tokens, vocabulary), titles, courses, dates, instructions and
prompts are checked (worksheet.policy.safetext) and escaped for every format; a
prompt's $...$ maths may use only the allowed commands.  The PDF tests
read the PDF back with pdftotext: /etc/passwd never gets in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from common import one_line_error
from worksheet.policy import safetext
from worksheet.build import build_document
from worksheet.policy.errors import WorksheetError
from worksheet.kinds import next_token
from worksheet.render import get
from worksheet.render.html import mathml
from worksheet.render.latex import tex_escape
from worksheet.render.markdown import MarkdownRenderer, no_tags
from worksheet.policy.safetext import check_label, check_prose, math_problem

from test_pdf import pdf_text, require_latex

PASSWD = r"$\input{/etc/passwd}$"
HREF = r"$\href{javascript:alert(1)}{x}$"


def passwd_leaked(text: str) -> bool:
    """Does ``text`` hold a line of /etc/passwd (root's entry is on every Unix)?"""
    return re.search(r"root:[^:\s]*:0:0", text) is not None


def write_spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "exam.toml"
    path.write_text('title = "Quiz"\n' + body, encoding="utf-8")
    return path


# ---------------------------------------------------------------- labels that would open maths


def test_vocab_label_with_dollar_maths_is_refused_on_the_command_line(runner, cli, tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(cli, ["build", rf"next-token:vocab={PASSWD} b c <eos>", "--format", "pdf,tex", "-o", str(out)])
    line = one_line_error(res)
    assert "vocab" in line and "$" in line
    assert not out.exists() or not any(out.iterdir())


def test_vocab_label_with_dollar_maths_is_refused_in_a_solve_input(runner, cli, tmp_path):
    path = tmp_path / "nt.json"
    path.write_text(json.dumps({"h": [[1, 0]], "W_vocab": [[1, 0, 0], [0, 1, 0]], "vocab": [PASSWD, "b", "c"]}))
    res = runner.invoke(cli, ["solve", "next-token", "-i", str(path), "--format", "tex"])
    line = one_line_error(res)
    assert str(path) in line and "vocab" in line
    assert res.stdout == ""


def test_token_label_with_dollar_maths_is_refused_in_a_spec_section(runner, cli, tmp_path):
    spec = write_spec(tmp_path, f"[[sections]]\nkind = \"attention\"\nseq_len = 2\ntokens = ['{PASSWD}', 'b']\n")
    res = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "pdf", "-o", str(tmp_path / "out")])
    line = one_line_error(res)
    assert str(spec) in line and "sections[1].tokens" in line and "line 5" in line


@pytest.mark.parametrize(
    "kind",
    [
        "attention",
        "self-attention-basic",
        "softmax-scaling",
        "cross-attention",
        "multi-head-attention",
        "layer-norm",
        "feed-forward",
        "encoder-block",
        "alignment",
        "positional-encoding",
        ("cross-attention", "source_tokens"),
        ("next-token", "vocab"),
    ],
)
def test_every_kind_with_labels_refuses_a_label_that_opens_maths(kind):
    from worksheet import kinds

    kind, field = kind if isinstance(kind, tuple) else (kind, "tokens")
    with pytest.raises(WorksheetError, match=field):
        kinds.get(kind).Params.from_options({field: f"{PASSWD} b"})


def test_label_that_opens_maths_is_refused_by_the_library_too():
    with pytest.raises(WorksheetError, match="vocab"):
        next_token.Params(vocab=(PASSWD, "b"))


@pytest.mark.parametrize(
    "label, why",
    [
        ("", "empty"),
        ("x" * 41, "longer than 40"),
        ("a\nb", "control character"),
        ("a\tb", "control character"),
        ("\x1b[31mred", "control character"),
        ("a\u202eb", "control character"),
        ("$x$", "may not contain \\$"),
    ],
)
def test_labels_are_printable_bounded_and_without_dollar(label, why):
    with pytest.raises(safetext.TextError, match=why) as info:
        check_label(label, field="tokens")
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value) and "tokens" in str(info.value)


def test_a_bad_label_in_row_labels_names_the_field():
    from worksheet.kinds.base import row_labels

    with pytest.raises(WorksheetError, match="source_tokens"):
        row_labels(["ok", "a\x00b"], 2, field="source_tokens")


# ---------------------------------------------------------------- labels are shown literally


@pytest.mark.parametrize("fmt", ["tex", "md", "html"])
def test_a_label_that_looks_like_a_command_is_printed_as_text(fmt):
    label = r"\input{/etc/passwd}"
    doc = build_document([f"next-token:vocab=a {label} c"], seed=1)
    text = get(fmt).render(doc, key=True)
    if fmt == "tex":
        assert r"\input{/etc/passwd}" not in text
        assert r"\textbackslash{}input\{/etc/passwd\}" in text
    elif fmt == "md":
        assert r"\\input\{/etc/passwd\}" in text  # the prose: escaped for Markdown
    else:
        assert "\\input{/etc/passwd}" in text  # text of the page, escaped by autoescape


def test_pdf_of_a_label_that_looks_like_input_shows_it_and_not_the_file(runner, cli, tmp_path):
    require_latex()
    res = runner.invoke(
        cli, ["build", r"next-token:vocab=a \input{/etc/passwd} c", "--format", "pdf", "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    text = pdf_text(tmp_path / "worksheet-key.pdf")
    assert "input{/etc/passwd}" in text.replace(" ", "")
    assert not passwd_leaked(text)


def test_html_label_that_is_a_link_never_becomes_an_href():
    doc = build_document([r"next-token:vocab=a \href{javascript:alert(1)}{x} c"], seed=1)
    html = get("html").render(doc, key=True)
    assert "href=" not in html and 'href"' not in html
    assert not re.search(r"<[^>]*javascript:", html)


@pytest.mark.parametrize("position", [0, 1])  # the second label is also in the logit's worked formula
def test_script_in_a_label_is_escaped_in_markdown_and_html(position):
    vocab = ["a", "b", "c"]
    vocab[position] = "<script>alert(1)</script>"
    doc = build_document([f"next-token:vocab={' '.join(vocab)}"], seed=1)
    for fmt in ("md", "html"):
        text = get(fmt).render(doc, key=True) + get(fmt).render(doc, key=False)
        assert "<script>alert" not in text, fmt
        assert "&lt;script&gt;alert(1)" in text, fmt
    md = get("md").render(doc, key=True)
    assert "&lt;script&gt;" in md


def test_markdown_text_escapes_html_and_markdown_specials():
    out = MarkdownRenderer().text("<b>a|b</b> *x* _y_ `z` [l](u) & $m$ &nbsp;")
    assert "<" not in out and ">" not in out
    assert r"\|" in out and r"\*x\*" in out and r"\_y\_" in out and r"\`z\`" in out and r"\[l\]" in out
    assert "&amp; " in out and r"\$m\$" in out and "&amp;nbsp;" in out  # shown as typed (issue 17 §2)


def test_markdown_maths_never_holds_a_tag():
    assert "<" not in no_tags(r"\text{<script>} < 1")
    assert no_tags(r"\text{<eos>}") == r"\text{\textless{}eos\textgreater{}}"


# ---------------------------------------------------------------- titles, course, date, instructions


def test_title_with_a_command_off_the_list_is_refused(runner, cli, tmp_path):
    res = runner.invoke(cli, ["build", "--title", PASSWD + " <script> & 50%", "-o", str(tmp_path / "o")])
    assert "--title" in one_line_error(res) and not (tmp_path / "o").exists()


def test_title_text_is_escaped_and_its_maths_allowed(runner, cli, tmp_path):
    res = runner.invoke(
        cli, ["build", "--title", r"Why $\sqrt{d_k}$? <script> & 50%", "--format", "tex,md,html", "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    tex = (tmp_path / "worksheet.tex").read_text()
    assert r"50\%" in tex and r"\input{" not in tex
    assert "<script>" not in (tmp_path / "worksheet.html").read_text()
    assert "<script>" not in (tmp_path / "worksheet.md").read_text()


def test_title_of_two_lines_is_refused(runner, cli, tmp_path):
    res = runner.invoke(cli, ["build", "--title", "a\nerror: forged", "-o", str(tmp_path / "o")])
    assert "--title" in one_line_error(res)


@pytest.mark.parametrize(
    "key, value",
    [
        ("title", '"a\\u001b[2Jb"'),
        ("course", '"""a\nb"""'),
        ("date", '"2026\\u0000"'),
        ("instructions", '"a\\u0007b"'),
        ("title", '"' + "x" * 201 + '"'),
    ],
)
def test_spec_text_fields_are_checked_and_named(runner, cli, tmp_path, key, value):
    path = tmp_path / "exam.toml"
    path.write_text(f'{key} = {value}\n[[sections]]\nkind = "attention"\n', encoding="utf-8")
    res = runner.invoke(cli, ["build", "--spec", str(path), "-o", str(tmp_path / "out")])
    line = one_line_error(res)
    assert str(path) in line and key in line and "line 1" in line
    assert "\x1b" not in line and "\x07" not in line


# ---------------------------------------------------------------- prompts: allowed maths only


@pytest.mark.parametrize(
    "prompt",
    [
        PASSWD,
        HREF,
        r"$\text{\input{/etc/passwd}}$",
        r"$x^^5cinput{/etc/passwd}$",
        r"$x % comment$",
        "$<script>$",
        r"$\def\x{1}$",
        "$a",
        r"$\csname input\endcsname$",
    ],
)
def test_spec_prompt_with_maths_off_the_list_is_refused(runner, cli, tmp_path, prompt):
    spec = write_spec(tmp_path, f"[[sections]]\nkind = \"attention\"\nprompt = '{prompt}'\n")
    res = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "pdf,html", "-o", str(tmp_path / "out")])
    line = one_line_error(res)
    assert str(spec) in line and "sections[1].prompt" in line and "line 4" in line
    assert not (tmp_path / "out").exists()


def test_spec_prompt_with_allowed_maths_is_typeset(runner, cli, tmp_path):
    prompt = r"Use $\frac{1}{\sqrt{d_k}} \cdot Q K^\top$ and $\alpha \le \exp(x)$; cost is 5 dollars."
    spec = write_spec(tmp_path, f"[[sections]]\nkind = \"attention\"\nprompt = '{prompt}'\n")
    res = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "tex,html,md", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert r"$\frac{1}{\sqrt{d_k}} \cdot Q K^\top$" in (tmp_path / "worksheet.tex").read_text()
    assert "<msqrt>" in (tmp_path / "worksheet.html").read_text()


def test_pdf_of_a_spec_prompt_never_holds_the_file(runner, cli, tmp_path):
    """The prompt is refused, by the library too (issue 17 §2); and a prompt
    put into a problem after the check is printed as text (prose never runs
    off-list maths)."""
    require_latex()
    from worksheet.build import ProblemSpec
    from worksheet.render.pdf import compile_tex

    with pytest.raises(WorksheetError, match="prompt"):
        build_document([ProblemSpec("attention", {}, prompt=PASSWD)], seed=1)
    doc = build_document([ProblemSpec("attention", {}, prompt="PH")], seed=1)
    doc.problems[0].intro = doc.problems[0].intro.replace("PH", PASSWD)
    tex = get("tex").render(doc, key=False)
    assert r"\input{" not in tex
    text = pdf_text_of(compile_tex(tex).pdf, tmp_path)
    assert "input{/etc/passwd}" in text.replace(" ", "") and not passwd_leaked(text)


def pdf_text_of(pdf: bytes, folder: Path) -> str:
    path = folder / "x.pdf"
    path.write_bytes(pdf)
    return pdf_text(path)


@pytest.mark.parametrize("fmt", ["tex", "md", "html"])
def test_prose_prints_off_list_maths_as_text(fmt):
    out = str(get(fmt).prose(r"see $\input{/etc/passwd}$ and $x^2$"))
    shown = {
        "tex": r"\$\textbackslash{}input\{/etc/passwd\}\$",
        "md": r"\$\\input\{/etc/passwd\}\$",
        "html": r"$\input{/etc/passwd}$ and <math",
    }[fmt]
    assert shown in out
    assert ("$x^2$" in out) if fmt != "html" else (out.count("<math") == 1 and "<msup>" in out)


def test_html_prose_with_a_link_has_no_href():
    out = str(get("html").prose(HREF))
    assert "href=" not in out and "<math" not in out  # printed as text, not maths
    assert "\\href{javascript:alert(1)}{x}" in out


def test_mathml_never_carries_a_link_or_a_script():
    assert "href=" not in mathml(r"\href{javascript:alert(1)}{x}")
    assert "style=" not in mathml(r"\style{color:red}{x}")
    assert "<script" not in mathml(r"\text{<script>alert(1)</script>}")
    # the reader knows no command that makes an attribute: such a formula is shown as its escaped source
    assert mathml(r"\href{javascript:alert(1)}{x}").startswith('<code class="tex">')


def test_mathml_shows_escaped_label_text_as_the_label():
    from worksheet.solution.number_format import exact_latex

    assert "<mtext>&lt;eos&gt;</mtext>" in mathml(exact_latex("<eos>"))
    assert "\\textless" not in mathml(exact_latex("a_b <c>"))


# ---------------------------------------------------------------- the allow-list itself


@pytest.mark.parametrize(
    "latex",
    [
        r"\frac{1}{2}",
        r"\sqrt{d_k}",
        r"Q K^\top",
        r"x_{i} \cdot y^{2}",
        r"\alpha + \Omega",
        r"\text{softmax}(x)",
        r"\left( a \right)",
        r"\mathrm{vocab}",
        r"j > i",
        r"\{ 1, 2 \}",
        r"e^{-\infty} = 0",
    ],
)
def test_allowed_maths_passes(latex):
    assert math_problem(latex) is None


@pytest.mark.parametrize(
    "latex, why",
    [
        (r"\input{/etc/passwd}", r"\\input"),
        (r"\href{j:a}{x}", r"\\href"),
        (r"\text{\include{x}}", r"\\include"),
        (r"x^^5c", r"\^\^"),
        ("a % b", "'%'"),
        ("a & b", "'&'"),
        ("a < b", "'<'"),
        ("#1", "'#'"),
        ("{x", "without its }"),
        ("x}", "without its {"),
        ("x\\", "end with"),
        (r"\\", r"\\\\"),
        (r"\catcode", "catcode"),
        ("a\u200bb", "'"),
    ],
)
def test_maths_off_the_list_is_named(latex, why):
    assert re.search(why, math_problem(latex))


def test_check_prose_names_the_formula_and_the_field():
    with pytest.raises(safetext.TextError, match=r"prompt: formula 2 .*\\input"):
        check_prose(r"$x$ then $\input{a}$", field="prompt")


def test_every_built_in_prose_formula_is_on_the_list():
    """Kinds' intros, notes and the conventions never fall back to text."""
    from worksheet import kinds

    texts = [t for c in kinds.every_convention().values() for t in (c.text, c.calculator) if t]
    for name in kinds.KINDS:
        for numbers in ("hand", "calculator"):
            for p in build_document([name], seed=2, options={"numbers": numbers}).problems:
                texts += [
                    p.title,
                    p.intro,
                    *(p.notes or ()),
                    *(a.title for a in p.aids),
                    *(s.note for s in p.steps if s.note),
                    *(s.title for s in p.steps),
                    *(s.written for s in p.steps if s.written),
                ]
    bad = [(f, math_problem(f)) for t in texts for f in t.split("$")[1::2] if math_problem(f)]
    assert bad == []


# ---------------------------------------------------------------- escaping, property-based

_TEX_ESCAPES = re.compile(r"\\text(?:backslash|asciitilde|asciicircum|less|greater)\{\}|\\\^\{\}|\\~\{\}|\\[&%$#_{}]")


@given(st.text(max_size=60))
@example("\\input{/etc/passwd}")
@example("^^41")
def test_tex_escaped_text_has_no_live_specials(s):
    from worksheet.steps.scaled_dot_product import latex_text
    from worksheet.solution.number_format import text_escape

    for out in (tex_escape(s), text_escape(s), str(latex_text(s))[len(r"\text{") : -1]):
        rest = _TEX_ESCAPES.sub("", out)
        assert not set(rest) & set("\\{}$&%#_^~"), (s, out)


@given(st.text(max_size=60))
def test_markdown_escaped_text_has_no_tags_or_maths(s):
    out = MarkdownRenderer().text(s)
    assert "<" not in out and ">" not in out
    assert not re.search(r"(?<!\\)\$", out.replace("\\\\", ""))


@given(st.text(max_size=40))
def test_html_label_cells_never_hold_markup(s):
    """Every label that may be used converts to MathML (no fallback to the
    LaTeX source) holding only MathML tags, in a cell and in a formula."""
    from worksheet.steps.scaled_dot_product import latex_text
    from worksheet.solution.number_format import exact_latex
    from worksheet.render.html import FALLBACKS

    try:
        check_label(s, field="tokens")
    except safetext.TextError:
        return
    before = len(FALLBACKS)
    out = mathml(exact_latex(s)) + mathml(latex_text(s))
    assert len(FALLBACKS) == before, s
    tags = re.findall(r"<(/?[a-zA-Z][\w:-]*)", out)
    assert set(tags) <= {
        "math",
        "/math",
        "mrow",
        "/mrow",
        "mtext",
        "/mtext",
        "mi",
        "/mi",
        "mo",
        "/mo",
        "mn",
        "/mn",
        "mspace",
        "/mspace",
        "msup",
        "/msup",
        "msub",
        "/msub",
    }
    assert "href=" not in out and "style=" not in out


# ---------------------------------------------------------------- belt and braces: LaTeX cannot open files


def test_latex_cannot_input_an_absolute_path(tmp_path):
    """Even a .tex with a live \\input{/etc/passwd} (a missed escape) gets no
    file content: LaTeX runs with openin_any=p and stops on the missing file."""
    require_latex()
    from worksheet.render.pdf import LatexError, compile_tex

    source = "\\documentclass{article}\\begin{document}x \\input{/etc/passwd} y\\end{document}\n"
    with pytest.raises(LatexError) as info:
        compile_tex(source, "leak.tex")
    assert not passwd_leaked(info.value.log)
    assert "openin_any" in info.value.log or "not found" in info.value.log


def test_latex_cannot_read_an_absolute_path_with_openin(tmp_path):
    require_latex()
    from worksheet.render.pdf import compile_tex

    source = (
        "\\documentclass{article}\\begin{document}\\newread\\f\\openin\\f=/etc/passwd "
        "\\ifeof\\f closed\\else\\read\\f to\\x open: \\x\\fi\\end{document}\n"
    )
    text = pdf_text_of(compile_tex(source, "read.tex").pdf, tmp_path)
    assert "closed" in text and not passwd_leaked(text)


def test_latex_cannot_write_an_absolute_path(tmp_path):
    require_latex()
    from worksheet.render.pdf import compile_tex

    target = tmp_path / "written.txt"
    source = (
        "\\documentclass{article}\\begin{document}\\newwrite\\f\\immediate\\openout\\f="
        + str(target)
        + " \\immediate\\write\\f{x}\\immediate\\closeout\\f x\\end{document}\n"
    )
    try:
        compile_tex(source, "write.tex")
    except WorksheetError:
        pass  # refusing to open the file stops LaTeX: fine, the point is the file
    assert not target.exists()


def test_latex_environment_is_paranoid_and_without_shell_escape():
    from worksheet.render import pdf

    env = pdf.latex_env()
    assert env["openin_any"] == "p" and env["openout_any"] == "p"
    assert "-no-shell-escape" in pdf.LATEX_FLAGS


@given(st.text(alphabet="\\{}^_$%#&<>abcdeinptuxy /()=+-0123456789", max_size=30))
@example("\\input{x}")
@example("x^^41")
@example("{\\left(}\\right)")
def test_accepted_maths_holds_only_listed_commands(latex):
    """Whatever the allow-list accepts has no command off the list, no ^^
    and balanced braces, however the characters are arranged."""
    if math_problem(latex) is not None:
        return
    stripped = re.sub(r"\\[,;!{}| ]", "", latex)
    assert set(re.findall(r"\\([A-Za-z]+)", stripped)) <= safetext.MATH_COMMANDS
    assert "^^" not in stripped and not set(stripped) & set("$%#&<")
    assert stripped.count("{") == stripped.count("}")


@pytest.mark.parametrize("fmt", ["tex", "md"])
def test_a_label_in_a_decimal_table_that_starts_with_a_digit_is_text(fmt):
    """Decimal cells print as numbers only when they are numbers: a label
    such as 1\\input{...} (a template may show any step's decimals) is escaped."""
    from worksheet.render.base import Table

    out = get(fmt).table(Table([["1.5000", r"1\input{/etc/passwd}", "-<script>"]], None, None), math=False)
    assert r"\input{" not in out
    if fmt == "tex":
        assert "$1.5000$" in out and r"1\textbackslash{}input\{/etc/passwd\}" in out
    else:
        assert "| 1.5000 |" in out and "<script>" not in out and "-&lt;script&gt;" in out
