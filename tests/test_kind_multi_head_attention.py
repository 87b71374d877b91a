"""multi-head-attention: heads on column blocks, concat, W^O; exact vs numpy,
hand-mode guarantees, files, CLI, LaTeX, golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, write_input
from worksheet.build import solve_file
from worksheet.policy.errors import InputError, ShapeError
from worksheet.exact import NegInf, is_rational
from worksheet.kinds import multi_head_attention as kind
from worksheet.kinds.block_symbols import one
from worksheet.solution.maths import Node

KIND = "multi-head-attention"
entries = st.fractions(min_value=-2, max_value=2, max_denominator=4)


def numpy_mha(X, WQ, WK, WV, WO, H, causal):
    """Multi-head attention by reshaping into heads (a different path from the kind's)."""
    n = X.shape[0]
    d_k, d_v = WQ.shape[1] // H, WV.shape[1] // H
    Q = (X @ WQ).reshape(n, H, d_k).transpose(1, 0, 2)  # (H, n, d_k)
    K = (X @ WK).reshape(n, H, d_k).transpose(1, 0, 2)
    V = (X @ WV).reshape(n, H, d_v).transpose(1, 0, 2)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    if causal:
        S = np.where(np.triu(np.ones((n, n)), 1) > 0, -np.inf, S)
    W = np.exp(S - S.max(-1, keepdims=True))
    W /= W.sum(-1, keepdims=True)
    heads = W @ V  # (H, n, d_v)
    concat = heads.transpose(1, 0, 2).reshape(n, H * d_v)
    out = {"concat": concat, "output": concat @ WO}
    for h in range(H):
        out.update(
            {
                f"Q_{h + 1}": Q[h],
                f"K_{h + 1}": K[h],
                f"V_{h + 1}": V[h],
                f"scores_{h + 1}": Q[h] @ K[h].T,
                f"weights_{h + 1}": W[h],
                f"head_{h + 1}": heads[h],
            }
        )
    return out


def check_against_numpy(p, m, H, causal):
    want = numpy_mha(*(floats(m[k]) for k in kind.INPUTS), H, causal)
    for name, value in want.items():
        np.testing.assert_allclose(floats(p.step(name).exact), value, rtol=1e-9, atol=1e-9, err_msg=name)


@st.composite
def mha_inputs(draw):
    H, n, d = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_k, d_v = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    mat = lambda r, c: tuple(tuple(draw(entries) for _ in range(c)) for _ in range(r))
    return H, {
        "X": mat(n, d),
        "W_Q": mat(d, H * d_k),
        "W_K": mat(d, H * d_k),
        "W_V": mat(d, H * d_v),
        "W_O": mat(H * d_v, draw(st.integers(1, 3))),
    }


@settings(max_examples=25, deadline=None)
@given(mha_inputs(), st.booleans())
def test_exact_matches_numpy_for_random_user_numbers(hm, causal):
    H, m = hm
    p = kind.solve(m, kind.Params(numbers="calculator", heads=H, causal=causal))
    check_against_numpy(p, m, H, causal)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(["hand", "calculator"]),
    st.sampled_from([(1, None), (1, 4), (2, None), (2, 1), (2, 4), (3, None), (3, 1)]),
    st.integers(1, 4),
    st.booleans(),
)
def test_exact_matches_numpy_for_generated_problems(seed, numbers, sizes, n, causal):
    H, d_k = sizes
    params = kind.Params(numbers=numbers, heads=H, seq_len=n, d_k=d_k, causal=causal)
    m = kind.generate(np.random.default_rng(seed), params)
    p = kind.solve(m, params)
    check_against_numpy(p, m, H, causal)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.booleans(), st.sampled_from([(2, None), (2, 4), (3, 1)]))
def test_hand_mode_per_head_scores_are_integers(seed, causal, sizes):
    H, d_k = sizes
    params = kind.Params(heads=H, d_k=d_k, causal=causal)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    root = int(np.sqrt(params.key_width))
    assert root * root == params.key_width  # sqrt(d_k) is an integer
    for name in kind.INPUTS:
        assert p[name].integral and np.abs(p[name].value).max() <= 2
    for h in range(1, H + 1):
        for name in (f"Q_{h}", f"K_{h}", f"V_{h}", f"scores_{h}"):
            assert p.step(name).integral, name
        scaled = p.step(f"scaled_{h}").exact
        assert all(root % x.denominator == 0 for r in scaled for x in r)  # s / sqrt(d_k)
        assert all(abs(x) <= 6 for r in scaled for x in r)
        assert np.allclose(p.step(f"weights_{h}").value.sum(axis=1), 1)
        live = np.where(np.isinf(p.step(f"scaled_{h}").value), np.nan, p.step(f"scaled_{h}").value)
        if causal:
            live = np.where(np.triu(np.ones_like(live), 1) > 0, np.nan, live)
        assert (np.nanmax(live, axis=1) - np.nanmin(live, axis=1)).max() > 0  # no head is uniform
    assert p.aids and len(p.aids[0].entries) <= 16  # the e^x table


def test_steps_in_order_and_heads_use_column_blocks():
    params = kind.Params(heads=2, d_k=4, seq_len=2)
    m = kind.generate(np.random.default_rng(7), params)
    p = kind.solve(m, params)
    per_head = ["Q", "K", "V", "scores", "scaled", "weights", "head"]
    assert [s.name for s in p.steps] == [f"{s}_{h}" for h in (1, 2) for s in per_head] + ["concat", "output"]
    X, WQ = floats(m["X"]), floats(m["W_Q"])
    np.testing.assert_array_equal(floats(p.step("Q_2").exact), X @ WQ[:, 4:8])
    assert p.step("concat").shape == (2, 8) and p.step("output").shape == (2, params.model_width)


def test_causal_adds_a_masked_step_per_head_and_zero_weights_above_the_diagonal():
    params = kind.Params(causal=True, seq_len=3)
    p = kind.solve(kind.generate(np.random.default_rng(2), params), params)
    names = [s.name for s in p.steps]
    assert names.index("masked_1") == names.index("scaled_1") + 1
    for h in (1, 2):
        M, W = p.step(f"masked_{h}").exact, p.step(f"weights_{h}").exact
        assert isinstance(M[0][2], NegInf) and W[0][2] == 0 and W[0][0] == 1


def test_default_widths():
    # hand mode: d_k = 4 per head (sqrt(d_k) = 2 is an integer, and scaling changes the scores),
    # X stays 4 wide (W^Q is d_model x H d_k)
    assert (kind.Params().key_width, kind.Params().model_width) == (4, 4)
    assert (kind.Params(heads=1).key_width, kind.Params(heads=3).key_width) == (4, 4)
    assert (kind.Params(numbers="calculator").key_width, kind.Params(numbers="calculator").model_width) == (2, 4)
    assert kind.Params(d_model=8).key_width == 4  # 8 // 2 = 4, a square
    assert kind.Params(d_model=18).key_width == 9  # 9, a square
    assert kind.Params(d_model=6).key_width == 4  # 3 -> at least 4
    assert kind.Params(d_model=2, numbers="calculator").key_width == 2  # at least 2
    assert kind.Params(d_k=4).model_width == 8 and kind.Params(d_k=1).key_width == 1  # asked for: given


def test_output_is_a_sum_of_one_ratio_per_head():
    params = kind.Params(seq_len=2)
    p = kind.solve(kind.generate(np.random.default_rng(4), params), params)
    for row in p.step("output").exact:
        for x in row:
            assert is_rational(x) or str(x).count("exp") <= 4 * 2 * 2


TABLE = {
    "X": [[1, "0.5"], [0, -1]],
    "W_Q": [[1, 0], [0, 1]],
    "W_K": [[1, 1], [0, 1]],
    "W_V": [[1, 0], [0, 2]],
    "W_O": [[1, 0], [0, "1/2"]],
    "heads": 2,
    "tokens": ["étudiant", "didn't"],
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.inputs["X"].exact[0][1] == F(1, 2) and p.inputs["X"].rows == ("étudiant", "didn't")
    assert str(p.step("scores_1").exact[0][0]) == "1" and str(p.step("V_2").exact[0][0]) == "1"
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"name": "head_2"' in r.output
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--causal"])
    assert r.exit_code == 0 and "`masked_1`" in r.output


@pytest.mark.parametrize(
    "change, message",
    [
        ({"W_O": [[1, 0], [0, 1], [1, 1]]}, "W_O is 3 x 2"),
        ({"W_K": [[1], [0]]}, "W_K is 2 x 1"),
        ({"W_Q": [[1, 0, 1], [0, 1, 1]], "W_K": [[1, 0, 1], [0, 1, 1]]}, "do not split into heads = 2"),
        ({"X": [[1, 0, 1]]}, "X is 1 x 3 and W_Q is 2 x 2"),
        ({"W_V": None}, "missing matrix 'W_V'"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


def test_errors_name_the_matrices():
    m = {k: ((F(1),),) for k in kind.INPUTS}
    del m["W_O"]
    with pytest.raises(InputError, match="missing matrix 'W_O'"):
        kind.solve(m, kind.Params())
    with pytest.raises(ShapeError, match="d_k = 2"):
        kind.solve(kind.generate(np.random.default_rng(1), kind.Params()), kind.Params(numbers="calculator", d_k=2))


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--heads", "3", "--d-k", "1", "--seq-len", "2", "--causal"],
        ["--numbers", "calculator", "--d-model", "4", "--seq-len", "2", "--seed", "5"],
    ],
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, [KIND, *args], tmp_path)
    p = data["problems"][0]
    assert p["kind"] == KIND and p["steps"][0]["name"] == "Q_1" and p["steps"][-1]["name"] == "output"


def test_golden_files():
    check_golden(KIND, [KIND])


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_default_heads_are_visibly_different(numbers):
    """d_k >= 2 per head, so scaling changes the scores; no head's Q, K or V equals
    another head's or another matrix (seed 3 once gave K_2 = K_1 and Q_2 = V_1)."""
    params = kind.Params(numbers=numbers)
    assert params.key_width >= 2
    for seed in range(1, 51):
        p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
        mats = [(f"{x}_{h}", p.step(f"{x}_{h}").value) for h in (1, 2) for x in "QKV"] + [("X", p["X"].value)]
        for a, (na, A) in enumerate(mats):
            for nb, B in mats[a + 1 :]:
                assert A.shape != B.shape or not np.array_equal(A, B), (seed, na, nb)
        for h in (1, 2):
            assert not np.array_equal(p.step(f"scaled_{h}").value, p.step(f"scores_{h}").value), seed
        assert not np.array_equal(p.step("weights_1").value, p.step("weights_2").value), seed


def _worked_entry(line: str) -> tuple[int, int]:
    """The (row, column), 0-based, of the first entry named in a worked line (``q^{(1)}_{12} = ...``)."""
    import re

    i, j = re.search(r"_\{(\d)(\d)\}", line).groups()
    return int(i) - 1, int(j) - 1


def test_formulas_symbols_and_own_worked_lines_are_trees_as_the_blocks_rename_them():
    """Issue 26: the kind's formulas, symbols and its own worked lines (concat, output) are
    trees, each formula the tree its LaTeX reads as (what the blocks' renaming rules were
    written for); the heads' entry letters go to the step builders as trees too."""
    params = kind.Params(causal=True)
    p = kind.solve(kind.generate(np.random.default_rng(2), params), params)
    for s in p.steps:
        assert isinstance(s.formula, Node) and one(s.formula) == one(str(s.formula)), s.name
    for name in ("concat", "output"):
        assert all(isinstance(x, Node) for x in (*p.step(name).work, p.step(name).symbol)), name
    formulas = {s.name: str(s.formula) for s in p.steps}
    assert formulas["Q_2"] == "Q_{2} = X W^Q_{2}" and formulas["scores_1"] == r"S_{1} = Q_{1} K^\top_{1}"
    assert formulas["masked_1"] == r"M_{1} = S'_{1} \text{ with } -\infty \text{ where } j > i"
    assert formulas["concat"] == r"C = \left[\, \mathrm{head}_{1} \; \cdots \; \mathrm{head}_{2} \,\right]"
    assert str(p.step("Q_1").work[0]).startswith(r"q^{(1)}_{") and r"{W^Q_{1}}_{:," in str(p.step("Q_1").work[0])
    assert str(p.step("output").work[0]).startswith(r"o_{") and r"\cdot W^O_{:," in str(p.step("output").work[0])


@pytest.mark.parametrize("seed", range(1, 31))
def test_worked_entries_teach(seed):
    """The key works out entries that are not 0, and a softmax row whose weights are not all equal."""
    import re

    params = kind.Params()
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    for s in p.steps:
        base = s.name.rsplit("_", 1)[0]
        if base in ("Q", "K", "V", "scores", "scaled", "head", "output"):
            i, j = _worked_entry(str(s.work[-1] if base != "head" else s.work[0]))
            assert s.exact[i][j] != 0, (s.name, s.work)
        if base == "weights":
            row = int(re.search(r"m_\{(\d+)\}", str(s.work[0])).group(1)) - 1
            assert len(set(s.exact[row])) > 1, (s.name, s.work)
