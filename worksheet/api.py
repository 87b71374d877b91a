"""The library in a notebook: build or solve a worked example, look at it,
take its steps as numpy or sympy matrices, and check answers.

::

    import worksheet
    p = worksheet.problem("attention", seed=3, causal=True)  # as `worksheet build attention --seed 3 --causal`
    p                                                         # in Jupyter: the worked example
    w, W = p.to_numpy()["weights"], p.to_sympy()["weights"]   # numpy array, exact sympy Matrix (inputs too)
    worksheet.check(p, {"weights": w}).ok                     # per-step marks, as `worksheet check`

``worksheet.solve(kind, {"X": [[1, 0], [0, 1]], ...}, causal=True)`` (or
``worksheet.solve(kind, "mine.toml")``) solves your own matrices as
``worksheet solve`` does: numbers are read exactly by the
parser every input file goes through (a float ``0.2`` is read from its text,
so it is 1/5; ``"3/4"`` is a fraction), never evaluated.

Nothing here imports sympy until ``to_sympy`` is called, and nothing here
changes the command line.

Every argument is checked at the door (:mod:`worksheet.parse.arguments`): a wrong
type or shape (``None``, a kind name where a problem is expected, a matrix
nested too deep or holding itself) raises
:class:`~worksheet.policy.errors.ArgumentError`, a ``TypeError``; a value that
cannot work (``"abc"`` as an entry, NaN, infinity, a complex number, a
number too long to print) a ``ValueError`` subclass of
:class:`~worksheet.policy.errors.WorksheetError`; an unknown step name
:class:`~worksheet.policy.errors.UnknownStepError` (a ``LookupError``).  Each is one
line naming the argument.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .build import ProblemSpec, build_document, solve_table
from .check.in_memory import Marks
from .check.in_memory import check_problem as check
from .parse.arguments import kind_argument, mapping_argument, matrix_argument, option_value
from .policy.errors import ArgumentError, InputError
from .solution.problem import Problem

__all__ = ["problem", "solve", "check", "kinds", "build", "Marks"]


def problem(kind: str, seed: int = 1, **params) -> Problem:
    """A kind built from a seed: the numbers of ``worksheet build KIND --seed SEED``
    with the same settings (``causal=True``, ``seq_len=4``, ``numbers="calculator"``, ...).
    An unknown setting is an error naming the kind's settings."""
    spec = ProblemSpec(kind_argument(kind), {k: option_value(v, k) for k, v in params.items()})
    return build_document([spec], seed=seed).problems[0]


def solve(kind: str | None = None, inputs: Any = None, *, example: str | None = None, **params) -> Problem:
    """The worked solution of your own numbers, from what ``worksheet solve`` takes:

    * ``solve("attention", "mine.toml")`` -- a JSON or TOML input file (a path);
    * ``solve("attention", {"Q": [[1, 0]], "K": ..., "V": ...})`` -- the same table as a
      dict (numpy arrays and sympy matrices work too);
    * ``solve(example="thinking-machines")`` -- a lecture's example.

    ``params`` override the file's (``causal=True``), as the CLI's options do."""
    from .build import solve_example, solve_file

    options = {k: option_value(v, k) for k, v in params.items()}
    if example is not None:
        if kind is not None or inputs is not None:
            raise ArgumentError("give either example=NAME or a kind and its inputs, not both")
        return solve_example(kind_argument(example, "example"), options)
    if kind is None or inputs is None:
        raise ArgumentError("solve needs a kind and its inputs (a file or a dict of matrices), or example=NAME")
    kind_argument(kind)
    if isinstance(inputs, (str, Path)):
        if not Path(inputs).is_file():
            from .policy.integer_text import shown

            raise InputError(
                f"inputs: no file {shown(str(inputs))}; give an input file's path or a dict of "
                "matrices, e.g. {'X': [[1, 0], [0, 1]]}"
            )
        return solve_file(kind, inputs, options)
    mapping_argument(inputs, "inputs", "a file path or a dict of name -> matrix, e.g. {'X': [[1, 0], [0, 1]]}")
    table = {k: matrix_argument(v, f"inputs[{k!r}]") for k, v in inputs.items()}
    table.update(options)
    return solve_table(kind, table, label=f"{kind} input")


def kinds() -> list:
    """Every problem kind with its parameters (defaults, the values hand and calculator
    mode accept), what each mode draws and the mistakes ``check`` names: the
    :class:`worksheet.kinds.catalogue.KindInfo` that ``worksheet list KIND`` prints."""
    from .kinds.catalogue import kind_infos

    return kind_infos()


def build(
    *problems: str,
    spec: Any = None,
    seed: int | None = None,
    variants: int | None = None,
    title: str | None = None,
    **options,
):
    """What ``worksheet build`` makes, as documents: ``build("attention", "layer-norm",
    seed=7, causal=True)`` gives one :class:`~worksheet.solution.document.Document` (sheet and key
    are its renderings); ``build(spec="exam.toml", variants=30)`` gives one per variant.
    Problems are kinds or ``KIND:key=value`` texts; options as the CLI's (``numbers``,
    ``seq_len``, ``heads``, ...), checked first, with the same rules."""
    from .build import build_variants, check_problems, resolve_build

    for k, p in enumerate(problems, 1):
        kind_argument(p, f"problems[{k}]")
    plan = resolve_build(
        spec,
        problems,
        seed=seed,
        options={k: option_value(v, k) for k, v in options.items()},
        title=title,
        variants=variants,
    )
    check_problems(plan.problems, plan.options)
    if plan.variants:
        return build_variants(plan.problems, plan.variants, **plan.document_args())
    return build_document(plan.problems, **plan.document_args())
