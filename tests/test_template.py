"""Answer files students can fill in (issue 19 §2): ``worksheet template KEY``
writes one blank answer file per variant, in the documented TOML and CSV
formats; errors in an answer file name the file and the line; one bad line
does not make the file unmarkable; a section with only a written question is
accepted."""

from __future__ import annotations

import csv
import io
import json
import tomllib

import pytest

from common import one_line_error
from worksheet.check import check_answers, read_answers, read_key

EXAM = '''title = "Quiz"
variants = 3
seed = 5

[[sections]]
points = 4
question = "Why divide by $\\\\sqrt{d_k}$?"
answer = "So that the softmax does not saturate."

[[sections]]
kind = "attention"
points = 8
causal = true

[[sections]]
kind = "next-token"
points = 3
'''


@pytest.fixture(scope="module")
def exam(tmp_path_factory):
    """(folder, key path, key JSON) of a 3-variant exam with a question-only section."""
    from click.testing import CliRunner

    from worksheet.cli import main

    d = tmp_path_factory.mktemp("exam")
    (d / "quiz.toml").write_text(EXAM, encoding="utf-8")
    r = CliRunner().invoke(
        main, ["build", "--spec", str(d / "quiz.toml"), "--format", "json,md", "-o", str(d), "--name", "quiz"]
    )
    assert r.exit_code == 0, r.output
    key = d / "quiz.json"
    return d, key, json.loads(key.read_text(encoding="utf-8"))


def test_a_section_with_only_a_written_question_is_accepted(exam):
    d, _, data = exam
    first = data["variants"][0]["problems"][0]
    assert first["kind"] == "question" and first["points"] == 4
    assert [s["name"] for s in first["steps"]] == ["written"] and first["steps"][0]["written"]
    sheet = (d / "quiz.md").read_text(encoding="utf-8")
    assert "Problem 1: Question (4 points)" in sheet and "Why divide by" in sheet


def test_template_writes_one_blank_file_per_variant_with_every_cell(exam, runner, cli, tmp_path):
    _, key, data = exam
    r = runner.invoke(cli, ["template", str(key), "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["quiz-answers-v01.toml", "quiz-answers-v02.toml", "quiz-answers-v03.toml"]
    for k, v in enumerate(data["variants"], start=1):
        table = tomllib.loads((tmp_path / f"quiz-answers-v{k:02d}.toml").read_text(encoding="utf-8"))
        assert table["variant"] == v["id"] and table["student"] == ""
        for number, p in enumerate(v["problems"], start=1):
            asked = {s["name"]: s for s in p["steps"] if not s.get("written")}
            got = table.get(str(number), {})
            assert set(got) == set(asked)
            for name, s in asked.items():  # every cell, blank
                assert [len(row) for row in got[name]] == [len(row) for row in s["value"]]
                assert {x for row in got[name] for x in row} == {""}
    text = (tmp_path / "quiz-answers-v01.toml").read_text(encoding="utf-8")
    assert "# written: answered in words on the sheet (marked by hand)" in text
    assert "# prediction: one of " in text and "[2]  # Scaled dot-product attention (8 points)" in text


def test_a_blank_template_is_marked_all_missing(exam, tmp_path):
    _, key, _ = exam
    from worksheet.check.template import template_files

    for fmt in ("toml", "csv"):
        for name, text in template_files(key, fmt).items():
            (tmp_path / name).write_text(text, encoding="utf-8")
            report = check_answers(key, tmp_path / name)
            statuses = {s.status for p in report.problems for s in p.steps}
            assert statuses == {"missing", "by-person"} and report.marks == 0 and not report.unread


def test_a_filled_csv_template_is_marked_right(exam, tmp_path, runner, cli):
    _, key, data = exam
    r = runner.invoke(cli, ["template", str(key), "-o", str(tmp_path), "--format", "csv"])
    assert r.exit_code == 0, r.output
    path = tmp_path / "quiz-answers-v02.csv"
    text = path.read_text(encoding="utf-8")
    assert text.count(",variant,,,v02") == 1 and "problem,step,row,col,value" in text
    v = data["variants"][1]
    out = []
    for line in text.splitlines():
        fields = next(csv.reader([line])) if line and not line.startswith("#") else None
        if fields and fields[0].isdigit():
            step = next(s for s in v["problems"][int(fields[0]) - 1]["steps"] if s["name"] == fields[1])
            fields[4] = step["exact"][int(fields[2]) - 1][int(fields[3]) - 1]
            buf = io.StringIO()
            csv.writer(buf, lineterminator="").writerow(fields)
            line = buf.getvalue()
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    assert read_answers(path).variant == "v02"
    r = runner.invoke(cli, ["check", str(key), str(path)])
    assert r.exit_code == 0, r.output
    assert "Total: 11/11 points, and 4 points to mark by hand (of 15)" in r.output


def test_a_key_without_variants_gives_one_file_without_a_variant_line(tmp_path, runner, cli):
    r = runner.invoke(cli, ["build", "attention", "--format", "json", "-o", str(tmp_path), "--name", "hw"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["template", str(tmp_path / "hw.json"), "-o", str(tmp_path / "t"), "--format", "csv"])
    assert r.exit_code == 0, r.output
    (only,) = (tmp_path / "t").iterdir()
    assert only.name == "hw-answers.csv" and ",variant," not in only.read_text(encoding="utf-8")
    # not overwritten without --force
    again = runner.invoke(cli, ["template", str(tmp_path / "hw.json"), "-o", str(tmp_path / "t"), "--format", "csv"])
    assert "already exists" in one_line_error(again)
    assert (
        runner.invoke(
            cli, ["template", str(tmp_path / "hw.json"), "-o", str(tmp_path / "t"), "--format", "csv", "--force"]
        ).exit_code
        == 0
    )


def test_template_bad_inputs_are_one_line_errors(tmp_path, runner, cli):
    line = one_line_error(runner.invoke(cli, ["template", str(tmp_path / "nope.json")]))
    assert "nope.json" in line
    (tmp_path / "k.json").write_text("{}")
    assert "not an answer key" in one_line_error(runner.invoke(cli, ["template", str(tmp_path / "k.json")]))
    r = runner.invoke(cli, ["template", str(tmp_path / "k.json"), "--format", "xlsx"])
    assert r.exit_code == 2 and "xlsx" in r.output


def test_answer_file_errors_name_the_file_and_the_line(exam, tmp_path, runner, cli):
    _, key, data = exam
    a = tmp_path / "a.toml"
    a.write_text(
        'variant = "v01"\nstudent = "Ann"\n\n[2]\nscores = [[1, 2, 3], [1, "x", 3], [1, 2, 3]]\n', encoding="utf-8"
    )
    r = runner.invoke(cli, ["check", str(key), str(a)])
    assert r.exit_code == 1 and "line 5, row 2, column 2: unknown name 'x'" in r.output, r.output
    bad = tmp_path / "b.toml"
    bad.write_text('variant = "v01"\n[2]\nscores = [[1, 2\n', encoding="utf-8")
    line = one_line_error(runner.invoke(cli, ["check", str(key), str(bad)]))
    assert str(bad) in line and "line 3" in line


def test_csv_errors_suggest_csv_syntax_and_one_bad_line_leaves_the_rest_marked(exam, tmp_path, runner, cli):
    _, key, data = exam
    v = data["variants"][0]
    scores = next(s for s in v["problems"][1]["steps"] if s["name"] == "scores")["exact"]
    lines = ["problem,step,row,col,value", ",variant,,,v01"]
    lines += [f"2,scores,{i},{j},{x}" for i, row in enumerate(scores, 1) for j, x in enumerate(row, 1)]
    lines += ["2,scaled,one,1,3", "2;weights;1;1;0.5"]
    a = tmp_path / "a.csv"
    a.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = runner.invoke(cli, ["check", str(key), str(a)])
    assert r.exit_code == 1, r.output
    assert "✓ scores" in r.output
    assert f"line {len(lines) - 1}: the row must be a number" in r.output
    assert "problem,step,row,col,value, e.g. 1,scores,2,3,-1/2" in r.output
    assert f"line {len(lines)}: no step name" in r.output or f"line {len(lines)}:" in r.output
    (tmp_path / "h.csv").write_text("step;row;col;value\n", encoding="utf-8")
    line = one_line_error(runner.invoke(cli, ["check", str(key), str(tmp_path / "h.csv")]))
    assert "h.csv" in line and "problem,step,row,col,value" in line


def test_the_template_command_has_examples_in_its_help(runner, cli):
    r = runner.invoke(cli, ["template", "--help"])
    assert r.exit_code == 0 and "worksheet template" in r.output


def test_read_key_problems_of_the_question_section(exam):
    _, key, _ = exam
    (q, _, _) = read_key(key).problems("v01")
    assert q.kind == "question" and q.title == "Question" and q.steps[0].written


def test_a_class_folder_reports_the_lines_it_could_not_read(exam, tmp_path, runner, cli):
    import csv as csv_module

    _, key, _ = exam
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.csv").write_text("problem,step,row,col,value\n,variant,,,v01\n2,scores,x,1,3\n", encoding="utf-8")
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    assert r.exit_code == 0 and "not read: line 3: the row must be a number" in r.output, r.output  # marked: exit 0
    rows = list(csv_module.DictReader(io.StringIO((folder / "summary.csv").read_text(encoding="utf-8"))))
    assert rows[0]["status"] == "marked" and rows[0]["error"].startswith("not read: line 3")
