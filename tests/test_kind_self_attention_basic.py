"""self-attention-basic: scores X X^T, softmax, output A X; exact vs numpy,
hand-mode guarantees, symmetric scores, files, CLI, LaTeX, golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, solve_everywhere
from worksheet.build import solve_inputs
from worksheet.policy.errors import GenerationError, InputError
from worksheet.exact import NegInf, to_sympy
from worksheet.kinds import self_attention_basic as kind
from worksheet.solution.maths import Node

KIND = "self-attention-basic"
entries = st.fractions(min_value=-3, max_value=3, max_denominator=5)


def numpy_self_attention(X, causal):
    S = X @ X.T
    if causal:
        S = np.where(np.triu(np.ones_like(S), 1) > 0, -np.inf, S)
    W = np.exp(S - S.max(1, keepdims=True))
    W /= W.sum(1, keepdims=True)
    return S, W, W @ X


@st.composite
def embeddings(draw):
    n, d = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    return tuple(tuple(draw(entries) for _ in range(d)) for _ in range(n))


@settings(max_examples=30, deadline=None)
@given(embeddings(), st.booleans())
def test_exact_matches_numpy_for_random_shapes(X, causal):
    p = solve_inputs(KIND, {"X": X}, {"causal": causal})
    S, W, Y = numpy_self_attention(floats(X), causal)
    live = np.isfinite(S)
    np.testing.assert_allclose(
        floats(p.step("masked" if causal else "scores").exact)[live], S[live], rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(floats(p.step("weights").exact), W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(floats(p.step("output").exact), Y, rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 10**6), st.integers(1, 5), st.integers(1, 5), st.booleans(), st.sampled_from(["hand", "calculator"])
)
def test_generated_problems_verify_for_random_sizes_and_seeds(seed, n, d, causal, numbers):
    params = kind.Params(seq_len=n, d_model=d, causal=causal, numbers=numbers)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)  # add_step verifies
    assert p.inputs["X"].shape == (n, d)
    _, W, Y = numpy_self_attention(p.inputs["X"].value, causal)
    np.testing.assert_allclose(p.step("output").value, Y, rtol=1e-12)
    np.testing.assert_allclose(p.step("weights").value.sum(axis=1), 1, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.booleans(), st.integers(2, 5), st.integers(2, 4))
def test_hand_mode_has_small_integers_integer_scores_and_an_exp_table(seed, causal, n, d):
    params = kind.Params(seq_len=n, d_model=d, causal=causal)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    X = p.inputs["X"]
    assert X.integral and all(-1 <= x <= 2 for r in X.exact for x in r)
    assert all(any(x != 0 for x in r) for r in X.exact)  # no zero row
    assert p.step("scores").integral
    live = [x for r in p.step("masked" if causal else "scores").exact for x in r if not isinstance(x, NegInf)]
    assert max(abs(x) for x in live) <= 8
    for row in p.step("masked" if causal else "scores").exact:
        vals = [x for x in row if not isinstance(x, NegInf)]
        assert max(vals) - min(vals) <= 5
    assert len(p.aids) == 1 and 1 <= len(p.aids[0].entries) <= 6  # the e^x table is printed
    table = {F(x) for x in p.aids[0].values}
    for row in p.step("masked" if causal else "scores").exact:  # ... and holds every e^x needed
        vals = [x for x in row if not isinstance(x, NegInf)]
        assert {x - max(vals) for x in vals} <= table


def test_scores_are_symmetric_and_the_key_says_why_trained_weights_are_needed():
    p = solve_inputs(KIND, {"X": ((1, 0, 2), (0, 1, 1), (1, 1, 0))})
    S = p.step("scores").exact
    assert all(S[i][j] == S[j][i] for i in range(3) for j in range(3))
    note = p.step("scores").note
    assert "symmetric" in note and "s_{ji}" in note and "W^Q" in note and "W^V" in note
    assert r"s_{12} = s_{21} = 2" in note
    assert note.count("$") % 2 == 0  # prose with balanced inline maths


def test_step_names_in_order_and_work_lines():
    X = ((1, 0), (1, 1))
    assert [s.name for s in solve_inputs(KIND, {"X": X}).steps] == ["scores", "weights", "output"]
    p = solve_inputs(KIND, {"X": X}, {"causal": True})
    assert [s.name for s in p.steps] == ["scores", "masked", "weights", "output"]
    assert r"s_{12} = x_{1} \cdot x_{2} = 1 \cdot 1 + 0 \cdot 1 = 1" in map(str, p.step("scores").work)
    for s in p.steps:
        assert s.title and s.formula and s.work


def test_causal_weights_are_zero_above_the_diagonal_and_rows_sum_to_exactly_one():
    params = kind.Params(seq_len=4, causal=True)
    p = kind.solve(kind.generate(np.random.default_rng(7), params), params)
    W = p.step("weights").exact
    assert all(W[i][j] == 0 for i in range(4) for j in range(4) if j > i)
    assert W[0][0] == 1
    for row in W:
        assert sympy.simplify(sum(to_sympy(x) for x in row) - 1) == 0


@pytest.mark.parametrize("causal", [False, True])
def test_formulas_and_symbols_are_trees(causal):
    """Issue 26: the kind's formulas and symbols are trees (its worked lines are the
    shared attention builders')."""
    p = solve_inputs(KIND, {"X": ((1, 0), (1, 1))}, {"causal": causal})
    for s in p.steps:
        if s.name != "masked":  # the mask step is the shared builder's
            assert isinstance(s.formula, Node) and isinstance(s.symbol, Node), s.name
    got = {s.name: str(s.formula) for s in p.steps if s.name != "masked"}
    assert got == {
        "scores": r"S = X X^\top",
        "weights": r"A = \operatorname{softmax}(" + ("M" if causal else "S") + ")",
        "output": "Z = A X",
    }
    assert "(here $s_{12} = s_{21} = 1$)" in p.step("scores").note


def test_output_rows_are_weighted_sums_of_the_embeddings():
    p = solve_inputs(KIND, {"X": ((F(1, 5), 1), (0, F(-1, 2)))})
    assert str(p.inputs["X"].exact[0][0]) == "1/5"
    W, X, Z = (floats(p.step("weights").exact), floats(p.inputs["X"].exact), floats(p.step("output").exact))
    np.testing.assert_allclose(Z, W @ X, rtol=1e-12)
    assert str(p.step("output").symbol) == "Z"  # the attention output in every kind (Y is a layer norm's)


def test_generation_gives_up_after_bounded_retries_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(kind.blocks, "pleasant_logits", lambda *a, **k: False)
    with pytest.raises(
        GenerationError,
        match=r"self-attention-basic: no hand-friendly numbers found "
        r"in \d+ tries .*--numbers calculator",
    ):
        kind.generate(np.random.default_rng(0), kind.Params())


def test_calculator_mode_uses_one_decimal_entries():
    params = kind.Params(numbers="calculator")
    X = kind.generate(np.random.default_rng(2), params)["X"]
    assert all((x * 10).denominator == 1 and abs(x) <= 1 for r in X for x in r)
    assert any(x.denominator != 1 for r in X for x in r)


# ---------------------------------------------------------------- files and CLI


def test_solve_from_json_and_toml_files(runner, cli, tmp_path):
    table = {"X": [[1, "0.5", 0], ["-1/2", 1, 1]], "causal": True, "tokens": ["étudiant", "didn't"]}
    p = solve_everywhere(runner, cli, KIND, table, tmp_path)
    assert p.inputs["X"].rows == ("étudiant", "didn't")
    assert [s.name for s in p.steps] == ["scores", "masked", "weights", "output"]
    assert str(p.step("scores").exact[1][1]) == "9/4"


@pytest.mark.parametrize(
    "table, message",
    [
        ({"Y": [[1]]}, "unknown field"),
        ({"tokens": ["a"]}, "missing matrix 'X'"),
        ({"X": [[1, 2]], "tokens": ["a", "b"]}, "2 labels for 1 rows of X"),
        ({"X": [[1, 2], [3]]}, "ragged rows"),
    ],
)
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, table, message):
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.json")
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.toml")


def test_missing_matrix_is_an_input_error_naming_it():
    with pytest.raises(InputError, match="missing matrix 'X'"):
        solve_inputs(KIND, {})


@pytest.mark.parametrize(
    "args", [[], ["--seq-len", "2", "--d-model", "2", "--causal"], ["--seq-len", "5", "--d-model", "4", "--seed", "3"]]
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, [KIND, *args], tmp_path)
    p = data["problems"][0]
    assert p["kind"] == KIND
    assert p["steps"][0]["name"] == "scores" and p["steps"][-1]["name"] == "output"


@pytest.mark.parametrize("case, options", [("default", {}), ("causal", {"causal": True, "seq_len": 4})])
def test_golden_files(case, options):
    check_golden(KIND, [KIND], case=case, options=options)
