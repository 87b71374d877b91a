"""Print and files (issue 29 §6): --duplex pads each variant to an even page
count and the page map says so; a build that adds a format keeps the page
map; a build whose files are already there byte for byte is "up to date";
``solve -o NAME`` adds the format's extension."""

from __future__ import annotations

import csv
import io
import os
import subprocess

import pytest

from pdf_util import page_count, pdf_text, require_latex, require_poppler
from worksheet.policy.errors import OutputError
from worksheet.policy.files import same_content, write_changed


def _map(folder, name="worksheet"):
    return list(csv.DictReader(io.StringIO((folder / f"{name}-variants.csv").read_text(encoding="utf-8"))))


def _page_text(pdf, page):
    exe = require_poppler("pdftotext")
    return subprocess.run([exe, "-f", str(page), "-l", str(page), str(pdf), "-"], capture_output=True, text=True).stdout


def _range(cell):
    first, _, last = cell.partition("-")
    return int(first), int(last or first)


# ---------------------------------------------------------------- up to date


def test_the_readme_first_build_runs_twice_and_the_second_is_up_to_date(runner, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = runner.invoke(cli, ["build"])
    assert first.exit_code == 0, first.output
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tmp_path / "output").iterdir()}
    again = runner.invoke(cli, ["build"])
    assert again.exit_code == 0, again.output
    assert sorted(again.stdout.splitlines()) == sorted(f"up to date: output/{n}" for n in before)
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tmp_path / "output").iterdir()}
    assert after == before  # not even rewritten


def test_other_content_needs_force_and_the_error_names_the_file(runner, cli, tmp_path):
    assert runner.invoke(cli, ["build", "-o", str(tmp_path)]).exit_code == 0
    key = (tmp_path / "worksheet-key.md").read_text()
    r = runner.invoke(cli, ["build", "--seed", "2", "-o", str(tmp_path)])
    assert r.exit_code == 2 and r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and "already exists with other content" in line and "use --force" in line
    assert "worksheet.md" in line and "(and 4 more)" in line  # md, key md, tex, key tex, json all differ
    assert (tmp_path / "worksheet-key.md").read_text() == key  # nothing written
    r = runner.invoke(cli, ["build", "--seed", "2", "-o", str(tmp_path), "--force"])
    assert r.exit_code == 0 and (tmp_path / "worksheet-key.md").read_text() != key


def test_a_new_format_beside_an_up_to_date_build_is_written_without_force(runner, cli, tmp_path):
    assert runner.invoke(cli, ["build", "--format", "md", "-o", str(tmp_path)]).exit_code == 0
    r = runner.invoke(cli, ["build", "--format", "md,json", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert f"up to date: {tmp_path / 'worksheet.md'}" in r.stdout and f"wrote {tmp_path / 'worksheet.json'}" in r.stdout


def test_same_content_is_false_for_a_link_a_folder_and_other_bytes(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("x")
    (tmp_path / "link.md").symlink_to(f)
    (tmp_path / "dir.md").mkdir()
    assert same_content(f, "x") and same_content(f, b"x")
    assert not same_content(f, "y") and not same_content(f, "xx")
    assert not same_content(tmp_path / "link.md", "x")  # a link is never "up to date": it would be replaced
    assert not same_content(tmp_path / "dir.md", "x") and not same_content(tmp_path / "none.md", "x")


def test_write_changed_is_all_or_nothing(tmp_path):
    (tmp_path / "same.md").write_text("same")
    (tmp_path / "other.md").write_text("old")
    files = {tmp_path / "same.md": "same", tmp_path / "other.md": "new", tmp_path / "new.md": "n"}
    with pytest.raises(OutputError, match="other.md already exists with other content"):
        write_changed(files)
    assert not (tmp_path / "new.md").exists() and (tmp_path / "other.md").read_text() == "old"
    result = write_changed(files, force=True)
    assert list(result) == list(files) and result.unchanged == [tmp_path / "same.md"]
    assert (tmp_path / "other.md").read_text() == "new" and (tmp_path / "new.md").read_text() == "n"


# ---------------------------------------------------------------- solve -o NAME


def test_solve_adds_the_format_extension_to_a_name_without_one(runner, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for fmt, expected in (("md", "tm.md"), ("json", "tm.json"), ("html", "tm.html"), ("tex", "tm.tex")):
        r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", fmt, "-o", "tm"])
        assert r.exit_code == 0 and r.stdout == f"wrote {expected}\n", r.output
        assert (tmp_path / expected).is_file()
    assert not (tmp_path / "tm").exists()
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "md", "-o", "notes.txt"])
    assert r.exit_code == 0 and (tmp_path / "notes.txt").is_file()  # a name with an extension is kept
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "-o", "-"])
    assert r.exit_code == 0 and r.stdout.startswith("# Worked solution")  # - is still standard output


def test_solve_pdf_to_a_bare_name_writes_name_pdf(runner, cli, tmp_path, monkeypatch):
    require_latex()
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(cli, ["solve", "--example", "thinking-machines", "--format", "pdf", "-o", "tm"])
    assert r.exit_code == 0, r.output
    assert os.listdir(tmp_path) == ["tm.pdf"] and (tmp_path / "tm.pdf").read_bytes().startswith(b"%PDF")


# ---------------------------------------------------------------- duplex


def _exam(folder, *extra):
    return ["build", "attention", "layer-norm", "--variants", "3", "--seed", "5", "-o", str(folder), *extra]


def test_duplex_starts_every_variant_on_an_odd_page_and_the_map_says_so(runner, cli, tmp_path):
    require_latex()
    r = runner.invoke(cli, _exam(tmp_path, "--format", "pdf", "--duplex"))
    assert r.exit_code == 0, r.output
    rows = _map(tmp_path)
    assert [row["duplex"] for row in rows] == ["yes"] * 3
    for pdf, column in (("worksheet.pdf", "pages"), ("worksheet-key.pdf", "key_pages")):
        ranges = [_range(row[column]) for row in rows]
        assert all(first % 2 == 1 and (last - first + 1) % 2 == 0 for first, last in ranges), ranges
        assert [first for first, _ in ranges[1:]] == [last + 1 for _, last in ranges[:-1]]  # no gap, no overlap
        assert page_count(tmp_path / pdf) == ranges[-1][1]
        for row, (first, _) in zip(rows, ranges):  # the page the map names is where the variant starts
            assert f"Variant {row['variant']} — page 1" in _page_text(tmp_path / pdf, first)
    plain = tmp_path / "plain"
    assert runner.invoke(cli, _exam(plain, "--format", "pdf")).exit_code == 0
    unpadded = [_range(row["pages"]) for row in _map(plain)]
    assert "duplex" not in _map(plain)[0]
    assert all((last - first + 1) % 2 == 1 for first, last in unpadded)  # 3 pages each: every variant padded
    assert pdf_text(tmp_path / "worksheet.pdf").count("This page is intentionally left blank.") == 3
    assert "intentionally left blank" not in pdf_text(plain / "worksheet.pdf")


def test_duplex_from_a_spec_and_its_bad_value(runner, cli, tmp_path):
    spec = tmp_path / "exam.toml"
    spec.write_text('duplex = true\nvariants = 2\n[[sections]]\nkind = "feed-forward"\n', encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "tex", "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    tex = (tmp_path / "o" / "worksheet.tex").read_text(encoding="utf-8")
    assert "\\newcommand{\\duplexpad}" in tex and tex.count("\\duplexpad{") == 2  # defined, then once per variant
    r = runner.invoke(cli, ["build", "--spec", str(spec), "--no-duplex", "--format", "tex", "-o", str(tmp_path / "n")])
    assert r.exit_code == 0 and "duplexpad" not in (tmp_path / "n" / "worksheet.tex").read_text(encoding="utf-8")
    spec.write_text('duplex = "yes"\n[[sections]]\nkind = "feed-forward"\n', encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "duplex" in r.stderr and "true or false" in r.stderr
    assert not (tmp_path / "bad").exists()


def test_without_duplex_the_latex_is_as_before(runner, cli, tmp_path):
    r = runner.invoke(cli, _exam(tmp_path, "--format", "tex"))
    assert r.exit_code == 0 and "duplexpad" not in (tmp_path / "worksheet.tex").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the page map survives another format


def test_moodle_added_to_the_folder_of_a_pdf_exam_keeps_the_page_map(runner, cli, tmp_path):
    require_latex()
    assert runner.invoke(cli, _exam(tmp_path, "--format", "pdf,json", "--duplex")).exit_code == 0
    pages = _map(tmp_path)
    assert all(row["pages"] and row["key_pages"] for row in pages)
    r = runner.invoke(cli, _exam(tmp_path, "--format", "moodle"))  # no --force needed: the map is up to date
    assert r.exit_code == 0, r.output
    assert f"up to date: {tmp_path / 'worksheet-variants.csv'}" in r.stdout
    assert _map(tmp_path) == pages
    assert runner.invoke(cli, _exam(tmp_path, "--format", "moodle,md", "--force")).exit_code == 0
    assert _map(tmp_path) == pages
    # another exam (other seeds) in the same folder: the old pages are not its pages
    assert runner.invoke(cli, _exam(tmp_path, "--format", "moodle", "--seed", "6", "--force")).exit_code == 0
    assert all(row["pages"] == "" and row["key_pages"] == "" for row in _map(tmp_path))


def test_the_page_map_is_not_taken_when_its_pdfs_are_gone(runner, cli, tmp_path):
    require_latex()
    assert runner.invoke(cli, _exam(tmp_path, "--format", "pdf")).exit_code == 0
    (tmp_path / "worksheet.pdf").unlink()
    assert runner.invoke(cli, _exam(tmp_path, "--format", "md", "--force")).exit_code == 0
    assert all(row["pages"] == "" for row in _map(tmp_path))


def test_a_foreign_or_broken_page_map_is_replaced_not_read(tmp_path):
    from worksheet.build.page_map import previous_pages
    from worksheet.solution.document import Document

    docs = [Document("t", [], seed=11, variant="v01"), Document("t", [], seed=12, variant="v02")]
    (tmp_path / "w.pdf").write_bytes(b"%PDF")
    path = tmp_path / "w-variants.csv"
    path.write_text("variant,seed,pages,key_pages\nv01,11,1-2,1-3\nv02,12,3-4,4-6\n")
    assert previous_pages(path, docs, None, [tmp_path / "w.pdf"]) == (
        {1: (1, 2), 2: (3, 4)},
        {1: (1, 3), 2: (4, 6)},
        False,
    )
    for text in (
        "variant,seed,pages,key_pages\nv01,11,1-2,1-3\n",  # another number of variants
        "variant,seed,pages,key_pages\nv01,11,1-2,1-3\nv02,99,3-4,4-6\n",  # another seed
        "variant,seed,pages,key_pages\nv01,11,=1+2,1-3\nv02,12,3-4,4-6\n",  # not a page range
        "\x00\xff",
    ):
        path.write_text(text, encoding="latin-1")
        assert previous_pages(path, docs, None, [tmp_path / "w.pdf"]) is None
    assert previous_pages(tmp_path / "none.csv", docs, None, [tmp_path / "w.pdf"]) is None
