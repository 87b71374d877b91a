"""positional-encoding: angles per pair, sin on even and cos on odd columns,
X + PE; the lecture's numbers for d_model = 5; exact vs numpy, hand mode,
files, CLI, LaTeX, golden files."""

import json
import math
from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, write_input
from worksheet.build import solve_file
from worksheet.policy.errors import InputError, ParamError, ShapeError
from worksheet.exact import is_rational, to_str, to_sympy
from worksheet.kinds import positional_encoding as kind
from worksheet.solution.maths import Node, Text, mathml_formula, read_latex, walk

KIND = "positional-encoding"


def numpy_pe(positions, d, base=10000):
    """The paper's formula column by column, with i = j // 2 the pair of column j."""
    PE = np.zeros((len(positions), d))
    for r, pos in enumerate(positions):
        for j in range(d):
            angle = pos / base ** (2 * (j // 2) / d)
            PE[r, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return PE


def test_reference_numbers_d_model_5():
    p = kind.solve({}, kind.Params(d_model=5, positions=(0, 1)))
    PE = p.step("PE").exact
    assert [to_str(x) for x in PE[0]] == ["0", "1", "0", "1", "0"]
    want = [
        sympy.sin(1),
        sympy.cos(1),
        sympy.sin(1 / sympy.Integer(10000) ** sympy.Rational(2, 5)),
        sympy.cos(1 / sympy.Integer(10000) ** sympy.Rational(2, 5)),
        sympy.sin(1 / sympy.Integer(10000) ** sympy.Rational(4, 5)),
    ]
    for got, w in zip(PE[1], want):
        assert sympy.simplify(to_sympy(got) - w) == 0
        assert sympy.sympify(to_str(got)).equals(w)  # the JSON string reads back the same
    assert [to_str(x) for x in PE[1][:2]] == ["sin(1)", "cos(1)"]
    np.testing.assert_allclose(p.step("PE").value, numpy_pe([0, 1], 5), rtol=1e-12)
    assert p.step("angles").shape == (2, 3)  # one angle per pair: ceil(5 / 2)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, 60), min_size=1, max_size=4),
    st.integers(1, 9),
    st.sampled_from([10000, 100, 2]),
    st.booleans(),
)
def test_exact_matches_numpy_for_random_sizes(positions, d, base, with_x):
    X = tuple(tuple(F(r - c, 2) for c in range(d)) for r in range(len(positions))) if with_x else None
    p = kind.solve({"X": X} if with_x else {}, kind.Params(d_model=d, positions=tuple(positions), base=base))
    PE = numpy_pe(positions, d, base)
    np.testing.assert_allclose(floats(p.step("PE").exact), PE, rtol=1e-9, atol=1e-12)
    if with_x:
        np.testing.assert_allclose(floats(p.step("X_plus_PE").exact), floats(X) + PE, rtol=1e-9, atol=1e-12)
    assert [s.name for s in p.steps] == ["angles", "PE"] + (["X_plus_PE"] if with_x else [])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([None, 2, 8]), st.integers(1, 5))
def test_hand_mode_angles_are_rational_and_the_sheet_prints_sin_and_cos(seed, d, n):
    params = kind.Params(seq_len=n, d_model=d)
    m = kind.generate(np.random.default_rng(seed), params)
    p = kind.solve(m, params)
    assert p["X"].integral and np.abs(p["X"].value).max() <= 2 and np.abs(p["X"].value).sum(axis=1).min() > 0
    assert all(is_rational(a) for row in p.step("angles").exact for a in row)
    assert all(abs(v) <= 1 for row in p.step("PE").value for v in row)
    if 1 < n and (n - 1) * ((d or 4) // 2) <= kind.AID_LIMIT:
        assert p.aids and "sin" in p.aids[0].title
    assert [s.name for s in p.steps] == ["angles", "PE", "X_plus_PE"]


def test_sin_on_even_and_cos_on_odd_columns_with_the_pair_index():
    p = kind.solve({}, kind.Params(d_model=4, positions=(3,)))
    assert [to_str(x) for x in p.step("angles").exact[0]] == ["3", "3/100"]
    assert [to_str(x) for x in p.step("PE").exact[0]] == ["sin(3)", "cos(3)", "sin(3/100)", "cos(3/100)"]


def test_formulas_worked_lines_and_symbols_are_trees_that_print_as_before():
    """Issue 26: every formula, worked line and symbol is a tree; sin(1/100) is printed
    as its exact value is (the table's argument too), with brackets that grow around
    the fraction in MathML as they did when the line was read from its LaTeX."""
    p = kind.solve({"X": ((1, 0, 0, 0), (0, 0, 1, 0))}, kind.Params())
    for s in p.steps:
        assert all(isinstance(x, Node) for x in (s.formula, *s.work, s.symbol)), s.name
    assert [str(s.symbol) for s in p.steps] == [r"\Theta", r"\mathrm{PE}", r"X + \mathrm{PE}"]
    sine = p.step("PE").work[0]
    assert str(sine) == r"\mathrm{PE}_{1,2} = \sin(\theta_{1,1}) = \sin\left(\frac{1}{100}\right) \approx 0.0100"
    assert mathml_formula(sine) == mathml_formula(read_latex(str(sine)))
    assert 'stretchy="true"' in mathml_formula(sine)
    assert str(p.step("X_plus_PE").work[0]).startswith(r"(X + \mathrm{PE})_{1,2} = x_{1,2} + \mathrm{PE}_{1,2}")
    assert (r"\sin\left(\frac{1}{100}\right)", "0.0100") in p.aids[0].entries
    assert not any(isinstance(n, Text) for s in p.steps for w in s.work for n in walk(w))  # no words in its maths


def test_calculator_mode_gives_one_decimal_embeddings():
    params = kind.Params(numbers="calculator", d_model=6)
    p = kind.solve(kind.generate(np.random.default_rng(1), params), params)
    assert all((x * 10).denominator == 1 for row in p["X"].exact for x in row)
    assert not p.aids


TABLE = {
    "X": [["0.2", "-0.8", "-0.6", "0.9", "0.1"], ["-0.9", "0.3", "0.4", "0.6", "-0.1"]],
    "positions": [0, 1],
    "tokens": ["The", "Large"],
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.inputs["X"].exact[0][0] == F(1, 5) and p.params["d_model"] == 5
    assert [to_str(x) for x in p.step("X_plus_PE").exact[1][:2]] == ["-9/10 + sin(1)", "3/10 + cos(1)"]
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"X_plus_PE"' in r.output and "sin(10**(2/5)/100)" in r.output


@pytest.mark.parametrize(
    "table, message",
    [
        ({**TABLE, "d_model": 4}, "X is 2 x 5 but d_model = 4"),
        ({**TABLE, "positions": [0, 1, 2]}, "3 positions are given"),
        ({**TABLE, "Y": [[1]]}, "unknown field"),
        ({**TABLE, "X": [[1, 2], [3]]}, "ragged rows"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, table, message, suffix):
    assert message in solve_error(runner, cli, KIND, table, tmp_path / f"bad{suffix}")


def test_bad_parameters():
    with pytest.raises(ParamError, match="base"):
        kind.Params(base=1)
    with pytest.raises(ParamError, match="2 positions given but --seq-len is 3"):
        kind.Params(positions=(0, 1), seq_len=3)
    with pytest.raises(ShapeError, match="seq_len = 3"):
        kind.solve({"X": ((F(1),),)}, kind.Params(seq_len=3))
    with pytest.raises(InputError, match="reads only X"):
        kind.solve({"Q": ((F(1),),)}, kind.Params())


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--seq-len", "4", "--d-model", "5"],
        ["--numbers", "calculator", "--d-model", "6", "--seq-len", "2", "--seed", "9"],
    ],
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, [KIND, *args], tmp_path)
    p = data["problems"][0]
    assert [s["name"] for s in p["steps"]] == ["angles", "PE", "X_plus_PE"]


def test_build_with_positions_per_problem(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", f"{KIND}:positions=0 5 9,d-model=2", "--format", "json", "-o", "-"])
    assert r.exit_code == 0, r.stderr
    p = json.loads(r.output)["problems"][0]
    assert p["params"]["positions"] == [0, 5, 9]
    assert p["steps"][1]["exact"][1] == ["sin(5)", "cos(5)"]


def test_golden_files():
    check_golden(KIND, [KIND])
