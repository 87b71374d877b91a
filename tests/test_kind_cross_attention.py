"""cross-attention: Q from the decoder, K and V from the encoder; exact vs
numpy for m != n, hand-mode guarantees, files, CLI, LaTeX, golden files."""

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, solve_everywhere
from worksheet.build import solve_inputs
from worksheet.policy.errors import GenerationError, InputError, ShapeError
from worksheet.exact import to_sympy
from worksheet.kinds import cross_attention as kind

KIND = "cross-attention"
STEPS = ["Q", "K", "V", "scores", "scaled", "weights", "output"]
entries = st.fractions(min_value=-2, max_value=2, max_denominator=4)


def numpy_cross_attention(X_dec, H_enc, W_Q, W_K, W_V):
    Q, K, V = X_dec @ W_Q, H_enc @ W_K, H_enc @ W_V
    S = Q @ K.T / np.sqrt(K.shape[1])
    W = np.exp(S - S.max(1, keepdims=True))
    W /= W.sum(1, keepdims=True)
    return Q, K, V, W, W @ V


@st.composite
def matrices(draw):
    m, n, d = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    mat = lambda r, c: tuple(tuple(draw(entries) for _ in range(c)) for _ in range(r))
    return {"X_dec": mat(m, d), "H_enc": mat(n, d), "W_Q": mat(d, d_k), "W_K": mat(d, d_k), "W_V": mat(d, d_v)}


@settings(max_examples=30, deadline=None)
@given(matrices())
def test_exact_matches_numpy_for_random_shapes_with_m_and_n_different(mats):
    p = solve_inputs(KIND, mats)
    Q, K, V, W, Z = numpy_cross_attention(*(floats(mats[k]) for k in kind.INPUTS))
    for name, want in (("Q", Q), ("K", K), ("V", V), ("weights", W), ("output", Z)):
        np.testing.assert_allclose(floats(p.step(name).exact), want, rtol=1e-9, atol=1e-12)
    assert p.step("scores").shape == (len(mats["X_dec"]), len(mats["H_enc"]))


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 5),
    st.sampled_from([1, 4, 9]),
    st.sampled_from(["hand", "calculator"]),
)
def test_generated_problems_verify_for_random_sizes_and_seeds(seed, m, n, d, d_k, numbers):
    params = kind.Params(dec_len=m, enc_len=n, d_model=d, d_k=d_k, numbers=numbers)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)  # add_step verifies
    assert [s.name for s in p.steps] == STEPS
    assert p.inputs["X_dec"].shape == (m, d) and p.inputs["H_enc"].shape == (n, d)
    assert p.step("output").shape == (m, d_k)
    np.testing.assert_allclose(p.step("weights").value.sum(axis=1), 1, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(2, 4), st.sampled_from([1, 4, 9]))
def test_hand_mode_has_integer_projections_and_scores_and_an_exp_table(seed, m, n, d_k):
    params = kind.Params(dec_len=m, enc_len=n, d_k=d_k)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    for name in ("X_dec", "H_enc"):
        assert p.inputs[name].integral and all(-1 <= x <= 2 for r in p.inputs[name].exact for x in r)
    for name in ("W_Q", "W_K", "W_V"):
        assert all(x in (-1, 0, 1) for r in p.inputs[name].exact for x in r)
    for name in ("Q", "K", "V", "scores"):
        assert p.step(name).integral
    root = math.isqrt(d_k)
    scaled = p.step("scaled").exact
    assert all((x * root).denominator == 1 and abs(x) <= 6 for r in scaled for x in r)
    assert all(max(r) - min(r) <= 4 for r in scaled)
    assert len(p.aids) == 1 and len(p.aids[0].entries) <= 16
    needed = {x - max(r) for r in scaled for x in r}
    assert needed <= set(p.aids[0].values)


def test_the_key_says_where_q_k_and_v_come_from():
    params = kind.Params()
    p = kind.solve(kind.generate(np.random.default_rng(1), params), params)
    assert "decoder" in p.step("Q").note and "encoder" in p.step("K").note and "encoder" in p.step("V").note
    assert "wrong way round" in p.step("V").note
    assert str(p.step("Q").formula) == r"Q = X_{\mathrm{dec}} W^Q"
    assert (
        str(p.step("K").formula) == r"K = H_{\mathrm{enc}} W^K"
        and str(p.step("V").formula) == r"V = H_{\mathrm{enc}} W^V"
    )
    assert p.inputs["X_dec"].rows == ("<s>", "I'm") and p.inputs["H_enc"].rows == ("Je", "suis", "étudiant")
    assert p.step("scores").rows == ("<s>", "I'm") and p.step("scores").cols == ("Je", "suis", "étudiant")
    assert "2 $\\times$ 3" in p.step("scores").note
    for s in p.steps:
        assert s.title and s.formula and s.work


def test_rows_of_weights_sum_to_exactly_one():
    params = kind.Params(dec_len=3, enc_len=2)
    p = kind.solve(kind.generate(np.random.default_rng(5), params), params)
    for row in p.step("weights").exact:
        assert sympy.simplify(sum(to_sympy(x) for x in row) - 1) == 0


def test_the_divisor_is_sqrt_d_k_not_sqrt_d_model():
    mats = {
        "X_dec": ((1, 0, 2),),
        "H_enc": ((1, 1, 0), (0, 1, 1)),
        "W_Q": ((1,), (0,), (1,)),
        "W_K": ((1,), (1,), (0,)),
        "W_V": ((1, 0), (0, 1), (1, 1)),
    }
    p = solve_inputs(KIND, mats)
    assert [str(x) for x in p.step("scores").exact[0]] == ["6", "3"]
    assert [str(x) for x in p.step("scaled").exact[0]] == ["6", "3"]  # d_k = 1, d_model = 3


def test_generation_gives_up_after_bounded_retries_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(kind.blocks, "pleasant_logits", lambda *a, **k: False)
    with pytest.raises(GenerationError, match="cross-attention: no hand-friendly numbers.*--numbers calculator"):
        kind.generate(np.random.default_rng(0), kind.Params())


# ---------------------------------------------------------------- shapes, files and CLI

GOOD = {
    "X_dec": [[1, 0], [0, 1]],
    "H_enc": [[1, 1], ["0.5", 0], [0, "-1/2"]],
    "W_Q": [[1, 0], [0, 1]],
    "W_K": [[1, 1], [0, 1]],
    "W_V": [[2], [1]],
}


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"H_enc": ((1, 2, 3),)}, ShapeError, "X_dec is 2 x 2 and H_enc is 1 x 3"),
        ({"W_Q": ((1,), (2,), (3,))}, ShapeError, "X_dec is 2 x 2 and W_Q is 3 x 1"),
        ({"W_K": ((1,), (2,))}, ShapeError, "W_Q is 2 x 2 and W_K is 2 x 1"),
        ({"W_V": ((1,),)}, ShapeError, "H_enc is 3 x 2 and W_V is 1 x 1"),
        ({"W_V": None}, InputError, "missing matrix 'W_V'"),
        ({"H_enc": None}, InputError, "missing matrix 'H_enc'"),
    ],
)
def test_shape_and_missing_matrix_errors_name_both_matrices(change, error, message):
    from worksheet.solution.problem import matrix
    from worksheet.parse import exact_from_json

    mats = {k: matrix([[exact_from_json(x) for x in r] for r in v]) for k, v in GOOD.items()}
    mats.update({k: v for k, v in change.items() if v is not None})
    for k in [k for k, v in change.items() if v is None]:
        del mats[k]
    with pytest.raises(error, match=message):
        solve_inputs(KIND, mats)


def test_solve_from_json_and_toml_files(runner, cli, tmp_path):
    table = {**GOOD, "tokens": ["<s>", "I"], "source_tokens": ["Je", "suis", "étudiant"]}
    p = solve_everywhere(runner, cli, KIND, table, tmp_path)
    assert p.step("scores").shape == (2, 3)
    assert str(p.inputs["H_enc"].exact[1][0]) == "1/2"
    assert p.params["dec_len"] == 2 and p.params["enc_len"] == 3


@pytest.mark.parametrize(
    "table, message",
    [
        ({**GOOD, "H_enc": [[1, 2, 3]]}, "X_dec is 2 x 2 and H_enc is 1 x 3"),
        ({k: v for k, v in GOOD.items() if k != "W_K"}, "missing matrix 'W_K'"),
        ({**GOOD, "source_tokens": ["a"]}, "source_tokens: 1 labels for 3 rows of H_enc"),
        ({**GOOD, "d_k": 3}, "d_k = 3 but W_K has 2 columns"),
    ],
)
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, table, message):
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.json")
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.toml")


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["cross-attention:dec-len=4,enc-len=2", "--d-model", "3"],
        ["cross-attention:dec-len=1,enc-len=5", "--d-k", "9", "--seed", "2"],
    ],
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, args if args and ":" in args[0] else [KIND, *args], tmp_path)
    p = data["problems"][0]
    assert [s["name"] for s in p["steps"]] == STEPS
    scores = next(s for s in p["steps"] if s["name"] == "scores")
    assert len(scores["value"]) == p["params"]["dec_len"] and len(scores["value"][0]) == p["params"]["enc_len"]


@pytest.mark.parametrize("case, options", [("default", {}), ("d_k-9", {"d_k": 9, "d_model": 3})])
def test_golden_files(case, options):
    check_golden(KIND, [KIND], case=case, options=options)
