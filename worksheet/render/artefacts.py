"""The Format protocol: what a format makes of documents, declared, so that
nothing above it branches on a format's name.

A format turns documents into *artefacts*.  Each artefact has a role --
``sheet`` (what a student gets), ``key`` (the worked answers), ``bank`` (an
LMS's question bank: questions with their key as feedback), ``package`` (a
zip an LMS imports) -- and a file name: the build's name plus the artefact's
``suffix`` (``worksheet.md``, ``worksheet-key.md``, ``worksheet-moodle.xml``).
A format's artefacts are text, or bytes when it says ``binary`` (never
written to a terminal).

A build renders each document (each variant of an exam, perhaps in a worker
process) into one *part* per artefact with :meth:`Format.part`, then joins the
parts of every document, in order, into the artefact with :meth:`Format.join`.
:mod:`worksheet.build.output` and the CLI do only that: they never look at
which format it is.  A format whose artefacts are compiled from another
format's text (PDF, from the LaTeX) names that format's renderer as
``parts_from`` and says ``compiled``: the build joins the other format's parts,
writes them as the LaTeX source, and compiles it.

The defaults fit a template renderer (:class:`worksheet.render.base.TemplateRenderer`):
a sheet and a key, each the template's ``head``, every document's ``body``
and the ``foot``.  A format with other artefacts overrides
:meth:`Format.artefacts`, :meth:`Format.part` and :meth:`Format.join`
(:mod:`worksheet.render.json`, :mod:`worksheet.render.moodle`,
:mod:`worksheet.render.qti`).  Adding a format is one module and one line
in ``FORMATS`` (:mod:`worksheet.render`); ``tests/test_format_protocol.py``
builds a format that only a test knows through the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

ROLES = ("sheet", "key", "bank", "package")


@dataclass(frozen=True)
class Artefact:
    """One file a format writes: its role and what follows the build's name."""

    role: str  # one of ROLES
    suffix: str  # ".md", "-key.md", "-moodle.xml", "-qti.zip"

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"artefact role {self.role!r}: choose from {', '.join(ROLES)}")

    def file(self, name: str) -> str:
        return name + self.suffix


class Format:
    """The protocol every format follows (the defaults: a template renderer's)."""

    name = ""  # the --format name
    ext = ""  # the file extension of its artefacts
    binary = False  # its artefacts are bytes: never written to stdout
    compiled = False  # its artefacts are compiled from ``parts_from``'s text (see the module's docstring)
    student_rank = 9  # which file the variants table names for a student (--split): the lowest rank asked

    def artefacts(self) -> tuple[Artefact, ...]:
        """Every artefact the format makes, the one for stdout (``-o -``) first."""
        return (Artefact("sheet", f".{self.ext}"), Artefact("key", f"-key.{self.ext}"))

    def chosen(self, roles: Sequence[str]) -> tuple[Artefact, ...]:
        """The artefacts to make when ``roles`` are asked: those of these roles, or
        every one when it has none of them (a JSON key, a Moodle bank: one file)."""
        every = self.artefacts()
        return tuple(a for a in every if a.role in roles) or every

    def files(self, name: str) -> dict[str, str]:
        """``{role: file name}`` for a build called ``name``."""
        return {a.role: a.file(name) for a in self.artefacts()}

    @property
    def parts_from(self) -> Format:
        """The format whose parts this one joins: itself, or (``compiled``) its source's."""
        return self

    def part(self, doc, index: int, count: int, role: str, *, variants: bool = True, bank: str = "worksheet"):
        """Document ``index`` (0-based) of ``count`` as its part of artefact ``role``
        (picklable: parts are made in worker processes).  ``variants``: the
        documents are an exam's variants; ``bank``: the build's name."""
        return self.body(doc, index, count, key=role == "key")

    def join(self, outlines: Sequence, parts: Sequence, role: str, *, variants: bool = True) -> str | bytes:
        """The artefact ``role`` from every document's part, in order
        (``outlines``: the documents without their problems, see ``Document.outline``)."""
        key = role == "key"
        return self.head(outlines, key=key) + "".join(parts) + self.foot(outlines, key=key)

    def render(self, doc, *, key: bool = True) -> str | bytes:
        """One document as one file (``worksheet solve``): its key, or its first artefact."""
        every = self.artefacts()
        role = next((a.role for a in every if a.role == "key"), every[0].role) if key else every[0].role
        return self.join([doc.outline()], [self.part(doc, 0, 1, role, variants=False)], role, variants=False)


__all__ = ["ROLES", "Artefact", "Format"]
