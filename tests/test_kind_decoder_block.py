"""decoder-block: one post-norm decoder layer built from the encoder block's parts;
agreement with PyTorch's TransformerDecoderLayer (re-implemented in numpy the way
PyTorch computes it); the carried chain; check; files, CLI, LaTeX, golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from check_util import make_key, recompute, statuses, table, write_toml
from block_util import check_step_names, generator
from kinds_util import build_and_compile, check_golden, floats, solve_error
from worksheet.steps.scaled_dot_product import round_matrix
from worksheet.check import check_answers
from worksheet.policy.errors import InputError, ShapeError
from worksheet.exact import NegInf
from worksheet.kinds import decoder_block as kind
from worksheet.kinds.chain import GRID_CHAIN_DRIFT
from worksheet.steps.standard_tables import grid_argument
from worksheet.kinds.mistakes import rules

KIND = "decoder-block"


# ---------------------------------------------------------------- PyTorch's decoder layer, in numpy
def torch_decoder_layer(f, heads, eps):
    """``nn.TransformerDecoderLayer(norm_first=False, activation="relu", dropout=0)`` with zero
    attention biases, as PyTorch computes it: parameters in (out, in) layout, in_proj_weight
    stacking the q, k, v projections, ``x @ W.T``, q scaled before the product, an additive
    float mask from ``generate_square_subsequent_mask``, biased variance in LayerNorm."""
    E = f["X"].shape[1]

    def linear(x, weight, bias=None):
        return x @ weight.T + (0 if bias is None else bias)

    def mha(query, key, value, in_proj_weight, out_proj_weight, attn_mask=None):
        w_q, w_k, w_v = np.split(in_proj_weight, 3)
        q, k, v = linear(query, w_q), linear(key, w_k), linear(value, w_v)
        L, hd = q.shape[0], E // heads
        q, k, v = (t.reshape(t.shape[0], heads, hd).transpose(1, 0, 2) for t in (q, k, v))
        attn = (q / np.sqrt(hd)) @ k.transpose(0, 2, 1)
        if attn_mask is not None:
            attn = attn + attn_mask
        attn = np.exp(attn - attn.max(-1, keepdims=True))
        attn = attn / attn.sum(-1, keepdims=True)
        out = (attn @ v).transpose(1, 0, 2).reshape(L, E)
        return linear(out, out_proj_weight)

    def layer_norm(x, weight, bias):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * weight + bias

    m = f["X"].shape[0]
    mask = np.triu(np.full((m, m), -np.inf), 1)  # generate_square_subsequent_mask
    sa_in = np.concatenate([f["W_Q"].T, f["W_K"].T, f["W_V"].T])
    ca_in = np.concatenate([f["W_Q_c"].T, f["W_K_c"].T, f["W_V_c"].T])
    x, mem = f["X"], f["H_enc"]
    x = layer_norm(x + mha(x, x, x, sa_in, f["W_O"].T, mask), f["gamma_1"][0], f["beta_1"][0])
    x = layer_norm(x + mha(x, mem, mem, ca_in, f["W_O_c"].T), f["gamma_2"][0], f["beta_2"][0])
    ff = linear(np.maximum(linear(x, f["W_1"].T, f["b_1"][0]), 0), f["W_2"].T, f["b_2"][0])
    return layer_norm(x + ff, f["gamma_3"][0], f["beta_3"][0])


generated = generator(kind)


def check_chain(p, mats, params):
    """Step names, the carried chain, and PyTorch's output."""
    names = check_step_names(p, ["self.", "norm1.", "cross.", "norm2.", "ffn.", "norm3."], "norm3.")
    places = p.steps[-1].places
    for s in p.steps:
        assert all(isinstance(x, NegInf) or (x * 10**places).denominator == 1 for row in s.exact for x in row), s.name
    first = next((k for k, s in enumerate(p.steps) if s.rounded), len(p.steps))
    # once rounded, every later step is carried rounded, but a head's steps (each head is a
    # branch that starts afresh) and the cross keys and values (from H_enc, given)
    branch = lambda name: name.startswith(("self.", "cross.")) and name.rsplit("_", 1)[-1].isdigit()
    assert all(s.rounded for s in p.steps[first:] if not branch(s.name)), names
    m, n = p.params["seq_len"], p.params["src_len"]  # one token each: weights [1], possibly all exact
    assert p.step("norm1.output").rounded or m == 1
    assert p.step("cross.concat").rounded or n == 1 or m == 1
    want = torch_decoder_layer({k: floats(v) for k, v in mats.items()}, params.heads, float(params.epsilon))
    np.testing.assert_allclose(p.step("output").value, want, rtol=1e-9, atol=1e-12)
    bound = GRID_CHAIN_DRIFT if any(a.grid for a in p.aids) else 5e-3  # read on a standard grid
    np.testing.assert_allclose(floats(p.step("output").exact), want, rtol=bound, atol=bound)


@settings(max_examples=15, deadline=None)
@example(473, "hand", (1, 4, 1, 1))  # one token on each side: every weight is 1
@given(
    st.integers(0, 10**6),
    st.sampled_from(["hand", "calculator"]),
    st.sampled_from([(1, 4, 2, 3), (2, 4, 3, 2), (1, 4, 1, 1), (2, 8, 2, 3)]),
)
def test_generated_problems_agree_with_pytorch_decoder_layer(seed, numbers, sizes):
    heads, d, m, n = sizes
    if numbers == "hand":  # PyTorch needs H d_k = d_model, hand mode a square d_k: one head of 4
        heads, d = 1, 4
    m_, p, params = generated(seed, numbers=numbers, heads=heads, d_model=d, d_k=d // heads, seq_len=m, src_len=n)
    check_chain(p, m_, params)


mats = lambda r, c: st.lists(
    st.lists(st.fractions(-2, 2, max_denominator=10), min_size=c, max_size=c), min_size=r, max_size=r
).map(lambda rows: tuple(tuple(F(x) for x in r) for r in rows))


@st.composite
def user_inputs(draw):
    heads, m, n, d, f = draw(st.sampled_from([1, 2])), draw(st.integers(1, 3)), draw(st.integers(1, 3)), 4, 3
    out = {"X": draw(mats(m, d)), "H_enc": draw(mats(n, d))}
    for name in ("W_Q", "W_K", "W_V", "W_O", "W_Q_c", "W_K_c", "W_V_c", "W_O_c", "W_2"):
        out[name] = draw(mats(d, d)) if name != "W_2" else draw(mats(f, d))
    out.update(W_1=draw(mats(d, f)), b_1=draw(mats(1, f)), b_2=draw(mats(1, d)))
    for k in (1, 2, 3):
        out[f"gamma_{k}"] = draw(mats(1, d))
        out[f"beta_{k}"] = draw(mats(1, d))
    return heads, out


@settings(max_examples=15, deadline=None)
@given(user_inputs())
def test_user_numbers_agree_with_pytorch_decoder_layer(hi):
    heads, m = hi
    params = kind.Params(numbers="calculator", heads=heads, eps=F(1, 10))
    try:
        p = kind.solve(m, params)
    except InputError as exc:  # a variance so small that no carried precision is close enough
        assert "drifts too far" in str(exc) or "variance" in str(exc)
        return
    want = torch_decoder_layer({k: floats(v) for k, v in m.items()}, heads, 0.1)
    np.testing.assert_allclose(p.step("output").value, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", range(1, 21))
def test_hand_mode_is_by_hand(seed):
    """Integer inputs; integer self-attention Q, K, V, scores; the cross keys and values
    (from H_enc) integers too; every e^x either softmax needs is in a printed table: the
    exact scores' on the table of e^x, the carried scores' on the grid, rounded to 2 decimals."""
    m, p, params = generated(seed)
    assert params.epsilon == 0 and params.key_width == 4
    for name in kind.INPUTS:
        assert p[name].integral, name
    for name in ("self.Q_1", "self.K_1", "self.V_1", "self.scores_1", "cross.K_1", "cross.V_1"):
        assert p.step(name).integral and not p.step(name).rounded, name
    (aid,) = [a for a in p.aids if "e^x" in a.title]  # the exact scores' exponents: multiples of 1/2
    (grid,) = [a for a in p.aids if "e^{-x}" in a.title]  # the carried ones: the standard grid of every 0.01
    assert grid.grid and not any(a.title == kind.layer_norm.SQRT_AID for a in p.aids)
    for name, printed, at in (("self.masked_1", aid, lambda x: x), ("cross.scaled_1", grid, grid_argument)):
        for row in p.step(name).exact:
            live = [x for x in row if not isinstance(x, NegInf)]
            assert {at(x - max(live)) for x in live} <= set(printed.values), (name, row)


def test_self_attention_is_causal_and_cross_attention_reads_the_encoder():
    m, p, params = generated(4, seq_len=3, src_len=2)
    W = p.step("self.weights_1").exact
    assert W[0][1] == W[0][2] == W[1][2] == 0 and W[0][0] == 1
    assert p.step("cross.weights_1").shape == (3, 2) and p.step("cross.scores_1").cols == ("Thinking", "Machines")
    assert p.step("cross.K_1").exact == tuple(
        tuple(sum((a * w[j] for a, w in zip(r, m["W_K_c"])), F(0)) for j in range(4)) for r in m["H_enc"]
    )
    assert p.inputs["X"].rows == ("<s>", "I'm", "a")


def test_carried_steps_follow_from_the_carried_values():
    m, p, params = generated(2)
    e = {s.name: s.exact for s in p.steps}
    mm = lambda A, B: tuple(tuple(sum((a * b[j] for a, b in zip(r, B)), F(0)) for j in range(len(B[0]))) for r in A)
    assert e["cross.Q_1"] == round_matrix(mm(e["norm1.output"], m["W_Q_c"]))
    assert e["cross.head_1"] == round_matrix(mm(e["cross.weights_1"], e["cross.V_1"]))
    assert e["ffn.hidden_pre"] == round_matrix(
        tuple(tuple(x + b for x, b in zip(r, m["b_1"][0])) for r in mm(e["norm2.output"], m["W_1"]))
    )


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_check_marks_carried_values_and_names_a_mistake_carried_forward(tmp_path, numbers):
    key, doc = make_key(tmp_path, [KIND], seed=3, options={"numbers": numbers})
    p = doc.problems[0]
    carried = {
        s.name: [[f"{float(x):.4f}" if not isinstance(x, NegInf) else "-inf" for x in row] for row in s.exact]
        for s in p.steps
    }
    report = check_answers(key, write_toml(tmp_path / "carried.toml", carried))
    assert set(statuses(report).values()) == {"correct"}, report.text()
    # the sample variance in Add & Norm 2, and everything after it consistently
    R, mean = p.step("norm2.residual").value, p.step("norm2.mean").value
    var = ((R - mean) ** 2).sum(axis=1, keepdims=True) / (R.shape[1] - 1)
    values = recompute(p, {"norm2.variance": var})
    report = check_answers(key, write_toml(tmp_path / "a.toml", table(values)))
    st_ = statuses(report)
    assert st_["norm2.variance"] == "incorrect", report.text()
    assert {s.name: s.mistake for s in report.problems[0].steps if s.status == "incorrect"} == {
        "norm2.variance": "sample-variance"
    }, report.text()
    names = [s.name for s in p.steps]
    assert all(st_[n] in ("carried-forward", "correct") for n in names[names.index("norm2.variance") + 1 :])


def test_block_steps_use_their_parts_mistake_rules():
    assert {c for c, _, _ in rules(KIND, "norm3.variance")} >= {"sample-variance"}
    assert {c for c, _, _ in rules(KIND, "self.scaled_1")} >= {"no-scaling"}
    assert rules(KIND, "output") == []


TABLE = {
    "X": [[1, 0, "0.5", -1], [0, 1, 1, 0]],
    "H_enc": [[1, 1, 0, 0], [0, -1, 1, 1], [1, 0, 0, 1]],
    **{
        w: [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, -1]]
        for w in ("W_Q", "W_K", "W_V", "W_O", "W_Q_c", "W_K_c", "W_V_c", "W_O_c", "W_1", "W_2")
    },
    **{f"gamma_{k}": [[1, 1, 1, 1]] for k in (1, 2, 3)},
    **{f"beta_{k}": [[0, 0, 0, 0]] for k in (1, 2, 3)},
    "b_1": [[0, "-0.5", 0, 0]],
    "b_2": [[0, 0, 0, 0]],
    "heads": 2,
    "eps": "1/100",
}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"H_enc": [[1, 1, 0], [0, 1, 1]]}, "H_enc is 2 x 3"),
        ({"W_O_c": [[1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 0, 0]]}, "W_O_c is 4 x 3"),
        ({"gamma_3": [[1, 1]]}, "gamma_3 is 1 x 2"),
        ({"W_K_c": [[1], [0], [1], [0]]}, "W_K_c is 4 x 1"),
        ({"beta_2": None}, "missing matrix 'beta_2'"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


def test_solve_from_a_file_agrees_with_pytorch(tmp_path, runner, cli):
    from kinds_util import write_input
    from worksheet.build import solve_file

    p = solve_file(KIND, write_input(tmp_path / "in.toml", TABLE))
    m = {k: v.exact for k, v in p.inputs.items()}
    want = torch_decoder_layer({k: floats(v) for k, v in m.items()}, 2, 0.01)
    np.testing.assert_allclose(p.step("output").value, want, rtol=1e-9, atol=1e-12)
    assert p.inputs["H_enc"].rows == ("Je", "suis", "étudiant")


def test_errors_name_the_matrices():
    m, _, _ = generated(1)
    with pytest.raises(InputError, match="missing matrix 'W_O_c'"):
        kind.solve({k: v for k, v in m.items() if k != "W_O_c"}, kind.Params())
    with pytest.raises(ShapeError, match="H_enc is 3 x 3"):
        kind.solve({**m, "H_enc": ((F(0),) * 3,) * 3}, kind.Params())


@pytest.mark.parametrize("args", [[], ["--numbers", "calculator", "--heads", "2", "--seed", "6"]])
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, [KIND, *args], tmp_path)
    steps = data["problems"][0]["steps"]
    assert steps[0]["name"] == "self.Q_1" and steps[-1]["name"] == "output" and steps[-1].get("rounded") is True


def test_golden_files():
    check_golden(KIND, [KIND])


# ---------------------------------------------------------------- issue 18: notation a lecturer hands out
def test_cross_attention_names_its_own_matrices_and_no_symbol_is_undefined():
    from worksheet.build import build_document
    from worksheet.solution.maths import read_latex, to_latex_text

    p = build_document(["decoder-block"], seed=1).problems[0]

    def tex(x) -> str:  # a formula as the LaTeX printer spells it, whether the kind wrote a tree or LaTeX
        return to_latex_text(read_latex(str(x)))

    f = {s.name: tex(s.formula) for s in p.steps}
    assert f["cross.Q_1"] == tex(r"Q_{c,1} = Y_1 W^{Q}_{c,1}")
    assert f["cross.K_1"] == tex(r"K_{c,1} = H_{\mathrm{enc}} W^{K}_{c,1}") and f["cross.V_1"].endswith(
        tex(r"W^{V}_{c,1}")
    )
    assert f["cross.scaled_1"].startswith(tex(r"S'_{c,1} = \frac{S_{c,1}}{\sqrt{d_k}}"))
    assert f["cross.weights_1"] == tex(r"A_{c,1} = \operatorname{softmax}(S'_{c,1})")
    assert f["cross.output"] == tex(r"O_c = C_c W^O_c")
    # one symbol, one thing: the self- and the cross-attention define no matrix of the same name
    defined = {part: {f[n].split(" = ")[0] for n in f if n.startswith(part)} for part in ("self.", "cross.")}
    assert defined["self."] & defined["cross."] == set(), defined
    assert f["norm1.residual"] == tex("R_1 = X + O") and f["norm2.residual"] == tex("R_2 = Y_1 + O_c")
    assert f["norm3.residual"] == tex("R_3 = Y_2 + O_f") and f["ffn.hidden_pre"] == tex("U' = Y_2 W_1 + b_1")
    for s in p.steps:  # no undefined F anywhere, and one head is not "concatenated"
        assert " F" not in str(s.formula) and "+ F" not in " ".join(map(str, s.work)), s.name
    assert "concatenate" not in p.step("self.concat").title.lower().replace("nothing to concatenate", "")
    assert tex(p.step("self.concat").formula) == tex(r"C = \mathrm{head}_1")
