"""Exam spec files (worksheet build --spec exam.toml): sections with points
and prompts, errors that name the key and line, and the shipped examples
build in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from worksheet.build import build_document
from worksheet.build.spec import SpecError, load_spec, parse_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SPEC = """\
title = "Quiz 3"
course = "CS 480"
date = 2026-03-04
paper = "letter"
seed = 5

[[sections]]
kind = "attention"
points = 6
prompt = "Show every step."
seq_len = 2

[[sections]]
kind = "attention"
points = 4.5
causal = true
"""


def write(tmp_path, text, name="exam.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_spec_fields_and_sections_are_read():
    spec = parse_spec(SPEC)
    assert (spec.title, spec.course, spec.date, spec.paper, spec.seed) == (
        "Quiz 3",
        "CS 480",
        "2026-03-04",
        "letter",
        5,
    )
    assert [(s.kind, s.points, s.prompt) for s in spec.sections] == [
        ("attention", 6, "Show every step."),
        ("attention", 4.5, ""),
    ]
    assert spec.sections[0].params == {"seq_len": 2}
    assert spec.sections[1].params == {"causal": True}


def test_points_and_prompts_appear_on_the_sheet_and_in_the_json_key(runner, cli, tmp_path):
    path = write(tmp_path, SPEC)
    out = tmp_path / "out"
    res = runner.invoke(cli, ["build", "--spec", str(path), "--format", "md,tex,json", "-o", str(out)])
    assert res.exit_code == 0, res.output
    md = (out / "worksheet.md").read_text()
    assert "(6 points)" in md and "(4.5 points)" in md and "Show every step." in md
    assert "**Course:** CS 480" in md and "# Quiz 3" in md
    tex = (out / "worksheet.tex").read_text()
    assert "letterpaper" in tex and "total 10.5 points" in tex
    data = json.loads((out / "worksheet.json").read_text())
    assert [p["points"] for p in data["problems"]] == [6, 4.5]
    assert data["problems"][1]["params"]["causal"] is True
    assert data["seed"] == 5


def test_cli_options_override_the_spec(runner, cli, tmp_path):
    path = write(tmp_path, "variants = 5\n" + SPEC)
    out = tmp_path / "out"
    res = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(path),
            "--seed",
            "9",
            "--variants",
            "2",
            "--paper",
            "a4",
            "--format",
            "json,tex",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads((out / "worksheet.json").read_text())
    assert len(data["variants"]) == 2
    assert all(v["problems"][0]["points"] == 6 for v in data["variants"])
    assert "a4paper" in (out / "worksheet.tex").read_text()


@pytest.mark.parametrize(
    "text, needle",
    [
        ('titel = "x"\n[[sections]]\nkind = "attention"\n', "titel: unknown key"),
        ('title = "x"\n[[sections]]\nkind = "attention"\nseqlen = 3\n', "sections[1].seqlen: unknown key"),
        (
            '[[sections]]\nkind = "attention"\n[[sections]]\nkind = "attention"\npoints = "ten"\n',
            "sections[2].points: must be a number of points",
        ),
        ('variants = "ten"\n[[sections]]\nkind = "attention"\n', "variants: must be a whole number"),
        ('paper = "a3"\n[[sections]]\nkind = "attention"\n', "paper: must be one of a4, letter"),
        ('[[sections]]\nkind = "attention"\nseq_len = "three"\n', "sections[1].seq_len: must be a whole number"),
        ('[[sections]]\nkind = "atention"\n', "did you mean 'attention'"),
        ('[[sections]]\npoints = 3\n', "sections[1].kind: is missing"),
        ('title = "x"\n', "sections: is missing"),
        ('[[sections]]\nkind = "attention"\nd_k = 3\n', "not a perfect square"),
        (
            '[[sections]]\nkind = "attention"\nquestion = "Why?"\n',
            "sections[1].question: a question needs its model answer",
        ),
        ('[[sections]]\nkind = "attention"\nanswer = "Because."\n', "sections[1].answer: an answer needs its question"),
        ('[[sections]]\nkind = "attention"\nquestion = 3\nanswer = "x"\n', "sections[1].question: must be text"),
        (
            '[[sections]]\nkind = "attention"\nquestion = "Why?"\nanswer = "x"\nlines = 0\n',
            "sections[1].lines: must be a whole number of lines from 1 to 30",
        ),
        ('[[sections]]\nkind = "attention"\nlines = 4\n', "sections[1].lines: lines are for a written answer"),
    ],
)
def test_bad_specs_name_the_key(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert needle in str(err.value)
    assert str(path) in str(err.value)


def test_errors_give_the_line_of_the_key(tmp_path):
    text = 'title = "x"\n\n[[sections]]\nkind = "attention"\n\n[[sections]]\nkind = "attention"\nseq_len = true\n'
    with pytest.raises(SpecError, match=r"sections\[2\]\.seq_len: .*\(line 8\)"):
        load_spec(write(tmp_path, text))
    with pytest.raises(SpecError, match=r"titel: unknown key.*\(line 2\)"):
        load_spec(write(tmp_path, '# exam\ntitel = "x"\n[[sections]]\nkind = "attention"\n'))


def test_toml_syntax_errors_give_the_line(tmp_path):
    with pytest.raises(SpecError, match="line 2"):
        load_spec(write(tmp_path, 'title = "x"\ncourse = \n'))


def test_cli_reports_spec_errors_in_one_line_with_exit_2(runner, cli, tmp_path):
    path = write(tmp_path, '[[sections]]\nkind = "attention"\ncolour = "red"\n')
    res = runner.invoke(cli, ["build", "--spec", str(path), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "sections[1].colour: unknown key" in res.output
    assert "(line 3)" in res.output and "Traceback" not in res.output
    missing = runner.invoke(cli, ["build", "--spec", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2 and "nope.toml: no such file" in missing.output


def test_kinds_and_spec_together_are_refused(runner, cli, tmp_path):
    path = write(tmp_path, SPEC)
    res = runner.invoke(cli, ["build", "attention", "--spec", str(path), "-o", str(tmp_path)])
    assert res.exit_code == 2 and "not both" in res.output


SPEC_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.toml") if "sections" in p.read_text(encoding="utf-8"))


def test_the_shipped_exams_and_study_sheets_are_all_tested():
    assert {"midterm.toml", "study-sheet.toml", "decoder-and-recurrent.toml"} <= set(SPEC_EXAMPLES)


@pytest.mark.parametrize("example", SPEC_EXAMPLES)
def test_examples_build_in_every_text_format(runner, cli, tmp_path, example):
    res = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(EXAMPLES / example),
            "--format",
            "md,tex,json,html",
            "--variants",
            "2",
            "-o",
            str(tmp_path),
        ],
    )
    assert res.exit_code == 0, res.output
    stem = load_spec(EXAMPLES / example).name
    for suffix in (".md", "-key.md", ".tex", "-key.tex", ".json", ".html", "-key.html", "-variants.csv"):
        assert (tmp_path / f"{stem}{suffix}").stat().st_size > 40


def test_midterm_has_fifty_points_across_the_catalogue():
    spec = load_spec(EXAMPLES / "midterm.toml")
    assert sum(s.points for s in spec.sections) == 50
    assert len({s.kind for s in spec.sections}) >= 5
    assert "find-the-mistake" in {s.kind for s in spec.sections}


def test_the_recurrent_and_decoder_study_sheet_covers_the_new_kinds():
    spec = load_spec(EXAMPLES / "decoder-and-recurrent.toml")
    assert {s.kind for s in spec.sections} == {"lstm-cell", "gru-cell", "decoder-block"}


@pytest.mark.parametrize("example", SPEC_EXAMPLES)
def test_examples_build_as_pdf(runner, cli, tmp_path, example):
    from test_pdf import page_count, require_latex

    require_latex()
    res = runner.invoke(
        cli, ["build", "--spec", str(EXAMPLES / example), "--format", "pdf", "--variants", "2", "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    stem = load_spec(EXAMPLES / example).name
    assert (tmp_path / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / f"{stem}-key.pdf").read_bytes().startswith(b"%PDF")
    if example == "study-sheet.toml":  # one page per student
        assert page_count(tmp_path / f"{stem}.pdf") == 2


def test_templates_folder_restyles_the_sheets(runner, cli, tmp_path):
    import shutil

    mine = tmp_path / "mytemplates"
    shutil.copytree(EXAMPLES.parent / "templates", mine)
    for fmt, ext in (("md", "md"), ("html", "html")):
        doc = mine / fmt / f"document.{ext}.j2"
        doc.write_text(doc.read_text().replace("Conventions", "Our conventions"), encoding="utf-8")
    out = tmp_path / "out"
    res = runner.invoke(cli, ["build", "--templates", str(mine), "--format", "md,html", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "## Our conventions" in (out / "worksheet.md").read_text()
    assert "<h2>Our conventions</h2>" in (out / "worksheet-key.html").read_text()


def test_templates_folder_errors_are_one_line(runner, cli, tmp_path):
    res = runner.invoke(cli, ["build", "--templates", str(tmp_path / "none"), "-o", str(tmp_path)])
    assert res.exit_code == 2 and "no such folder" in res.output
    (tmp_path / "empty").mkdir()
    res = runner.invoke(cli, ["build", "--templates", str(tmp_path / "empty"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "has no md/ subfolder" in res.output
    broken = tmp_path / "broken"
    (broken / "md").mkdir(parents=True)
    (broken / "md" / "sheet.md.j2").write_text("{% if %}\n")
    res = runner.invoke(cli, ["build", "--templates", str(broken), "--format", "md", "-o", str(tmp_path / "p")])
    assert res.exit_code == 2 and "line 1" in res.output and "Traceback" not in res.output


def test_templates_without_a_doc_block_are_a_one_line_error(runner, cli, tmp_path):
    plain = tmp_path / "plain"
    (plain / "md").mkdir(parents=True)
    for role in ("sheet", "key"):
        (plain / "md" / f"{role}.md.j2").write_text("{% for doc in docs %}# {{ doc.title }}\n{% endfor %}")
    res = runner.invoke(cli, ["build", "--templates", str(plain), "--format", "md", "-o", str(tmp_path / "p")])
    assert res.exit_code == 2 and "no block 'doc'" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("fmt", ["md", "tex", "html"])
@pytest.mark.parametrize("key", [False, True])
def test_head_parts_and_foot_join_to_the_whole_template(fmt, key):
    """The parts (rendered in parallel for big exams) are the template, whole."""
    from worksheet import render
    from worksheet.build import build_variants

    docs = build_variants(["attention", "layer-norm"], 3, seed=4, title="Quiz", course="CS 480")
    r = render.get(fmt)
    whole = r.template(key).render(docs=docs, key=key)
    assert r.render_many(docs, key=key) == whole
    lone = build_variants(["feed-forward"], 1, seed=2)
    assert r.render_many(lone, key=key) == r.template(key).render(docs=lone, key=key)


def test_output_outside_the_blocks_is_an_error_not_lost(runner, cli, tmp_path):
    import shutil

    mine = tmp_path / "mine"
    shutil.copytree(EXAMPLES.parent / "templates", mine)
    doc = mine / "md" / "document.md.j2"
    doc.write_text("Printed outside every block\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    res = runner.invoke(cli, ["build", "--templates", str(mine), "--format", "md", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "document.md.j2, line 1: output outside the head, doc and foot" in res.output
    assert not (tmp_path / "o").exists()


def test_templates_folder_restyles_variants_built_on_two_processes(runner, cli, tmp_path):
    import shutil

    mine = tmp_path / "mytemplates"
    shutil.copytree(EXAMPLES.parent / "templates", mine)
    doc = mine / "md" / "document.md.j2"
    doc.write_text(doc.read_text(encoding="utf-8").replace("Conventions", "Our conventions"), encoding="utf-8")
    out = tmp_path / "out"
    res = runner.invoke(
        cli, ["build", "--templates", str(mine), "--format", "md", "--variants", "30", "--jobs", "2", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert (out / "worksheet.md").read_text(encoding="utf-8").count("## Our conventions") == 30


def test_a_section_question_becomes_a_written_step_with_its_model_answer():
    spec = parse_spec(
        '[[sections]]\nkind = "attention"\nquestion = "Why scale by $\\\\sqrt{d_k}$?"\n'
        "answer = '''So the softmax\nis not saturated.'''\nlines = 3\n"
    )
    assert spec.sections[0].answer == "So the softmax is not saturated."  # one paragraph
    doc = build_document(spec.problem_specs(), seed=1)
    step = doc.problems[0].steps[-1]
    assert (step.name, step.title, step.lines) == ("written", r"Why scale by $\sqrt{d_k}$?", 3)
    assert step.is_written and step.written == "So the softmax is not saturated."


def test_midterm_asks_which_softmax_in_words_with_a_model_answer():
    spec = load_spec(EXAMPLES / "midterm.toml")
    doc = build_document(spec.problem_specs(), seed=1)
    scaling = doc.problems[0]
    assert scaling.kind == "softmax-scaling" and "Which of the three" not in scaling.intro  # a step, not a prompt
    asked = scaling.step("written_2")  # the kind's own written step is "written"
    assert asked.title == "Which of the three would you use in a Transformer, and why?"
    assert r"$s / \sqrt{d_k}$" in asked.written and asked.lines == 4


@pytest.mark.parametrize("example", ["midterm.toml", "study-sheet.toml"])
def test_example_text_writes_its_maths_between_dollars(example):
    spec = load_spec(EXAMPLES / example)
    texts = [spec.title or "", spec.instructions] + [t for s in spec.sections for t in (s.prompt, s.question, s.answer)]
    for text in texts:
        words = re.sub(r"\$[^$]*\$", "", text)
        assert not any(bad in words for bad in ("e^", "sqrt", "d_k", "\\")), text
