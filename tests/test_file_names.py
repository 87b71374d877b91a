"""Issue 17 §2, file names: a base name that is not a plain, portable file
name is refused with one line, and nothing is ever written outside --out."""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from common import one_line_error
from worksheet.policy.errors import WorksheetError
from worksheet.policy.safetext import TextError, check_file_name, file_name_problem

BAD = [
    "a/b",
    "../x",
    "..",
    ".",
    "a\\b",
    "/etc/x",
    "x\x00y",
    "x\ny",
    "a\x1bb",
    "a\u202eb",
    "a<b",
    "a>b",
    "a:b",
    'a"b',
    "a|b",
    "a?b",
    "a*b",
    "name.",
    "name ",
    " name",
    "CON",
    "con",
    "Prn",
    "aux.tex",
    "NUL",
    "COM1",
    "com9",
    "LPT1",
    "lpt9.md",
    "COM\u00b9",
    "x" * 101,
    ".hidden",
    "a..b",
]
GOOD = ["worksheet", "midterm-2024", "Quiz 3", "exam_v2", "Übung", "con1", "console", "a.b", "COM10", "LPT0"]


@pytest.mark.parametrize("name", BAD)
def test_an_unsafe_name_is_refused_on_the_command_line_and_nothing_is_written(runner, cli, tmp_path, name):
    out = tmp_path / "out"
    before = set(os.listdir(tmp_path))
    r = runner.invoke(cli, ["build", "--name", name, "--format", "md,json,moodle", "-o", str(out)])
    line = one_line_error(r)
    assert "--name" in line
    assert not out.exists() and set(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("name", GOOD)
def test_a_plain_portable_name_is_accepted(name):
    assert check_file_name(name) == name


@pytest.mark.parametrize("name", ["a/b", "..", "CON", "a:b"])
def test_an_unsafe_name_in_a_spec_is_refused_with_its_line(runner, cli, tmp_path, name):
    spec = tmp_path / "exam.toml"
    spec.write_text(
        f'title = "Quiz"\nname = {name!r}\n[[sections]]\nkind = "attention"\n'.replace("'", '"'), encoding="utf-8"
    )
    r = runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "o")])
    line = one_line_error(r)
    assert "name" in line and "line 2" in line and not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["../x", "a/b", "NUL"])
def test_the_library_refuses_an_unsafe_name_too(tmp_path, name):
    from worksheet.build import build_document, render_documents, write_documents

    doc = build_document(["softmax-scaling"], seed=1)
    with pytest.raises(WorksheetError, match="name"):
        write_documents([doc], ["md"], tmp_path / "o", name=name)
    with pytest.raises(WorksheetError, match="name"):
        render_documents([doc], ["md"], name=name)
    assert not (tmp_path / "o").exists() and not (tmp_path / "x.md").exists()


def test_an_unsafe_name_with_variants_and_split_writes_nothing(runner, cli, tmp_path):
    r = runner.invoke(
        cli,
        [
            "build",
            "softmax-scaling",
            "--variants",
            "2",
            "--split",
            "--name",
            "../esc",
            "--format",
            "md",
            "-o",
            str(tmp_path / "o"),
        ],
    )
    one_line_error(r)
    assert list(tmp_path.iterdir()) == []


@given(st.text(max_size=12))
@example("..")
@example("a/../b")
@example("CON.tar.gz")
@example("x\u2066")
def test_every_accepted_name_is_one_plain_portable_file_name(name):
    if file_name_problem(name) is not None:
        with pytest.raises(TextError):
            check_file_name(name)
        return
    for suffix in ("-key.md", "-v01.json", "-moodle.xml", "-variants.csv"):
        path = name + suffix
        assert os.path.basename(path) == path and os.path.normpath(path) == path
    assert not set(name) & set('<>:"/\\|?*') and name.isprintable() and not name.startswith(".")
    assert name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL"}
