"""Writes are all or nothing: every target checked before any is replaced,
a failed rename rolled back, links never followed, logs never overwritten
without --force, and every error names its path."""

from __future__ import annotations

import os

import pytest

from common import one_line_error
from worksheet.policy.errors import OutputError
from worksheet.policy.files import write_all

KEYS = ["worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json"]


def snapshot(folder) -> dict:
    """Every entry of ``folder``: file contents, link targets, folders."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir",)
        else:
            out[rel] = ("file", p.read_bytes())
    return out


def old_output(folder):
    folder.mkdir()
    for name in KEYS:
        (folder / name).write_text(f"old {name}")


def test_a_folder_in_the_way_changes_nothing_and_is_named(runner, cli, tmp_path):
    out = tmp_path / "out"
    old_output(out)
    (out / "worksheet.tex").unlink()
    (out / "worksheet.tex").mkdir()
    before = snapshot(out)
    line = one_line_error(runner.invoke(cli, ["build", "-o", str(out), "--force"]))
    assert str(out / "worksheet.tex") in line and "folder" in line
    assert snapshot(out) == before  # worksheet.md and -key.md keep their old content


def test_a_failed_rename_puts_back_every_file_already_replaced(tmp_path, monkeypatch):
    old_output(tmp_path / "out")
    out = tmp_path / "out"
    before = snapshot(out)
    real = os.replace
    renamed = []

    def failing(src, dst):
        if str(src).endswith(".tmp"):
            renamed.append(dst)
            if len(renamed) == 3:  # the third file: after two were replaced
                raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OutputError, match="cannot write .*worksheet.tex: No space left on device"):
        write_all({out / n: f"new {n}" for n in KEYS}, force=True)
    monkeypatch.setattr(os, "replace", real)
    assert snapshot(out) == before  # the first two are back; no temporary or backup file is left


def test_a_dangling_link_is_refused_without_force(runner, cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "worksheet.md").symlink_to(tmp_path / "elsewhere.md")
    before = snapshot(out)
    line = one_line_error(runner.invoke(cli, ["build", "-o", str(out)]))
    assert str(out / "worksheet.md") in line and "symbolic link" in line
    assert snapshot(out) == before and not (tmp_path / "elsewhere.md").exists()


def test_with_force_a_link_is_replaced_not_followed(runner, cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "precious.md"
    target.write_text("keep me")
    (out / "worksheet.md").symlink_to(target)
    (out / "worksheet-key.md").symlink_to(tmp_path / "dangling.md")
    r = runner.invoke(cli, ["build", "-o", str(out), "--force"])
    assert r.exit_code == 0, r.output
    assert not (out / "worksheet.md").is_symlink() and "Seed" in (out / "worksheet.md").read_text()
    assert not (out / "worksheet-key.md").is_symlink()
    assert target.read_text() == "keep me" and not (tmp_path / "dangling.md").exists()


def _failing_latex(monkeypatch):
    from worksheet.render import pdf

    def fail(sources, workers=None, progress=None):
        name = next(iter(sources))
        raise pdf.LatexError(
            f"LaTeX failed on {name}: ! Undefined control sequence.",
            tex_name=name,
            log="the new log",
            source=sources[name],
        )

    monkeypatch.setattr(pdf, "compile_all", fail)


def test_a_failed_latex_run_keeps_an_existing_log_without_force(runner, cli, tmp_path, monkeypatch):
    _failing_latex(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    (out / "worksheet.log").write_text("my own log")
    line = one_line_error(runner.invoke(cli, ["build", "--format", "pdf", "-o", str(out)]))
    assert "LaTeX failed" in line and str(out / "worksheet.log") in line and "--force" in line
    assert (out / "worksheet.log").read_text() == "my own log"


def test_a_failed_latex_run_writes_its_log_with_force(runner, cli, tmp_path, monkeypatch):
    _failing_latex(monkeypatch)
    out = tmp_path / "out"
    out.mkdir()
    (out / "worksheet.log").write_text("my own log")
    line = one_line_error(runner.invoke(cli, ["build", "--format", "pdf", "-o", str(out), "--force"]))
    assert f"log kept in {out / 'worksheet.log'}" in line
    assert (out / "worksheet.log").read_text() == "the new log"


def test_a_file_where_the_folder_should_be_is_named(runner, cli, tmp_path):
    (tmp_path / "out").write_text("a file")
    line = one_line_error(runner.invoke(cli, ["build", "-o", str(tmp_path / "out")]))
    assert str(tmp_path / "out") in line
    assert (tmp_path / "out").read_text() == "a file"
