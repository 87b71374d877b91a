"""The library behind the commands: build documents and solve given numbers.

The CLI only parses options and calls these; a notebook can do the same.
This module makes problems and sheets (:func:`build_document`) and solves a
user's own numbers (:func:`solve_table`).  Its neighbours do the rest, and
their names are importable from here too:

* :mod:`worksheet.spec`: :class:`ProblemSpec` (``KIND:key=value``), exam spec
  files, and :func:`resolve_build` (spec file versus command-line options);
* :mod:`worksheet.variants`: variants, one per student, built on every core;
* :mod:`worksheet.output`: rendering into files, writing them, the PDF path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from . import kinds
from .arguments import kind_argument, mapping_argument
from .document import Document
from .errors import ArgumentError, InputError, ParamError, ShapeError, in_file
from .model import Problem
from .spec import DEFAULT_KINDS, BuildPlan, ProblemSpec, resolve_build

if TYPE_CHECKING:
    from .output import (Rendered, output_names, planned_files, render_document, render_documents,  # noqa: F401
                         variants_csv, write_document, write_documents, write_rendered)
    from .variants import (VariantPlan, build_variants, default_jobs, render_variants,  # noqa: F401
                           variant_seed)

__all__ = ["DEFAULT_KINDS", "BuildPlan", "ProblemSpec", "resolve_build", "check_seed", "problem_rng",
           "make_problem", "build_document", "variant_id", "solve_inputs", "solve_file", "solve_example",
           "solve_table", "Rendered", "output_names", "planned_files", "render_document", "render_documents",
           "variants_csv", "write_document", "write_documents", "write_rendered", "VariantPlan",
           "build_variants", "default_jobs", "render_variants", "variant_seed"]

# names of the neighbouring modules, imported when first asked for (they import this one)
_ELSEWHERE = {**dict.fromkeys(["Rendered", "output_names", "planned_files", "render_document", "render_documents",
                               "variants_csv", "write_document", "write_documents", "write_rendered"], "output"),
              **dict.fromkeys(["VariantPlan", "build_variants", "default_jobs", "render_variants",
                               "variant_seed"], "variants")}


def __getattr__(name: str):
    """``from worksheet.build import render_variants`` and the like: see :data:`_ELSEWHERE`."""
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(f".{_ELSEWHERE[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_seed(seed) -> int:
    """A seed is a whole number from 0 to 2^32 - 1 (numpy refuses negative ones)."""
    from .limits import MAX_SEED

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        from .long_numbers import shown

        raise ParamError(f"the seed must be a whole number from 0 to {MAX_SEED}, not {shown(seed)}")
    return seed


def problem_rng(seed: int, index: int, variant: int = 0) -> np.random.Generator:
    """The generator of problem ``index`` (0-based) of variant ``variant``."""
    return np.random.default_rng([seed, variant, index])


def make_problem(spec: ProblemSpec, options: dict, *, seed: int, index: int, variant: int = 0) -> Problem:
    kind = kinds.get(spec.kind)
    merged = {**options, **spec.options}
    unknown = sorted(set(spec.options) - set(kind.Params.field_names()))
    if unknown:
        raise ParamError(f"{spec.kind} has no setting '{unknown[0]}'; it has "
                         f"{', '.join(kind.Params.field_names())}")
    params = kind.Params.from_options(merged)
    _check_spec_text(spec)
    inputs = kind.generate(problem_rng(seed, index, variant), params)
    problem = kind.solve(inputs, params, seed=seed)
    problem.points = spec.points
    if spec.prompt:
        problem.intro = f"{problem.intro} {spec.prompt}".strip()
    if spec.question:
        taken = {s.name for s in problem.steps}
        name = next(n for n in ["written"] + [f"written_{k}" for k in range(2, len(taken) + 3)] if n not in taken)
        problem.add_written(name, title=spec.question, answer=spec.answer, lines=spec.lines)
    return problem


def build_document(problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS, *, seed: int = 1,
                   options: dict | None = None, title: str | None = None,
                   variant: int = 0, variant_id: str = "", **doc_fields) -> Document:
    """Generate and solve the problems of one sheet, in the order given."""
    specs = _problem_specs(problems)
    _check_document_text(title, doc_fields)
    if options is not None:
        mapping_argument(options, "options", "a dict of settings, e.g. {'causal': True}")
    options = dict(options or {})
    check_seed(seed)
    for s in specs:
        kinds.get(s.kind)  # unknown kinds fail before any work
    probs = [make_problem(s, options, seed=seed, index=i, variant=variant) for i, s in enumerate(specs)]
    if title is None:
        title = probs[0].title if len(probs) == 1 else "Transformer attention worksheet"
    return Document(title, probs, seed=seed, numbers=options.get("numbers") or "hand",
                    variant=variant_id, **doc_fields)


def _check_spec_text(spec: ProblemSpec) -> None:
    """A problem's prompt, written question and model answer, as a spec file's
    are checked (worksheet.safetext.check_prose): text, printable, allowed maths."""
    from .safetext import check_prose

    for field in ("prompt", "question", "answer"):
        value = getattr(spec, field)
        if not isinstance(value, str):
            raise ArgumentError(f"{field} must be text, not {type(value).__name__}")
        if value:
            check_prose(value, field=field)


def _check_document_text(title, doc_fields: dict) -> None:
    """The title and the document's text fields, as the command line and a spec
    file check them: a title and one-line course and date, instructions as prose."""
    from .safetext import check_line, check_prose, check_title

    if title is not None:
        if not isinstance(title, str):
            raise ArgumentError(f"title must be text, not {type(title).__name__}")
        check_title(title, field="title")
    for field, check in (("course", check_line), ("date", check_line), ("instructions", check_prose)):
        value = doc_fields.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ArgumentError(f"{field} must be text, not {type(value).__name__}")
        check(value, field=field)


def _problem_specs(problems) -> list[ProblemSpec]:
    """The problems of a sheet: each a kind text (``"attention:causal=true"``) or a ProblemSpec."""
    if isinstance(problems, (str, ProblemSpec)) or not isinstance(problems, (list, tuple)):
        raise ArgumentError(f"problems must be a list of kinds, e.g. ['attention'], not "
                            f"{'the text ' + repr(problems[:40]) if isinstance(problems, str) else type(problems).__name__}")
    for k, p in enumerate(problems, 1):
        if not isinstance(p, (str, ProblemSpec)):
            raise ArgumentError(f"problems item {k} must be a kind (text) or a ProblemSpec, not {type(p).__name__}")
    return [p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems]


def variant_id(k: int, count: int) -> str:
    """The printed id of variant ``k`` (1-based) of ``count``: v01, v02, ... (v001 past 99).

    It also names a variant's files (``NAME-v01.md`` with --split), so it lives
    here, below both :mod:`worksheet.variants` and :mod:`worksheet.output`."""
    return f"v{k:0{max(2, len(str(count)))}d}"


def solve_inputs(kind_name: str, inputs: dict, options: dict | None = None) -> Problem:
    from .arguments import exact_matrix_argument

    kind_argument(kind_name, "kind_name")
    mapping_argument(inputs, "inputs", "a dict of name -> exact matrix (rows of ints and Fractions)")
    if options is not None:
        mapping_argument(options, "options", "a dict of settings, e.g. {'causal': True}")
    inputs = {k: exact_matrix_argument(v, f"inputs[{k!r}]") for k, v in inputs.items()}
    kind = kinds.get(kind_name)
    params = kind.Params.from_options(dict(options or {}))
    return kind.solve(inputs, params)


def solve_file(kind_name: str, path: Path | str, options: dict | None = None) -> Problem:
    """Solve the matrices in a JSON/TOML file; CLI options override the file's."""
    from .inputs import read_table

    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"path must be a file name (str or Path), not {type(path).__name__}")

    return solve_table(kind_name, read_table(path, label=str(path)), options, label=str(path))


def solve_example(name: str, options: dict | None = None) -> Problem:
    """Solve a reference example from the lectures (see worksheet.reference)."""
    from .reference import EXAMPLES

    if name not in EXAMPLES:
        import difflib

        close = difflib.get_close_matches(name, EXAMPLES, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; see 'worksheet list --examples'"
        raise ParamError(f"unknown example '{name}'{hint}")
    ex = EXAMPLES[name]
    return solve_table(ex.kind, ex.table, options, label=f"example {name}")


def solve_table(kind_name: str, table: dict, options: dict | None = None, *,
                label: str | None = None) -> Problem:
    """Solve one input table (matrices + parameters), as read from a file."""
    from .inputs import split_table

    kind_argument(kind_name, "kind_name")
    mapping_argument(table, "table", "a dict of name -> matrix or setting")
    if options is not None:
        mapping_argument(options, "options", "a dict of settings, e.g. {'causal': True}")
    kind = kinds.get(kind_name)
    inputs, file_options = split_table(table, kind, file=label)
    merged = {**file_options, **{k: v for k, v in (options or {}).items() if v is not None}}
    # The user's own numbers are taken as they are: hand-mode limits (a perfect
    # square d_k, ...) are for generating, so solving defaults to calculator.
    merged.setdefault("numbers", "calculator")
    try:
        params = kind.Params.from_options(merged, source=label)
        return kind.solve(inputs, params, **_carry(kind))
    except (InputError, ShapeError, ParamError) as exc:
        raise in_file(exc, label) from None


def _carry(kind) -> dict:
    """A kind that can carry decimals (its ``solve`` takes ``carry``) keeps exact
    forms of the user's numbers only while they are short: see
    :data:`worksheet.limits.MAX_EXACT_CHARS` (generated problems are small and
    always exact)."""
    import inspect

    from .blocks import Carry
    from .limits import MAX_EXACT_CHARS

    return {"carry": Carry(limit=MAX_EXACT_CHARS)} if "carry" in inspect.signature(kind.solve).parameters else {}
