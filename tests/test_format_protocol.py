"""Adding a format is one module and one registry line (the Format protocol,
worksheet/render/artefacts.py): a format that only this test knows, in a
module outside the package, is built through the CLI -- files, variants,
--split, stdout, refusals -- with no other file touched."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from worksheet import render
from worksheet.cli import main
from worksheet.render.artefacts import Artefact, Format

TOY = '''
from worksheet.render.artefacts import Artefact, Format


class Toy(Format):
    """One text file: per document, each step's name and shape."""

    name = "toy"
    ext = "txt"

    def __init__(self, templates=None):
        pass

    def artefacts(self):
        return (Artefact("key", "-toy.txt"),)

    def part(self, doc, index, count, role, *, variants=True, bank="worksheet"):
        lines = [f"document {index + 1} of {count} {doc.variant or ''}".rstrip()]
        lines += [f"{s.name} {s.shape[0]}x{s.shape[1]}" for p in doc.problems for s in p.steps]
        return "\\n".join(lines) + "\\n"

    def join(self, outlines, parts, role, *, variants=True):
        return f"toy of {len(outlines)}\\n" + "".join(parts)


class Packed(Toy):
    """The same, as bytes (a package): never on stdout."""

    name = "packed"
    binary = True

    def artefacts(self):
        return (Artefact("package", "-packed.bin"),)

    def join(self, outlines, parts, role, *, variants=True):
        return super().join(outlines, parts, role).encode()
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy module written outside the package, and its registry lines."""
    package = tmp_path / "toyformats"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "toy.py").write_text(textwrap.dedent(TOY))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(render.FORMATS, "toy", "toyformats.toy:Toy")
    monkeypatch.setitem(render.FORMATS, "packed", "toyformats.toy:Packed")
    render._cached.cache_clear()
    yield tmp_path / "out"
    render._cached.cache_clear()


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_a_registered_format_is_built_beside_the_others(toy):
    r = run("build", "attention", "--seed", "3", "--format", "toy,md", "-o", str(toy))
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in toy.iterdir()) == ["worksheet-key.md", "worksheet-toy.txt", "worksheet.md"]
    text = (toy / "worksheet-toy.txt").read_text()
    assert text.startswith("toy of 1\ndocument 1 of 1\n")
    assert "\nscores " in text and "\nweights " in text and "\noutput " in text


def test_variants_are_joined_in_order_and_split_into_files(toy):
    r = run("build", "attention", "--variants", "3", "--format", "toy", "-o", str(toy))
    assert r.exit_code == 0, r.output
    text = (toy / "worksheet-toy.txt").read_text()
    assert text.startswith("toy of 3\n")
    assert [line for line in text.splitlines() if line.startswith("document")] == [
        "document 1 of 3 v01",
        "document 2 of 3 v02",
        "document 3 of 3 v03",
    ]
    split = toy.parent / "split"
    r = run("build", "attention", "--variants", "2", "--split", "--format", "toy", "-o", str(split))
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in split.iterdir()) == [
        "worksheet-v01-toy.txt",
        "worksheet-v02-toy.txt",
        "worksheet-variants.csv",
    ]
    assert "worksheet-v02-toy.txt" in (split / "worksheet-variants.csv").read_text()  # the student's file


def test_stdout_writes_the_first_artefact_and_refuses_bytes(toy):
    r = run("build", "attention", "--seed", "3", "--format", "toy", "-o", "-")
    assert r.exit_code == 0 and r.output.startswith("toy of 1\ndocument 1 of 1\n")
    r = run("build", "attention", "--format", "packed", "-o", "-")
    assert r.exit_code == 2 and "-o - writes text" in r.output
    r = run("solve", "--example", "thinking-machines", "--format", "packed")
    assert r.exit_code == 2 and "-o - writes text" in r.output


def test_bytes_are_written_as_bytes_and_solve_uses_the_protocol(toy):
    r = run("build", "attention", "--seed", "3", "--format", "packed", "-o", str(toy))
    assert r.exit_code == 0, r.output
    assert (toy / "worksheet-packed.bin").read_bytes().startswith(b"toy of 1\n")
    r = run("solve", "--example", "thinking-machines", "--format", "toy")
    assert r.exit_code == 0 and r.output.startswith("toy of 1\ndocument 1 of 1\n")


def test_an_existing_artefact_is_refused_before_building(toy):
    toy.mkdir()
    (toy / "worksheet-toy.txt").write_text("mine")
    r = run("build", "attention", "--format", "toy", "-o", str(toy))
    assert r.exit_code == 2 and (toy / "worksheet-toy.txt").read_text() == "mine"
    assert "worksheet-toy.txt" in r.output


def test_every_registered_format_follows_the_protocol():
    for name in render.FORMATS:
        f = render.get(name)
        assert isinstance(f, Format) and f.name == name
        every = f.artefacts()
        assert every and all(isinstance(a, Artefact) for a in every)
        assert len({a.file("x") for a in every}) == len(every)  # one file per artefact


def test_an_artefact_has_a_known_role():
    with pytest.raises(ValueError, match="role"):
        Artefact("poster", ".png")


def test_the_build_never_branches_on_a_format_name():
    """No comparison in worksheet/build/ with a format's name (``fmt == "pdf"``)."""
    names = set(render.FORMATS) | {"tex"}
    found = []
    for path in Path(render.__file__).parent.parent.joinpath("build").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                for c in ast.walk(node):
                    if isinstance(c, ast.Constant) and c.value in names:
                        found.append(f"{path.name}:{node.lineno}")
    assert found == []
