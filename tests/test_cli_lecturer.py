"""The CLI a lecturer expects (issue 19 §4): parameter errors before "output
exists"; an option no chosen kind takes names the kinds that take it;
``worksheet list KIND`` shows its parameters; every command's help has
examples and no summary is cut off; a progress bar on a terminal (LaTeX
included), one summary line without one; ``worksheet examples DIR``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
import pytest

from common import one_line_error
from worksheet import kinds

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["build", "solve", "check", "list", "template", "examples", "practice"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["build", "attention", "--seq-len", "99"], "--seq-len"),
        (["build", "attention:d-k=5"], "d_k"),
        (
            ["build", "attention", "--heads", "2"],
            "--heads does not apply to attention; it applies to multi-head-attention, encoder-block, decoder-block",
        ),
        (["build", "layer-norm", "--causal"], "--causal does not apply to layer-norm; it applies to attention"),
    ],
)
def test_parameter_errors_come_before_output_exists(tmp_path, runner, cli, args, message):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("worksheet.md", "worksheet-key.md", "worksheet.tex", "worksheet-key.tex", "worksheet.json"):
        (out / name).write_text("mine")
    line = one_line_error(runner.invoke(cli, [*args, "-o", str(out)]))
    assert message in line and "already exists" not in line, line
    assert (out / "worksheet.md").read_text() == "mine"


def test_an_option_applies_to_the_kinds_that_have_it(tmp_path, runner, cli):
    r = runner.invoke(
        cli, ["build", "attention", "multi-head-attention", "--heads", "2", "--format", "json", "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    assert "--heads does not apply" not in r.output


def test_solve_refuses_causal_for_a_kind_without_a_mask(tmp_path, runner, cli):
    (tmp_path / "x.toml").write_text("X = [[1, 2], [3, 5]]\n")
    line = one_line_error(runner.invoke(cli, ["solve", "layer-norm", "-i", str(tmp_path / "x.toml"), "--causal"]))
    assert "--causal does not apply to layer-norm" in line


@pytest.mark.parametrize("kind", ["attention", "softmax-scaling", "layer-norm", "lstm-cell"])
def test_list_kind_shows_parameters_ranges_defaults_modes_and_mistakes(runner, cli, kind):
    r = runner.invoke(cli, ["list", kind])
    assert r.exit_code == 0, r.output
    module = kinds.get(kind)
    for name in module.Params.field_names():
        if name != "numbers":
            assert re.search(rf"^  {name}\s+default ", r.output, re.M), name
    assert "Hand mode:" in r.output and "Mistakes 'worksheet check' names" in r.output
    assert "arithmetic-slip" in r.output


def test_list_kind_states_hand_and_calculator_differences(runner, cli):
    out = runner.invoke(cli, ["list", "attention"]).output
    assert "accepts by hand 1, 4, 9, 16, 25, 36, 49, 64; calculator 1–64" in out  # d_k: a square by hand
    assert "no-scaling" in out and "The scores were not divided by sqrt(d_k)." in out
    out = runner.invoke(cli, ["list", "layer-norm"]).output
    assert "sample-variance" in out and "Calculator mode" in out


def test_list_kind_bad_inputs(runner, cli):
    assert "did you mean 'attention'" in one_line_error(runner.invoke(cli, ["list", "atention"]))
    assert "not both" in one_line_error(runner.invoke(cli, ["list", "attention", "--examples"]))


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS)])
def test_every_help_has_examples(runner, cli, command):
    r = runner.invoke(cli, [*command, "--help"])
    assert r.exit_code == 0
    assert "Examples:" in r.output
    block = r.output.split("Examples:", 1)[1]
    assert re.search(r"^\s+worksheet ", block, re.M)


def test_no_command_summary_is_cut_off(runner, cli):
    out = runner.invoke(cli, ["--help"]).output
    commands = out.split("Commands:", 1)[1]
    assert "..." not in commands and all(c in commands for c in COMMANDS)


def test_shell_completion_is_documented_and_works(runner, cli):
    readme = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert "_WORKSHEET_COMPLETE=bash_source worksheet" in readme
    assert "_WORKSHEET_COMPLETE=zsh_source worksheet" in readme
    r = runner.invoke(
        cli,
        [],
        env={"_WORKSHEET_COMPLETE": "bash_complete", "COMP_WORDS": "worksheet bu", "COMP_CWORD": "1"},
        prog_name="worksheet",
        standalone_mode=False,
    )
    assert "build" in r.output


def test_without_a_terminal_a_long_build_prints_one_summary_line(tmp_path, runner, cli):
    r = runner.invoke(cli, ["build", "attention", "--variants", "12", "--format", "json", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    summary = [line for line in r.stderr.splitlines() if line.startswith("built ")]
    assert len(summary) == 1 and r.stderr.strip() == summary[0]
    assert re.fullmatch(r"built 12 sheets \(12 problems\), 2 files, in \d+\.\d s", summary[0])
    assert "\r" not in r.stderr and "[" not in r.stderr  # no bar drawn into a log
    small = runner.invoke(cli, ["build", "attention", "--format", "json", "-o", str(tmp_path / "s")])
    assert small.stderr == ""  # a short build says nothing more than what it wrote


class _FakeTerminal:
    """stderr that says it is a terminal, collecting what is written."""

    def __init__(self):
        self.text = []

    def isatty(self):
        return True

    def write(self, s):
        self.text.append(s)
        return len(s)

    def flush(self):
        pass


def test_on_a_terminal_the_latex_stage_has_a_progress_bar(tmp_path, monkeypatch):
    """The PDF stage reports each compiled file (``progress(1)`` from compile_all) through click's bar."""
    from worksheet import cli as cli_module

    fake = _FakeTerminal()
    monkeypatch.setattr(sys, "stderr", fake)
    bars = []
    real = click.progressbar

    def spy(*args, **kw):
        bars.append(kw.get("label"))
        return real(*args, **kw)

    monkeypatch.setattr(click, "progressbar", spy)
    paths = cli_module._with_latex(2, lambda progress=None: [progress(1), progress(1)] and ["a", "b"])
    assert paths == ["a", "b"] and bars == ["compiling PDF with LaTeX"]
    assert "compiling PDF with LaTeX" in "".join(fake.text)


def test_examples_copies_the_specs_and_sample_answers(tmp_path, runner, cli):
    r = runner.invoke(cli, ["examples", str(tmp_path / "course")])
    assert r.exit_code == 0, r.output
    shipped = sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_file())
    assert sorted(p.name for p in (tmp_path / "course").iterdir()) == shipped
    assert "midterm.toml" in shipped and "answers.toml" in shipped
    again = runner.invoke(cli, ["examples", str(tmp_path / "course")])
    assert "already exists" in one_line_error(again)
    assert runner.invoke(cli, ["examples", str(tmp_path / "course"), "--force"]).exit_code == 0
    r = runner.invoke(
        cli,
        ["build", "--spec", str(tmp_path / "course" / "midterm.toml"), "--format", "json", "-o", str(tmp_path / "m")],
    )
    assert r.exit_code == 0, r.output


def test_examples_ship_in_the_wheel_and_tour_outputs_are_ignored():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"examples" = "worksheet/examples"' in pyproject
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = re.search(r"^## A tour\n(.*?)^#", readme, re.S | re.M).group(1)
    for m in re.finditer(r"-o (\S+)", tour):
        target = m.group(1).rstrip("/")
        assert f"/{target}/" in ignored or f"/{target}" in ignored or target == "output", target
