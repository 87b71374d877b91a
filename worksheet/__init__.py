"""worksheet: step-by-step worked examples of Transformer attention, exact.

In a notebook (see :mod:`worksheet.api`)::

    import worksheet
    p = worksheet.problem("attention", seed=3, causal=True)  # a kind from a seed
    p                                                         # the worked example (HTML in Jupyter)
    w, W = p.to_numpy()["weights"], p.to_sympy()["weights"]   # numpy array, exact sympy Matrix
    worksheet.check(p, {"weights": w}).ok                     # per-step marks
    worksheet.solve("attention", "examples/mine.toml")        # your numbers: a file or a dict
    worksheet.build("attention", "layer-norm", seed=7)        # a sheet (a Document)
    worksheet.kinds()                                         # every kind with its parameters

The face is these functions and the error types (``dir(worksheet)``); each
function is thin and imports the library when called, so ``import worksheet``
loads neither numpy, jinja2 nor sympy.  ``worksheet.check`` and
``worksheet.build`` are these functions even once the modules of the same
names (``worksheet/check/``, ``worksheet/build``) are imported: reach those
with ``from worksheet.check import check_answers`` and the like.
``worksheet.kinds`` is the kind registry (``kinds.names()``, ``kinds.get``);
calling it lists every kind with its parameters.

The package by layers, bottom to top; a module imports only from its own
layer or the ones below it (``tests/test_layers.py`` checks it from the imports):

1. ``policy/`` -- errors, limits, the safe-text rules, file reading and writing;
2. ``exact/`` -- exact numbers: nodes, arithmetic, printers, the sympy view;
3. ``solution/`` -- the worked-solution model: Problem, Step, Document, number formats;
4. ``parse/`` -- exact numbers and input tables read from untrusted text;
5. ``steps/`` -- step builders the kinds share: linear algebra, softmax, attention, float checks;
6. ``kinds/`` -- one module per kind, the registry, lecture examples, named mistakes;
7. ``check/`` and ``render/`` -- marking answers; one module per output format;
8. ``build/`` -- spec, sheets, variants, output files;
9. the top: :mod:`worksheet.api` (the library's face), :mod:`worksheet.cli`
   (click commands only), :mod:`worksheet.bench`, :mod:`worksheet.practice` (the web app
   of ``worksheet practice``), and this module.
"""

import sys
import types

from . import kinds  # the registry (light: no kind is imported until asked for); kinds() lists them
from .policy.errors import (
    ArgumentError,
    GenerationError,
    InputError,
    OutputError,
    ParamError,
    ShapeError,
    UnknownKindError,
    UnknownStepError,
    WorksheetError,
)
from .solution import notebook as _notebook

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "problem",
    "solve",
    "check",
    "kinds",
    "build",
    "WorksheetError",
    "InputError",
    "ParamError",
    "UnknownKindError",
    "ShapeError",
    "GenerationError",
    "OutputError",
    "ArgumentError",
    "UnknownStepError",
    # what the CLI builds on (see worksheet.build)
    "build_document",
    "solve_inputs",
    "solve_file",
    "write_document",
]


def problem(kind: str, seed: int = 1, **params):
    """A kind built from a seed, as ``worksheet build KIND --seed SEED``: see :func:`worksheet.api.problem`."""
    from .api import problem

    return problem(kind, seed, **params)


def solve(kind=None, inputs=None, *, example=None, **params):
    """The worked solution for your own numbers (a file path or a dict of matrices) or a
    lecture's example, as ``worksheet solve``: see :func:`worksheet.api.solve`."""
    from .api import solve

    return solve(kind, inputs, example=example, **params)


def check(problem, answers):
    """Mark answers (step name -> matrix) against a problem, as ``worksheet check``: see
    :func:`worksheet.api.check`."""
    from .api import check

    return check(problem, answers)


def build(*problems, **options):
    """A sheet (or one per variant) as ``worksheet build`` makes it: see :func:`worksheet.api.build`."""
    from .api import build

    return build(*problems, **options)


def build_document(*args, **kwargs):
    """Generate and solve the problems of one sheet: see :func:`worksheet.build.sheets.build_document`."""
    from .build import build_document

    return build_document(*args, **kwargs)


def solve_inputs(*args, **kwargs):
    """Solve exact inputs of a kind: see :func:`worksheet.build.sheets.solve_inputs`."""
    from .build import solve_inputs

    return solve_inputs(*args, **kwargs)


def solve_file(*args, **kwargs):
    """Solve the matrices of a JSON or TOML file: see :func:`worksheet.build.sheets.solve_file`."""
    from .build import solve_file

    return solve_file(*args, **kwargs)


def write_document(*args, **kwargs):
    """Render a document and write its files: see :func:`worksheet.build.output.write_document`."""
    from .build import write_document

    return write_document(*args, **kwargs)


def _show(shown, fmt: str) -> str:
    from .render.notebook import show

    return show(shown, fmt)


_notebook.show = _show  # how Jupyter shows a Problem or a Document (see worksheet.solution.notebook)


_FACE = frozenset({"check", "build"})  # functions named like a module of this package


class _Package(types.ModuleType):
    """This package's module: when ``worksheet/check/`` (or ``worksheet.build``) is
    first imported, Python binds it as an attribute of this package, which would
    replace the function of the same name; the function stays (the module is in
    ``sys.modules`` and importable by its full name: ``from worksheet.check import ...``).
    ``worksheet.kinds`` is the kind registry, which can be called: ``worksheet.kinds()``."""

    def __setattr__(self, name, value):
        if name in _FACE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)

    def __dir__(self):
        return sorted(n for n in __all__ if n != "__version__")


sys.modules[__name__].__class__ = _Package
