"""``worksheet check KEY --moodle-responses FILE``: a Moodle quiz's Responses
report, built here from a real ``build --variants 3 --format moodle,json``
as Moodle would write it (the right answers are the first 100% answer of
each field, read from the XML by the port of Moodle's importer in
moodle_util), is marked with error carried forward and named mistakes; the
summary, grade import CSV and feedback pages are written all or nothing."""

from __future__ import annotations

import csv
import html
import io
import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from common import one_line_error
from moodle_util import _numeric, moodle_fields, questions
from worksheet.check.responses_csv import parts
from worksheet.check.responses_marks import check_moodle_responses, page_name

HEADER = [
    "Last name",
    "First name",
    "Email address",
    "Status",
    "Started",
    "Completed",
    "Duration",
    "Grade/10.00",
]
SLOTS = (1, 2)


def _build(runner, cli, folder, seed):
    r = runner.invoke(
        cli,
        ["build", "attention", "softmax-scaling", "--variants", "3", "--format", "moodle,json"]
        + ["--seed", str(seed), "-o", str(folder)],
    )
    assert r.exit_code == 0, r.output
    key = json.loads((folder / "worksheet.json").read_text())
    bank = {}
    for q in questions((folder / "worksheet-moodle.xml").read_text()):
        m = re.fullmatch(r"worksheet (v\d+) P(\d+): .*", q.name)
        fs = moodle_fields(q.text)
        summary = html_to_text(re.sub(r"\{[0-9]*:[A-Z]+:(?:[^}\\]|\\.)*\}", "_____", q.text))
        bank[(m[1], int(m[2]))] = ([_numeric(f.right[0].answer)[0] for f in fs], summary)
    return key, bank


def html_to_text(text: str) -> str:
    """Roughly Moodle's html_to_text: <strong> in capitals, tags out, entities decoded."""
    text = re.sub(r"<strong>(.*?)</strong>", lambda m: m[1].upper(), text)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


@pytest.fixture(scope="module")
def quiz(tmp_path_factory):
    from click.testing import CliRunner

    from worksheet.cli import main

    folder = tmp_path_factory.mktemp("quiz")
    key, bank = _build(CliRunner(), main, folder, 5)
    _, other = _build(CliRunner(), main, tmp_path_factory.mktemp("other"), 99)
    return folder, key, bank, other


def summary(values) -> str:
    """Moodle's multianswer summary: ``part 1: a; part 2: b`` (trimmed)."""
    return "; ".join(f"part {i}: {v}" for i, v in enumerate(values, start=1)).strip()


def typed(right: list[str]) -> list[str]:
    """What a student types: each right value to 4 places."""
    return [f"{float(v):.4f}" for v in right]


def steps_of(key, vid, k):
    """(step name, exact rows) of the asked steps in the sheet's order."""
    variant = next(v for v in key["variants"] if v["id"] == vid)
    p = variant["problems"][k - 1]
    return [s for s in p["steps"] if s.get("on_sheet", True) and not s.get("written")]


def no_scaling(key, vid, right):
    """Problem 1 answered with the scores not divided by sqrt(d_k), the rest followed through."""
    steps = {s["name"]: np.array(s["value"], dtype=float) for s in steps_of(key, vid, 1)}
    scores = steps["scores"]
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    mine = {"scaled": scores, "weights": weights, "output": weights @ steps["V"]}
    out, k = [], 0
    for s in steps_of(key, vid, 1):
        for i, row in enumerate(s["value"]):
            for j, _ in enumerate(row):
                out.append(f"{mine[s['name']][i, j]:.4f}" if s["name"] in mine else typed([right[k]])[0])
                k += 1
    assert k == len(right)
    return out


def row(last, first, email, status, slots, grade="5.00"):
    cells = [last, first, email, status, "1 June 2026  10:00 AM", "1 June 2026  10:40 AM", "40 mins", grade]
    for question, response, right in slots:
        cells += [question, response, right]
    return cells


def report_csv(rows, *, header=None, bom=True) -> bytes:
    head = header or HEADER + [f"{w} {n}" for n in SLOTS for w in ("Question", "Response", "Right answer")]
    buf = io.StringIO()
    csv.writer(buf).writerows([head, *rows])
    return (("\ufeff" if bom else "") + buf.getvalue()).encode("utf-8")


def slot(bank, vid, k, values=None):
    right, text = bank[(vid, k)]
    return (text, summary(values if values is not None else typed(right)), summary(right))


def _blank(bank, vid, k):
    """A question not answered at all: Moodle writes "-" for its response."""
    right, text = bank[(vid, k)]
    return (text, "-", summary(right))


@pytest.fixture(scope="module")
def marked(quiz, tmp_path_factory):
    folder, key, bank, other = quiz
    rows = [
        row("Ng", "Alice", "alice@example.org", "Finished", [slot(bank, "v01", 1), slot(bank, "v01", 2)]),
        row(
            "<script>alert(1)</script>",
            "=cmd|' /C calc'!A0",
            "=1+2@example.org",
            "Finished",
            [slot(bank, "v02", 1, no_scaling(key, "v02", bank[("v02", 1)][0])), slot(bank, "v03", 2)],
        ),
        row("Late", "Lee", "lee@example.org", "In progress", [slot(bank, "v03", 1), ("-", "-", "-")], grade="-"),
        row("Other", "Quiz", "oq@example.org", "Finished", [slot(other, "v01", 1), slot(other, "v01", 2)]),
        row(
            "Blank\u202e",
            "Bo",
            "../x",
            "Finished",
            [slot(bank, "v03", 1, []), _blank(bank, "v03", 2)],  # an empty cell, and Moodle's "-"
        ),
    ]
    path = tmp_path_factory.mktemp("class") / "responses.csv"
    path.write_bytes(report_csv(rows))
    out = path.parent / "marks"
    return check_moodle_responses(folder / "worksheet.json", path, out), out


def test_correct_attempts_get_full_marks_and_the_full_grade(marked):
    marks, _ = marked
    alice = marks.rows[0]
    assert alice.row == 2 and alice.report is not None, alice.error
    assert alice.report.ok and alice.grade == "10.00"
    assert alice.report.variant == "v01" and [p.number for p in alice.report.problems] == [1, 2]


def test_a_no_scaling_attempt_is_diagnosed_and_carried_forward(marked):
    marks, _ = marked
    r = marks.rows[1].report
    assert r is not None, marks.rows[1].error
    steps = {s.name: s for s in r.problems[0].steps}
    assert steps["scaled"].status == "incorrect" and steps["scaled"].mistake == "no-scaling"
    assert steps["weights"].status == "carried-forward" and steps["output"].status == "carried-forward"
    assert all(steps[n].status == "correct" for n in ("Q", "K", "V", "scores"))
    assert r.variant == "v02, v03"  # each slot drew its own variant
    assert 0 < float(marks.rows[1].grade) < 10


def test_rows_that_cannot_be_matched_are_reported_by_number_and_the_rest_marked(marked):
    marks, _ = marked
    late, other = marks.rows[2], marks.rows[3]
    assert late.report is None and "in progress" in late.error
    assert other.report is None and "question 1" in other.error and "no problem of the key" in other.error
    text = marks.text()
    assert "row 4" in text and "row 5" in text and "3 of 5 attempts marked" in text


def test_an_empty_response_is_missing_not_wrong(marked):
    marks, _ = marked
    blank = marks.rows[4].report
    assert blank is not None, marks.rows[4].error
    assert {s.status for p in blank.problems for s in p.steps} == {"missing", "by-person"}  # words: by hand
    assert marks.rows[4].grade == "0.00"


def test_the_outputs_are_written_and_no_cell_is_a_formula(marked):
    marks, out = marked
    assert sorted(p.name for p in out.iterdir()) == ["moodle-feedback", "moodle-grades.csv", "moodle-summary.csv"]
    grades = list(csv.reader(io.StringIO((out / "moodle-grades.csv").read_text())))
    assert grades[0] == ["Email address", "Grade"]
    assert ["alice@example.org", "10.00"] in grades
    hostile = next(g for g in grades if "1+2" in g[0])
    assert hostile[0] == "'=1+2@example.org"
    summary_rows = list(csv.reader(io.StringIO((out / "moodle-summary.csv").read_text())))
    for cells in summary_rows + grades:
        for c in cells:
            assert not c.startswith(("=", "+", "@", "\t", "\r")), c
            if c.startswith("-"):
                float(c)  # a number stays a number
    assert summary_rows[1][:4] == ["row 2", "Alice Ng", "v01", "correct"]
    assert summary_rows[4][0] == "row 5" and summary_rows[4][3] == "error"
    assert summary_rows[5][1] == "Bo Blank\\u202e"  # a bidi control is written as its escape
    assert "\u202e" not in (out / "moodle-feedback" / "0006-x.html").read_text()


def test_feedback_pages_escape_names_and_typeset_the_hints(marked):
    _, out = marked
    pages = sorted(p.name for p in (out / "moodle-feedback").iterdir())
    assert pages == ["0002-alice-example-org.html", "0003-1-2-example-org.html", "0006-x.html"]
    page = (out / "moodle-feedback" / "0003-1-2-example-org.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "no-scaling" in page and "<math>" in page  # the hint, \sqrt{d_k} typeset
    # told to the student in words (second person), the code only in data-mistake for scripts
    assert "You did not divide the scores by" in page and 'data-mistake="no-scaling"' in page
    assert ">no-scaling<" not in page and "wrong: no-scaling" not in page
    # carried from the steps by their titles, not their ids
    assert "follows from your own Scaled scores" in page and "your own scaled<" not in page
    # the kind's title typeset as on the sheet, not its plain-text form
    assert "sqrt(d_k)" not in page and re.search(r"<h2>Problem 2: Why scale by <math", page)
    assert "Carried forward" in page
    assert "<link" not in page and "src=" not in page  # self-contained


@pytest.mark.parametrize(
    "identity, name",
    [("../x", "0007-x.html"), ("", "0007.html"), ("a/../../b", "0007-a-b.html"), ("..", "0007.html")],
)
def test_page_names_come_only_from_letters_and_digits(identity, name):
    assert page_name(7, identity) == name


def test_parts_follow_moodles_summary():
    assert parts("part 1: 0.5; part 2: -1; part 3:", 3) == {1: "0.5", 2: "-1", 3: ""}
    assert parts("part 1: ; part 2: 7", 2) == {1: "", 2: "7"}
    # a student's own "; part 2:" stays inside their own part 1 only if a later part follows
    assert parts("part 1: 5; part 2: x; part 2: 6", 2) == {1: "5", 2: "x; part 2: 6"}
    assert parts("hello", 2) is None


def test_matching_by_question_text_alone(quiz, tmp_path):
    folder, key, bank, _ = quiz
    head = HEADER + [f"{w} {n}" for n in SLOTS for w in ("Question", "Response")]
    cells = row("Ng", "Al", "al@example.org", "Finished", [])
    for vid, k in (("v02", 1), ("v02", 2)):
        right, text = bank[(vid, k)]
        cells += [text, summary(typed(right))]
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([cells], header=head))
    marks = check_moodle_responses(folder / "worksheet.json", path, tmp_path / "o")
    assert marks.rows[0].report is not None and marks.rows[0].report.ok, marks.rows[0].error


def test_the_cli_marks_and_writes_nothing_outside_the_folder(runner, cli, quiz, tmp_path):
    folder, key, bank, _ = quiz
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([row("Ng", "A", "a@x.org", "Finished", [slot(bank, "v01", 1), slot(bank, "v01", 2)])]))
    before = set(tmp_path.iterdir())
    r = runner.invoke(
        cli, ["check", str(folder / "worksheet.json"), "--moodle-responses", str(path), "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 0, r.output
    assert set(tmp_path.iterdir()) - before == {tmp_path / "o"}
    again = runner.invoke(
        cli, ["check", str(folder / "worksheet.json"), "--moodle-responses", str(path), "-o", str(tmp_path / "o")]
    )
    assert "already exists" in one_line_error(again)
    forced = runner.invoke(
        cli,
        [
            "check",
            str(folder / "worksheet.json"),
            "--moodle-responses",
            str(path),
            "-o",
            str(tmp_path / "o"),
            "--force",
        ],
    )
    assert forced.exit_code == 0, forced.output


BAD = [
    (b"", "empty file"),
    (b"\xff\xfe", "not UTF-8"),
    ("Name,Grade/10.00\nA,1\n".encode(), "no 'Response N' column"),
    ("Email address,Status,Response 1\na@x,Finished,part 1: 1\n".encode(), "tick 'Right answer'"),
    ("First name,Status,Response 1,Right answer 1\nA,Finished,-,-\n".encode(), "no identity column"),
    ("Email address,Email address,Response 1,Right answer 1\n".encode(), "two columns"),
    ('Email address,Response 1,Right answer 1\n"a,b\n'.encode(), "not CSV"),
    ("Email address,Response 1,Right answer 1\n".encode(), "no attempts"),
]


@pytest.mark.parametrize("content, message", BAD)
def test_a_bad_report_is_one_line_exit_2_and_no_file(runner, cli, quiz, tmp_path, content, message):
    folder = quiz[0]
    path = tmp_path / "r.csv"
    path.write_bytes(content)
    r = runner.invoke(
        cli, ["check", str(folder / "worksheet.json"), "--moodle-responses", str(path), "-o", str(tmp_path / "o")]
    )
    line = one_line_error(r)
    assert message in line and "r.csv" in line
    assert not (tmp_path / "o").exists()


def test_a_report_over_the_size_limit_is_refused(runner, cli, quiz, tmp_path, monkeypatch):
    from worksheet.check import responses_csv

    monkeypatch.setattr(responses_csv, "MAX_RESPONSES_BYTES", 10)
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([]))
    r = runner.invoke(cli, ["check", str(quiz[0] / "worksheet.json"), "--moodle-responses", str(path)])
    assert "larger than the limit" in one_line_error(r)


def test_too_many_rows_names_the_row(runner, cli, quiz, tmp_path, monkeypatch):
    from worksheet.check import responses_csv

    monkeypatch.setattr(responses_csv, "MAX_RESPONSE_ROWS", 1)
    path = tmp_path / "r.csv"
    blank = row("A", "B", "c@d", "Finished", [("-", "-", "-"), ("-", "-", "-")])
    path.write_bytes(report_csv([blank, blank]))
    r = runner.invoke(
        cli, ["check", str(quiz[0] / "worksheet.json"), "--moodle-responses", str(path), "-o", str(tmp_path / "o")]
    )
    assert "row 3" in one_line_error(r)


@pytest.mark.parametrize(
    "args, message",
    [
        (["-o", "x"], "-o/--out goes with --moodle-responses"),
        (["answers.toml", "--moodle-responses", "r.csv"], "takes no ANSWERS"),
        (["--moodle-responses", "missing.csv"], "missing.csv"),
    ],
)
def test_bad_usage_is_one_line(runner, cli, quiz, tmp_path, args, message):
    r = runner.invoke(cli, ["check", str(quiz[0] / "worksheet.json"), *args])
    assert message in one_line_error(r)


def test_a_ragged_row_is_reported_and_the_rest_marked(quiz, tmp_path):
    folder, key, bank, _ = quiz
    good = row("Ng", "A", "a@x.org", "Finished", [slot(bank, "v01", 1), slot(bank, "v01", 2)])
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([good[:3], good]))
    marks = check_moodle_responses(folder / "worksheet.json", path, tmp_path / "o")
    assert marks.rows[0].error.startswith("3 cells") and marks.rows[1].report.ok


def test_labels_masked_entries_and_shared_right_answers(runner, cli, tmp_path):
    """A drop-down (next-token's prediction) is answered by its label, masked entries are
    not parts, and two variants with the same right answers that mark alike are accepted."""
    folder = tmp_path / "quiz"
    r = runner.invoke(
        cli,
        ["build", "next-token", "attention", "--causal", "--variants", "2", "--format", "moodle,json"]
        + ["-o", str(folder)],
    )
    assert r.exit_code == 0, r.output
    head = HEADER + [f"{w} {n}" for n in SLOTS for w in ("Response", "Right answer")]
    rows, labels = [], []
    for vid in ("v01", "v02"):
        cells = row("Ng", vid, f"{vid}@example.org", "Finished", [])
        for q in questions((folder / "worksheet-moodle.xml").read_text()):
            if f" {vid} " not in q.name:
                continue
            right = [
                _numeric(f.right[0].answer)[0] if f.type == "NUMERICAL" else html.unescape(f.right[0].answer)
                for f in moodle_fields(q.text)
            ]
            answers = [v if re.search("[^-0-9.e]", v) else f"{float(v):.4f}" for v in right]
            cells += [summary(answers), summary(right)]
            labels += [v for v in right if re.search("[^-0-9.e]", v)]
        rows.append(cells)
    assert labels  # the drop-down's right answers are labels
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv(rows, header=head))
    marks = check_moodle_responses(folder / "worksheet.json", path, tmp_path / "o")
    for got in marks.rows:
        assert got.report is not None and got.report.ok, got.error or got.report.text()
    masked = next(s for s in marks.rows[0].report.problems[1].steps if s.name == "masked")
    assert masked.status == "correct"


def test_variants_sharing_right_answers_are_marked_when_they_mark_alike(quiz, tmp_path):
    folder, key, bank, _ = quiz
    assert bank[("v02", 2)][0] == bank[("v03", 2)][0]  # softmax of shifted scores: the same right answers
    head = HEADER + [f"{w} {n}" for n in SLOTS for w in ("Response", "Right answer")]
    cells = row("Ng", "A", "a@x.org", "Finished", [])
    for vid, k in (("v01", 1), ("v03", 2)):
        right = bank[(vid, k)][0]
        cells += [summary(typed(right)), summary(right)]
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([cells], header=head))
    got = check_moodle_responses(folder / "worksheet.json", path, tmp_path / "o").rows[0]
    assert got.report is not None and got.report.ok, got.error
    assert got.report.variant == "v01, v02/v03"


@given(st.lists(st.text(alphabet="0123456789.-eE/ ;:", max_size=12), min_size=1, max_size=8))
def test_parts_read_back_what_moodle_summarises(values):
    values = [v.strip() for v in values]
    # Moodle trims the whole summary; a value cannot hold "; part j:" here (no letters but e)
    assert parts(summary(values), len(values)) == dict(enumerate(values, start=1))


@given(st.text(max_size=60), st.integers(1, 9999))
def test_a_page_name_is_the_row_and_letters_and_digits(identity, row_number):
    name = page_name(row_number, identity)
    assert re.fullmatch(r"[0-9]{4}(-[A-Za-z0-9]+(-[A-Za-z0-9]+)*)?\.html", name), name


def test_out_being_a_file_is_one_line(runner, cli, quiz, tmp_path):
    folder, key, bank, _ = quiz
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([row("Ng", "A", "a@x.org", "Finished", [slot(bank, "v01", 1), slot(bank, "v01", 2)])]))
    (tmp_path / "o").write_text("a file")
    r = runner.invoke(
        cli, ["check", str(folder / "worksheet.json"), "--moodle-responses", str(path), "-o", str(tmp_path / "o")]
    )
    one_line_error(r)
    assert (tmp_path / "o").read_text() == "a file"


def test_too_many_columns_and_too_long_a_cell(runner, cli, quiz, tmp_path, monkeypatch):
    from worksheet.check import responses_csv

    folder, key, bank, _ = quiz
    good = row("Ng", "A", "a@x.org", "Finished", [slot(bank, "v01", 1), slot(bank, "v01", 2)])
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([good, good]))
    monkeypatch.setattr(responses_csv, "MAX_RESPONSE_COLUMNS", 5)
    r = runner.invoke(cli, ["check", str(folder / "worksheet.json"), "--moodle-responses", str(path)])
    assert "more than 5 columns" in one_line_error(r)
    monkeypatch.setattr(responses_csv, "MAX_RESPONSE_COLUMNS", 2000)
    monkeypatch.setattr(responses_csv, "MAX_RESPONSE_CELL", 1000)
    marks = check_moodle_responses(folder / "worksheet.json", path, write=False)
    assert all("more than 1000 characters" in r.error for r in marks.rows)


SPEC = """title = "Quiz"
name = "quiz"
[[sections]]
kind = "softmax-scaling"
points = 6
[[sections]]
question = "Why divide by the square root of d_k?"
answer = "To keep the scores' variance near 1."
points = 4
"""


@pytest.mark.parametrize("with_text", [False, True])
def test_an_essay_slot_is_left_to_the_lecturer(runner, cli, tmp_path, with_text):
    """An essay question (a spec's section in words only) has no right answer: without
    question text its slot is not marked (and said so); with it, it is marked by a person."""
    (tmp_path / "spec.toml").write_text(SPEC)
    folder = tmp_path / "quiz"
    r = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(tmp_path / "spec.toml"),
            "--variants",
            "2",
            "--format",
            "moodle,json",
            "-o",
            str(folder),
        ],
    )
    assert r.exit_code == 0, r.output
    (q,) = [
        q
        for q in questions((folder / "quiz-moodle.xml").read_text().replace('type="essay"', 'type="cloze"'))
        if " v02 P1" in q.name
    ]
    right = [_numeric(f.right[0].answer)[0] for f in moodle_fields(q.text)]
    columns = ("Question", "Response", "Right answer") if with_text else ("Response", "Right answer")
    head = HEADER + [f"{w} {n}" for n in SLOTS for w in columns]
    first = ([html_to_text(q.text)] if with_text else []) + [summary(typed(right)), summary(right)]
    essay = (["PROBLEM 2: WHY DIVIDE BY THE SQUARE ROOT OF D_K? — variant v02"] if with_text else []) + [
        "Because.",
        "-",
    ]
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([row("Ng", "A", "a@x.org", "Finished", []) + first + essay], header=head))
    marks = check_moodle_responses(folder / "quiz.json", path, tmp_path / "o")
    got = marks.rows[0]
    assert got.report is not None and got.report.ok, got.error
    assert got.grade == "10.00"  # the points marked here: the essay's are the lecturer's to give
    if with_text:
        assert [s.status for s in got.report.problems[1].steps] == ["by-person"]
    else:
        assert marks.skipped == [2] and "question 2: no right answer" in marks.text()


def test_a_key_without_variants(runner, cli, tmp_path):
    folder = tmp_path / "quiz"
    r = runner.invoke(cli, ["build", "attention", "--format", "moodle,json", "-o", str(folder)])
    assert r.exit_code == 0, r.output
    (q,) = questions((folder / "worksheet-moodle.xml").read_text())
    right = [_numeric(f.right[0].answer)[0] for f in moodle_fields(q.text)]
    head = HEADER + ["Question 1", "Response 1", "Right answer 1"]
    for cells in ([html_to_text(q.text), summary(typed(right)), summary(right)], [html_to_text(q.text), "-", "-"]):
        path = tmp_path / "r.csv"
        path.write_bytes(report_csv([row("Ng", "A", "a@x.org", "Finished", []) + cells], header=head))
        got = check_moodle_responses(folder / "worksheet.json", path, write=False).rows[0]
        assert got.report is not None, got.error
        assert got.report.variant is None and got.grade == ("10.00" if cells[1] != "-" else "0.00")


@pytest.mark.parametrize(
    "status, said",
    [
        ("Overdue", "overdue"),
        ("Never submitted", "never submitted"),
        ("=HYPERLINK(1)\x1b", "'=HYPERLINK(1)\\x1b', not finished"),
    ],
)
def test_an_attempt_not_finished_is_not_marked_and_says_why(quiz, tmp_path, status, said):
    folder, key, bank, _ = quiz
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([row("Ng", "A", "a@x.org", status, [slot(bank, "v01", 1), slot(bank, "v01", 2)])]))
    marks = check_moodle_responses(folder / "worksheet.json", path, tmp_path / "o")
    assert marks.rows[0].report is None and said in marks.rows[0].error
    assert marks.exit_code == 1
    summary_rows = list(csv.reader(io.StringIO((tmp_path / "o" / "moodle-summary.csv").read_text())))
    assert summary_rows[1][-1].startswith("A Ng (a@x.org): the attempt is")
    assert (tmp_path / "o" / "moodle-grades.csv").read_text() == "Email address,Grade\n"


def test_the_cli_json_report_names_each_row(runner, cli, quiz, tmp_path):
    folder, key, bank, _ = quiz
    path = tmp_path / "r.csv"
    path.write_bytes(report_csv([row("Ng", "A", "a@x.org", "Finished", [slot(bank, "v01", 1), slot(bank, "v01", 2)])]))
    r = runner.invoke(
        cli,
        ["check", str(folder / "worksheet.json"), "--moodle-responses", str(path), "-o", str(tmp_path / "o")]
        + ["--format", "json"],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [f["file"] for f in data["files"]] == ["row 2"] and data["files"][0]["report"]["marks"] == 10
    assert data["summary"].endswith("moodle-summary.csv")
    assert "--moodle-responses" in runner.invoke(cli, ["check", "--help"]).output
