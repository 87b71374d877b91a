"""Answers bound to their key, keys read as input, equal scales, and the
messages and exit codes of template, check and build --variant (CliRunner)."""

from __future__ import annotations

import json
import re
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest

from tests.common import one_line_error
from worksheet.check import read_key

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def exam(tmp_path_factory):
    """A 3-variant build of attention and layer-norm: its key and blank templates."""
    from click.testing import CliRunner

    from worksheet.cli import main

    out = tmp_path_factory.mktemp("exam")
    r = CliRunner().invoke(
        main, ["build", "attention", "layer-norm", "--variants", "3", "--seed", "5", "--format", "json", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["template", str(out / "worksheet.json"), "-o", str(out / "answers")])
    assert r.exit_code == 0, r.output
    return out


def _filled(exam, vid: str, tmp_path: Path, *, variant: str | None = None) -> Path:
    """The template of variant ``vid`` with every cell the key's value (named ``variant``)."""
    key = read_key(exam / "worksheet.json")
    text = (exam / "answers" / f"worksheet-answers-{vid}.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)
    for p in key.problems(vid):
        for s in p.steps:
            table[str(p.number)][s.name] = [[repr(float(x)) for x in row] for row in s.value]
    if variant is not None:
        table["variant"] = variant
    path = tmp_path / f"{vid}.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


# ---------------------------------------------------------------- fingerprints
def test_every_key_and_variant_carries_a_stable_fingerprint(exam, runner, cli, tmp_path):
    data = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))
    prints = [v["fingerprint"] for v in data["variants"]]
    assert len(set(prints)) == 3 and all(len(p) == 12 for p in prints) and data["fingerprint"] not in prints
    again = tmp_path / "again"
    r = runner.invoke(
        cli,
        ["build", "attention", "layer-norm", "--variants", "3", "--seed", "5", "--format", "json", "-o", str(again)],
    )
    assert r.exit_code == 0
    assert (again / "worksheet.json").read_bytes() == (exam / "worksheet.json").read_bytes()
    # a single sheet's key has its own, and the same as a variant reprinted alone
    r = runner.invoke(
        cli,
        [
            "build",
            "attention",
            "layer-norm",
            "--variants",
            "3",
            "--seed",
            "5",
            "--variant",
            "v02",
            "--format",
            "json",
            "-o",
            str(again),
            "--force",
        ],
    )
    assert r.exit_code == 0, r.output
    alone = json.loads((again / "worksheet-v02.json").read_text(encoding="utf-8"))
    assert alone["variants"][0]["fingerprint"] == prints[1]


def test_the_template_writes_the_fingerprint_and_the_variant(exam):
    data = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))
    for v in data["variants"]:
        table = tomllib.loads((exam / "answers" / f"worksheet-answers-{v['id']}.toml").read_text(encoding="utf-8"))
        assert table["variant"] == v["id"] and table["fingerprint"] == v["fingerprint"]


def test_a_filled_template_is_marked_and_another_variants_is_refused(exam, runner, cli, tmp_path):
    key = str(exam / "worksheet.json")
    r = runner.invoke(cli, ["check", key, str(_filled(exam, "v02", tmp_path))])
    assert r.exit_code == 0, r.output
    line = one_line_error(runner.invoke(cli, ["check", key, str(_filled(exam, "v02", tmp_path, variant="v03"))]))
    assert "made for variant 'v02' of this key, but it names variant 'v03'" in line


def test_a_file_for_another_key_is_refused_naming_what_it_was_made_for(exam, runner, cli, tmp_path):
    other = tmp_path / "other"
    assert (
        runner.invoke(cli, ["build", "attention", "--seed", "9", "--format", "json", "-o", str(other)]).exit_code == 0
    )
    line = one_line_error(
        runner.invoke(cli, ["check", str(other / "worksheet.json"), str(_filled(exam, "v01", tmp_path))])
    )
    fp = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))["variants"][0]["fingerprint"]
    assert "made for another key" in line and fp in line and "variant 'v01'" in line


def test_a_hand_written_file_needs_no_fingerprint_but_a_variant_that_exists(exam, runner, cli, tmp_path):
    key = str(exam / "worksheet.json")
    path = _filled(exam, "v01", tmp_path)
    table = json.loads(path.read_text(encoding="utf-8"))
    del table["fingerprint"]
    path.write_text(json.dumps(table), encoding="utf-8")
    assert runner.invoke(cli, ["check", key, str(path)]).exit_code == 0
    table["variant"] = "v9"
    path.write_text(json.dumps(table), encoding="utf-8")
    assert "the key has no variant 'v9'" in one_line_error(runner.invoke(cli, ["check", key, str(path)]))


def test_class_marking_reports_a_foreign_file_in_its_row_and_marks_the_rest(exam, runner, cli, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for vid in ("v01", "v02"):
        _filled(exam, vid, folder)
    (folder / "v01.json").rename(folder / "alice.json")
    bad = _filled(exam, "v03", tmp_path, variant="v01")
    bad.rename(folder / "bob.json")
    r = runner.invoke(cli, ["check", str(exam / "worksheet.json"), "--answers-dir", str(folder)])
    assert r.exit_code == 1, r.output
    assert re.search(r"bob\.json +error: .*made for variant 'v03'", r.output), r.output
    assert "alice.json" in r.output and "v02.json" in r.output
    summary = (folder / "summary.csv").read_text(encoding="utf-8")
    assert "made for variant 'v03'" in summary
    (folder / "bob.json").unlink()
    r = runner.invoke(cli, ["check", str(exam / "worksheet.json"), "--answers-dir", str(folder), "--force"])
    assert r.exit_code == 0, r.output  # every file could be marked


def test_a_single_file_keeps_exit_1_when_marks_were_lost(exam, runner, cli, tmp_path):
    path = _filled(exam, "v01", tmp_path)
    table = json.loads(path.read_text(encoding="utf-8"))
    table["1"]["scores"] = [["0"] * len(table["1"]["scores"][0])] * len(table["1"]["scores"])
    path.write_text(json.dumps(table), encoding="utf-8")
    assert runner.invoke(cli, ["check", str(exam / "worksheet.json"), str(path)]).exit_code == 1


# ---------------------------------------------------------------- hostile keys
HOSTILE_IDS = ["../../../escaped", "v\x1b[2J", "CON", "nul", "a/b", "..", "", " v1", "v" * 41, "x\ny"]


@pytest.mark.parametrize("vid", HOSTILE_IDS, ids=[repr(v)[:20] for v in HOSTILE_IDS])
@pytest.mark.parametrize("command", ["template", "check"])
def test_a_hostile_variant_id_is_refused_and_nothing_is_written(exam, runner, cli, tmp_path, monkeypatch, vid, command):
    data = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))
    data["variants"][0]["id"] = vid
    key = tmp_path / "key" / "hostile.json"
    key.parent.mkdir()
    key.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    if command == "template":
        args = ["template", str(key), "-o", str(tmp_path / "out" / "ans")]
    else:
        args = ["check", str(key), str(_filled(exam, "v02", tmp_path))]
    line = one_line_error(runner.invoke(cli, args))
    assert "variant 1: the id" in line and "\x1b" not in line and "\n" not in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["key", "hostile.json", "v02.json"][: 3 if command == "check" else 2]
    )


def test_a_hostile_step_name_or_kind_is_refused(exam, runner, cli, tmp_path):
    data = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))
    for where, value in (("name", "x\n[evil]"), ("kind", "../k")):
        bad = json.loads(json.dumps(data))
        if where == "name":
            bad["variants"][0]["problems"][0]["steps"][0]["name"] = value
        else:
            bad["variants"][0]["problems"][0]["kind"] = value
        key = tmp_path / f"{where}.json"
        key.write_text(json.dumps(bad), encoding="utf-8")
        line = one_line_error(runner.invoke(cli, ["template", str(key), "-o", str(tmp_path / "o")]))
        assert "problem 1 of variant v01" in line
        assert not (tmp_path / "o").exists()


def test_a_title_from_the_key_cannot_add_lines_to_an_answer_file(exam, runner, cli, tmp_path):
    data = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))
    data["variants"][0]["problems"][0]["title"] = 'T\nstudent = "evil"\n[9]'
    key = tmp_path / "t.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    assert runner.invoke(cli, ["template", str(key), "-o", str(tmp_path / "o")]).exit_code == 0
    table = tomllib.loads((tmp_path / "o" / "t-answers-v01.toml").read_text(encoding="utf-8"))
    assert table["student"] == "" and "9" not in table


NINES = "9" * 5000


@pytest.mark.parametrize("variant", [NINES, "v" + NINES, "x" * 5000])
def test_an_oversized_variant_is_one_line(runner, cli, tmp_path, variant):
    line = one_line_error(
        runner.invoke(cli, ["build", "attention", "--variants", "3", "--variant", variant, "-o", str(tmp_path)])
    )
    assert "--variant" in line and len(line) < 300 and "Exceeds" not in line


def test_an_oversized_number_in_a_key_is_one_line(runner, cli, tmp_path):
    key = tmp_path / "k.json"
    key.write_text('{"variants": [{"id": ' + NINES + ', "problems": []}]}', encoding="utf-8")
    for args in (["template", str(key), "-o", str(tmp_path / "o")], ["check", str(key), str(key)]):
        line = one_line_error(runner.invoke(cli, args))
        assert "5000 digits" in line


# ---------------------------------------------------------------- --variant without the count
def test_variant_takes_its_count_from_the_key_in_the_folder(runner, cli, tmp_path):
    args = ["build", "attention", "--seed", "3", "--format", "json,md", "-o", str(tmp_path)]
    assert runner.invoke(cli, [*args, "--variants", "12", "--split"]).exit_code == 0
    split = (tmp_path / "worksheet-v07.md").read_bytes()
    (tmp_path / "worksheet-v07.md").unlink()
    (tmp_path / "worksheet-v07-key.md").unlink()
    (tmp_path / "worksheet-v07.json").unlink()
    r = runner.invoke(
        cli, ["build", "attention", "--seed", "3", "--format", "md", "-o", str(tmp_path), "--variant", "v07"]
    )
    assert one_line_error(r) and "worksheet.json" in r.stderr  # the split build wrote no combined key
    assert runner.invoke(cli, [*args, "--variants", "12", "--force"]).exit_code == 0
    r = runner.invoke(
        cli, ["build", "attention", "--seed", "3", "--format", "md", "-o", str(tmp_path), "--variant", "v07"]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "worksheet-v07.md").read_bytes() == split
    r = runner.invoke(
        cli, ["build", "attention", "--seed", "4", "--format", "md", "-o", str(tmp_path), "--variant", "v07", "--force"]
    )
    assert "another --seed" in one_line_error(r)


# ---------------------------------------------------------------- messages
def test_key_and_answers_swapped_says_so(exam, runner, cli, tmp_path):
    path = _filled(exam, "v01", tmp_path).with_suffix(".toml")
    path.write_text('variant = "v01"\n', encoding="utf-8")
    line = one_line_error(runner.invoke(cli, ["check", str(path), str(exam / "worksheet.json")]))
    assert "KEY and ANSWERS are swapped" in line


def test_out_pointing_at_a_file_or_into_proc_says_what_is_true(exam, runner, cli, tmp_path):
    a_file = tmp_path / "afile"
    a_file.write_text("x", encoding="utf-8")
    line = one_line_error(runner.invoke(cli, ["template", str(exam / "worksheet.json"), "-o", str(a_file)]))
    assert f"{a_file} is a file, not a folder" in line
    line = one_line_error(runner.invoke(cli, ["template", str(exam / "worksheet.json"), "-o", str(a_file / "sub")]))
    assert f"{a_file} is a file, not a folder" in line
    if Path("/proc/self").is_dir():
        line = one_line_error(runner.invoke(cli, ["template", str(exam / "worksheet.json"), "-o", "/proc/x"]))
        assert "does not allow new files in /proc" in line


@pytest.mark.parametrize(
    "text, hint",
    [
        ("point = 5", "did you mean 'points'?"),
        ("seq_lne = 3", "did you mean 'seq_len'?"),
        ("casual = true", "did you mean 'causal'?"),
    ],
)
def test_a_misspelt_spec_key_gets_a_did_you_mean(runner, cli, tmp_path, text, hint):
    spec = tmp_path / "s.toml"
    spec.write_text(f'title = "x"\n[[sections]]\nkind = "attention"\n{text}\n', encoding="utf-8")
    line = one_line_error(runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "o")]))
    assert hint in line and "(line 4)" in line
    spec.write_text('titel = "x"\n[[sections]]\nkind = "attention"\n', encoding="utf-8")
    assert "did you mean 'title'?" in one_line_error(runner.invoke(cli, ["build", "--spec", str(spec)]))


# ---------------------------------------------------------------- equal scales
def test_45_variants_of_the_midterm_have_the_same_maximum_and_split(runner, cli, tmp_path):
    r = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(EXAMPLES / "midterm.toml"),
            "--variants",
            "45",
            "--format",
            "json",
            "-o",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    key = read_key(tmp_path / "midterm.json")
    spec = tomllib.loads((EXAMPLES / "midterm.toml").read_text(encoding="utf-8"))
    splits = set()
    for vid in key.variants:
        parts = []
        for p, section in zip(key.problems(vid), spec["sections"]):
            shares = p.shares()
            assert sum(shares.values()) == section["points"]  # the maximum: the section's points
            if p.kind == "find-the-mistake":  # the parts: the step, the mistake, the corrections
                corrected = sum(v for n, v in shares.items() if n not in ("step", "mistake", "corrections"))
                parts.append((p.kind, shares["step"], shares["mistake"], shares["corrections"], corrected))
            else:
                parts.append((p.kind, tuple(sorted(shares.items()))))
        splits.add(tuple(parts))
    assert len(splits) == 1
    (parts,) = splits
    ftm = next(p for p in parts if p[0] == "find-the-mistake")
    assert ftm[1:] == (Fraction(2), Fraction(2), Fraction(2), Fraction(4))


def test_totals_print_as_the_specs_points(runner, cli, tmp_path):
    r = runner.invoke(
        cli,
        ["build", "--spec", str(EXAMPLES / "midterm.toml"), "--variants", "6", "--format", "json", "-o", str(tmp_path)],
    )
    assert r.exit_code == 0
    assert runner.invoke(cli, ["template", str(tmp_path / "midterm.json"), "-o", str(tmp_path / "a")]).exit_code == 0
    totals = set()
    for f in sorted((tmp_path / "a").iterdir()):
        out = runner.invoke(cli, ["check", str(tmp_path / "midterm.json"), str(f)]).output
        totals.add(out.strip().splitlines()[-1])
    assert len(totals) == 1
    (total,) = totals
    assert total.endswith("(of 50)") and "." not in total.split("(of")[0], total


@pytest.mark.parametrize("vid", ["../../../escaped", "v\x1b[2J", "CON"], ids=["path", "escape", "device"])
def test_variant_refuses_a_hostile_key_in_the_folder(exam, runner, cli, tmp_path, vid):
    data = json.loads((exam / "worksheet.json").read_text(encoding="utf-8"))
    data["variants"][0]["id"] = vid
    out = tmp_path / "out"
    out.mkdir()
    (out / "worksheet.json").write_text(json.dumps(data), encoding="utf-8")
    r = runner.invoke(
        cli, ["build", "attention", "layer-norm", "--seed", "5", "--format", "md", "-o", str(out), "--variant", "v02"]
    )
    line = one_line_error(r)
    assert "variant 1: the id" in line and "\x1b" not in line
    assert sorted(p.name for p in out.iterdir()) == ["worksheet.json"]
    assert not (tmp_path / "escaped.md").exists()
