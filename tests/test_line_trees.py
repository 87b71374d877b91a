"""The worked-line vocabulary as trees (worksheet.steps.line_trees): what a
line prints for typical numbers (the LaTeX the sheets have always had), and
for any numbers: its LaTeX reads back to itself, its MathML holds no LaTeX,
and a line says ≈ exactly when it rounded."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from worksheet.exact import NEG_INF, exp, is_rational, sqrt
from worksheet.solution.maths import read_latex, to_latex_text, to_mathml_inner, to_text
from worksheet.solution.maths.nodes import Ident, Rel
from worksheet.steps import line_trees as T
from worksheet.steps.line_choices import LONG_SUM, approx

F = Fraction
RATIONAL = st.builds(Fraction, st.integers(-99, 99), st.sampled_from([1, 1, 2, 3, 4, 5, 7, 10, 100]))
IRRATIONAL = st.one_of(
    st.builds(lambda k, d: exp(Fraction(k, d)), st.integers(-4, 2), st.sampled_from([1, 2, 4])),
    st.builds(lambda k: 1 / (1 + exp(Fraction(k))), st.integers(-3, 3)),
    st.builds(sqrt, st.integers(2, 12)),
)
VALUE = st.one_of(RATIONAL, RATIONAL, IRRATIONAL)
VECTORS = st.integers(1, 9).flatmap(
    lambda n: st.tuples(st.lists(VALUE, min_size=n, max_size=n), st.lists(VALUE, min_size=n, max_size=n))
)


def sound(node) -> str:
    """The line's LaTeX, checked: it reads back to a tree that prints the same, its
    MathML is well formed with no LaTeX left in a token, and its plain text has no backslash."""
    latex = str(node)
    assert read_latex(to_latex_text(read_latex(latex))) == read_latex(latex)
    inner = to_mathml_inner(node)
    ET.fromstring(f"<math>{inner}</math>")
    assert "\\" not in inner and "\\" not in to_text(node)
    return latex


def test_lines_print_as_the_sheets_have_always_printed_them():
    assert sound(T.dot_latex([F(1), F(2), F(-1)], [F(0), F(1), F(1)])) == r"1 \cdot 0 + 2 \cdot 1 + (-1) \cdot 1"
    assert sound(T.dot_work("s_{12}", [F(1), F(-1, 2)], [F(3), F(1)], F(5, 2))) == (
        r"s_{12} = 1 \cdot 3 + (-0.5) \cdot 1 = 2.5"
    )
    line = T.dot_work("z_{11}", [exp(-1), F(1)], [F(1), F(2)], exp(-1) + 2)
    assert sound(line) == r"z_{11} = e^{-1} \cdot 1 + 1 \cdot 2 = 2 + e^{-1} \approx 2.3679"
    line = T.dot_work("z_{11}", [exp(-1), F(1)], [F(1), F(2)], exp(-1) + 2, limit=0)  # every irrational as 4 places
    assert sound(line) == r"z_{11} \approx 0.3679 \cdot 1 + 1 \cdot 2 \approx 2.3679"
    assert sound(T.work_result(F(-3, 4))) == "= -0.75"
    assert sound(T.work_result(sqrt(3))) == r"= \sqrt{3} \approx 1.7321"
    assert sound(T.work_term(NEG_INF)[0]) == r"(-\infty)"
    assert sound(T.entry("h'", 2, 11)) == "h'_{3,12}" and sound(T.entry("{s'}^{(1)}", 0, 1)) == "{s'}^{(1)}_{12}"
    assert sound(T.chain("x", T.lx(F(5, 2)), T.lx(F(5, 2)), "y")) == r"x = \frac{5}{2} = y"
    assert sound(T.weighted_sum([F(1), F(0)], [F(1), F(2)], F(1))) == r"= 1 \cdot 1 + 0 \cdot 2 = 1"
    assert sound(T.nx(F(1, 3))) == r"\frac{1}{3}" and sound(T.nx(F(1, 4))) == "0.25"
    assert str(T.latex_text("a_b <c>")) == r"\text{a\_b \textless{}c\textgreater{}}"


@settings(max_examples=150, deadline=None)
@given(VECTORS, VALUE, st.booleans())
def test_any_product_line_is_sound_and_says_approx_exactly_when_it_rounds(ab, result, decimals):
    a, b = ab
    sound(T.dot_latex(a, b, decimals))
    line = T.dot_work("s_{12}", a, b, result)
    latex = sound(line)
    rounded = any(T.work_term(x)[1] for x in a + b)  # a term printed to 4 places: the line says ≈ at once
    assert line.items[1] == Rel("≈" if rounded else "="), latex
    if not is_rational(result):  # the result's 4 places end the line (before the count of an elided sum)
        assert latex.split(r" \quad")[0].endswith(approx(result)), latex
    long = len(a) > LONG_SUM
    assert (Ident("…") in line.items) == long and (r"\text{" in latex) == long


@settings(max_examples=100, deadline=None)
@given(VECTORS, VALUE)
def test_weighted_sums_chains_and_results_are_sound(ab, result):
    a, _ = ab
    weights = [Fraction(abs(x.numerator) % 100, 100) if isinstance(x, Fraction) else Fraction(1, 3) for x in a]
    sound(T.weighted_sum(weights, a, result))
    sound(T.chain("x", T.lx(a[0]), "y"))
    sound(T.work_result(result))
    sound(T.work_term(a[0], places=4)[0])
