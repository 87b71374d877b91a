"""Issue 10, point 5 (templates): a lecturer's template that fails gives one
line naming the template file (and line), exit 2, and writes nothing.

Templates are trusted code (they run with the full power of Jinja2); these
tests are about clear errors, and about the loader never reading a file
outside the templates folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from common import one_line_error
from worksheet.build import build_document
from worksheet.render import get
from worksheet.render.base import TemplateError

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
SHEET = '{% extends "document.md.j2" %}\n{% block step %}\n'
END = "\n{% endblock %}\n"


def templates_with(tmp_path: Path, files: dict[str, bytes | str]) -> Path:
    mine = tmp_path / "mine"
    shutil.copytree(TEMPLATES, mine)
    for name, content in files.items():
        path = mine / "md" / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
    return mine


def build_fails(runner, cli, tmp_path, files, *extra) -> str:
    mine = templates_with(tmp_path, files)
    out = tmp_path / "out"
    res = runner.invoke(cli, ["build", "--format", "md", "--templates", str(mine), "-o", str(out), *extra])
    line = one_line_error(res)
    assert not out.exists() or not any(out.iterdir())
    return line


def test_division_by_zero_names_the_template_and_line(runner, cli, tmp_path):
    line = build_fails(runner, cli, tmp_path, {"sheet.md.j2": SHEET + "{{ 1/0 }}" + END})
    assert "sheet.md.j2, line 3" in line and "ZeroDivisionError" in line


@pytest.mark.parametrize("target", ["../../etc/passwd", "../md/../../../etc/passwd", "/etc/passwd"])
def test_include_outside_the_templates_folder_is_refused(runner, cli, tmp_path, target):
    line = build_fails(runner, cli, tmp_path, {"sheet.md.j2": SHEET + f"{{% include '{target}' %}}" + END})
    assert "sheet.md.j2, line 3" in line and "templates may include only templates of that folder" in line
    assert "root:" not in line


def test_include_of_a_missing_template_names_it(runner, cli, tmp_path):
    line = build_fails(runner, cli, tmp_path, {"sheet.md.j2": SHEET + "{% include 'nosuch.md.j2' %}" + END})
    assert "sheet.md.j2, line 3: template 'nosuch.md.j2' is not in" in line


def test_template_that_is_not_utf8_is_named(runner, cli, tmp_path):
    line = build_fails(runner, cli, tmp_path, {"sheet.md.j2": SHEET.encode() + b"caf\xe9" + END.encode()})
    assert "sheet.md.j2: not UTF-8 text (byte" in line


def test_included_template_that_is_not_utf8_names_the_include(runner, cli, tmp_path):
    line = build_fails(
        runner, cli, tmp_path, {"sheet.md.j2": SHEET + "{% include 'part.md.j2' %}" + END, "part.md.j2": b"\xff\xfe"}
    )
    assert "sheet.md.j2, line 3" in line and "not UTF-8" in line


def test_parent_template_that_is_not_utf8_is_named(runner, cli, tmp_path):
    line = build_fails(runner, cli, tmp_path, {"document.md.j2": b"{% block doc %}\xff{% endblock %}"})
    assert "document.md.j2: not UTF-8 text" in line


def test_templates_that_include_each_other_without_end(runner, cli, tmp_path):
    line = build_fails(
        runner,
        cli,
        tmp_path,
        {"sheet.md.j2": SHEET + "{% include 'loop.md.j2' %}" + END, "loop.md.j2": "x{% include 'loop.md.j2' %}"},
    )
    assert "loop.md.j2, line 1" in line and "without end" in line


def test_macro_that_calls_itself_without_end(runner, cli, tmp_path):
    body = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(1) }}"
    line = build_fails(runner, cli, tmp_path, {"sheet.md.j2": SHEET + body + END})
    assert "sheet.md.j2, line 3" in line and "without end" in line


def test_syntax_error_in_an_included_template_is_named(runner, cli, tmp_path):
    line = build_fails(
        runner, cli, tmp_path, {"sheet.md.j2": SHEET + "{% include 'part.md.j2' %}" + END, "part.md.j2": "{% if %}"}
    )
    assert "part.md.j2" in line and "line 1" in line


def test_undefined_name_is_named_with_its_line(runner, cli, tmp_path):
    line = build_fails(runner, cli, tmp_path, {"sheet.md.j2": SHEET + "\n{{ nothing.here }}" + END})
    assert "sheet.md.j2, line 4" in line and "'nothing' is undefined" in line


def test_a_failing_tex_template_is_named_too(runner, cli, tmp_path):
    mine = templates_with(tmp_path, {})
    (mine / "tex" / "key.tex.j2").write_text(
        '((* extends "document.tex.j2" *))\n((* block step *))\n((( 1/0 )))\n((* endblock *))\n', encoding="utf-8"
    )
    res = runner.invoke(cli, ["build", "--format", "tex", "--templates", str(mine), "-o", str(tmp_path / "out")])
    line = one_line_error(res)
    assert "key.tex.j2, line 3" in line


def test_template_failure_with_variants_on_several_processes(runner, cli, tmp_path):
    line = build_fails(
        runner, cli, tmp_path, {"sheet.md.j2": SHEET + "{{ 1/0 }}" + END}, "--variants", "3", "--jobs", "2"
    )
    assert "sheet.md.j2, line 3" in line


def test_a_bug_in_worksheet_itself_is_not_blamed_on_the_template(monkeypatch):
    """An exception raised by worksheet's own code under a filter stays an
    exception (a bug to report), not a 'template error'."""
    renderer = get("md")

    def broken(self, s):
        raise KeyError("bug in worksheet")

    monkeypatch.setattr(type(renderer), "text", broken)
    with pytest.raises(KeyError):
        renderer.render(build_document(["softmax-scaling"]), key=True)


def test_the_loader_refuses_parent_paths():
    """Jinja's FileSystemLoader splits names on / and refuses '..' (the
    property the include tests rely on)."""
    import jinja2

    env = get("md").env
    for name in ("../md/sheet.md.j2", "../../etc/passwd"):
        with pytest.raises(jinja2.TemplateNotFound):
            env.get_template(name)


def test_renderer_loading_a_non_utf8_template_raises_template_error(tmp_path):
    mine = templates_with(tmp_path, {"key.md.j2": b"\xff"})
    with pytest.raises(TemplateError, match="key.md.j2: not UTF-8"):
        get("md", mine).render(build_document(["softmax-scaling"]), key=True)
