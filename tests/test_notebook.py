"""The library in a notebook: worksheet.problem / solve / check, numpy and
sympy views of the steps, and how problems and documents show in Jupyter."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import worksheet
from worksheet.build import build_document
from worksheet.policy.errors import InputError, ParamError, WorksheetError
from worksheet.render import get


def test_the_readme_notebook_example_runs():
    # the README's five lines, with what Jupyter does for the bare `p` line
    import worksheet

    p = worksheet.problem("attention", seed=3, causal=True)
    p._repr_html_(), p._repr_markdown_()
    w, W = p.arrays()["weights"], p.to_sympy()["weights"]
    marks = worksheet.check(p, {"weights": w, "scores": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})

    assert marks["weights"].status == "correct" and marks["scores"].status == "incorrect"
    assert marks["Q"].status == "missing" and (marks.marks, marks.out_of) == (1, 8)
    assert isinstance(w, np.ndarray) and w.shape == (3, 3) and W.shape == (3, 3)


def test_problem_from_a_seed_is_the_one_build_makes():
    p = worksheet.problem("attention", seed=3, causal=True)
    q = build_document(["attention"], seed=3, options={"causal": True}).problems[0]
    assert [s.name for s in p.steps] == [s.name for s in q.steps]
    assert all(a.exact == b.exact for a, b in zip(p.steps, q.steps))


def test_problem_rejects_an_unknown_setting():
    with pytest.raises(ParamError, match="no setting 'causl'"):
        worksheet.problem("attention", causl=True)


def test_solve_reads_numbers_exactly_and_never_evaluates_text():
    p = worksheet.solve(
        "attention",
        {"Q": [[1, 0], [0, 1]], "K": np.eye(2, dtype=int), "V": [[0.2, "3/4"], [Fraction(1, 3), -1]]},
        causal=True,
    )
    assert p["V"].exact == ((Fraction(1, 5), Fraction(3, 4)), (Fraction(1, 3), Fraction(-1)))
    assert p["weights"].to_sympy()[0, :].tolist()[0] == [1, 0]
    with pytest.raises(InputError, match="V, row 1, column 1"):
        worksheet.solve("attention", {"Q": [[1]], "K": [[1]], "V": [["__import__('os').getcwd()"]]})
    with pytest.raises(InputError, match="not finite"):
        worksheet.solve("attention", {"Q": [[float("nan")]], "K": [[1]], "V": [[1]]})


def test_inputs_and_steps_as_numpy_arrays_are_copies_of_the_float_values():
    p = worksheet.problem("attention", seed=2, causal=True)
    arrays = p.to_numpy()
    assert list(arrays) == [*p.inputs, *(s.name for s in p.steps)]
    assert np.array_equal(arrays["X"], p.inputs["X"].value)
    assert np.array_equal(arrays["masked"], p["masked"].value) and arrays["masked"][0, 1] == -np.inf
    arrays["weights"][0, 0] = 42.0
    assert p["weights"].value[0, 0] != 42.0


def test_steps_as_sympy_matrices_hold_the_exact_values():
    import sympy

    p = worksheet.problem("attention", seed=2, causal=True)
    m = p.to_sympy()
    assert set(m) == {*p.inputs, *(s.name for s in p.steps)}  # the same names as to_numpy()
    assert list(m) == list(p.to_numpy())
    weights = m["weights"]
    assert isinstance(weights, sympy.Matrix)
    for i in range(weights.rows):
        assert sympy.simplify(sum(weights.row(i)) - 1) == 0  # each row sums to exactly 1
        assert all(weights[i, j] == 0 for j in range(i + 1, weights.cols))  # causal: zero above the diagonal
    assert m["masked"][0, 1] == -sympy.oo
    assert sympy.Matrix(p["scores"].value.tolist()).equals(m["scores"])


def test_a_label_entry_is_a_sympy_symbol_and_written_steps_have_no_matrix():
    import sympy

    p = worksheet.problem("next-token", seed=2, vocab=["a", "b", "c"])
    (label,) = p.to_sympy()["prediction"]
    assert isinstance(label, sympy.Symbol) and label.name == p["prediction"].exact[0][0]
    p.add_written("why", title="Why?", answer="Because.")
    assert "why" not in p.to_sympy() and "why" not in p.to_numpy()
    marks = worksheet.check(p, {"prediction": [[p["prediction"].exact[0][0]]]})  # words: left to a person
    assert marks["prediction"].status == "correct" and "why" not in marks.steps


def test_check_accepts_numpy_arrays_text_and_masked_entries():
    p = worksheet.problem("attention", seed=2, causal=True)
    answers = {"masked": p["masked"].value, "weights": [[f"{x:.4f}" for x in row] for row in p["weights"].value]}
    marks = worksheet.check(p, answers)
    assert marks["masked"].status == "correct" and marks["weights"].status == "correct"
    wrong = p["weights"].value.T  # softmax down the columns
    assert worksheet.check(p, {"weights": wrong})["weights"].status == "incorrect"


def test_check_of_every_answer_is_ok_and_shows_as_a_table():
    p = worksheet.problem("layer-norm", seed=1)
    marks = worksheet.check(p, p.to_numpy())  # the inputs among them are given, not marked
    assert marks.ok and marks.marks == marks.out_of == len(p.steps)
    assert "| `mean` | correct |" in marks._repr_markdown_() and "Total:" in str(marks)


def test_check_of_a_step_the_problem_does_not_have_is_an_error():
    p = worksheet.problem("attention", seed=1)
    with pytest.raises(WorksheetError, match="unknown step"):
        worksheet.check(p, {"weigths": [[1]]})


def test_a_problem_shows_itself_through_the_html_and_markdown_renderers():
    p = worksheet.problem("attention", seed=3, causal=True)
    html = p._repr_html_()
    assert "<math" in html and "Scaled dot-product attention" in html and "<details" not in html
    assert "<html" not in html and "<h1" not in html  # a fragment; its styles are scoped (test_notebook_display.py)
    from worksheet.render.notebook import document

    doc = document(p)
    assert p._repr_markdown_() == get("md").render(doc, key=True)
    assert "answer key" in p._repr_markdown_()


def test_a_document_shows_every_problem():
    doc = build_document(["attention", "layer-norm"], seed=1)
    html = doc._repr_html_()
    assert "Problem 1: Scaled dot-product attention" in html and "Problem 2:" in html
    assert doc._repr_markdown_() == get("md").render(doc, key=True)


def test_import_and_api_do_not_import_sympy_until_to_sympy():
    code = (
        "import sys, worksheet\n"
        "print(sorted(m for m in ('sympy', 'numpy', 'jinja2') if m in sys.modules))\n"
        "p = worksheet.problem('attention', seed=3, causal=True)\n"
        "q = worksheet.solve('attention', {'Q': [[1, 0]], 'K': [[1, 0]], 'V': [[2, 3]]})\n"
        "p._repr_html_(); p._repr_markdown_(); p.arrays(); worksheet.check(p, {'weights': p.arrays()['weights']})\n"
        "print('sympy' in sys.modules)\n"
        "p.to_sympy()\n"
        "print('sympy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:3] == ["[]", "False", "True"]


def test_worksheet_check_is_the_function_even_after_the_check_package_is_imported():
    import inspect
    import types

    from worksheet.check import Tolerance, check_answers  # the package, by its full name

    assert check_answers and Tolerance
    assert isinstance(worksheet.check, types.FunctionType)
    assert list(inspect.signature(worksheet.check).parameters) == ["problem", "answers"]
    from worksheet import check

    assert check is worksheet.check
