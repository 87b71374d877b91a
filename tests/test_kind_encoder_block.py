"""encoder-block: one encoder layer built from the other kinds' solve functions;
the rounding rule of long chains; values of the unrounded chain; files, CLI,
LaTeX, golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from block_util import check_step_names, generator
from kinds_util import build_and_compile, check_golden, floats, solve_error, write_input
from worksheet.steps.scaled_dot_product import round_matrix
from worksheet.build import solve_file
from worksheet.kinds.chain import GRID_CHAIN_DRIFT
from worksheet.steps.standard_tables import sqrt_argument
from worksheet.policy.errors import InputError, ParamError, ShapeError
from worksheet.kinds import encoder_block as kind
from worksheet.kinds import multi_head_attention
from worksheet.solution.maths import as_latex, read_latex


def same_maths(a, b) -> bool:
    """Two lists of formulas (trees or LaTeX) that read as the same trees."""
    return [read_latex(as_latex(x)) for x in a] == [read_latex(as_latex(x)) for x in b]


KIND = "encoder-block"


# ---------------------------------------------------------------- an independent float64 encoder


def np_softmax(S):
    e = np.exp(S - S.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_layer_norm(x, gamma, beta, eps):
    return gamma * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) + beta


def numpy_encoder(f, heads, eps, positional):
    """The whole layer in float64, heads by reshaping; returns a few named values."""
    X = f["X"]
    n, d = X.shape
    if positional:
        pos, j = np.arange(n)[:, None], np.arange(d)[None, :]
        angle = pos / 10000 ** (2 * (j // 2) / d)
        X = X + np.where(j % 2 == 0, np.sin(angle), np.cos(angle))
    d_k, d_v = f["W_Q"].shape[1] // heads, f["W_V"].shape[1] // heads
    split = lambda M, w: M.reshape(n, heads, w).transpose(1, 0, 2)
    Q, K, V = split(X @ f["W_Q"], d_k), split(X @ f["W_K"], d_k), split(X @ f["W_V"], d_v)
    heads_out = np_softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)) @ V
    A = heads_out.transpose(1, 0, 2).reshape(n, heads * d_v) @ f["W_O"]
    X1 = np_layer_norm(X + A, f["gamma_1"], f["beta_1"], eps)
    pre = X1 @ f["W_1"] + f["b_1"]
    Fo = np.maximum(pre, 0) @ f["W_2"] + f["b_2"]
    out = np_layer_norm(X1 + Fo, f["gamma_2"], f["beta_2"], eps)
    return {"attn.output": A, "norm1.output": X1, "ffn.hidden_pre": pre, "ffn.output": Fo, "output": out}


generated = generator(kind)


def check_chain(p, m, params):
    """Step names, the rounding rule, and values of the unrounded chain."""
    names = check_step_names(
        p, (["pe."] if params.positional else []) + ["attn.", "norm1.", "ffn.", "norm2."], "norm2."
    )
    assert "norm1.mean" in names and "attn.Q_1" in names
    rounded = [s.rounded for s in p.steps]
    first = rounded.index(True) if True in rounded else len(rounded)
    places = p.steps[-1].places  # carried along the chain (more than 4 only when 4 drift)
    for s in p.steps:  # exact or carried, every entry is a decimal with at most `places` places
        assert all(isinstance(x, F) and (x * 10**places).denominator == 1 for row in s.exact for x in row), s.name
    # the heads are branches: a later head's Q, K, V, scores start afresh from X; from the
    # concatenation on, every step depends on a rounded value and is carried rounded
    later = names.index("attn.concat") if first < names.index("attn.concat") else first
    assert all(rounded[later:]), "once rounded, every later step is rounded"
    for s in p.steps[first:later]:
        assert s.rounded or (s.name.startswith("attn.") and s.name.rsplit("_", 1)[-1].isdigit()), s.name
    want = numpy_encoder({k: floats(v) for k, v in m.items()}, params.heads, float(params.epsilon), params.positional)
    bound = GRID_CHAIN_DRIFT if any(a.grid for a in p.aids) else 5e-3  # read on a standard grid
    for name, value in want.items():
        np.testing.assert_allclose(p.step(name).value, value, rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(floats(p.step(name).exact), value, rtol=bound, atol=bound, err_msg=name)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(["hand", "calculator"]),
    st.booleans(),
    st.sampled_from([(2, 4, 2, 4), (1, 4, 2, 2), (2, 2, 3, 3), (3, 6, 2, 4)]),
)
def test_chain_matches_an_independent_numpy_encoder(seed, numbers, positional, sizes):
    heads, d, n, d_ff = sizes
    positional = positional and numbers == "calculator"  # hand mode refuses it (tested below)
    m, p, params = generated(seed, numbers=numbers, positional=positional, heads=heads, d_model=d, seq_len=n, d_ff=d_ff)
    check_chain(p, m, params)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_hand_mode_attention_is_by_hand_and_eps_is_0(seed):
    m, p, params = generated(seed)
    assert params.epsilon == 0 and params.key_width == 4 and "\\varepsilon = 0" in p.intro
    for name in kind.INPUTS:
        assert p[name].integral, name
    for h in (1, 2):
        for name in ("Q", "K", "V", "scores"):
            assert p.step(f"attn.{name}_{h}").integral and not p.step(f"attn.{name}_{h}").rounded
        scaled = p.step(f"attn.scaled_{h}")  # scores / sqrt(4): halves, exact
        assert not scaled.rounded and all((2 * x).denominator == 1 for row in scaled.exact for x in row)
        assert not np.array_equal(p.step(f"attn.scaled_{h}").value, p.step(f"attn.scores_{h}").value)
    assert (p.step("ffn.hidden_pre").value < 0).any()
    assert p.step("norm1.variance").value.min() >= 0.25


@pytest.mark.parametrize("seq_len", [2, 3, 4])
def test_the_e_x_table_has_every_value_each_head_needs(seq_len):
    """Every e^(s'_ij - m_i) of every head's softmax is in the printed table
    (seed 62539833, 3 tokens: head 2's row [-2, 0, 1] needs e^-3)."""
    for seed in [*range(1, 31), 62539833]:
        m, p, params = generated(seed, seq_len=seq_len)
        (aid,) = [a for a in p.aids if "e^x" in a.title]
        table = set(aid.values)
        for h in range(1, params.heads + 1):
            for row in p.step(f"attn.scaled_{h}").exact:
                assert {x - max(row) for x in row} <= table, (seed, h, row)


def test_steps_come_from_the_other_kinds_solve():
    m, p, params = generated(3)
    alone = multi_head_attention.solve({k: m[k] for k in multi_head_attention.INPUTS}, multi_head_attention.Params())
    for s in alone.steps:
        t = p.step("attn." + s.name)
        if not t.rounded:
            assert t.exact == s.exact and same_maths(t.work, s.work) and same_maths([t.formula], [s.formula])
    assert p.step("attn.Q_1").title == "Attention: Head 1: queries"


def test_rounded_steps_carry_their_4_decimal_predecessors():
    m, p, params = generated(5, numbers="calculator")
    X1 = p.step("norm1.output").exact
    pre = round_matrix(
        tuple(
            tuple(sum((a * w[j] for a, w in zip(row, m["W_1"])), F(0)) + m["b_1"][0][j] for j in range(4)) for row in X1
        )
    )
    assert p.step("ffn.hidden_pre").exact == pre and p.step("ffn.hidden_pre").rounded
    assert p.step("ffn.hidden").exact == tuple(tuple(max(x, F(0)) for x in r) for r in pre)
    normalized = p.step("norm2.normalized").exact
    gamma, beta = m["gamma_2"][0], m["beta_2"][0]
    assert p.step("output").exact == round_matrix(
        tuple(tuple(g * x + b for x, g, b in zip(r, gamma, beta)) for r in normalized)
    )


@pytest.mark.parametrize("seed", range(1, 6))
@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_a_student_who_rounds_as_told_writes_exactly_the_key(seed, numbers):
    """Every carried step is its formula applied to the CARRIED values of the steps
    before it, then rounded to 4 places (the square root in layer norm too, read by hand
    on the standard table at its rounded argument)."""
    m, p, params = generated(seed, numbers=numbers)
    e = {s.name: s.exact for s in p.steps}
    rnd = lambda M: round_matrix(tuple(tuple(M_row) for M_row in M))
    mm = lambda A, B: tuple(tuple(sum((a * b[j] for a, b in zip(r, B)), F(0)) for j in range(len(B[0]))) for r in A)
    for h in range(1, params.heads + 1):
        assert e[f"attn.head_{h}"] == rnd(mm(e[f"attn.weights_{h}"], e[f"attn.V_{h}"]))
    assert e["attn.output"] == rnd(mm(e["attn.concat"], m["W_O"]))
    assert e["norm1.residual"] == rnd(
        tuple(tuple(x + a for x, a in zip(r, s)) for r, s in zip(m["X"], e["attn.output"]))
    )
    for part, R in (("norm1.", e["norm1.residual"]), ("norm2.", e["norm2.residual"])):
        d = len(R[0])
        mean = e[part + "mean"]
        assert mean == rnd(tuple((sum(r, F(0)) / d,) for r in R))
        var = e[part + "variance"]
        assert var == rnd(tuple((sum(((x - mu[0]) ** 2 for x in r), F(0)) / d,) for r, mu in zip(R, mean)))
        # by hand the square root is read on the standard table, at v + eps rounded to its grid
        at = [sqrt_argument(v[0] + params.epsilon) if numbers == "hand" else v[0] + params.epsilon for v in var]
        sd = [round_matrix(((F(float(x) ** 0.5),),))[0][0] for x in at]
        assert e[part + "normalized"] == rnd(
            tuple(tuple((x - mu[0]) / s for x in r) for r, mu, s in zip(R, mean, sd))
        ), part
    for s in p.steps:
        if s.rounded:
            assert all(len(str(x).split("/")[-1]) <= 5 for row in s.exact for x in row)


def test_positional_is_refused_in_hand_mode_with_a_reason(runner, cli, tmp_path):
    with pytest.raises(ParamError, match="positional.*--numbers calculator"):
        kind.Params(positional=True)
    r = runner.invoke(cli, ["build", "encoder-block:positional=true", "-o", str(tmp_path)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "positional" in r.stderr
    assert "--numbers calculator" in r.stderr and not list(tmp_path.iterdir())


def test_positional_adds_pe_steps_first():
    m, p, params = generated(2, positional=True, numbers="calculator")
    names = [s.name for s in p.steps]
    assert names[:3] == ["pe.angles", "pe.PE", "pe.X_plus_PE"] and names[3] == "attn.Q_1"
    assert p.step("pe.PE").rounded and p.step("pe.PE").exact[1][0] == F("0.8415")  # sin(1), carried


def test_more_decimals_when_4_drift_too_far():
    eye = lambda s=F(1): tuple(tuple(s if i == j else F(0) for j in range(4)) for i in range(4))
    row = lambda v: ((F(v),) * 4,)
    m = {
        "X": ((0, 0, 0, F(1, 1000)), (0, F(2, 1000), 0, 0)),
        "W_Q": eye(),
        "W_K": eye(),
        "W_V": eye(F(1, 1000)),
        "W_O": eye(),
        "gamma_1": row(1),
        "beta_1": row(0),
        "W_1": eye(),
        "b_1": row(0),
        "W_2": eye(),
        "b_2": row(0),
        "gamma_2": row(1),
        "beta_2": row(0),
    }
    m["X"] = tuple(tuple(F(x) for x in r) for r in m["X"])
    params = kind.Params(numbers="calculator", eps=F(0))
    p = kind.solve(m, params)
    assert p.steps[-1].places > 4 and "decimals" in p.notes[0]
    check_chain(p, m, params)


TABLE = {
    "X": [[1, 0, "0.5", -1], [0, 1, 1, 0]],
    "W_Q": [[1, 0], [0, 1], [1, 1], [0, 0]],
    "W_K": [[0, 1], [1, 0], [1, 0], [0, 1]],
    "W_V": [[1, 0], [0, 1], [0, 0], [1, 1]],
    "W_O": [[1, 0, 0, 1], [0, 1, 1, 0]],
    "gamma_1": [[1, 1, 1, 1]],
    "beta_1": [[0, 0, 0, 0]],
    "W_1": [[1, -1], [0, 1], [1, 0], [-1, 0]],
    "b_1": [[0, "-0.5"]],
    "W_2": [[1, 0, 0, 1], [0, 1, 1, 0]],
    "b_2": [[0, 0, 0, 0]],
    "gamma_2": [[2, 1, 1, 1]],
    "beta_2": [[0, 1, 0, 0]],
    "heads": 2,
    "eps": "1/100",
    "tokens": ["étudiant", "didn't"],
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.params["eps"] == "1/100" and p.params["d_k"] == 1 and p.inputs["X"].rows == ("étudiant", "didn't")
    assert str(p.step("attn.scores_1").exact[0][0]) == "3/4"  # (1 + 0.5) * 0.5
    m = {k: v.exact for k, v in p.inputs.items()}
    check_chain(p, m, kind.Params(numbers="calculator", eps=F(1, 100)))
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"name": "norm2.output"' not in r.output and '"name": "output"' in r.output
    assert '"rounded": true' in r.output


@pytest.mark.parametrize(
    "change, message",
    [
        ({"W_O": [[1, 0, 0], [0, 1, 1]]}, "W_O is 2 x 3"),
        ({"gamma_2": [[1, 1]]}, "gamma_2 is 1 x 2"),
        ({"W_1": [[1, -1], [0, 1]]}, "W_1 is 2 x 2"),
        ({"W_2": [[1, 0], [0, 1]]}, "W_2 is 2 x 2"),
        ({"W_K": [[1], [0], [1], [0]]}, "W_K is 4 x 1"),
        ({"beta_1": None}, "missing matrix 'beta_1'"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


def test_errors_name_the_matrices():
    m, _, _ = generated(1)
    with pytest.raises(InputError, match="missing matrix 'W_2'"):
        kind.solve({k: v for k, v in m.items() if k != "W_2"}, kind.Params())
    with pytest.raises(ShapeError, match="X is 2 x 4 and beta_2 is 1 x 3"):
        kind.solve({**m, "beta_2": ((F(0),) * 3,)}, kind.Params())


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["encoder-block:positional=true,seq-len=3", "--numbers", "calculator"],
        ["--numbers", "calculator", "--heads", "1", "--d-model", "3", "--seed", "6"],
    ],
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    kind_arg, rest = (args[0], args[1:]) if args and not args[0].startswith("-") else (KIND, args)
    data = build_and_compile(runner, cli, [kind_arg, *rest], tmp_path)
    steps = data["problems"][0]["steps"]
    assert steps[-1]["name"] == "output" and steps[-1].get("rounded") is True


def test_golden_files():
    check_golden(KIND, [KIND])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_check_marks_the_carried_values_a_student_writes_correct(tmp_path, seed, numbers):
    """A student who rounds as told writes the key's carried 4-place decimals; `check` marks
    every step correct (and the unrounded chain's values, to 4 places, too)."""
    from check_util import make_key, statuses, table, write_toml
    from worksheet.check import check_answers

    key, doc = make_key(tmp_path, [KIND], seed=seed, options={"numbers": numbers})
    p = doc.problems[0]
    assert p.params["numbers"] == numbers and any(s.rounded for s in p.steps)
    carried = {s.name: [[f"{float(x):.4f}" for x in row] for row in s.exact] for s in p.steps}
    report = check_answers(key, write_toml(tmp_path / "carried.toml", carried))
    assert set(statuses(report).values()) == {"correct"}, report.text()
    unrounded = table({s.name: s.value for s in p.steps})
    report = check_answers(key, write_toml(tmp_path / "unrounded.toml", unrounded))
    assert set(statuses(report).values()) == {"correct"}, report.text()


# ---------------------------------------------------------------- a draw is solved once


@pytest.mark.parametrize("block", ["encoder-block", "decoder-block"])
def test_a_hand_draw_is_solved_once_and_only_for_its_own_inputs(block):
    """generate solves a hand draw to accept it (it must read only the standard tables);
    the solve that follows takes that problem, with its seed, instead of solving again.
    It is taken once, and only for the same matrices and params: a second solve, other
    matrices or other params solve afresh, and every route gives the same page."""
    import dataclasses

    from worksheet.kinds import chain, registry
    from worksheet.render import get
    from worksheet.solution.document import Document

    def page(p):
        return get("md").render(Document(title="t", problems=[p]), key=True)

    module = registry.get(block)
    params = module.Params()
    drawn = module.generate(np.random.default_rng(3), params)
    assert type(drawn) is chain.Drawn and drawn.solved is not None
    kept = drawn.solved[2]
    taken = module.solve(drawn, params, seed=3)
    assert taken is kept and taken.seed == 3 and drawn.solved is None
    again = module.solve(drawn, params, seed=3)  # nothing kept now: solved afresh
    assert again is not taken and page(again) == page(taken)
    other = chain.Drawn(module.generate(np.random.default_rng(4), params))
    other.solved = (params, dict(drawn), kept)  # kept for other matrices
    assert module.solve(other, params, seed=4) is not kept
    redrawn = module.generate(np.random.default_rng(3), params)
    assert chain.take_solved(redrawn, dataclasses.replace(params, numbers="calculator"), 3) is None
    assert redrawn.solved is None  # looked at once, then dropped


def test_a_kept_renaming_gives_what_a_fresh_one_gives_and_forgets_in_bounds(monkeypatch):
    """A block's renaming is kept from problem to problem (its rules are module
    constants): on the lines of many problems it gives the very trees a fresh Renaming
    gives, and what it remembers stays under _Walk.LIMIT (here made small)."""
    from worksheet.kinds import block_symbols as names
    from worksheet.kinds import layer_norm

    monkeypatch.setattr(names._Walk, "LIMIT", 200)
    rules = kind.SYMBOLS["norm2."]
    assert names.renaming(rules) is names.renaming(rules)
    assert names.renaming(list(rules)) is not names.renaming(list(rules))  # a list: its own
    kept = names.renaming(rules)
    for w in kept._walks:  # (what earlier tests left in it: not ours to count)
        w.seen.clear()
    for seed in range(6):
        p = layer_norm.solve(layer_norm.generate(np.random.default_rng(seed), layer_norm.Params()), layer_norm.Params())
        for s in p.steps:
            for line in (s.formula, *s.work):
                assert kept(line) == names.Renaming(rules)(line)
                assert as_latex(kept(line)) == as_latex(names.Renaming(rules)(line))
        assert all(len(w.seen) <= 200 for w in kept._walks)
