"""worksheet: step-by-step worked examples of Transformer attention, exact.

In a notebook (see :mod:`worksheet.api`)::

    import worksheet
    p = worksheet.problem("attention", seed=3, causal=True)  # a kind from a seed
    p                                                         # the worked example (HTML in Jupyter)
    w, W = p.arrays()["weights"], p.to_sympy()["weights"]     # numpy array, exact sympy Matrix
    worksheet.check(p, {"weights": w}).ok                     # per-step marks

``worksheet.solve(kind, {"X": [[1, 0], [0, 1]], ...})`` solves your own
matrices.  Everything the CLI does::

    from worksheet import build_document, solve_file
    doc = build_document(["attention"], seed=7, options={"causal": True})
    doc.problems[0].step("weights").exact     # exact softmax weights

Heavy modules (numpy, jinja2, sympy) are imported only when used: the
functions here are thin, and import the library when called.

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
   (click commands only), :mod:`worksheet.bench`, and this module.
"""

from .solution import notebook as _notebook

__version__ = "0.1.0"

__all__ = ["__version__", "build_document", "solve_inputs", "solve_file", "write_document", "problem", "solve", "check"]


def problem(kind: str, seed: int = 1, **params):
    """A kind built from a seed, as ``worksheet build KIND --seed SEED``: see :func:`worksheet.api.problem`."""
    from .api import problem

    return problem(kind, seed, **params)


def solve(kind: str, matrices, **params):
    """The worked solution for your own matrices: see :func:`worksheet.api.solve`."""
    from .api import solve

    return solve(kind, matrices, **params)


def check(problem, answers):
    """Mark answers (step name -> matrix) against a problem: see :func:`worksheet.api.check`.

    Once :mod:`worksheet.check` is imported, ``worksheet.check`` is that
    module, which is called the same way."""
    from .api import check

    return check(problem, answers)


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
