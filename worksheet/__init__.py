"""worksheet: step-by-step worked examples of Transformer attention, exact.

Library use (everything the CLI does)::

    from worksheet import build_document, solve_file
    doc = build_document(["attention"], seed=7, options={"causal": True})
    doc.problems[0].step("weights").exact     # exact softmax weights

Heavy modules (numpy, jinja2, sympy) are imported only when used.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "build_document", "solve_inputs", "solve_file", "write_document"]


def __getattr__(name):  # lazy re-exports keep `import worksheet` light
    if name in ("build_document", "solve_inputs", "solve_file", "write_document"):
        from . import build

        return getattr(build, name)
    raise AttributeError(name)
