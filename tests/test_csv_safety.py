"""Issue 17 §2, CSV: no cell of a CSV we write becomes a spreadsheet formula,
numbers stay numbers, and bidirectional control characters are refused at
input (or, in file names we did not choose, written as escapes)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from common import one_line_error
from worksheet.policy import safetext
from worksheet.policy.csv_cells import FORMULA_START, cell, csv_text, text_cell

DANGEROUS = [
    "=1+2",
    "+1",
    "-1",
    "@SUM(A1)",
    "\t=1",
    "\r=1",
    "=HYPERLINK(\"http://x\",\"y\")",
    "-2+3",
    "=cmd|' /C calc'!A0",
    "+\"",
    "@",
]
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]


def read_cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def is_formula(value: str) -> bool:
    """Would a spreadsheet run this (read) cell as a formula?"""
    return value.lstrip("\t\r").startswith(("=", "+", "-", "@")) and not _is_number(value)


def _is_number(value: str) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("text", DANGEROUS)
def test_a_text_cell_that_starts_like_a_formula_is_prefixed_and_quoted(text):
    out = text_cell(text)
    assert out.startswith("\"'") and out.endswith('"')
    (row,) = read_cells(out + "\n")
    assert not is_formula(row[0]) and row[0].startswith("'")


@given(st.text(max_size=20))
@example("=1+2")
@example("-3")
@example('"=1"')
@example("\u202e=1")
@example(" =1")
def test_no_text_cell_is_a_formula_and_each_reads_back_as_one_cell(text):
    (row,) = read_cells(csv_text([[text, "x"]]))
    assert len(row) == 2 and row[1] == "x"
    assert not row[0].startswith(FORMULA_START) or row[0].startswith("'")
    assert not set(row[0]) & set(safetext.BIDI_CONTROLS)


@given(st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False)))
@example(-3)
@example(-0.5)
def test_numbers_we_write_stay_plain_numbers(x):
    out = cell(x)
    assert out == (repr(x) if isinstance(x, float) else str(x)) and "'" not in out and '"' not in out


def test_variants_csv_is_unchanged_for_our_own_cells_and_safe_for_file_names():
    from worksheet.build import build_variants
    from worksheet.build.output import variants_csv

    docs = build_variants(["softmax-scaling"], 2, seed=1)
    out = variants_csv(docs, {1: (1, 2), 2: (3, 3)}, None, files=["=x-v01.md", "y-v02.md"])
    rows = read_cells(out)
    assert rows[0] == ["variant", "seed", "pages", "key_pages", "file"]
    assert rows[1][:3] == ["v01", str(docs[0].seed), "1-2"] and rows[1][4] == "'=x-v01.md"
    assert out.splitlines()[1].split(",")[1] == str(docs[0].seed)  # a number, as it is


def write_key_and_answers(tmp_path, runner, cli, answers: dict[str, dict]):
    out = tmp_path / "key"
    r = runner.invoke(cli, ["build", "softmax-scaling", "--format", "json", "-o", str(out)])
    assert r.exit_code == 0, r.output
    folder = tmp_path / "answers"
    folder.mkdir()
    for name, table in answers.items():
        (folder / name).write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    return out / "worksheet.json", folder


def test_class_summary_cells_from_students_cannot_become_formulas(tmp_path, runner, cli):
    key, folder = write_key_and_answers(
        tmp_path,
        runner,
        cli,
        {
            "=cmd.json": {"student": "=HYPERLINK(\"http://evil\",\"click\")", "variant": "@x", "softmax_raw": [[1, 0]]},
            "+a.json": {"student": "-Bob", "softmax_raw": "not a matrix"},
        },
    )
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    assert r.exit_code == 0, r.output  # every file could be marked
    rows = read_cells((folder / "summary.csv").read_text(encoding="utf-8"))
    header, *body = rows
    assert len(body) == 2
    for row in body:
        assert len(row) == len(header)
        assert not any(is_formula(c) for c in row), row
    by_file = {row[0]: row for row in body}
    assert set(by_file) == {"'=cmd.json", "'+a.json"}
    assert by_file["'=cmd.json"][1] == "'=HYPERLINK(\"http://evil\",\"click\")"
    total = next(k for k, h in enumerate(header) if h.startswith("total (of "))  # "total (of N)"
    assert by_file["'=cmd.json"][total].replace(".", "", 1).isdigit()  # our numbers stay numbers


@pytest.mark.parametrize("char", BIDI)
def test_bidi_controls_in_a_student_name_are_shown_as_escapes_never_raw(tmp_path, runner, cli, char):
    key, folder = write_key_and_answers(
        tmp_path, runner, cli, {"a.json": {"student": f"Al{char}ice", "softmax_raw": [[1, 0]]}}
    )
    r = runner.invoke(cli, ["check", str(key), str(folder / "a.json")])
    assert r.exit_code in (0, 1) and char not in r.output and f"Al\\u{ord(char):04x}ice" in r.output
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    text = (folder / "summary.csv").read_text(encoding="utf-8")
    assert char not in text and f"Al\\u{ord(char):04x}ice" in text


def test_bidi_control_in_an_answer_file_name_is_written_as_an_escape_in_the_summary(tmp_path, runner, cli):
    key, folder = write_key_and_answers(tmp_path, runner, cli, {"a\u202ebc.json": {"softmax_raw": [[1, 0]]}})
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    assert r.exit_code in (0, 1), r.output
    text = (folder / "summary.csv").read_text(encoding="utf-8")
    assert "\u202e" not in text and "a\\u202ebc.json" in text


@pytest.mark.parametrize("char", BIDI)
@pytest.mark.parametrize(
    "check",
    [safetext.check_line, safetext.check_paragraph, safetext.check_prose, safetext.check_title, safetext.check_label],
)
def test_every_user_text_check_refuses_bidi_controls_naming_the_field(check, char):
    with pytest.raises(safetext.TextError, match="bidirectional") as info:
        check(f"ab{char}c", field="course")
    assert "course" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("option", ["--title"])
def test_bidi_control_in_the_title_option_is_refused(runner, cli, tmp_path, option):
    r = runner.invoke(cli, ["build", option, "Quiz \u202eevil", "-o", str(tmp_path / "o")])
    line = one_line_error(r)
    assert "--title" in line and "bidirectional" in line and not (tmp_path / "o").exists()


def test_bidi_control_in_a_spec_course_is_refused_with_its_line(runner, cli, tmp_path):
    spec = tmp_path / "exam.toml"
    spec.write_text('title = "Quiz"\ncourse = "CS \u2067101"\n[[sections]]\nkind = "attention"\n', encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "o")])
    line = one_line_error(r)
    assert "course" in line and "bidirectional" in line and "line 2" in line
