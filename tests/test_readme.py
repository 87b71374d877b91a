"""The README's tour runs as written, top to bottom, in a fresh folder
(issue 9 §11): every ``$ worksheet ...`` line of its console block succeeds,
the output it quotes is what the command prints, and every file it names
ships in the repository."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from worksheet.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _console_blocks(section: str) -> list[str]:
    """The ```console blocks of one ``##``/``###`` section of the README."""
    m = re.search(rf"^#+ {re.escape(section)}\n(.*?)(?=^#+ )", README, re.S | re.M)
    assert m, f"README has no section '{section}'"
    return re.findall(r"```console\n(.*?)```", m.group(1), re.S)


def _commands(block: str) -> list[tuple[str, str]]:
    """(command, quoted output) pairs; a trailing ``# comment`` is not part of a command."""
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((re.sub(r"\s+#.*$", "", line[2:]).strip(), []))
        elif out:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines).strip()) for cmd, lines in out]


TOUR = [c for block in _console_blocks("A tour") for c in _commands(block)]


def _needs_latex(cmd: str) -> bool:
    return "pdf" in cmd


def test_the_tour_names_only_files_that_ship():
    for cmd, _ in TOUR:
        for word in shlex.split(cmd):
            if word.startswith("examples/"):
                assert (ROOT / word).is_file(), f"{word} is named in the README tour but does not ship"


def test_the_tour_runs_top_to_bottom_in_a_fresh_folder(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "output").mkdir()
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    ran = 0
    for cmd, quoted in TOUR:
        args = shlex.split(cmd)
        assert args[0] == "worksheet", cmd
        if _needs_latex(cmd) and not shutil.which("latexmk"):
            if os.environ.get("WORKSHEET_REQUIRE_LATEX") == "1":
                pytest.fail("LaTeX is required (WORKSHEET_REQUIRE_LATEX=1) but latexmk is missing")
            continue
        res = runner.invoke(main, args[1:])
        expected = (0, 1) if args[1] == "check" else (0,)  # check: 1 when an answer is marked wrong
        assert res.exit_code in expected, f"{cmd}\n{res.output}"
        if quoted:
            assert res.stdout.strip() == quoted, f"the README quotes other output for: {cmd}"
        ran += 1
    assert ran >= 8


def test_the_check_example_in_the_readme_is_what_check_prints(tmp_path, monkeypatch):
    """The ``check`` section quotes the report of examples/answers.toml."""
    blocks = _console_blocks("`check`: mark a hand calculation")
    pairs = [c for b in blocks for c in _commands(b)]
    assert pairs, "the check section has no console example"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for cmd, quoted in pairs:
        res = runner.invoke(main, shlex.split(cmd)[1:])
        assert res.exit_code in (0, 1), f"{cmd}\n{res.output}"
        if quoted:
            assert res.stdout.strip() == quoted, f"the README quotes other output for: {cmd}"
