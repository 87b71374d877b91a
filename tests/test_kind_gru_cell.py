"""gru-cell: exact steps vs PyTorch's GRUCell formulas in numpy (its weight
layout, gates r, z, n, b_hn inside r ⊙ (...)), hand-mode integers and the
printed σ/tanh table, the convention stated on the sheet, files, CLI, every
format, check (error carried forward, named mistakes) and golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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
from worksheet.build import build_document, render_document, solve_file
from worksheet.policy.errors import ParamError
from worksheet.kinds import gru_cell as kind
from worksheet.kinds import recurrent as rec

KIND = "gru-cell"
STEPS = ["z", "r", "n", "h"]


def calc(**kw):
    return kind.Params(numbers="calculator", **kw)


@settings(max_examples=25, deadline=None)
@given(cell_inputs("zrn", ("h0", "b_hn")))
def test_one_step_agrees_with_pytorch_grucell_formulas(m):
    p = kind.solve(m, calc())
    one_step_agrees_with_pytorch(p, KIND, "zr", "nh", atol=2e-4)  # n, h from the carried 4 decimals


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 4))
def test_several_steps_follow_pytorch_step_after_step(seed, T):
    several_steps_follow_pytorch(kind, STEPS, seed, T)


def test_reset_gate_multiplies_h_W_hn_plus_b_hn_and_z_keeps_the_old_state():
    # x = 0, h0 = 1, W = 0 except W_hn = 1, b_hn = 1: z = r = 1/2, n = tanh(0 + 1/2 (1 + 1)) = tanh(1)
    one, zero = ((F(1),),), ((F(0),),)
    m = {
        "x": zero,
        "h0": one,
        "W_hn": one,
        "b_hn": one,
        **{n: zero for n in ("W_z", "W_r", "W_n", "W_hz", "W_hr", "b_z", "b_r", "b_n")},
    }
    p = kind.solve(m, calc())
    assert p.step("r").exact == ((F(1, 2),),) and p.step("z").exact == ((F(1, 2),),)
    assert p.step("n").exact == ((rec.tanh(F(1)),),)
    # h = (1 - z) n + z h0 = tanh(1)/2 + 1/2 = 0.88079... carried to 4 places
    assert p.step("h").exact == ((F(8808, 10**4),),)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_hand_mode_has_small_integer_pre_activations_and_the_table_holds_every_value(seed, T, d_in, d_h):
    params = kind.Params(steps=T, d_in=d_in, d_h=d_h)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    for name in kind.NEEDED:
        assert p[name].integral
    f = float_inputs(p)
    x = (f["x"] if T == 1 else f["X"])[:1]
    args = {arg: val for aid in p.aids for arg, val in aid.entries}
    tanh = [val for aid in p.aids for arg, val in aid.entries if arg.startswith(r"\tanh")]
    for g in "zr":
        a = x @ f[f"W_{g}"] + f["h0"] @ f[f"W_h{g}"] + f[f"b_{g}"]
        assert np.all(a == np.round(a)) and np.abs(a).max() <= 3
        assert all(rf"\sigma({int(k)})" in args or rf"\sigma({abs(int(k))})" in args for k in a.ravel())
    for t in range(1, T + 1):
        n = p.step(rec.name("n", t, T))
        for v in n.exact[0]:
            assert any(abs(abs(float(v)) - float(val)) < 1e-4 for val in tanh)  # tanh(-x) = -tanh x


def test_table_values_are_the_sigma_and_tanh_of_their_arguments():
    table_values_are_sigma_and_tanh(f"{KIND}:steps=3", seed=2)


def test_the_sheet_states_pytorchs_convention_and_prints_the_table():
    doc = build_document([KIND], seed=1)
    sheet = render_document(doc, ["md"], name="w")["w.md"]
    assert "PyTorch's convention" in sheet and "Cho et al." in sheet
    assert r"r_t \odot (h_{t-1} W_{hn} + b_{hn})" in sheet and r"(1 - z_t) \odot n_t + z_t \odot h_{t-1}" in sheet
    assert "[:," not in render_document(doc, ["md"], name="w")["w-key.md"]  # no numpy slices
    assert r"Values of $\sigma(x)$" in sheet and r"Values of $\tanh x$ for $x = 0.00, 0.01" in sheet
    assert "answer key" not in sheet and "Carried forward" not in sheet


def test_hand_mode_allows_three_time_steps_at_most():
    with pytest.raises(ParamError, match="at most 3 time steps"):
        kind.Params(steps=5)


TABLE = {
    "x": [[1, "0.5"]],
    "h0": [[0, 1]],
    "b_hn": [[1, 0]],
    **{f"W_{g}": [[1, 0], [0, -1]] for g in "zrn"},
    **{f"W_h{g}": [[0, 1], [1, 0]] for g in "zrn"},
    **{f"b_{g}": [[0, "1/2"]] for g in "zrn"},
}


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_solve_from_file_with_library_and_cli(runner, cli, tmp_path, suffix):
    f = write_input(tmp_path / f"in{suffix}", TABLE)
    p = solve_file(KIND, f)
    assert p.step("z").exact[0][0] == rec.sigmoid(F(2))
    r = runner.invoke(cli, ["solve", KIND, "--input", str(f), "--format", "json"])
    assert r.exit_code == 0, r.stderr
    assert '"name": "n"' in r.output


@pytest.mark.parametrize(
    "change, message",
    [
        ({"W_hn": [[1, 2, 3]]}, "W_hn is 1 x 3 but must be 2 x 2"),
        ({"W_z": [[1, 2]]}, "W_z is 1 x 2 but must be 2 x 2"),
        ({"b_hn": [[1, 2, 3]]}, "b_hn is 1 x 3 but must be 1 x 2"),
        ({"b_hn": None}, "missing matrix 'b_hn'"),
        ({"h0": [[1, 2], [3, 4]]}, "h0 is 2 x 2 but must be 1 x any"),
        ({"X": [[1, 2]]}, "give x (one time step) or X"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, change, message, suffix):
    assert message in solve_error(runner, cli, KIND, {**TABLE, **change}, tmp_path / f"bad{suffix}")


def test_errors_name_the_matrices():
    errors_name_the_matrices(kind, lambda m: {"W_hr": ((1, 2, 3), (4, 5, 6))}, "W_hr is 2 x 3")


def test_hand_mode_carries_2_places_and_calculator_mode_4_even_through_magnifying_weights():
    """Hand mode carries the state onto the tables' grid (2 decimals); calculator mode
    carries 4, and recurrent weights that magnify rounding, even x 1000, stay within the
    bound every carried step is checked against."""
    m = kind.generate(np.random.default_rng(6), calc(steps=3))
    p = kind.solve(m, kind.Params(steps=3))
    assert p.step("h_3").rounded and p.step("h_3").places == 2
    for factor in (30, 1000):
        m2 = {k: tuple(tuple(x * factor for x in r) for r in v) if k.startswith("W_h") else v for k, v in m.items()}
        q = kind.solve(m2, calc(steps=3))
        assert q.step("h_3").rounded and q.step("h_3").places == 4


@pytest.mark.parametrize("spec, args", cli_specs(KIND))
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, spec, args):
    cli_builds_and_compiles(runner, cli, tmp_path, KIND, STEPS, spec, args)


def test_a_wrong_reset_gate_still_lets_n_and_h_be_marked_on_the_students_r(tmp_path):
    st = statuses_with_one_wrong_step(tmp_path, KIND, "r")
    assert st["r"] == "incorrect" and st["z"] == "correct"
    assert st["n"] == "carried-forward" and st["h"] in ("carried-forward", "correct")


def _x(v):
    return v["x"] if "x" in v else v["X"][:1]


@pytest.mark.parametrize(
    "code, wrong",
    [
        ("tanh-for-sigmoid", lambda v: ("z", np.tanh(_x(v) @ v["W_z"] + v["h0"] @ v["W_hz"] + v["b_z"]))),
        (
            "reset-outside",
            lambda v: ("n", np.tanh(_x(v) @ v["W_n"] + v["b_n"] + (v["r"] * v["h0"]) @ v["W_hn"] + v["b_hn"])),
        ),
        ("gru-cho-update", lambda v: ("h", v["z"] * v["n"] + (1 - v["z"]) * v["h0"])),
        (
            "tanh-for-sigmoid",
            lambda v: ("n", sigmoid(_x(v) @ v["W_n"] + v["b_n"] + v["r"] * (v["h0"] @ v["W_hn"] + v["b_hn"]))),
        ),
    ],
    ids=["tanh-on-z", "reset-outside", "gru-cho-update", "sigma-on-n"],
)
@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_named_mistake_is_diagnosed(tmp_path, code, wrong, numbers):
    diagnosed(tmp_path, KIND, {"numbers": numbers}, wrong, code)


def test_named_mistake_at_a_later_time_step_is_diagnosed(tmp_path):
    diagnosed(
        tmp_path,
        f"{KIND}:steps=2",
        {},
        lambda v: ("h_2", v["z_2"] * v["n_2"] + (1 - v["z_2"]) * v["h_1"]),
        "gru-cho-update",
    )


def test_agrees_with_real_torch_grucell():
    agrees_with_real_torch(kind)
