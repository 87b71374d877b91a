"""What a build makes, once a spec file and the command-line options are
weighed: :class:`BuildPlan` and :func:`resolve_build` (the same rules for the
CLI and the library)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..policy.errors import ParamError
from ..policy.safetext import check_file_name
from .spec import DEFAULT_KINDS, ExamSpec, load_spec

__all__ = ["BuildPlan", "resolve_build"]


@dataclass(frozen=True)
class BuildPlan:
    """What a build makes once a spec file and the options are weighed
    (see :func:`resolve_build`); pass :meth:`document_args` to
    ``build_document``, ``build_variants`` or ``render_variants``."""

    problems: tuple  # of KIND texts or ProblemSpec
    seed: int = 1
    options: dict = field(default_factory=dict)  # the kind options of every problem
    title: str | None = None  # None: the kind's title (one problem) or a general one
    variants: int | None = None  # None: one sheet
    name: str = "worksheet"  # base name of the files
    split: bool = False  # one set of files per variant
    doc_fields: dict = field(default_factory=dict)  # course, date, instructions, paper

    def document_args(self) -> dict[str, Any]:
        """``seed``, ``options``, ``title`` and the document fields, as keywords."""
        return {"seed": self.seed, "options": self.options, "title": self.title, **self.doc_fields}


# long: one precedence rule per setting (spec file, options, defaults), in the order docs/reference.md gives them
def resolve_build(
    spec: "ExamSpec | Path | str | None" = None,
    problems=(),
    *,
    seed: int | None = None,
    options: dict | None = None,
    title: str | None = None,
    variants: int | None = None,
    name: str | None = None,
    paper: str | None = None,
    split: bool = False,
    compact: bool | None = None,
    duplex: bool | None = None,
) -> BuildPlan:
    """The build ``worksheet build`` makes from a spec (an :class:`ExamSpec` or
    its file) or ``problems`` (default: attention), and the options given.

    The rules: an option given (not None) wins over the spec's value; so
    ``seed``, ``title``, ``variants`` and ``name`` come from the option, else
    the spec, else the defaults (seed 1, the kinds' own title, one sheet,
    ``worksheet``); a kind option (``numbers``, ``seq_len``, ...) wins over
    the spec's ``numbers``, while a section's own parameters win over both (see
    ``build.make_problem``); ``paper``, ``compact`` and ``duplex`` win over the spec's.  Problems
    and a spec together, or ``split`` without variants, are errors.
    """
    options = {k: v for k, v in (options or {}).items() if v is not None}
    doc_fields: dict[str, Any] = {}
    problems = tuple(problems)
    if spec is not None:
        if problems:
            raise ParamError("give problem kinds or --spec, not both")
        if not isinstance(spec, ExamSpec):
            spec = load_spec(spec)
        problems = tuple(spec.problem_specs())
        doc_fields = spec.doc_fields()
        options = {"numbers": spec.numbers, **options}
        title = title if title is not None else spec.title
        seed = seed if seed is not None else spec.seed
        variants = variants if variants is not None else spec.variants
        name = name if name is not None else spec.name
    if paper is not None:
        doc_fields["paper"] = paper
    for key, value in (("compact", compact), ("duplex", duplex)):
        if value is not None:
            doc_fields[key] = value
        if doc_fields.get(key) is False:
            doc_fields.pop(key)  # the default: documents stay as they were
    if split and not variants:
        raise ParamError("--split needs --variants N")
    if name:  # (an empty --name means the default)
        check_file_name(name, field="--name")  # every file stays inside the output folder
    return BuildPlan(
        problems or DEFAULT_KINDS,
        1 if seed is None else seed,
        options,
        title,
        variants,
        name or "worksheet",
        split,
        doc_fields,
    )
