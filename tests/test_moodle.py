"""--format moodle: a Moodle XML question bank, read as Moodle reads it.

The XML is parsed with xml.etree; every Cloze field is read by the documented
grammar and by a port of Moodle's importer (tests/moodle_util.py), and the two
must agree; each field must hold the JSON key's value with the tolerance
``worksheet check`` gives a 4-decimal answer, and answers taken from the
fields must be marked correct by ``worksheet check``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from worksheet.kinds.mistakes import codes_for
from worksheet.build.spec import load_spec
from hypothesis import example, given, strategies as st

import golden_util
import moodle_util as mu
from worksheet import kinds
from worksheet.build import ProblemSpec, build_document, render_document
from worksheet.check import decimal_tolerance
from worksheet.solution.document import Document
from worksheet.exact import to_float
from worksheet.parse import parse_exact
from worksheet.render import cloze, moodle

GOLDEN = Path(__file__).parent / "golden" / "moodle"
UPDATE = os.environ.get("WORKSHEET_UPDATE_GOLDEN") == "1"
EXAMPLES = Path(__file__).parent.parent / "examples"
HOSTILE = ["a}b", "#x", "~", "/", '"q"', "back\\", "<script>alert(1)</script>", "]]>", "{1:SHORTANSWER:=x}", "&amp;"]


def read_both(text: str) -> list[mu.Field]:
    """The fields of a question text; the documented grammar and Moodle's importer agree on them."""
    documented, moodles = mu.fields(text), mu.moodle_fields(text)
    assert [(f.weight, f.type, f.alternatives) for f in documented] == [
        (f.weight, f.type, f.alternatives) for f in moodles
    ]
    return documented


def asked_cells(problem: dict):
    """(step, row, col, exact, value) of every entry a student types, in the order of the fields."""
    for s in problem["steps"]:
        if "written" in s or s.get("on_sheet") is False:  # words, or a step on the key only
            continue
        for i, (erow, vrow) in enumerate(zip(s["exact"], s["value"])):
            for j, (x, v) in enumerate(zip(erow, vrow)):
                if v is not None:  # masked (-oo) entries are given
                    yield s, i, j, x, v


def is_label(step: dict, x: str) -> bool:
    try:
        parse_exact(x)
        return False
    except ValueError:
        return True


def build(tmp_path, runner, cli, *args) -> tuple[list[mu.Question], dict]:
    """Build ``args`` as moodle and json into ``tmp_path``: the questions and the JSON key."""
    r = runner.invoke(cli, ["build", *args, "--format", "moodle,json", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    name = next(p.name[: -len("-moodle.xml")] for p in tmp_path.glob("*-moodle.xml"))
    return (
        mu.questions((tmp_path / f"{name}-moodle.xml").read_text(encoding="utf-8")),
        json.loads(key_path(tmp_path).read_text(encoding="utf-8")),
    )


def key_path(folder: Path) -> Path:
    (path,) = folder.glob("*.json")
    return path


def variants_of(key: dict) -> list[tuple[str, list[dict]]]:
    if "variants" in key:
        return [(v["id"], v["problems"]) for v in key["variants"]]
    return [("", key["problems"])]


# ---------------------------------------------------------------- the file
def test_midterm_with_30_variants_is_one_file_of_cloze_questions_one_category_per_problem(tmp_path, runner, cli):
    r = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(EXAMPLES / "midterm.toml"),
            "--variants",
            "30",
            "--format",
            "moodle",
            "-o",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(tmp_path)) == ["midterm-moodle.xml", "midterm-variants.csv"]
    qs = mu.questions((tmp_path / "midterm-moodle.xml").read_text(encoding="utf-8"))
    problems = len(load_spec(EXAMPLES / "midterm.toml").sections)
    assert len(qs) == 30 * problems
    for k in range(1, problems + 1):  # each problem's 30 variants share its category, so a quiz draws one at random
        mine = [q for q in qs if q.category == f"$course$/midterm/Problem {k}"]
        assert len(mine) == 30 and len({q.text for q in mine}) == 30
        assert all(q.name.startswith("midterm v") and f" P{k}: " in q.name for q in mine)


def test_every_field_holds_the_json_value_with_checks_tolerance(tmp_path, runner, cli):
    qs, key = build(tmp_path, runner, cli, "--spec", str(EXAMPLES / "midterm.toml"), "--variants", "3")
    problems = [p for _, probs in variants_of(key) for p in probs]
    assert len(qs) == len(problems) == 3 * len(load_spec(EXAMPLES / "midterm.toml").sections)
    for q, p in zip(qs, problems):
        fs = read_both(q.text)
        cells = list(asked_cells(p))
        assert len(fs) == len(cells), q.name
        for f, (s, i, j, x, v) in zip(fs, cells):
            where = f"{q.name} {s['name']}[{i + 1},{j + 1}]"
            if is_label(s, x):
                # the choices: next-token's vocabulary, or find-the-mistake's steps and mistake codes
                choices = (
                    p["params"]["vocab"]
                    if "vocab" in p["params"]
                    else (
                        [n[len("shown.") :] for n in p["inputs"] if n.startswith("shown.")]
                        if s["name"] == "step"
                        else p.get("offered", codes_for(p["params"]["of"]))
                    )
                )
                if len(choices) < 2:  # Moodle refuses a drop-down of one choice: a short answer
                    assert f.type == "SHORTANSWER" and [a.answer for a in f.alternatives] == [x], where
                    continue
                assert f.type == "MULTICHOICE", where
                shown = [html_text(a.answer) for a in f.alternatives]
                assert [k for k, a in enumerate(f.alternatives) if a.fraction == 1.0] == [int(v)], where
                assert shown[int(v)] == x == choices[int(v)], where
                assert shown == choices, where
            else:
                assert f.type == "NUMERICAL" and len(f.right) >= 1, where
                assert f.alternatives[: len(f.right)] == f.right, where  # Moodle takes the first that fits
                a = f.right[0]
                assert a.value == v, where
                assert a.tolerance == float(decimal_tolerance(4, abs(v))), where
                for b in f.right[1:]:  # the rounding chain's value (hand mode), where it differs
                    assert 0 < abs(b.value - v) < 0.001 and b.tolerance == float(decimal_tolerance(4, abs(b.value))), (
                        where
                    )
                wrong = f.alternatives[len(f.right) :]  # 0% answers: the named mistakes' values (the JSON's)
                values = {c: m[i][j] for c, m in s.get("mistakes", {}).items()}
                assert all(w.fraction == 0 and w.feedback for w in wrong), where
                assert {w.value for w in wrong} <= set(values.values()), where


def html_text(fragment: str) -> str:
    return mu.html_tags_and_text(fragment)[1]


def test_answers_read_from_the_fields_are_marked_correct_by_check(tmp_path, runner, cli):
    """Round trip: each right answer of each field, written to 4 decimals as a
    student would type it into Moodle, is correct for `worksheet check`."""
    qs, key = build(tmp_path, runner, cli, "--spec", str(EXAMPLES / "midterm.toml"), "--variants", "2")
    _round_trip(tmp_path, runner, cli, qs, key)


def test_round_trip_holds_for_every_kind(tmp_path, runner, cli):
    qs, key = build(tmp_path, runner, cli, *kinds.names(), "--seed", "3")
    assert len(qs) == len(kinds.names())
    _round_trip(tmp_path, runner, cli, qs, key)


def _round_trip(tmp_path, runner, cli, qs, key):
    qs = iter(qs)
    for vid, problems in variants_of(key):
        answers = {"variant": vid} if vid else {}
        for number, p in enumerate(problems, 1):
            q = next(qs)
            steps = {
                s["name"]: [["-oo" if v is None else None for v in row] for row in s["value"]]
                for s in p["steps"]
                if "written" not in s
            }
            for s in p["steps"]:  # steps the question does not ask (on the key only): as on paper
                if s.get("on_sheet") is False:
                    steps[s["name"]] = s["exact"]
            for f, (s, i, j, x, v) in zip(read_both(q.text), asked_cells(p), strict=True):
                right = f.right[-1]  # rounded steps: the carried value (the sheet's), else the only one
                steps[s["name"]][i][j] = html_text(right.answer) if f.type == "MULTICHOICE" else f"{right.value:.4f}"
            answers[str(number)] = steps
        path = tmp_path / "answers" / f"{vid or 'one'}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(answers), encoding="utf-8")
        r = runner.invoke(cli, ["check", str(key_path(tmp_path)), str(path)])
        assert r.exit_code == 0, r.output


def test_an_answer_just_outside_moodles_tolerance_is_wrong_for_check_too(tmp_path, runner, cli):
    qs, key = build(tmp_path, runner, cli, "attention")
    p = key["problems"][0]
    f, (s, i, j, x, v) = next(
        (f, c) for f, c in zip(read_both(qs[0].text), asked_cells(p)) if c[0]["name"] == "weights" and 0 < c[4] < 1
    )
    outside = v + 1.01 * f.right[0].tolerance
    assert abs(outside - v) > f.right[0].tolerance  # Moodle marks it wrong
    answers = {"weights": [[f"{x:.4f}" if x is not None else "-oo" for x in row] for row in s["value"]]}
    answers["weights"][i][j] = f"{outside:.10f}"
    path = tmp_path / "answers" / "a.json"
    path.parent.mkdir()
    path.write_text(json.dumps(answers), encoding="utf-8")
    r = runner.invoke(cli, ["check", str(key_path(tmp_path)), str(path)])
    assert r.exit_code == 1 and "weights" in r.output


def test_masked_entries_are_given_in_the_table_not_asked(tmp_path, runner, cli):
    qs, key = build(tmp_path, runner, cli, "attention", "--causal", "--seq-len", "3")
    masked = next(s for s in key["problems"][0]["steps"] if s["name"] == "masked")
    assert sum(v is None for row in masked["value"] for v in row) == 3
    text = qs[0].text
    grid = text[text.index(r"\(M_{ij} =") :].split("</table>")[0]  # the masked step's grid
    assert grid.count(r"\(-\infty\)") == 3 and len(mu.fields(grid)) == 6


def test_each_step_has_an_equal_share_of_the_weights(tmp_path, runner, cli):
    qs, key = build(tmp_path, runner, cli, *kinds.names(), "--seed", "2")
    for q, p in zip(qs, key["problems"]):
        totals: dict[str, int] = {}
        for f, (s, *_rest) in zip(read_both(q.text), asked_cells(p)):
            totals[s["name"]] = totals.get(s["name"], 0) + f.weight
        shares = list(totals.values())
        assert max(shares) - min(shares) <= 0.05 * max(shares), (q.name, totals)
        if sum(shares) <= moodle.MAX_TOTAL:
            assert len(set(shares)) == 1, (q.name, totals)


def test_field_weights_are_whole_numbers_in_proportion_to_equal_shares():
    doc = build_document(["multi-head-attention"], seed=1)
    p = doc.problems[0]
    w = moodle.field_weights(p)
    assert set(w) == {s.name for s in p.steps}
    assert len({w[s.name] * moodle.asked_cells(s) for s in p.steps}) == 1
    assert all(isinstance(x, int) and x >= 1 for x in w.values())


def test_a_written_step_is_left_to_a_person_and_its_model_answer_is_the_feedback():
    doc = build_document(["softmax-scaling"], seed=1)
    p = doc.problems[0]
    p.add_written(
        "choice",
        title="Which of the three would you use, and why?",
        answer="Divide by $\\sqrt{d_k}$: the softmax stays soft.",
    )
    q = mu.questions(moodle.MoodleRenderer().render(doc))[0]
    assert "Which of the three would you use, and why?" in q.text
    assert "not marked here: your lecturer marks it by hand" in q.text
    assert "the softmax stays soft" in q.feedback and r"\(\sqrt{d_k}\)" in q.feedback
    assert "the softmax stays soft" not in q.text
    assert len(read_both(q.text)) == sum(moodle.asked_cells(s) for s in p.steps)
    assert "choice" not in moodle.field_weights(p)


def test_every_answer_is_the_double_nearest_the_exact_value_a_rounded_step_its_carried_value(tmp_path, runner, cli):
    """The first answer of a field is the float64 nearest the key's exact value
    (for a rounded step the carried value the sheet shows), never numpy's float;
    a rounded step also accepts its JSON ``value``, the unrounded chain's (as
    ``check`` does), where that differs; other steps have one answer."""
    qs, key = build(tmp_path, runner, cli, "encoder-block")
    p = key["problems"][0]
    seen = both = 0
    for f, (s, i, j, x, v) in zip(read_both(qs[0].text), asked_cells(p)):
        right = [a.value for a in f.right]
        assert right[0] == to_float(parse_exact(x))
        if s.get("rounded"):
            seen += 1
            assert abs(v - right[0]) <= 5e-5 + 5e-3  # carried rounding, and its drift
            assert right[1:] == ([v] if abs(v - right[0]) > 1e-9 else [])
            both += len(right) == 2
        else:
            assert right == [v] == [to_float(parse_exact(x))]
    assert seen > 0 and both > 0


def test_feedback_is_the_worked_key_and_the_question_shows_no_answer(tmp_path, runner, cli):
    qs, key = build(tmp_path, runner, cli, "attention")
    q = qs[0]
    assert "Worked solution" in q.feedback and "q_{12} = x_{1}" in q.feedback
    assert "q_{12}" not in q.text and "Worked solution" not in q.text
    assert r"\(X =\)" in q.text and r"\(Q = X W^Q\)" in q.text  # givens and formulas, TeX for MathJax
    assert "$" not in mu.html_tags_and_text(q.text)[1]  # maths only in \( \)


def test_seed_and_spec_points_and_prompt_reach_the_questions(tmp_path, runner, cli):
    qs, _ = build(tmp_path, runner, cli, "--spec", str(EXAMPLES / "midterm.toml"), "--seed", "5")
    assert "(5 points)" in qs[0].text and "Which of the three would you use in a Transformer" in qs[0].text
    qs2, _ = build(tmp_path / "again", runner, cli, "--spec", str(EXAMPLES / "midterm.toml"), "--seed", "5")
    assert [q.text for q in qs2] == [q.text for q in qs]
    qs3, _ = build(tmp_path / "other", runner, cli, "--spec", str(EXAMPLES / "midterm.toml"), "--seed", "6")
    assert [q.text for q in qs3] != [q.text for q in qs]


def test_dash_o_writes_the_xml_to_stdout(runner, cli):
    r = runner.invoke(cli, ["build", "attention", "--variants", "2", "--format", "moodle", "-o", "-"])
    assert r.exit_code == 0, r.output
    qs = mu.questions(r.stdout)
    assert [q.category for q in qs] == ["$course$/worksheet/Problem 1"] * 2


def test_split_writes_one_bank_per_variant_into_the_same_categories(tmp_path, runner, cli):
    r = runner.invoke(
        cli,
        [
            "build",
            "attention",
            "softmax-scaling",
            "--variants",
            "2",
            "--split",
            "--name",
            "quiz",
            "--format",
            "moodle",
            "-o",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(tmp_path)) == ["quiz-v01-moodle.xml", "quiz-v02-moodle.xml", "quiz-variants.csv"]
    for v in ("v01", "v02"):
        qs = mu.questions((tmp_path / f"quiz-{v}-moodle.xml").read_text(encoding="utf-8"))
        assert [q.category for q in qs] == ["$course$/quiz/Problem 1", "$course$/quiz/Problem 2"]
    assert "quiz-v01-moodle.xml" in (tmp_path / "quiz-variants.csv").read_text()


def test_an_existing_bank_is_not_overwritten_without_force(tmp_path, runner, cli):
    (tmp_path / "worksheet-moodle.xml").write_text("mine")
    r = runner.invoke(cli, ["build", "--format", "moodle", "-o", str(tmp_path)])
    assert r.exit_code == 2 and (tmp_path / "worksheet-moodle.xml").read_text() == "mine"


def test_golden_moodle_bank():
    doc = build_document(["attention", "next-token"], seed=1, options={"causal": True})
    files = render_document(doc, ["moodle"], name="golden")
    assert list(files) == ["golden-moodle.xml"]
    # the text exactly, the NUMERICAL answers within rel 1e-12 (golden_util)
    golden_util.check(GOLDEN / "golden-moodle.xml", files["golden-moodle.xml"])


# ---------------------------------------------------------------- escaping
def hostile_problem() -> Document:
    from worksheet.build import solve_table

    p = solve_table(
        "next-token",
        {"h": [[1, 2]], "W_vocab": [[1, 0, 0, 0, 0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]], "vocab": HOSTILE},
    )
    return Document("Title </text>]]> & {1:NM:=1}", [p], seed=None)


def test_hostile_labels_survive_xml_and_cloze_and_are_shown_as_text():
    doc = hostile_problem()
    xml_text = moodle.MoodleRenderer().render(doc, bank="b/ank")
    q = mu.questions(xml_text)[0]
    assert q.category == "$course$/b//ank/Problem 1"  # Moodle's escaped "/" in a category name
    fs = read_both(q.text)
    choice = fs[-1]
    assert choice.type == "MULTICHOICE"
    assert [mu.visible(html_text(a.answer)) for a in choice.alternatives] == HOSTILE
    assert [a.fraction for a in choice.alternatives] == [0.0] * 9 + [1.0]  # the largest logit: the 10th
    assert len(fs) == 10 + 10 + 1  # logits, probabilities, prediction: no field from a label
    tags, text = mu.html_tags_and_text(q.text)
    assert "script" not in [t for t, _ in tags]
    for label in HOSTILE:
        assert label in text  # shown as text in the table headers
    assert len(mu._START.findall(q.text)) == len(fs)  # no "{1:SHORTANSWER:" but the fields' own


def test_hostile_prompt_text_is_text_and_starts_no_field():
    doc = build_document(
        [ProblemSpec("attention", {}, 3, 'Mind {1:SHORTANSWER:=x} and <script>x</script> ]]> "/~#\\')], seed=1
    )
    q = mu.questions(moodle.MoodleRenderer().render(doc))[0]
    tags, text = mu.html_tags_and_text(q.text)
    assert 'Mind {1:SHORTANSWER:=x} and <script>x</script> ]]> "/~#\\' in text
    assert "script" not in [t for t, _ in tags]
    assert all(f.type == "NUMERICAL" for f in read_both(q.text))


def test_characters_xml_forbids_become_replacement_characters():
    doc = build_document(["attention"], seed=1)
    doc.problems[0].intro += " bell \x07 nul \x00 escape \x1b[31m"
    q = mu.questions(moodle.MoodleRenderer().render(doc))[0]
    assert "bell \ufffd nul \ufffd escape \ufffd[31m" in q.text


@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40))
@example("{#1}")
@example("\\(x\\)")
@example("a~b#c}d")
@example("$$")
def test_cloze_escape_reads_back_the_same_text_in_both_readers(label):
    field = f"{{1:MULTICHOICE:={moodle.cloze_escape(label)}~{moodle.cloze_escape(label + 'x')}}}"
    for read in (mu.fields, mu.moodle_fields):
        (f,) = read(field)
        expected = cloze._XML_INVALID.sub("\ufffd", label)
        assert [mu.visible(html_text(a.answer)) for a in f.alternatives] == [
            mu.visible(expected),
            mu.visible(expected) + "x",
        ]
        assert f.alternatives[0].fraction == 1.0


def test_cloze_escape_feedback_and_short_answers():
    text = 'a}#~/"\\*<b>'
    for read in (mu.fields, mu.moodle_fields):
        (f,) = read(f"{{2:SHORTANSWER:={moodle.cloze_escape(text, html=False)}#{moodle.cloze_escape(text)}}}")
        assert f.weight == 2 and f.alternatives[0].answer == 'a}#~/"\\\\*<b>'  # \* : the wildcard, escaped
        assert mu.visible(html_text(f.alternatives[0].feedback)) == text  # word joiners: invisible


def test_numbers_are_in_moodles_numerical_syntax():
    for x in (0.0, -0.0, 3.0, -2.5, 1.1253517471925912e-07, 0.8807970779778823, 1e20, -123456.75):
        s = moodle.number(x)
        assert mu.NUMERICAL_ANSWER.match(s) and float(s) == x
    assert moodle.number(-0.0) == "0" and moodle.number(3.0) == "3"


def test_tolerance_is_checks_rule_and_the_one_the_sheet_prints():
    assert moodle.tolerance(0.5) == float(decimal_tolerance(4, 0.5)) == pytest.approx(1e-3)
    assert moodle.tolerance(-1e6) == pytest.approx(1e-3 + 1e-6)
    assert math.isclose(moodle.tolerance(0), 1e-3 + 1e-12)
    doc = build_document(["attention"], seed=1)
    xml = render_document(doc, ["moodle"], name="t")["t-moodle.xml"]
    assert "an answer within 0.001 of the key gets full marks" in xml


def test_a_templates_folder_restyles_the_questions_and_one_without_moodle_is_refused(tmp_path, runner, cli):
    import shutil

    root = Path(__file__).parent.parent / "templates"
    mine = tmp_path / "mine"
    shutil.copytree(root, mine)
    q = mine / "moodle" / "question.html.j2"
    q.write_text(q.read_text(encoding="utf-8").replace("Type every entry", "Please type every entry"), encoding="utf-8")
    r = runner.invoke(cli, ["build", "--format", "moodle", "--templates", str(mine), "-o", "-"])
    assert r.exit_code == 0, r.output
    assert "Please type every entry" in mu.questions(r.stdout)[0].text
    old = tmp_path / "old"  # a copy from before --format moodle
    shutil.copytree(root, old, ignore=shutil.ignore_patterns("moodle"))
    r = runner.invoke(cli, ["build", "--format", "moodle", "--templates", str(old), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "no moodle/ subfolder" in r.stderr and not (tmp_path / "out").exists()


def test_weights_are_rounded_near_equal_shares_when_exact_ones_would_be_huge():
    import numpy as np

    from worksheet.solution.problem import Problem

    p = Problem("made-up", "Made up", {})
    for n in (7, 11, 13, 16, 17, 19):  # lcm 7 * 11 * 13 * 16 * 17 * 19: far above MAX_TOTAL
        p.add_step(f"s{n}", ((1,) * n,), np.ones((1, n)), title=f"{n} entries", formula="x")
    w = moodle.field_weights(p)
    totals = [w[f"s{n}"] * n for n in (7, 11, 13, 16, 17, 19)]
    assert all(isinstance(x, int) and x >= 1 for x in w.values())
    assert sum(totals) <= moodle.MOODLE_LIMIT and max(totals) / min(totals) <= 1.05
