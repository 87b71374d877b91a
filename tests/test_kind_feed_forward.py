"""feed-forward: ReLU(X W_1 + b_1) W_2 + b_2; exact vs numpy, hand-mode
guarantees, files, CLI, LaTeX, golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, write_input
from worksheet.build import solve_file
from worksheet.policy.errors import InputError, ShapeError
from worksheet.kinds import feed_forward as kind

KIND = "feed-forward"
entries = st.fractions(min_value=-3, max_value=3, max_denominator=10)


def numpy_ffn(X, W1, b1, W2, b2):
    pre = X @ W1 + b1
    hidden = np.where(pre > 0, pre, 0.0)
    return {"hidden_pre": pre, "hidden": hidden, "output": hidden @ W2 + b2}


@st.composite
def ffn_inputs(draw):
    n, d, f, o = (draw(st.integers(1, 4)) for _ in range(4))
    mat = lambda r, c: tuple(tuple(draw(entries) for _ in range(c)) for _ in range(r))
    return {"X": mat(n, d), "W_1": mat(d, f), "b_1": mat(1, f), "W_2": mat(f, o), "b_2": mat(1, o)}


def check_against_numpy(p, m):
    want = numpy_ffn(*(floats(m[k]) for k in kind.INPUTS))
    for name, value in want.items():
        np.testing.assert_allclose(floats(p.step(name).exact), value, rtol=1e-12, atol=1e-12, err_msg=name)


@settings(max_examples=25, deadline=None)
@given(ffn_inputs())
def test_exact_matches_numpy_for_random_user_numbers(m):
    check_against_numpy(kind.solve(m, kind.Params()), m)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(["hand", "calculator"]),
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(1, 6),
)
def test_exact_matches_numpy_for_generated_problems(seed, numbers, n, d, d_ff):
    params = kind.Params(numbers=numbers, seq_len=n, d_model=d, d_ff=d_ff)
    m = kind.generate(np.random.default_rng(seed), params)
    check_against_numpy(kind.solve(m, params), m)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(2, 6), st.integers(2, 6))
def test_hand_mode_has_a_negative_pre_activation_and_integers(seed, n, d, d_ff):
    params = kind.Params(seq_len=n, d_model=d, d_ff=d_ff)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    pre = p.step("hidden_pre").value
    assert (pre < 0).any() and (pre > 0).any() and np.abs(pre).max() <= 6
    for name in kind.INPUTS:
        assert p[name].integral
    for s in p.steps:
        assert s.integral, s.name
    assert (p.step("hidden").value >= 0).all()
    relu_work = str(p.step("hidden").work[0])
    assert r"\max(0, -" in relu_work and relu_work.endswith("= 0")  # a negative entry, worked


def test_relu_acts_after_the_bias_and_not_after_the_second_layer():
    m = {
        "X": ((F(1), F(0)),),
        "W_1": ((F(1), F(-1)), (F(0), F(0))),
        "b_1": ((F(-2), F(3)),),
        "W_2": ((F(1),), (F(-1),)),
        "b_2": ((F(-5),),),
    }
    p = kind.solve(m, kind.Params())
    assert p.step("hidden_pre").exact == ((-1, 2),)  # 1 - 2 = -1, -1 + 3 = 2
    assert p.step("hidden").exact == ((0, 2),)
    assert p.step("output").exact == ((-7,),)  # negative: no ReLU after W_2


TABLE = {
    "X": [[1, "0.5"], [-1, 2]],
    "W_1": [[1, -1, 0], [0, 1, "1/2"]],
    "b_1": [[0, "-0.5", 1]],
    "W_2": [[1, 0], [0, 1], [1, 1]],
    "b_2": [1, -1],
    "tokens": ["étudiant", "didn't"],
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.inputs["X"].rows == ("étudiant", "didn't")
    assert p.step("hidden_pre").exact[0] == (1, -1, F(5, 4)) and p.step("hidden").exact[0] == (1, 0, F(5, 4))
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"name": "hidden_pre"' in r.output


@pytest.mark.parametrize(
    "change, message",
    [
        ({"W_1": [[1, 2, 3]]}, "X is 2 x 2 and W_1 is 1 x 3"),
        ({"b_1": [[1, 2]]}, "b_1 is 1 x 2"),
        ({"W_2": [[1, 0], [0, 1]]}, "W_2 needs 3 rows"),
        ({"b_2": [[1], [2]]}, "b_2 is 2 x 1"),
        ({"b_1": None}, "missing matrix 'b_1'"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


def test_errors_name_the_matrices():
    with pytest.raises(InputError, match="missing matrix 'X'"):
        kind.solve({}, kind.Params())
    m = kind.generate(np.random.default_rng(1), kind.Params())
    with pytest.raises(ShapeError, match="W_1 is 4 x 4 and W_2 is 3 x 4"):
        kind.solve({**m, "W_2": m["W_2"][:3]}, kind.Params())


@pytest.mark.parametrize(
    "args", [[], ["--seq-len", "3", "--d-model", "2"], ["--numbers", "calculator", "--d-model", "3", "--seed", "8"]]
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, [KIND, *args], tmp_path)
    assert [s["name"] for s in data["problems"][0]["steps"]] == ["hidden_pre", "hidden", "output"]


def test_d_ff_per_problem(runner, cli):
    r = runner.invoke(cli, ["build", f"{KIND}:d-ff=6", "--format", "json", "-o", "-"])
    assert r.exit_code == 0, r.stderr
    assert '"d_ff": 6' in r.output


def test_golden_files():
    check_golden(KIND, [KIND])
