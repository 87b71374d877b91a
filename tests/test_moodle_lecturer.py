"""Moodle as it really behaves (issue 19 §5): question marks within what
Moodle stores (NUMBER(12,7)), weights that follow the spec's points, each
question stating only its own conventions, and a README that matches the
export."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import moodle_util as mu
from worksheet.build import build_document
from worksheet.render import moodle

ROOT = Path(__file__).resolve().parent.parent
MOODLE_MAX = Fraction(99999_9999999, 10**7)  # NUMBER(12,7): 5 digits before the point


def _weights_by_step(q: mu.Question, problem: dict) -> dict[str, int]:
    from test_moodle import asked_cells, read_both

    totals: dict[str, int] = {}
    for f, (s, *_rest) in zip(read_both(q.text), asked_cells(problem)):
        totals[s["name"]] = totals.get(s["name"], 0) + f.weight
    return totals


def test_a_large_multi_head_calculator_build_stays_within_what_moodle_stores():
    p = build_document(
        ["multi-head-attention"], seed=1, options={"numbers": "calculator", "heads": 8, "seq_len": 12, "d_model": 16}
    ).problems[0]
    cells = {s.name: moodle.asked_cells(s) for s in p.printed_steps(False) if moodle.asked_cells(s)}
    # the rule before: round(20 max(n) / n) per field, far beyond Moodle's 99,999.9999999
    before = sum(max(1, round(Fraction(20 * max(cells.values()), n))) * n for n in cells.values())
    assert before > MOODLE_MAX
    mark = moodle.question_mark(p)
    assert mark <= moodle.MOODLE_LIMIT < MOODLE_MAX
    w = moodle.field_weights(p)
    totals = [w[name] * n for name, n in cells.items()]
    assert all(isinstance(x, int) and x >= 1 for x in w.values())
    assert max(totals) / min(totals) <= 1.05  # still (nearly) equal shares


def test_every_question_mark_of_every_kind_stays_below_moodles_limit():
    from worksheet import kinds

    for name in kinds.names():
        for numbers in ("hand", "calculator"):
            p = build_document([name], seed=3, options={"numbers": numbers}).problems[0]
            assert 0 < moodle.question_mark(p) <= moodle.MOODLE_LIMIT, (name, numbers)


def test_weights_follow_the_specs_step_points(tmp_path, runner, cli):
    spec = tmp_path / "exam.toml"
    spec.write_text(
        '[[sections]]\nkind = "feed-forward"\npoints = 10\nstep_points = { output = 5 }\n', encoding="utf-8"
    )
    r = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "moodle,json", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    (q,) = mu.questions((tmp_path / "worksheet-moodle.xml").read_text(encoding="utf-8"))
    key = json.loads((tmp_path / "worksheet.json").read_text(encoding="utf-8"))["problems"][0]
    totals = _weights_by_step(q, key)
    # output: 5 points; hidden_pre and hidden share the other 5
    assert totals["output"] == 2 * totals["hidden_pre"] == 2 * totals["hidden"]
    assert "(5 points)" in q.text and "(2.5 points)" in q.text
    assert "Each step's points are given beside it" in q.text


def test_each_question_states_only_its_own_conventions(tmp_path, runner, cli):
    r = runner.invoke(cli, ["build", "attention", "layer-norm", "--causal", "--format", "moodle", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    att, ln = mu.questions((tmp_path / "worksheet-moodle.xml").read_text(encoding="utf-8"))

    def conventions(q):
        return re.search(r"<em>Conventions:</em>(.*?)</p>", q.text, re.S).group(1)

    assert "softmax" in conventions(att).lower() and "-\\infty" in conventions(att)
    assert "variance" not in conventions(att).lower()
    assert "variance" in conventions(ln).lower()
    assert "softmax" not in conventions(ln).lower() and "infty" not in conventions(ln)


def _docs() -> str:
    """The README and the pages of docs/ (the lecturer's guide describes Moodle)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages)


def test_the_readme_describes_the_categories_the_export_writes(tmp_path, runner, cli):
    readme = _docs()
    m = re.search(r"categories `(\$course\$/midterm/Problem 1)` … `Problem (\d+)`", readme)
    assert m, "the docs name the midterm's categories"
    r = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(ROOT / "examples" / "midterm.toml"),
            "--variants",
            "2",
            "--format",
            "moodle",
            "-o",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    text = (tmp_path / "midterm-moodle.xml").read_text(encoding="utf-8")
    cats = list(dict.fromkeys(re.findall(r"<text>(\$course\$/[^<]*)</text>", text)))
    assert cats[0] == m.group(1) and cats[-1] == f"$course$/midterm/Problem {m.group(2)}"
    assert len(cats) == int(m.group(2))


def test_the_readme_says_cloze_fields_cannot_carry_error_forward_and_offers_check():
    readme = " ".join(_docs().split())
    section = readme[readme.index("**Online quizzes: Moodle.**") :]
    assert "error carried forward" in section and "worksheet check" in section
    assert "independent" in section


def test_a_question_in_words_only_is_an_essay_question(tmp_path, runner, cli):
    import xml.etree.ElementTree as ET

    spec = tmp_path / "exam.toml"
    spec.write_text(
        '[[sections]]\npoints = 4\nquestion = "Why scale?"\nanswer = "So the softmax stays soft."\n'
        '\n[[sections]]\nkind = "feed-forward"\npoints = 6\n',
        encoding="utf-8",
    )
    r = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "moodle", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    root = ET.fromstring((tmp_path / "worksheet-moodle.xml").read_text(encoding="utf-8"))
    kinds_of = [q.get("type") for q in root if q.get("type") != "category"]
    assert kinds_of == ["essay", "cloze"]
    essay = next(q for q in root if q.get("type") == "essay")
    assert essay.findtext("defaultgrade") == "4" and essay.findtext("responseformat") == "editor"
    assert "So the softmax stays soft." in essay.findtext("graderinfo/text")
    assert "Why scale?" in essay.findtext("questiontext/text")
    assert "{1:" not in essay.findtext("questiontext/text") and "NUMERICAL" not in essay.findtext("questiontext/text")


def test_an_essay_grade_stays_within_what_moodle_stores():
    assert moodle.essay_grade(None) == "1" and moodle.essay_grade(2.5) == "2.5"
    assert moodle.essay_grade(Fraction(10, 3)) == "3.3333333"
    assert moodle.essay_grade(10**6) == "1"  # a spec may give up to 10^6 points; Moodle stores < 100,000
