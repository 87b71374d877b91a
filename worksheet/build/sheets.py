"""Sheets and solutions: problems made from a seed and gathered into a
document (:func:`build_document`), and a user's own numbers solved
(:func:`solve_table`, :func:`solve_file`, :func:`solve_example`).

The CLI only parses options and calls these; a notebook can do the same.
The neighbours of this module do the rest (:mod:`.spec`, :mod:`.output`,
:mod:`.variants`; the package :mod:`worksheet.build` exports their names).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import kinds
from ..parse.arguments import kind_argument, mapping_argument
from ..solution.document import Document
from ..policy.errors import ArgumentError, InputError, ParamError, ShapeError, in_file
from ..solution.maths import Prose, as_prose
from ..solution.maths.build import prose
from ..solution.problem import Problem
from .spec import DEFAULT_KINDS, QUESTION, ProblemSpec

__all__ = [
    "check_seed",
    "problem_rng",
    "make_problem",
    "diagnosable_draw",
    "build_document",
    "solve_inputs",
    "solve_file",
    "solve_example",
    "solve_table",
    "check_problems",
]


def check_seed(seed) -> int:
    """A seed is a whole number from 0 to 2^32 - 1 (numpy refuses negative ones)."""
    from ..policy.limits import MAX_SEED

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        from ..policy.integer_text import shown

        raise ParamError(f"the seed must be a whole number from 0 to {MAX_SEED}, not {shown(seed)}")
    return seed


def problem_rng(seed: int, index: int, variant: int = 0) -> np.random.Generator:
    """The generator of problem ``index`` (0-based) of variant ``variant``."""
    return np.random.default_rng([seed, variant, index])


def with_prompt(intro: str, prompt: str) -> Prose:
    """A kind's intro with a spec's prompt after it, a space between (the text
    ``f"{intro} {prompt}".strip()``), each read as prose on its own: no ``$`` of
    one can pair with a ``$`` of the other."""
    intro, prompt = str(intro), str(prompt)
    if not intro.strip() or not prompt.strip():
        return as_prose(intro.strip() or prompt.strip())
    return prose(as_prose(intro.lstrip()), " ", as_prose(prompt.rstrip()))


def make_problem(spec: ProblemSpec, options: dict, *, seed: int, index: int, variant: int = 0) -> Problem:
    if spec.kind == QUESTION:  # only a question answered in words
        problem = Problem(
            QUESTION,
            "Question",
            {"numbers": options.get("numbers") or "hand"},
            seed=seed,
            intro=spec.prompt,
            points=spec.points,
        )
        problem.add_written("written", title=spec.question, answer=spec.answer, lines=spec.lines)
        if spec.step_points or spec.step_weights:
            _share_points(problem, spec)
        return problem
    kind = kinds.get(spec.kind)
    merged = {**options, **spec.options}
    unknown = sorted(set(spec.options) - set(kind.Params.field_names()))
    if unknown:
        raise ParamError(f"{spec.kind} has no setting '{unknown[0]}'; it has {', '.join(kind.Params.field_names())}")
    params = kind.Params.from_options(merged)
    _check_spec_text(spec)
    problem = diagnosable_draw(kind, params, problem_rng(seed, index, variant), seed)
    problem.points = spec.points
    if spec.prompt:
        problem.intro = with_prompt(problem.intro, spec.prompt)
    if spec.question:
        taken = {s.name for s in problem.steps}
        name = next(n for n in ["written"] + [f"written_{k}" for k in range(2, len(taken) + 3)] if n not in taken)
        problem.add_written(name, title=spec.question, answer=spec.answer, lines=spec.lines)
    if spec.step_points or spec.step_weights:
        _share_points(problem, spec)
    return problem


DIAGNOSABLE_DRAWS = 4  # hand mode: draws tried, at most, for one that tells every named mistake apart


def diagnosable_draw(kind, params, rng: np.random.Generator, seed: int) -> Problem:
    """A problem of ``kind`` drawn from ``rng``; in hand mode, the first of at most
    :data:`DIAGNOSABLE_DRAWS` draws (from the same generator, so the same seed gives
    the same problem) in which each step's named mistakes give, in some asked entry,
    a value farther than the tolerance from the right answers and from one another's
    (:func:`worksheet.kinds.mistake_values.untold` is 0), else the draw that leaves
    the fewest mistakes untold (the earliest of those).  The key's ``diagnosable``
    says which mistakes the chosen numbers tell apart."""
    from ..kinds.mistake_values import untold
    from ..policy.errors import WorksheetError

    best = kind.solve(kind.generate(rng, params), params, seed=seed)
    if getattr(params, "numbers", "hand") != "hand":
        return best
    missing = untold(best)
    for _ in range(DIAGNOSABLE_DRAWS - 1):
        if missing == 0:
            break
        try:
            candidate = kind.solve(kind.generate(rng, params), params, seed=seed)
        except WorksheetError:  # a later draw the kind cannot use (a mistake asked for that cannot be made)
            break
        left = untold(candidate)
        if left < missing:
            best, missing = candidate, left
    return best


def _share_points(problem: Problem, spec: ProblemSpec) -> None:
    """The spec's points and weights of named steps, checked against the problem's steps."""
    where = f"{spec.where}: " if spec.where else ""
    names = [s.name for s in problem.steps]
    for field_, pairs in (("step_points", spec.step_points), ("step_weights", spec.step_weights)):
        for name, _ in pairs:
            if name not in names:
                import difflib

                close = difflib.get_close_matches(name, names, n=1)
                hint = f"did you mean '{close[0]}'?" if close else f"its steps are {', '.join(names)}"
                raise ParamError(f"{where}{field_}: {spec.kind} has no step '{name}'; {hint}")
    problem.step_points, problem.step_weights = dict(spec.step_points), dict(spec.step_weights)
    try:
        problem.points_of_steps()
    except ValueError as exc:
        raise ParamError(f"{where}step_points: {exc}") from None


def _fields_of(spec: ProblemSpec) -> list[str]:
    """The settings a problem takes (its kind's ``settings_of``: find-the-mistake, those of its ``of``)."""
    return kinds.kind(spec.kind).settings_of(spec.options)


def check_problems(problems: Sequence[str | ProblemSpec], options: dict | None = None) -> list[ProblemSpec]:
    """Check every problem's settings before any work (and before any file is
    looked at): unknown kinds and settings, values a kind refuses, and an
    option given for every problem (``--heads 2``) that none of the chosen
    kinds takes -- an error naming the kinds that take it."""
    options = {k: v for k, v in (options or {}).items() if v is not None}
    specs = [p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems]
    real = [s for s in specs if s.kind != QUESTION]
    for s in real:
        kind = kinds.get(s.kind)
        unknown = sorted(set(s.options) - set(kind.Params.field_names()))
        if unknown:
            raise ParamError(f"{s.kind} has no setting '{unknown[0]}'; it has {', '.join(kind.Params.field_names())}")
        try:
            kind.Params.from_options({**options, **s.options})
        except (ParamError, InputError) as exc:
            where = f"{s.where}: " if s.where else ""
            raise type(exc)(f"{where}{exc}") if isinstance(exc, ParamError) else exc from None
    for name in sorted(options):
        if name == "numbers" or not real:
            continue
        if not any(name in _fields_of(s) for s in real):
            takes = [
                k
                for k in kinds.names()
                if name in kinds.get(k).Params.field_names() and not kinds.kind(k).passes_settings_on
            ]
            chosen = ", ".join(dict.fromkeys(s.kind for s in real))
            raise ParamError(f"--{name.replace('_', '-')} does not apply to {chosen}; it applies to {', '.join(takes)}")
    return specs


def build_document(
    problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS,
    *,
    seed: int = 1,
    options: dict | None = None,
    title: str | None = None,
    variant: int = 0,
    variant_id: str = "",
    **doc_fields,
) -> Document:
    """Generate and solve the problems of one sheet, in the order given."""
    specs = _problem_specs(problems)
    _check_document_text(title, doc_fields)
    if options is not None:
        mapping_argument(options, "options", "a dict of settings, e.g. {'causal': True}")
    options = dict(options or {})
    check_seed(seed)
    for s in specs:
        if s.kind != QUESTION:
            kinds.get(s.kind)  # unknown kinds fail before any work
    probs = [make_problem(s, options, seed=seed, index=i, variant=variant) for i, s in enumerate(specs)]
    if title is None:
        title = probs[0].title if len(probs) == 1 else "Transformer attention worksheet"
    return Document(
        title,
        probs,
        seed=seed,
        numbers=options.get("numbers") or "hand",
        variant=variant_id,
        conventions=kinds.conventions(probs, options.get("numbers") or "hand"),
        **doc_fields,
    )


def _check_spec_text(spec: ProblemSpec) -> None:
    """A problem's prompt, written question and model answer, as a spec file's
    are checked (worksheet.policy.safetext.check_prose): text, printable, allowed maths."""
    from ..policy.safetext import check_prose

    for field in ("prompt", "question", "answer"):
        value = getattr(spec, field)
        if not isinstance(value, str):
            raise ArgumentError(f"{field} must be text, not {type(value).__name__}")
        if value:
            check_prose(value, field=field)


def _check_document_text(title, doc_fields: dict) -> None:
    """The title and the document's text fields, as the command line and a spec
    file check them: a title and one-line course and date, instructions as prose."""
    from ..policy.safetext import check_line, check_prose, check_title

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
        raise ArgumentError(
            f"problems must be a list of kinds, e.g. ['attention'], not "
            f"{'the text ' + repr(problems[:40]) if isinstance(problems, str) else type(problems).__name__}"
        )
    for k, p in enumerate(problems, 1):
        if not isinstance(p, (str, ProblemSpec)):
            raise ArgumentError(f"problems item {k} must be a kind (text) or a ProblemSpec, not {type(p).__name__}")
    return [p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems]


def solve_inputs(kind_name: str, inputs: dict, options: dict | None = None) -> Problem:
    from ..parse.arguments import exact_matrix_argument

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
    from ..parse.input_tables import read_table

    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"path must be a file name (str or Path), not {type(path).__name__}")

    return solve_table(kind_name, read_table(path, label=str(path)), options, label=str(path))


def solve_example(name: str, options: dict | None = None) -> Problem:
    """Solve a reference example from the lectures (see worksheet.kinds.lecture_examples)."""
    from ..kinds.lecture_examples import EXAMPLES

    if name not in EXAMPLES:
        import difflib

        close = difflib.get_close_matches(name, EXAMPLES, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; see 'worksheet list --examples'"
        raise ParamError(f"unknown example '{name}'{hint}")
    ex = EXAMPLES[name]
    return solve_table(ex.kind, ex.table, options, label=f"example {name}")


def solve_table(kind_name: str, table: dict, options: dict | None = None, *, label: str | None = None) -> Problem:
    """Solve one input table (matrices + parameters), as read from a file."""
    from ..parse.input_tables import split_table

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
        return kind.solve(inputs, params, **_carry(params))
    except (InputError, ShapeError, ParamError) as exc:
        raise in_file(exc, label) from None


def _carry(params) -> dict:
    """A kind that can carry decimals (its ``Params.carries``: its ``solve``
    takes ``carry``) keeps exact forms of the user's numbers only while they
    are short: see :data:`worksheet.policy.limits.MAX_EXACT_CHARS` (generated
    problems are small and always exact)."""
    from ..policy.limits import MAX_EXACT_CHARS
    from ..steps.scaled_dot_product import Carry

    return {"carry": Carry(limit=MAX_EXACT_CHARS)} if params.carries else {}
