"""The worked-line vocabulary as trees (worksheet.steps.line_trees) prints,
for any numbers, exactly the LaTeX that the string helpers
(worksheet.steps.worklines) write: a kind moved to trees keeps its lines."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from worksheet.exact import NEG_INF, exp, sqrt
from worksheet.solution.maths import read_latex, to_mathml_inner
from worksheet.steps import line_trees as T
from worksheet.steps import worklines as W

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


def same(old: str, new) -> None:
    assert str(new) == old
    assert read_latex(str(new)) == read_latex(old)
    assert "\\" not in to_mathml_inner(new)  # MathML of its own: no LaTeX left in a token


@settings(max_examples=150, deadline=None)
@given(VECTORS, VALUE, st.booleans())
def test_products_and_their_results(ab, result, decimals):
    a, b = ab
    same(W.dot_latex(a, b, decimals), T.dot_latex(a, b, decimals))
    same(W.dot_work("s_{12}", a, b, result), T.dot_work("s_{12}", a, b, result))
    same(
        W.dot_work("s_{12}", a, b, result, plus=a[0], limit=0, places=4),
        T.dot_work("s_{12}", a, b, result, plus=a[0], limit=0, places=4),
    )
    same(W.work_result(result), T.work_result(result))
    same(W.work_term(a[0])[0], T.work_term(a[0])[0])
    assert W.work_term(a[0])[1] == T.work_term(a[0])[1]


@settings(max_examples=100, deadline=None)
@given(VECTORS, VALUE)
def test_weighted_sums_and_chains(ab, result):
    a, _ = ab
    weights = [Fraction(abs(x.numerator) % 100, 100) if isinstance(x, Fraction) else Fraction(1, 3) for x in a]
    same(W.weighted_sum(weights, a, result), T.weighted_sum(weights, a, result))
    same(W.chain("x", W.lx(a[0]), W.lx(a[0]), "y"), T.chain("x", T.lx(a[0]), T.lx(a[0]), "y"))


def test_a_given_number_is_its_decimal_or_a_fraction_never_latex_in_a_token():
    for x in (Fraction(1, 3), Fraction(-7, 6), Fraction(1, 4), Fraction(-2)):
        same(W.nx(x), T.nx(x))
        same(W.lx(x, True), T.lx(x, True))


def test_entries_and_the_masked_value():
    for sym in ("s", "h'", r"\alpha", "{s'}^{(1)}", "W^O"):
        for i, j in ((0, 1), (2, 11)):
            same(W.entry(sym, i, j), T.entry(sym, i, j))
    same(W.work_term(NEG_INF)[0], T.work_term(NEG_INF)[0])
    same(W.work_result(NEG_INF), T.work_result(NEG_INF))
