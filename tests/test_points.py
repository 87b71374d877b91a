"""Marks in points (issue 19 §1): ``check`` scores by the spec's points, split
over the steps by declared weights or per step; the class CSV gives points per
problem and a total with the maximum in its header; a written step is "to mark
by hand" with its points; the class summary names problems by number and title,
groups missing steps and calls a truncated decimal truncated."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction

import pytest

from check_util import key_values, table, write_json, write_toml
from common import one_line_error
from worksheet.check import check_answers, read_key
from worksheet.policy.errors import InputError
from worksheet.solution.points import points_text, split_points

SPEC = '''title = "Quiz"
[[sections]]
kind = "feed-forward"
points = 6
question = "Which would you use?"
answer = "The scaled one."
step_points = { written = 3 }

[[sections]]
kind = "attention"
points = 10
step_weights = { output = 2 }
'''


@pytest.fixture(scope="module")
def quiz(tmp_path_factory):
    """A two-problem key with points: (key path, its JSON)."""
    from click.testing import CliRunner

    from worksheet.cli import main

    d = tmp_path_factory.mktemp("quiz")
    (d / "quiz.toml").write_text(SPEC, encoding="utf-8")
    r = CliRunner().invoke(
        main, ["build", "--spec", str(d / "quiz.toml"), "--format", "json", "-o", str(d / "out"), "--name", "quiz"]
    )
    assert r.exit_code == 0, r.output
    key = d / "out" / "quiz.json"
    return key, json.loads(key.read_text(encoding="utf-8"))


def _right(data: dict, number: int) -> dict:
    return {s["name"]: s["exact"] for s in data["problems"][number - 1]["steps"] if not s.get("written")}


def test_split_points_keeps_own_points_and_shares_the_rest_by_weight():
    shares = split_points(14, [("a", None, None), ("b", 2, None), ("c", None, 4)])
    assert shares == {"a": Fraction(10, 3), "b": Fraction(20, 3), "c": 4}
    assert sum(shares.values()) == 14
    assert split_points(5, [("a", None, None), ("b", None, None)]) == {"a": Fraction(5, 2), "b": Fraction(5, 2)}
    with pytest.raises(ValueError, match="more than"):
        split_points(3, [("a", None, 4)])
    with pytest.raises(ValueError, match="add up to"):
        split_points(5, [("a", None, 2), ("b", None, 2)])


def test_points_text_is_rounded_from_the_exact_value():
    assert [points_text(x) for x in (5, Fraction(5, 2), Fraction(5, 3), Fraction(1, 8), Fraction(3, 8))] == [
        "5",
        "2.5",
        "1.67",
        "0.12",
        "0.38",
    ]


def test_the_key_records_the_specs_own_points_and_weights(quiz):
    _, data = quiz
    first, second = data["problems"]
    assert first["points"] == 6 and second["points"] == 10
    assert next(s for s in first["steps"] if s["name"] == "written")["points"] == 3
    assert next(s for s in second["steps"] if s["name"] == "output")["weight"] == 2
    assert not any("weight" in s for s in first["steps"])


def test_check_scores_by_the_specs_points(quiz, tmp_path):
    key, data = quiz
    answers = write_json(tmp_path / "a.json", {"1": _right(data, 1), "2": _right(data, 2)})
    report = check_answers(key, answers)
    p1, p2 = report.problems
    # feed-forward: 3 numeric steps share 6 - 3 = 3 points; the written one keeps its 3 for a person
    assert {s.name: s.out_of for s in p1.steps} == {"hidden_pre": 1, "hidden": 1, "output": 1, "written": 0}
    assert p1.by_hand == 3 and p1.marks == 3 and p1.maximum == 6
    # attention (no mask): Q, K, V, scores, scaled, weights each weigh 1, output 2: 10 / 8 each
    shares = {s.name: s.out_of for s in p2.steps}
    assert shares["output"] == Fraction(5, 2) and shares["Q"] == Fraction(5, 4) and sum(shares.values()) == 10
    assert report.marks == 13 and report.out_of == 13 and report.by_hand == 3 and report.exit_code == 0
    text = report.text()
    assert "to mark by hand (3 points)" in text
    assert "Total: 13/13 points, and 3 points to mark by hand (of 16)" in text
    assert "Problem 2: attention (Scaled dot-product attention)" in text
    d = report.to_dict()
    assert d["marks"] == 13 and d["to_mark_by_hand"] == 3 and d["units"] == "points"
    assert d["problems"][0]["steps"][-1]["to_mark_by_hand"] == 3


def test_a_wrong_step_loses_its_own_share(quiz, tmp_path):
    key, data = quiz
    two = _right(data, 2)
    two["output"] = [["0"] * len(row) for row in two["output"]]
    report = check_answers(key, write_json(tmp_path / "a.json", {"1": _right(data, 1), "2": two}))
    assert report.marks == Fraction(21, 2) and "Total: 10.5/13 points" in report.text()
    assert report.to_dict()["marks"] == 10.5


def test_class_csv_has_points_per_problem_and_total_with_maximum_in_header(quiz, tmp_path, runner, cli):
    key, data = quiz
    folder = tmp_path / "class"
    folder.mkdir()
    write_json(folder / "alice.json", {"student": "Alice", "1": _right(data, 1), "2": _right(data, 2)})
    two = _right(data, 2)
    for name in ("scores", "scaled", "weights", "output"):  # steps 4-7 of attention (Q, K, V first)
        del two[name]
    write_json(folder / "bob.json", {"student": "Bob", "1": _right(data, 1), "2": two})
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    assert r.exit_code == 0, r.output  # every file could be marked
    assert "problem 2 (Scaled dot-product attention): steps 4–7 missing" in r.output
    assert "bob.json    6.75/13 (3 points to mark by hand)" in r.output, r.output
    rows = list(csv.DictReader(io.StringIO((folder / "summary.csv").read_text(encoding="utf-8"))))
    header = list(rows[0])
    assert header[4:7] == [
        "1 Position-wise feed-forward network (of 6)",
        "2 Scaled dot-product attention (of 10)",
        "total (of 16)",
    ]
    alice, bob = rows
    assert alice["1 Position-wise feed-forward network (of 6)"] == "3" and alice["total (of 16)"] == "13"
    assert bob["2 Scaled dot-product attention (of 10)"] == "3.75" and bob["total (of 16)"] == "6.75"
    assert alice["to mark by hand"] == "problem 1: written (3 points)"
    assert bob["lost"] == "problem 2: steps 4–7 missing"


def test_a_truncated_decimal_is_called_truncated_not_a_slip(tmp_path):
    from check_util import make_key

    key, doc = make_key(tmp_path, ["attention"], seed=3)
    p = doc.problems[0]
    answers = table(key_values(p), steps=[s.name for s in p.steps])
    w = p.step("weights").value
    # an entry whose 2-place truncation differs from its rounding, written truncated (that is
    # off by more than the 0.001 every sheet allows; a 3-place one would be within it)
    i, j = next(
        (i, j) for i in range(w.shape[0]) for j in range(w.shape[1]) if round(w[i, j], 2) != int(w[i, j] * 100) / 100
    )
    answers["weights"][i][j] = f"{int(w[i, j] * 100) / 100:.2f}"
    report = check_answers(key, write_toml(tmp_path / "a.toml", answers))
    step = next(s for s in report.problems[0].steps if s.name == "weights")
    assert step.status == "incorrect" and step.mistake == "truncated", report.text()
    assert "cut off instead of rounded" in report.text()


def test_bad_step_points_in_a_spec_name_the_section(tmp_path, runner, cli):
    cases = {
        'points = 4\nstep_points = { nope = 1 }': "sections[1]: step_points: attention has no step 'nope'",
        'points = 4\nstep_points = { scores = 5 }': "more than the section's 4",
        'step_points = { scores = 1 }': "step points need the section's points",
        'points = 4\nstep_weights = { scores = 0 }': "step_weights",
        'points = 4\nstep_points = "scores"': "must be a table of step names",
    }
    for body, expected in cases.items():
        spec = tmp_path / "s.toml"
        spec.write_text(f'[[sections]]\nkind = "attention"\n{body}\n', encoding="utf-8")
        r = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "json", "-o", str(tmp_path / "o")])
        line = one_line_error(r)
        assert expected in line, line
        assert not (tmp_path / "o").exists()


def test_a_key_with_bad_points_is_refused_naming_the_problem(quiz, tmp_path):
    _, data = quiz
    bad = json.loads(json.dumps(data))
    bad["problems"][1]["points"] = "ten"
    key = write_json(tmp_path / "k.json", bad)
    with pytest.raises(InputError, match="problem 2, points: must be a number"):
        read_key(key).problems()
