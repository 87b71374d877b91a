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

Heavy modules (numpy, jinja2, sympy) are imported only when used.
"""

__version__ = "0.1.0"

_BUILD = ("build_document", "solve_inputs", "solve_file", "write_document")
_API = ("problem", "solve", "Marks")

__all__ = ["__version__", *_BUILD, *_API, "check"]


def __getattr__(name):  # lazy re-exports keep `import worksheet` light
    if name in _BUILD:
        from . import build

        return getattr(build, name)
    if name in _API:
        from . import api

        return getattr(api, name)
    if name == "check":  # the module worksheet.check, which can be called as api.check
        import importlib

        return importlib.import_module(".check", __name__)
    raise AttributeError(name)
