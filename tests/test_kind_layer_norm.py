"""layer-norm (Add & Norm): residual, mean, population variance, normalise,
gamma and beta; exact vs numpy, hand-mode rows, eps, files, CLI, LaTeX, golden."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, write_input
from worksheet.build import build_document, solve_file
from worksheet.policy.errors import GenerationError, InputError, ParamError
from worksheet.exact import is_rational
from worksheet.kinds import layer_norm as kind
from worksheet.kinds.block_symbols import one
from worksheet.solution.maths import Node
from worksheet.solution.maths.nodes import Accent, Ident, Num, Row, Script

KIND = "layer-norm"
entries = st.fractions(min_value=-3, max_value=3, max_denominator=5)


def numpy_layer_norm(X, S, gamma, beta, eps):
    R = X if S is None else X + S
    mean = R.mean(axis=-1, keepdims=True)
    var = R.var(axis=-1, keepdims=True)  # ddof = 0: the population variance
    N = (R - mean) / np.sqrt(var + eps)
    return {"residual": R, "mean": mean, "variance": var, "normalized": N, "output": gamma * N + beta}


@st.composite
def ln_inputs(draw):
    n, d = draw(st.integers(1, 4)), draw(st.integers(2, 6))
    mat = lambda r, c: tuple(tuple(draw(entries) for _ in range(c)) for _ in range(r))
    m = {"X": mat(n, d), "gamma": mat(1, d), "beta": mat(1, d)}
    if draw(st.booleans()):
        m["S"] = mat(n, d)
    return m


@settings(max_examples=25, deadline=None)
@given(ln_inputs(), st.sampled_from([F(0), F(1, 100000), F(1, 10)]))
def test_exact_matches_numpy_for_random_user_numbers(m, eps):
    # a zero variance with eps = 0 has no layer norm; decide it exactly (a float
    # variance of equal entries can come out a tiny positive number)
    rows = [[x + (m["S"][i][j] if "S" in m else 0) for j, x in enumerate(r)] for i, r in enumerate(m["X"])]
    assume(eps > 0 or all(len(set(r)) > 1 for r in rows))
    f = {k: floats(v) for k, v in m.items()}
    want = numpy_layer_norm(f["X"], f.get("S"), f["gamma"], f["beta"], float(eps))
    p = kind.solve(m, kind.Params(eps=eps))
    names = [s.name for s in p.steps]
    assert names == (["residual"] if "S" in m else []) + ["mean", "variance", "normalized", "output"]
    for name in names:
        np.testing.assert_allclose(floats(p.step(name).exact), want[name], rtol=1e-9, atol=1e-9, err_msg=name)
    assert p.step("mean").shape == (len(m["X"]), 1) and p.step("variance").shape == (len(m["X"]), 1)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 4, 5, 6]), st.integers(1, 4), st.booleans())
def test_hand_mode_rows_have_integer_means_and_square_variances(seed, d, n, residual):
    params = kind.Params(seq_len=n, d_model=d, residual=residual)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    assert params.epsilon == 0 and "$\\varepsilon = 0$" in p.intro
    for name in p.inputs:
        assert p[name].integral
    assert ("S" in p.inputs) == residual and np.abs(p["X"].value).max() <= 5
    for (mu,), (var,) in zip(p.step("mean").exact, p.step("variance").exact):
        assert mu.denominator == 1  # an integer mean
        assert var > 0 and all(int(np.sqrt(q)) ** 2 == q for q in (var.numerator, var.denominator))
    for name in ("normalized", "output"):
        assert all(is_rational(x) for row in p.step(name).exact for x in row), name
    for row in p.step("normalized").exact:
        assert sum(row) == 0 and sum(x * x for x in row) == d  # mean 0, variance exactly 1


@pytest.mark.parametrize("d", [1, 3])
def test_widths_with_no_pleasant_rows_raise_a_generation_error_naming_kind_and_width(d):
    with pytest.raises(GenerationError, match=rf"layer-norm: .*width d_model = {d}"):
        kind.generate(np.random.default_rng(0), kind.Params(d_model=d))


def test_calculator_mode_uses_eps_1e5_and_says_so():
    params = kind.Params(numbers="calculator")
    p = kind.solve(kind.generate(np.random.default_rng(3), params), params)
    assert params.epsilon == F(1, 100000) and "0.00001" in p.intro and p.params["eps"] == "1/100000"
    assert all((x * 10).denominator == 1 for row in p["X"].exact for x in row)


def test_eps_per_problem_from_the_command_line_syntax():
    doc = build_document(["layer-norm:eps=1/10"], seed=2)
    p = doc.problems[0]
    assert p.params["eps"] == "1/10" and "0.1" in p.intro
    f = {k: q.value for k, q in p.inputs.items()}
    want = numpy_layer_norm(f["X"], f["S"], f["gamma"], f["beta"], 0.1)
    np.testing.assert_allclose(floats(p.step("output").exact), want["output"], rtol=1e-9)


@pytest.mark.parametrize("carried", [False, True])
def test_formulas_worked_lines_and_symbols_are_trees_as_the_blocks_rename_them(carried):
    """Issue 26: every formula, worked line and symbol is a tree; formulas and symbols are the
    trees their LaTeX reads as (what the blocks' renaming rules were written for): mu_i,
    sigma^2_i as sigma with sub i and sup 2, x-hat_ij as a hatted x with sub ij."""
    from worksheet.steps.scaled_dot_product import Carry

    inputs = {"X": ((0, 1, 2, 5), (1, -1, 2, 2)), "S": ((1, 1, 1, 1), (0, 2, 0, 0)), "gamma": ((2, 1, 1, 1),)}
    carry = Carry(limit=0, rounding=True) if carried else None  # a block's chain: decimals throughout
    p = kind.solve({**inputs, "beta": ((1, 0, 0, 0),)}, kind.Params(), carry=carry)
    for s in p.steps:
        assert all(isinstance(x, Node) for x in (s.formula, *s.work, s.symbol)), s.name
        assert all(one(x) == one(str(x)) for x in (s.formula, s.symbol)), s.name  # one: a row of one is its node
    assert str(p.step("variance").formula) == r"\sigma^2_i = \frac{1}{4} \sum_{j=1}^{4} (r_{ij} - \mu_i)^2"
    assert str(p.step("normalized").formula) == r"\hat{x}_{ij} = \frac{r_{ij} - \mu_i}{\sqrt{\sigma^2_i + \varepsilon}}"
    assert p.step("variance").work[0].items[0] == Script(Ident("σ"), Num("1"), Num("2"))
    assert p.step("output").formula.items[3] == Script(Accent(Ident("x"), "^"), Row((Ident("i"), Ident("j"))))
    assert str(p.step("residual").work[0]) == "r_{12} = x_{12} + f_{12} = 1 + 1 = 2"
    assert str(p.step("mean").work[0]) == r"\mu_{1} = \frac{1}{4}\left(1 + 2 + 3 + 6\right) = 3"
    root = str(p.step("normalized").work[0])
    assert root.startswith(r"\sqrt{\sigma^2_{1} + \varepsilon} = \sqrt{3.5") and "\\approx 1.8708" in root


def test_sample_variance_is_not_used():
    m = {"X": ((F(1), F(2), F(3), F(6)),), "gamma": ((F(1),) * 4,), "beta": ((F(0),) * 4,)}
    p = kind.solve(m, kind.Params(eps=F(0)))
    assert p.step("mean").exact == ((F(3),),) and p.step("variance").exact == ((F(7, 2),),)


def test_constant_row_with_eps_0_is_a_clear_input_error():
    m = {"X": ((F(1), F(1)), (F(1), F(2))), "gamma": ((F(1), F(1)),), "beta": ((F(0), F(0)),)}
    with pytest.raises(InputError, match="token 1 is the same.*eps > 0"):
        kind.solve(m, kind.Params(eps=F(0)))
    assert kind.solve(m, kind.Params(eps=F(1, 100))).step("normalized").exact[0] == (0, 0)
    with pytest.raises(ParamError, match="eps"):
        kind.Params(eps=F(-1))


TABLE = {
    "X": [[1, "0.5", -1, 2], [0, 2, 2, 0]],
    "S": [[1, "1.5", -1, 0], [0, 0, -1, 1]],
    "gamma": [[1, 2, 1, "1/2"]],
    "beta": [[0, 0, 1, 0]],
    "eps": 0,
    "tokens": ["étudiant", "didn't"],
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.inputs["X"].rows == ("étudiant", "didn't") and p.params["eps"] == "0"
    assert p.step("residual").exact[0] == (2, 2, -2, 2) and p.step("mean").exact == ((1,), (1,))
    assert p.step("variance").exact == ((3,), (F(1, 2),))
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"name": "normalized"' in r.output and "sqrt(3)" in r.output
    no_eps = {k: v for k, v in TABLE.items() if k != "eps"}
    assert solve_file(KIND, write_input(tmp_path / f"noeps{suffix}", no_eps)).params["eps"] == "1/100000"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"S": [[1, 2]]}, "X is 2 x 4 and S is 1 x 2"),
        ({"gamma": [[1, 2, 3]]}, "gamma is 1 x 3"),
        ({"beta": [[1], [2], [3], [4]]}, "beta is 4 x 1"),
        ({"X": None}, "missing matrix 'X'"),
        ({"gamma": None}, "missing matrix 'gamma'"),
        ({"X": [[1, 1, 1, 1], [0, 1, 2, 3]], "S": None}, "token 1 is the same"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


@pytest.mark.parametrize(
    "args", [[], ["--seq-len", "3", "--d-model", "6"], ["--numbers", "calculator", "--d-model", "5", "--seed", "4"]]
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, [KIND, *args], tmp_path)
    p = data["problems"][0]
    assert [s["name"] for s in p["steps"]] == ["residual", "mean", "variance", "normalized", "output"]


def test_golden_files():
    check_golden(KIND, [KIND])
