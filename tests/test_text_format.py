"""The ``text`` format: plain Unicode for a terminal (issue 26, item 1:
``worksheet solve`` to a terminal reads like maths, with no ``$`` or backslash).

What must hold: no markup of any other format (``$``, backslashes, ``**``,
pipe tables), every step's title and name, the key's values (compared with
the JSON key), user text shown as its own characters without breaking the
columns, nothing a terminal would act on, lines that fit an 80-column
terminal, and ``solve``'s default: text on a terminal, Markdown elsewhere.
"""

from __future__ import annotations

import json
import re

import click.testing
import pytest
from hypothesis import given
from hypothesis import strategies as st

from worksheet.build import build_document
from worksheet.kinds import registry
from worksheet.policy.safetext import TextError, check_label
from worksheet.render import get
from worksheet.render.base import Table
from worksheet.render.console import WIDTH, broken, maths_text, shown, width, wrap
from worksheet.solution.maths import read_latex, to_text
from worksheet.solution.number_format import decimal
from worksheet.terminal import solve_format

from test_hostile_text import LABELS

MARKUP = ("$", "\\", "**", "|---", "\\text", "\\frac", "&nbsp;", "<math", "\ue000")


def _no_markup(text: str) -> None:
    for m in MARKUP:
        assert m not in text, m
    assert "\x1b" not in text and all(c.isprintable() or c == "\n" for c in text)


def _flat(s: str) -> str:
    """Text with every run of white space one space (prose and headings are wrapped)."""
    return " ".join(s.split())


def _minus(s: str) -> str:
    return s.replace("-", "−")


def _tables(text: str) -> list[list[str]]:
    """Each block of a table: its header, its rule and its rows (up to a blank line)."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        if "┼" in line:
            end = next((j for j in range(k + 1, len(lines)) if not lines[j].strip()), len(lines))
            out.append(lines[k - 1 : end])
    return out


def _aligned(block: list[str]) -> bool:
    """The header's, the rule's and every row's separator in one column."""
    col = width(block[1][: block[1].index("┼")])
    return all(width(line[: line.index("│")]) == col for line in (block[0], *block[2:]))


def _fits(text: str) -> list[str]:
    """The lines wider than WIDTH, apart from a table block of one column (a cell cannot be narrowed)."""
    wide_ok = {line for b in _tables(text) if len(b[0].split("│")[1].split()) <= 1 for line in b}
    return [line for line in text.split("\n") if width(line) > WIDTH and line not in wide_ok]


# ------------------------------------------------------------------ the CLI
def test_solve_thinking_machines_as_text_reads_like_maths(runner, cli):
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "text"])
    assert r.exit_code == 0, r.output
    text = r.output
    _no_markup(text)
    key = json.loads(runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "json"]).output)
    steps = key["problems"][0]["steps"]
    assert [s["name"] for s in steps] == ["scores", "scaled", "weights", "output"]
    for s in steps:
        assert f"[{s['name']}]" in text and _flat(s["title"]) in _flat(text)
    # the exact values, as the maths reads: 112 and 96 (scores), 1/(1 + e⁻²) (weights)
    assert re.search(r"Thinking │ +112 +96\n", text)
    assert "1/(1 + e⁻²)" in text and "e⁻²/(1 + e⁻²)" in text
    weights = next(s for s in steps if s["name"] == "weights")["value"]
    assert f"{weights[0][0]:.4f}" in text and f"{weights[0][1]:.4f}" in text  # 0.8808, 0.1192
    output = next(s for s in steps if s["name"] == "output")["value"]
    assert all(_minus(f"{v:.4f}") in text for row in output for v in row)
    assert "S = Q Kᵀ" in text and "S′ = S/√dₖ = S/√64" in text
    assert all(_aligned(b) for b in _tables(text)) and not _fits(text)


def test_solve_text_to_a_file_gets_txt(runner, cli, tmp_path):
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "text", "-o", str(tmp_path / "tm")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "tm.txt").read_text(encoding="utf-8")
    assert text.startswith("Worked solution: Scaled dot-product attention (answer key)\n═")
    _no_markup(text)


def test_solve_to_a_pipe_stays_markdown(runner, cli):
    """CliRunner's standard output is not a terminal: the default is md, as before."""
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines"])
    assert r.exit_code == 0 and r.output.startswith("# Worked solution") and "$" in r.output


def test_solve_on_a_terminal_is_text(runner, cli, monkeypatch):
    """CliRunner's standard output, made to say it is a terminal (click's own wrapper class)."""
    wrapper = getattr(click.testing, "_NamedTextIOWrapper", None)
    if wrapper is None:  # pragma: no cover - another click; test_the_format_solve_chooses still holds
        pytest.skip("this click's CliRunner has no stream class to patch")
    monkeypatch.setattr(wrapper, "isatty", lambda self: True)
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines"])
    assert r.exit_code == 0 and r.output.startswith("Worked solution: Scaled dot-product attention")
    _no_markup(r.output)
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "md"])
    assert r.output.startswith("# Worked solution")  # --format given wins


@pytest.mark.parametrize(
    ("fmt", "out", "tty", "chosen"),
    [
        (None, "-", True, "text"),  # a terminal
        (None, "-", False, "md"),  # a pipe: unchanged
        (None, "tm.md", True, "md"),  # a file: unchanged
        (None, "tm", False, "md"),
        ("tex", "-", True, "tex"),  # given: always that
        ("text", "-", False, "text"),
        ("text", "tm", False, "text"),
    ],
)
def test_the_format_solve_chooses(fmt, out, tty, chosen):
    assert solve_format(fmt, out, tty) == chosen


def test_build_writes_a_text_sheet_and_key(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", "attention", "layer-norm", "--format", "text", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    sheet = (tmp_path / "worksheet.txt").read_text(encoding="utf-8")
    key = (tmp_path / "worksheet-key.txt").read_text(encoding="utf-8")
    for text in (sheet, key):
        _no_markup(text)
        assert "Problem 1: Scaled dot-product attention" in text and "Problem 2: Add & Norm" in text
    assert "Name: ____" in sheet and "Name:" not in key and "(answer key)" in key
    assert "________" in sheet and "Exact:" not in sheet and "Exact:" in key
    r = runner.invoke(cli, ["build", "attention", "--format", "text", "-o", "-"])
    assert r.exit_code == 0 and r.output.startswith("Scaled dot-product attention\n═")


def test_build_variants_in_one_text_file(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", "lstm-cell", "--variants", "2", "--format", "text", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "worksheet.txt").read_text(encoding="utf-8")
    assert text.count("Problem 1: LSTM cell") == 2 and text.count("━" * WIDTH) >= 2
    assert text.count("Values of tanh x for x = 0.00") == 1  # the tables page, once, at the front
    _no_markup(text)


# ------------------------------------------------------------------ every kind
@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_every_kind_as_text(kind):
    doc = build_document([kind], seed=2)
    key = get("text").render(doc, key=True)
    sheet = get("text").render(doc, key=False)
    exported = json.loads(get("json").render(doc, key=True))["problems"][0]["steps"]
    problem = doc.problems[0]
    for text in (key, sheet):
        _no_markup(text)
        assert not _fits(text), _fits(text)
        assert all(_aligned(b) for b in _tables(text))
    for s in problem.printed_steps(True):
        assert f"[{s.name}]" in key
        if "$" not in s.title:
            assert _flat(s.title) in _flat(key)
    checked = 0
    for s, e in zip(problem.steps, exported):
        assert s.name == e["name"]
        expected = _expected(s, e)
        assert all(x in key for x in expected), (s.name, expected)
        checked += len(expected)
    assert checked >= 2


def _expected(s, e) -> list[str]:
    """Values of a step that its key must print, from the JSON key: its whole
    numbers as they are, else its first decimal; a step carried rounded or
    along the pencil's chain prints those decimals."""
    if s.is_written:
        return []
    labels = [x for row in s.exact for x in row if isinstance(x, str)]
    if labels:  # a label step (the mistake's code, the predicted token)
        return labels
    if s.chain is not None or s.rounded:
        return [_minus(decimal((s.chain or s.exact)[0][0], s.places))]
    if all(re.fullmatch(r"-?[0-9]+", x) for row in e["exact"] for x in row):
        return [_minus(x) for x in e["exact"][0]]
    v = next((v for row in e["value"] for v in row if v is not None), None)
    if v is None or abs(v * 10**s.places % 1 - 0.5) < 1e-6 or not s.show_decimals:  # a tie of rounding
        return []
    return [_minus(f"{v:.{s.places}f}")]


# ------------------------------------------------------------------ user text
def _label_ok(s: str) -> bool:
    try:
        check_label(s, field="tokens")
    except TextError:
        return False
    return True


@pytest.mark.parametrize("label", [s for s in LABELS if _label_ok(s)])
def test_a_hostile_label_is_its_own_characters_and_breaks_no_column(label):
    docs = [
        build_document(["attention"], seed=1, options={"tokens": ["x", label, "z"]}),
        build_document(["next-token"], seed=1, options={"vocab": ["a", label, "c"]}),
    ]
    plain = [
        build_document(["attention"], seed=1, options={"tokens": ["x", "qqzz", "z"]}),
        build_document(["next-token"], seed=1, options={"vocab": ["a", "qqzz", "c"]}),
    ]
    for doc, base in zip(docs, plain):
        for key in (True, False):
            text, benign = get("text").render(doc, key=key), get("text").render(base, key=key)
            assert label in text
            assert any(label in line for b in _tables(text) for line in b)  # a row or column label
            assert all(_aligned(b) for b in _tables(text))
            heads = [line for line in text.split("\n") if re.match(r"\d+\. .*\[\w+\]$", line)]
            assert heads == [line for line in benign.split("\n") if re.match(r"\d+\. .*\[\w+\]$", line)]
            # outside the label, still no markup
            _no_markup(text.replace(label, "qqzz"))


def test_a_wide_label_widens_its_column_and_is_never_cut():
    wide = "a-rather-long-token-label-of-40-chars-xx"
    doc = build_document(["attention"], seed=1, options={"tokens": ["猫猫", wide, "z"]})
    text = get("text").render(doc, key=True)
    assert wide in text and "猫猫" in text
    assert all(_aligned(b) for b in _tables(text)) and not _fits(text)


def test_control_characters_never_reach_the_terminal():
    """The input checks refuse them; should one come through the library, it is shown, not obeyed."""
    evil = "a\x1b[2Jb\u202ec\x07\x7f"
    assert shown(evil) == "a␛[2Jb\ufffdc␇␡"
    assert shown("line\nbreak", newlines=True) == "line\nbreak" and shown("tab\there") == "tab here"
    r = get("text")
    t = Table([["1", "2"]], [evil], [evil, "q"])
    for out in (r.matrix("X", t), r.empty_grid(t), r.table(t, math=False), r.text(evil)):
        assert "\x1b" not in out and "\u202e" not in out and "␛" in out
    assert "\x1b" not in maths_text(r"\text{a\x1b}") and "\x1b" not in r.prose("x \x1b $y$")


# ------------------------------------------------------------------ maths and prose
@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"-\tanh\left(3\right)", "−tanh(3)"),  # a function applied to brackets: no space
        (r"\sigma_i^2 = \frac{1}{4}\sum_{j=1}^{4}(r_{ij} - \mu_i)^2", "σᵢ² = 1/4 ∑ⱼ₌₁⁴ (rᵢⱼ − μᵢ)²"),
        (r"\hat{x}_{ij} = \frac{r_{ij} - \mu_i}{\sqrt{\sigma_i^2 + \varepsilon}}", "x̂ᵢⱼ = (rᵢⱼ − μᵢ)/√(σᵢ² + ε)"),
        (r"\frac{e^{-5/2}}{1 + e^{-2}}", "e^(−5/2)/(1 + e⁻²)"),  # a slash inside a script needs no brackets
        (r"\frac{a}{\sum_k e^{s_k}}", "a/(∑ₖ e^(sₖ))"),
        (r"\left(\sigma_1^{[1]}\right)^2", "(σ₁^[1])²"),  # a bracketed script keeps its own brackets
        (r"h_{(1,2)}", "h_(1,2)"),
        (
            r"\sqrt{d_\mathrm{model}} + W_{hf} + \theta_{pos,i}",
            "√d_model + W_hf + θ_(pos,i)",
        ),  # a word needs no brackets
    ],
)
def test_the_plain_printer_for_a_terminal(latex, text):
    assert to_text(read_latex(latex)) == text


def test_a_long_worked_line_breaks_before_its_equals_signs_and_between_terms():
    line = "(σ₁^[2])² = 1/4 ((1.1015 − 0.4060)² + (1.9682 − 0.4060)² + ((−0.7427) − 0.4060)²) = 0.9 = 1"
    lines = broken(line, 60)
    assert all(width(x) <= 60 for x in lines) and len(lines) == 4
    first = lines[0].index("=")
    assert lines[2] == " " * first + "= 0.9" and lines[3] == " " * first + "= 1"  # under the first =
    assert lines[1].lstrip().startswith("+ ") and lines[1].index("+") > first
    assert _flat(" ".join(lines)) == _flat(line)


FORMULAS = [r"\frac{a}{b}", r"\alpha_{ij}", r"\sqrt{d_k}", r"x^2 + y^2", r"S = Q K^\top", r"e^{-1} \approx 0.3679"]
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz,.()é猫 ", min_size=1, max_size=30)


@given(st.lists(st.one_of(WORDS, st.sampled_from(FORMULAS).map(lambda f: f"${f}$")), min_size=1, max_size=12))
def test_prose_with_formulas_wraps_without_markup_and_never_breaks_a_formula(pieces):
    r = get("text")
    prose = " ".join(pieces)
    text = wrap(r.prose(prose)).replace("\ue000", " ")
    assert "$" not in text and "\\" not in text
    for p in pieces:
        if p.startswith("$"):
            assert any(maths_text(p[1:-1]) in line for line in text.split("\n"))
    assert all(len(line) <= WIDTH for line in text.split("\n"))  # no piece here is longer than a line
    assert _flat(text) == _flat(" ".join(maths_text(p[1:-1]) if p.startswith("$") else p for p in pieces))
