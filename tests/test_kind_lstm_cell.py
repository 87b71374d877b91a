"""lstm-cell: exact steps vs PyTorch's LSTMCell formulas in numpy (its weight
layout, gates i, f, g, o), hand-mode integers and the printed σ/tanh table,
carried rounding over several time steps, files, CLI, every format, check
(error carried forward, named mistakes) and golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from check_util import make_key, statuses, table, write_toml, recompute
from kinds_util import solve_error, write_input
from recurrent_util import (
    agrees_with_real_torch,
    cell_inputs,
    cli_builds_and_compiles,
    cli_specs,
    diagnosed,
    errors_name_the_matrices,
    float_inputs,
    one_step_agrees_with_pytorch,
    several_steps_follow_pytorch,
    sigmoid,
    statuses_with_one_wrong_step,
    table_values_are_sigma_and_tanh,
)
from worksheet.build import build_document, solve_file
from worksheet.check import check_answers
from worksheet.policy.errors import ParamError
from worksheet.kinds import lstm_cell as kind
from worksheet.kinds import recurrent as rec

KIND = "lstm-cell"
STEPS = ["f", "i", "g", "o", "c", "h"]


def calc(**kw):
    return kind.Params(numbers="calculator", **kw)


@settings(max_examples=25, deadline=None)
@given(cell_inputs("figo", ("h0", "c0")))
def test_one_step_agrees_with_pytorch_lstmcell_formulas(m):
    p = kind.solve(m, calc())
    one_step_agrees_with_pytorch(p, KIND, "figo", "ch", atol=1.5e-4, places=4)  # c, h carried with 4 decimals
    assert all(10**4 % x.denominator == 0 for x in p.step("c").exact[0])  # carried with 4 decimals


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 4))
def test_several_steps_follow_pytorch_step_after_step(seed, T):
    several_steps_follow_pytorch(kind, STEPS, seed, T)


def test_cell_state_keeps_the_forget_term_and_h_takes_tanh_of_c():
    # all pre-activations 0: every gate is 1/2 and g = tanh(0) = 0
    z = ((F(0),),)
    m = {"x": z, "h0": z, "c0": ((F(2),),), **{n: z for g in "figo" for n in (f"W_{g}", f"W_h{g}", f"b_{g}")}}
    p = kind.solve(m, calc())
    assert p.step("f").exact == ((F(1, 2),),) and p.step("g").exact == ((0,),)
    assert p.step("c").exact == ((1,),)  # f c0 + i g = 1/2 * 2 + 0
    assert p.step("h").exact == ((F(3808, 10**4),),)  # 1/2 tanh(1) = 0.38080... carried to 4 places


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_hand_mode_has_small_integer_pre_activations_and_the_table_holds_every_value(seed, T, d_in, d_h):
    params = kind.Params(steps=T, d_in=d_in, d_h=d_h)
    m = kind.generate(np.random.default_rng(seed), params)
    p = kind.solve(m, params)
    for name in kind.NEEDED:
        assert p[name].integral
    f = float_inputs(p)
    x = (f["x"] if T == 1 else f["X"])[:1]
    table_args = {arg: val for aid in p.aids for arg, val in aid.entries}
    for g, act, _ in kind.GATES:
        a = x @ f[f"W_{g}"] + f["h0"] @ f[f"W_h{g}"] + f[f"b_{g}"]
        assert np.all(a == np.round(a)) and np.abs(a).max() <= 3
        for k in a.ravel():  # at the integers, or on the grid of x >= 0 (its title gives f(-x) from f(x))
            assert f"{act.symbol}({int(k)})" in table_args or f"{act.symbol}({abs(int(k))})" in table_args
    for t in range(1, T + 1):
        c = p.step(rec.name("c", t, T))
        assert c.rounded and c.places == 2  # the state is carried onto the tables' grid of 0.01
        for v in c.exact[0]:
            arg = f"{abs(float(v)):.2f}".rstrip("0").rstrip(".")  # tanh(-x) = -tanh x, as the title says
            assert rf"\tanh({arg})" in table_args or (v == 0 and r"\tanh(0)" in table_args), (arg, table_args)


def test_table_values_are_the_sigma_and_tanh_of_their_arguments():
    table_values_are_sigma_and_tanh(f"{KIND}:steps=2", seed=3)


def test_hand_mode_allows_three_time_steps_at_most():
    with pytest.raises(ParamError, match="at most 3 time steps"):
        kind.Params(steps=4)
    assert kind.Params(steps=12, numbers="calculator").steps == 12
    with pytest.raises(ParamError, match="at most 4 hidden units"):
        kind.Params(d_h=5)


@pytest.mark.parametrize(
    "spec, message",
    [
        (f"{KIND}:steps=4", "at most 3 time steps"),
        (f"{KIND}:d_h=6", "at most 4 hidden units"),
        (f"{KIND}:steps=0", "steps must be between 1 and 12"),
    ],
)
def test_cli_rejects_hand_sizes_beyond_pencil_with_one_line(runner, cli, tmp_path, spec, message):
    from common import one_line_error

    r = runner.invoke(cli, ["build", spec, "-o", str(tmp_path)])
    assert message in one_line_error(r)
    assert not any(tmp_path.iterdir())


TABLE = {
    "x": [[1, "0.5"]],
    "h0": [[0, 1]],
    "c0": [["0.5", -1]],
    **{f"W_{g}": [[1, 0], [0, -1]] for g in "figo"},
    **{f"W_h{g}": [[0, 1], [1, 0]] for g in "figo"},
    **{f"b_{g}": [[0, "1/2"]] for g in "figo"},
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.step("f").exact[0][0] == rec.sigmoid(F(2))  # 1 * 1 + 0.5 * 0 + (0 * 0 + 1 * 1) + 0
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"name": "h"' in r.output and '"rounded": true' in r.output


def test_several_time_steps_from_a_file_name_the_steps_by_time(tmp_path):
    t = {k: v for k, v in TABLE.items() if k != "x"}
    p = solve_file(KIND, write_input(tmp_path / "in.json", {**t, "X": [[1, 0], [0, 1], [-1, 1]]}))
    assert [s.name for s in p.steps][-6:] == [f"{n}_3" for n in STEPS]
    assert p.params["steps"] == 3 and p.inputs["X"].rows == ("t=1", "t=2", "t=3")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"W_hf": [[1, 2, 3]]}, "W_hf is 1 x 3 but must be 2 x 2"),
        ({"W_i": [[1, 2]]}, "W_i is 1 x 2 but must be 2 x 2"),
        ({"b_o": [[1, 2, 3]]}, "b_o is 1 x 3 but must be 1 x 2"),
        ({"c0": None}, "missing matrix 'c0'"),
        ({"x": None}, "missing matrix 'x'"),
        ({"X": [[1, 2]]}, "give x (one time step) or X"),
        ({"x": [[1, 2], [3, 4]]}, "x has 2 rows"),
        ({"steps": 3, "x": None, "X": [[1, 2], [3, 4]]}, "X has 2 rows but steps = 3"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


def test_errors_name_the_matrices():
    errors_name_the_matrices(kind, lambda m: {"h0": m["W_hf"]}, "h0 is 2 x 2")


@pytest.mark.parametrize("spec, args", cli_specs(KIND))
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, spec, args):
    cli_builds_and_compiles(runner, cli, tmp_path, KIND, STEPS, spec, args)


def test_the_sheet_prints_the_table_and_no_answer():
    from worksheet.build import render_document

    doc = build_document([KIND], seed=1)
    sheet = render_document(doc, ["md"], name="w")["w.md"]
    assert r"Values of $\sigma(x)$" in sheet and r"Values of $\tanh x$ for $x = 0.00, 0.01" in sheet
    assert "Carried forward" not in sheet and "answer key" not in sheet


def test_a_wrong_forget_gate_still_lets_c_and_h_be_marked_on_the_students_f(tmp_path):
    st = statuses_with_one_wrong_step(tmp_path, KIND, "f")
    assert st["f"] == "incorrect" and st["c"] == "carried-forward"
    assert st["h"] in ("carried-forward", "correct") and st["i"] == "correct"


def test_hand_rounded_answers_are_right(tmp_path):
    """A student who carries c and h with 2 decimals, as the sheet says, gets every mark."""
    key, doc = make_key(tmp_path, [f"{KIND}:steps=2"], seed=4)
    p = doc.problems[0]
    answers = {
        s.name: [[f"{float(x):.{s.places if s.rounded else 4}f}" for x in row] for row in s.exact] for s in p.steps
    }
    report = check_answers(key, write_toml(tmp_path / "a.toml", answers))
    assert set(statuses(report).values()) == {"correct"}, report.text()


def _pre(v, g):
    x = v["x"] if "x" in v else v["X"][:1]
    return x @ v[f"W_{g}"] + v["h0"] @ v[f"W_h{g}"] + v[f"b_{g}"]


@pytest.mark.parametrize(
    "code, wrong",
    [
        ("tanh-for-sigmoid", lambda v: ("i", np.tanh(_pre(v, "i")))),
        ("tanh-for-sigmoid", lambda v: ("g", sigmoid(_pre(v, "g")))),
        ("c-without-forget", lambda v: ("c", v["i"] * v["g"])),
        ("h-from-c-without-tanh", lambda v: ("h", v["o"] * v["c"])),
    ],
    ids=["sigma-on-i", "sigma-on-g", "c-without-forget", "h-without-tanh"],
)
@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_named_mistake_is_diagnosed(tmp_path, code, wrong, numbers):
    diagnosed(tmp_path, KIND, {"numbers": numbers}, wrong, code)


def test_a_forgotten_forget_term_is_named_from_h_alone(tmp_path):
    """A student who wrote only h, computed from c = i * g, is still told which mistake it was."""
    for seed in range(1, 20):
        key, doc = make_key(tmp_path, [KIND], seed=seed)
        p = doc.problems[0]
        values = recompute(p, {"c": p.step("i").value * p.step("g").value})
        if np.abs(values["h"] - p.step("h").value).max() > 0.01:
            break
    report = check_answers(key, write_toml(tmp_path / "a.toml", table({"h": values["h"]})))
    assert {s.name: s.mistake for s in report.problems[0].steps if s.status == "incorrect"} == {
        "h": "c-without-forget"
    }, report.text()


def test_named_mistake_at_a_later_time_step_is_diagnosed(tmp_path):
    diagnosed(tmp_path, f"{KIND}:steps=2", {}, lambda v: ("c_2", v["i_2"] * v["g_2"]), "c-without-forget")


def test_agrees_with_real_torch_lstmcell():
    agrees_with_real_torch(kind)


def test_reference_example_keeps_one_unit_of_c0_and_forgets_the_other(runner, cli):
    from worksheet.build import solve_example

    p = solve_example("lstm-forget")
    assert p.step("f").exact == ((rec.sigmoid(F(2)), rec.sigmoid(F(-2))),)
    c = p.step("c").value[0]  # f c0 + i g = (sigma(2) + tanh(1)/2, -sigma(-2) - sigma(1) tanh(1))
    np.testing.assert_allclose(c, [sigmoid(2) + np.tanh(1) / 2, -sigmoid(-2) - sigmoid(1) * np.tanh(1)], rtol=1e-12)
    r = runner.invoke(cli, ["solve", "--example", "lstm-forget", "--format", "json"])
    assert r.exit_code == 0 and '"kind": "lstm-cell"' in r.output
