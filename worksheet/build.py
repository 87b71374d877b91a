"""The library behind the commands: build documents, solve files, write them.

The CLI only parses options and calls these; a notebook can do the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from . import kinds, render
from .document import Document
from .errors import InputError, ParamError, ShapeError, WorksheetError, in_file
from .files import write_all
from .model import Problem

DEFAULT_KINDS = ("attention",)
SPEC_RE = re.compile(r"^(?P<kind>[a-z0-9-]+)(?::(?P<opts>.*))?$")


@dataclass(frozen=True)
class ProblemSpec:
    """One problem of a sheet: a kind and its own options."""

    kind: str
    options: dict

    @classmethod
    def parse(cls, text: str) -> "ProblemSpec":
        """``KIND`` or ``KIND:key=value,key=value`` (per-problem settings).

        Keys use the parameter names with - or _ (``seq-len=4``); values
        ``true``/``false`` are booleans, whole numbers are ints, anything
        else is text (decimals such as ``eps=0.1`` are read exactly).
        """
        m = SPEC_RE.match(text.strip())
        if not m:
            raise WorksheetError(f"cannot read problem '{text}': write KIND or KIND:key=value,...")
        options: dict[str, Any] = {}
        for part in filter(None, (m.group("opts") or "").split(",")):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise WorksheetError(f"cannot read setting '{part}' in '{text}': write key=value")
            options[key.strip().replace("-", "_")] = _option_value(value.strip())
        return cls(m.group("kind"), options)


def _option_value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[+-]?\d{1,6}", text):
        return int(text)
    return text


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
    inputs = kind.generate(problem_rng(seed, index, variant), params)
    return kind.solve(inputs, params, seed=seed)


def build_document(problems: Sequence[str | ProblemSpec] = DEFAULT_KINDS, *, seed: int = 1,
                   options: dict | None = None, title: str | None = None,
                   variant: int = 0, variant_id: str = "", **doc_fields) -> Document:
    """Generate and solve the problems of one sheet, in the order given."""
    options = dict(options or {})
    specs = [p if isinstance(p, ProblemSpec) else ProblemSpec.parse(p) for p in problems]
    for s in specs:
        kinds.get(s.kind)  # unknown kinds fail before any work
    probs = [make_problem(s, options, seed=seed, index=i, variant=variant) for i, s in enumerate(specs)]
    if title is None:
        title = probs[0].title if len(probs) == 1 else "Transformer attention worksheet"
    return Document(title, probs, seed=seed, numbers=options.get("numbers") or "hand",
                    variant=variant_id, **doc_fields)


def solve_inputs(kind_name: str, inputs: dict, options: dict | None = None) -> Problem:
    kind = kinds.get(kind_name)
    params = kind.Params.from_options(dict(options or {}))
    return kind.solve(inputs, params)


def solve_file(kind_name: str, path: Path | str, options: dict | None = None) -> Problem:
    """Solve the matrices in a JSON/TOML file; CLI options override the file's."""
    from .inputs import read_table

    return solve_table(kind_name, read_table(path, label=str(path)), options, label=str(path))


def solve_example(name: str, options: dict | None = None) -> Problem:
    """Solve a reference example from the lectures (see worksheet.reference)."""
    from .reference import EXAMPLES

    if name not in EXAMPLES:
        import difflib

        close = difflib.get_close_matches(name, EXAMPLES, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else "; see 'worksheet list --examples'"
        raise WorksheetError(f"unknown example '{name}'{hint}")
    ex = EXAMPLES[name]
    return solve_table(ex.kind, ex.table, options, label=f"example {name}")


def solve_table(kind_name: str, table: dict, options: dict | None = None, *,
                label: str | None = None) -> Problem:
    """Solve one input table (matrices + parameters), as read from a file."""
    from .inputs import split_table

    kind = kinds.get(kind_name)
    inputs, file_options = split_table(table, kind, file=label)
    merged = {**file_options, **{k: v for k, v in (options or {}).items() if v is not None}}
    # The user's own numbers are taken as they are: hand-mode limits (a perfect
    # square d_k, ...) are for generating, so solving defaults to calculator.
    merged.setdefault("numbers", "calculator")
    try:
        params = kind.Params.from_options(merged, source=label)
        return kind.solve(inputs, params)
    except (InputError, ShapeError, ParamError) as exc:
        raise in_file(exc, label) from None


def output_names(name: str, fmt: str) -> dict[str, str]:
    """File names per role: the JSON file is the key; other formats have both."""
    ext = render.get(fmt).ext if fmt in render.FORMATS else fmt
    if fmt == "json":
        return {"key": f"{name}.json"}
    return {"sheet": f"{name}.{ext}", "key": f"{name}-key.{ext}"}


def render_document(doc: Document, formats: Iterable[str], *, name: str = "worksheet",
                    templates: Path | None = None, roles=("sheet", "key")) -> dict[str, str]:
    """``{file name: text}`` for every format and role asked for."""
    out = {}
    for fmt in formats:
        renderer = render.get(fmt, templates)
        for role, filename in output_names(name, fmt).items():
            if role in roles or fmt == "json":
                out[filename] = renderer.render(doc, key=(role == "key"))
    return out


def write_document(doc: Document, formats: Iterable[str], out_dir: Path | str = "output", *,
                   name: str = "worksheet", force: bool = False,
                   templates: Path | None = None) -> list[Path]:
    files = render_document(doc, formats, name=name, templates=templates)
    return write_all({Path(out_dir) / f: text for f, text in files.items()}, force=force)
