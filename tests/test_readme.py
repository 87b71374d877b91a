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
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _console_blocks(section: str, text: str = README) -> list[str]:
    """The ```console blocks of one ``##``/``###`` section of a page (the README by default)."""
    m = re.search(rf"^#+ {re.escape(section)}\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
    assert m, f"no section '{section}'"
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
            assert res.stdout.strip() == quoted, f"the docs quote other output for: {cmd}"
        ran += 1
    assert ran >= 8


def test_the_check_example_in_the_students_guide_is_what_check_prints(tmp_path, monkeypatch):
    """The student's guide quotes the report of examples/answers.toml."""
    blocks = _console_blocks("Checking a hand calculation", (ROOT / "docs" / "student.md").read_text(encoding="utf-8"))
    pairs = [c for b in blocks for c in _commands(b)]
    assert pairs, "the check section has no console example"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for cmd, quoted in pairs:
        res = runner.invoke(main, shlex.split(cmd)[1:])
        assert res.exit_code in (0, 1), f"{cmd}\n{res.output}"
        if quoted:
            assert res.stdout.strip() == quoted, f"the docs quote other output for: {cmd}"


# ---------------------------------------------------------------- the README as a start


def _prose(text: str) -> str:
    """A page without its fenced code blocks (a ``#`` there is a comment, a link is text)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", _prose(page.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_relative_link_in_the_readme_and_docs_resolves():
    checked = 0
    for page in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", _prose(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.is_file(), f"{page.relative_to(ROOT)} links to {target}, which does not exist"
            if anchor:
                assert anchor in _anchors(file), f"{page.relative_to(ROOT)} links to {target}: no such heading"
            checked += 1
    assert checked > 40


def test_the_readme_links_every_page_of_docs():
    links = set(re.findall(r"\]\((docs/[\w-]+\.md)", README))
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages <= links, f"the README's 'Where next' links every page of docs/: {sorted(pages - links)}"


def test_no_page_names_a_document_the_repository_does_not_have():
    """A document named in the README, the docs, CONTRIBUTING and the code (``X.md``) is a file of the repository."""
    pages = [*DOCS, ROOT / "CONTRIBUTING.md", ROOT / "BENCHMARKS.md"]
    code = [*(ROOT / "worksheet").rglob("*.py"), *(ROOT / "tests").glob("*.py"), *(ROOT / "examples").iterdir()]
    for f in pages + code:
        for name in set(re.findall(r"\b([A-Z][A-Z_]+\.md)\b", f.read_text(encoding="utf-8"))) - {"NAME.md"}:
            assert (ROOT / name).is_file(), f"{f.relative_to(ROOT)} names {name}, which the repository does not have"
        for name in re.findall(r"\b(docs/[\w-]+\.md)\b", f.read_text(encoding="utf-8")):
            assert (ROOT / name).is_file(), f"{f.relative_to(ROOT)} names {name}"


def test_the_readme_is_a_start():
    assert len(README.splitlines()) <= 250
    for heading in ("## A tour", "## Where next"):
        assert heading in README


def test_ci_runs_the_readme_commands_exactly():
    commands = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert commands == [
        "python -m pip install -e . && worksheet build",
        "python -m pip install -e '.[test]' && python -m pytest",
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command in commands:
        assert f"( {command} )" in ci, command  # in a subshell, so that set -e stops on either half


def test_the_distribution_is_ours_and_the_command_is_worksheet():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "attention-worksheet" and project["scripts"] == {"worksheet": "worksheet.cli:main"}
    assert "attention-worksheet" in README
