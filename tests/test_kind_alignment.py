"""alignment: the five seq2seq score functions, softmax, context vector; exact
vs numpy, hand-mode guarantees per score, files, CLI (score=... per problem),
LaTeX, golden files."""

import math
from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, solve_everywhere
from worksheet.build import ProblemSpec, build_document, solve_inputs
from worksheet.policy.errors import GenerationError, InputError, ParamError, ShapeError
from worksheet.exact import Func, to_str, to_sympy
from worksheet.kinds import alignment as kind

KIND = "alignment"
SCORES = ["dot", "scaled-dot", "general", "additive", "cosine", "location"]
entries = st.fractions(min_value=-2, max_value=2, max_denominator=4)


def numpy_scores(score, s, H, W_a=None, v_a=None):
    """The formulas of docs/reference.md, one h_j at a time."""
    e = []
    for j, h in enumerate(H):
        if score == "location":  # Luong's a_t = softmax(W_a s_t), in rows: s W_a, column j
            e.append(s @ W_a[:, j])
        elif score == "dot":
            e.append(s @ h)
        elif score == "scaled-dot":
            e.append(s @ h / math.sqrt(len(s)))
        elif score == "general":
            e.append(s @ W_a @ h)
        elif score == "additive":
            e.append(np.tanh(np.concatenate([s, h]) @ W_a) @ v_a)
        else:
            e.append(s @ h / (np.linalg.norm(s) * np.linalg.norm(h)))
    return np.array(e)


@st.composite
def problems(draw):
    score = draw(st.sampled_from(SCORES))
    n, d, d_a = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    row = lambda c: tuple(draw(entries) for _ in range(c))
    nonzero = lambda c: draw(st.tuples(*[entries] * c).filter(lambda r: any(x != 0 for x in r)))
    vec = nonzero if score == "cosine" else row
    mats = {"s": (vec(d),), "H": tuple(vec(d) for _ in range(n))}
    if score == "general":
        mats["W_a"] = tuple(row(d) for _ in range(d))
    if score == "location":
        mats["W_a"] = tuple(row(n) for _ in range(d))
    if score == "additive":
        mats["W_a"] = tuple(row(d_a) for _ in range(2 * d))
        mats["v_a"] = (row(d_a),)
    return score, mats


@settings(max_examples=30, deadline=None)
@given(problems())
def test_exact_matches_numpy_for_random_shapes_and_every_score(problem):
    score, mats = problem
    p = solve_inputs(KIND, mats, {"score": score, "numbers": "calculator"})
    f = {k: floats(v) for k, v in mats.items()}
    e = numpy_scores(score, f["s"][0], f["H"], f.get("W_a"), f["v_a"][0] if "v_a" in f else None)
    w = np.exp(e - e.max())
    w /= w.sum()
    np.testing.assert_allclose(floats(p.step("scores").exact)[0], e, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(floats(p.step("weights").exact)[0], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(floats(p.step("context").exact)[0], w @ f["H"], rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(SCORES),
    st.integers(1, 5),
    st.sampled_from([1, 2, 3, 4]),
    st.sampled_from(["hand", "calculator"]),
)
def test_generated_problems_verify_for_random_sizes_and_seeds(seed, score, n, d, numbers):
    if score == "scaled-dot" and numbers == "hand":
        d = 4 if d > 1 else 1  # a perfect square
    params = kind.Params(score=score, seq_len=n, d_model=d, numbers=numbers)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)  # add_step verifies
    assert [s.name for s in p.steps] == ["scores", "weights", "context"]
    assert p.inputs["H"].shape == (n, d) and p.step("context").shape == (1, d)
    assert abs(p.step("weights").value.sum() - 1) < 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["dot", "scaled-dot", "general", "location"]), st.integers(2, 5))
def test_hand_mode_dot_scores_are_pleasant_with_an_exp_table(seed, score, n):
    params = kind.Params(score=score, seq_len=n)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    for name in ("s", "H"):
        assert p.inputs[name].integral and all(-1 <= x <= 2 for r in p.inputs[name].exact for x in r)
    e = p.step("scores").exact[0]
    if score == "scaled-dot":  # d = 4: sqrt(d) = 2
        assert all((2 * x).denominator == 1 for x in e)
    else:
        assert p.step("scores").integral
    assert max(abs(x) for x in e) <= 6 and 0 < max(e) - min(e) <= 4
    assert len(p.aids) == 1 and {x - max(e) for x in e} <= set(p.aids[0].values)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 5), st.sampled_from([2, 3, 4]))
def test_hand_mode_cosine_uses_integer_lengths_so_every_cosine_is_rational(seed, n, d):
    params = kind.Params(score="cosine", seq_len=n, d_model=d)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    for row in p.inputs["s"].exact + p.inputs["H"].exact:
        sq = sum(x * x for x in row)
        assert sq.denominator == 1 and math.isqrt(int(sq)) ** 2 == sq > 0
        assert sum(x != 0 for x in row) >= 2
    e = p.step("scores").exact[0]
    assert all(isinstance(x, F) and -1 <= x <= 1 for x in e)
    assert sum(x == 0 for x in e) <= 1
    assert len(p.aids) == 1  # the e^x table


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 5), st.integers(1, 3), st.integers(1, 3))
def test_hand_mode_additive_keeps_tanh_exact_with_small_arguments_and_tables(seed, n, d, d_a):
    params = kind.Params(score="additive", seq_len=n, d_model=d, d_a=d_a)
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    assert p.inputs["W_a"].shape == (2 * d, d_a) and p.inputs["v_a"].shape == (1, d_a)
    assert all(x in (-1, 1) for x in p.inputs["v_a"].exact[0])
    args = [
        a
        for h in p.inputs["H"].exact
        for a in np.concatenate([p.inputs["s"].value[0], [float(x) for x in h]]) @ p.inputs["W_a"].value
    ]
    assert max(abs(a) for a in args) <= 2
    titles = [a.title for a in p.aids]
    if any(a != 0 for a in args):
        assert any("tanh" in t for t in titles)
    assert any("e^x" in t or "e^{-x}" in t for t in titles)  # the standard table of e^{-x} at every 0.01
    assert (
        "tanh" in to_str(p.step("scores").exact[0][0])
        or p.step("scores").exact[0][0] == 0
        or all(a == 0 for a in args[:d_a])
    )


def test_additive_tanh_is_exact_and_like_terms_cancel():
    mats = {"s": ((1, 2),), "H": ((-1, 2), (0, 0), (1, 0)), "W_a": ((0, -1), (1, 0), (0, 1), (0, 0)), "v_a": ((1, -1),)}
    p = solve_inputs(KIND, mats, {"score": "additive"})
    e = p.step("scores").exact[0]
    assert [to_str(x) for x in e] == ["2*tanh(2)", "tanh(1) + tanh(2)", "tanh(2)"]
    assert [round(v, 4) for v in p.step("scores").value[0]] == [1.9281, 1.7256, 0.9640]
    # by hand the weights are carried from the e^x grid (exponents to 2 decimals); exactly:
    w = solve_inputs(KIND, mats, {"score": "additive", "numbers": "calculator"}).step("weights").exact[0]
    assert to_str(w[0]) == "1/(1 + exp(tanh(1) - tanh(2)) + exp(-tanh(2)))"
    hand = p.step("weights")
    assert hand.rounded and [str(x) for x in hand.exact[0]] == [
        "2271/5000",
        "3719/10000",
        "1739/10000",
    ]  # 0.4542 + 0.3719 + 0.1739 = 1
    assert abs(sympy.N(sum(to_sympy(x) for x in w) - 1, 60)) < 1e-50  # exactly 1 (simplify is slow with tanh)
    for x in w:  # every printed exponent is the number it claims to be (sympy reads our str)
        assert float(sympy.sympify(to_str(x))) == pytest.approx(float(x), rel=1e-12)
    assert any(r"\tanh(2) \cdot 1 + \tanh(-1) \cdot (-1)" in line for line in map(str, p.step("scores").work))
    tanh_aid = next(a for a in p.aids if "tanh" in a.title)
    table = dict(tanh_aid.entries)  # the standard table: every integer in [-2, 2]
    assert table[r"\tanh(1)"] == "0.7616" and table[r"\tanh(2)"] == "0.9640" and len(table) == 5


def test_reference_scores_by_hand():
    s, H = ((1, 2, 2),), ((2, 1, 2), (0, 0, 3))
    dot = solve_inputs(KIND, {"s": s, "H": H})
    assert [str(x) for x in dot.step("scores").exact[0]] == ["8", "6"]
    scaled = solve_inputs(KIND, {"s": s, "H": H}, {"score": "scaled-dot", "numbers": "calculator"})
    assert [str(x) for x in scaled.step("scores").exact[0]] == ["8*sqrt(3)/3", "2*sqrt(3)"]
    cos = solve_inputs(KIND, {"s": s, "H": H}, {"score": "cosine"})
    assert [str(x) for x in cos.step("scores").exact[0]] == ["8/9", "2/3"]
    general = solve_inputs(KIND, {"s": s, "H": H, "W_a": ((1, 0, 0), (0, 0, 1), (0, 1, 0))}, {"score": "general"})
    assert [str(x) for x in general.step("scores").exact[0]] == ["8", "6"]  # u = s W_a = (1, 2, 2)
    assert any("u = s \\, W_a" in w for w in map(str, general.step("scores").work))
    cos_irr = solve_inputs(KIND, {"s": ((1, 1),), "H": ((1, 0),)}, {"score": "cosine"})
    assert str(cos_irr.step("scores").exact[0][0]) == "sqrt(2)/2"


def test_context_is_weights_times_h():
    p = solve_inputs(KIND, {"s": ((1, 0),), "H": ((1, 0), (0, 1))})
    w = floats(p.step("weights").exact)
    np.testing.assert_allclose(floats(p.step("context").exact), w @ floats(p.inputs["H"].exact), rtol=1e-12)
    assert "1/(1 + exp(-1))" == to_str(p.step("weights").exact[0][0])


@pytest.mark.parametrize(
    "mats, score, error, message",
    [
        ({"s": ((1, 2),), "H": ((1, 2, 3),)}, "dot", ShapeError, "s is 1 x 2 and H is 1 x 3"),
        ({"s": ((1, 2), (3, 4)), "H": ((1, 2),)}, "dot", ShapeError, "s is 2 x 2 but must be 1 x any"),
        ({"s": ((1, 2),), "H": ((1, 2),)}, "general", InputError, "missing matrix 'W_a'"),
        (
            {"s": ((1, 2),), "H": ((1, 2),), "W_a": ((1,), (1,))},
            "general",
            ShapeError,
            "W_a is 2 x 1 but must be 2 x 2",
        ),
        (
            {"s": ((1, 2),), "H": ((1, 2),), "W_a": ((1,),) * 3, "v_a": ((1,),)},
            "additive",
            ShapeError,
            "W_a is 3 x 1 but must be 4 x any",
        ),
        (
            {"s": ((1, 2),), "H": ((1, 2),), "W_a": ((1, 1),) * 4, "v_a": ((1,),)},
            "additive",
            ShapeError,
            "W_a is 4 x 2 and v_a is 1 x 1",
        ),
        ({"s": ((1, 2),), "H": ((1, 2),), "W_a": ((1, 1),) * 4}, "additive", InputError, "missing matrix 'v_a'"),
        ({"s": ((1, 2),), "H": ((1, 2),), "W_a": ((1, 1),) * 2}, "dot", InputError, "does not use W_a"),
        ({"s": ((1, 2),), "H": ((1, 2), (0, 0))}, "cosine", InputError, "H, row 2: a zero vector"),
        ({"H": ((1, 2),)}, "dot", InputError, "missing matrix 's'"),
    ],
)
def test_shape_and_missing_matrix_errors(mats, score, error, message):
    with pytest.raises(error, match=message):
        solve_inputs(KIND, mats, {"score": score})


def test_unknown_score_and_hand_mode_scaled_dot_need_clear_params():
    with pytest.raises(ParamError, match="score must be one of dot, scaled-dot, general, additive, cosine"):
        kind.Params(score="bahdanau")
    with pytest.raises(ParamError, match="d_model = 3 is not a perfect square"):
        kind.Params(score="scaled-dot", d_model=3)
    assert kind.Params(score="additive").width == 2 and kind.Params().width == 4


def test_generation_gives_up_after_bounded_retries_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(kind.blocks, "pleasant_logits", lambda *a, **k: False)
    with pytest.raises(GenerationError, match="alignment: no hand-friendly numbers.*--numbers calculator"):
        kind.generate(np.random.default_rng(0), kind.Params())


# ---------------------------------------------------------------- files and CLI


def test_per_problem_score_setting_in_a_spec():
    assert ProblemSpec.parse("alignment:score=additive").options == {"score": "additive"}
    doc = build_document(["alignment:score=additive", "alignment:score=cosine,seq-len=4", "alignment"])
    assert [p.params["score"] for p in doc.problems] == ["additive", "cosine", "dot"]
    assert doc.problems[1].inputs["H"].shape[0] == 4
    assert any(isinstance(x, Func) or "tanh" in to_str(x) for x in doc.problems[0].step("scores").exact[0])


def test_solve_from_json_and_toml_files(runner, cli, tmp_path):
    table = {
        "s": [1, "0.5"],
        "H": [[1, 0], [0, 1], ["-1/2", 1]],
        "W_a": [[1, 0], [0, 1], [1, 1], [0, -1]],
        "v_a": [[1, -1]],
        "score": "additive",
        "tokens": ["Je", "suis", "étudiant"],
    }
    p = solve_everywhere(runner, cli, KIND, table, tmp_path)
    assert p.params["score"] == "additive" and p.params["d_a"] == 2
    assert str(p.inputs["s"].exact[0][1]) == "1/2"


@pytest.mark.parametrize(
    "table, message",
    [
        ({"s": [1, 2], "H": [[1, 2, 3]]}, "s is 1 x 2 and H is 1 x 3"),
        ({"s": [1, 2], "H": [[1, 2]], "score": "general"}, "missing matrix 'W_a'"),
        ({"s": [1, 2], "H": [[1, 2]], "score": "luong"}, "score must be one of"),
        ({"s": [1, 2], "H": [[1, 2]], "W_a": [[1]]}, "the dot score does not use W_a"),
        ({"s": [1, 2], "H": [[1, 2]], "tokens": ["a", "b"]}, "tokens: 2 labels for 1 rows of H"),
    ],
)
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, table, message):
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.json")
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.toml")


def test_an_unknown_setting_in_a_spec_is_one_line_exit_2(runner, cli, tmp_path):
    r = runner.invoke(cli, ["build", "alignment:scor=dot", "-o", str(tmp_path)])
    assert r.exit_code == 2 and r.stderr.startswith("error: alignment has no setting 'scor'")


@pytest.mark.parametrize(
    "args",
    [
        [KIND],
        ["alignment:score=additive", "--seq-len", "4"],
        ["alignment:score=cosine", "--seq-len", "2", "--d-model", "3"],
        ["alignment:score=scaled-dot", "--d-model", "9"],
        ["alignment:score=general", "--numbers", "calculator"],
    ],
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, args, tmp_path)
    p = data["problems"][0]
    assert [s["name"] for s in p["steps"]] == ["scores", "weights", "context"]
    want = args[0].partition("score=")[2] or "dot"
    assert p["params"]["score"] == want


@pytest.mark.parametrize(
    "case, spec",
    [("default", "alignment"), ("additive", "alignment:score=additive"), ("cosine", "alignment:score=cosine")],
)
def test_golden_files(case, spec):
    check_golden(KIND, [spec], case=case)


@pytest.mark.parametrize("score", SCORES)
def test_every_step_has_a_title_a_formula_and_worked_arithmetic(score):
    params = kind.Params(score=score)
    p = kind.solve(kind.generate(np.random.default_rng(2), params), params)
    for s in p.steps:
        assert s.title and s.formula and s.work, s.name


# ---------------------------------------------------------------- location (Luong 2015)
def test_location_score_is_s_times_W_a_and_ignores_the_encoder_states():
    params = kind.Params(score="location")
    m = kind.generate(np.random.default_rng(5), params)
    p = kind.solve(m, params)
    f = {k: floats(v) for k, v in m.items()}
    assert p.inputs["W_a"].shape == (4, 3)  # d x n: one column per source position
    np.testing.assert_array_equal(floats(p.step("scores").exact), f["s"] @ f["W_a"])
    other = dict(m, H=tuple(tuple(-x for x in r) for r in m["H"]))  # other encoder states: same scores
    assert kind.solve(other, params).step("scores").exact == p.step("scores").exact
    assert any(r"(s \, W_a)_{" in w for w in map(str, p.step("scores").work))
    assert "location-based (Luong 2015)" in p.intro


def test_location_score_needs_W_a_of_d_by_n():
    m = kind.generate(np.random.default_rng(5), kind.Params(score="location"))
    bad = dict(m, W_a=tuple(r[:2] for r in m["W_a"]))
    with pytest.raises(ShapeError, match="d x n = 4 x 3"):
        kind.solve(bad, kind.Params(score="location"))


def test_location_score_is_marked_by_check_like_the_others(tmp_path):
    import json as _json

    from worksheet.build import render_document
    from worksheet.check import check_answers

    doc = build_document(["alignment:score=location"], seed=4)
    key = tmp_path / "k.json"
    key.write_text(render_document(doc, ["json"], name="k")["k.json"], encoding="utf-8")
    p = doc.problems[0]
    e = floats(p.step("scores").exact)
    answers = {"scores": (e + np.eye(1, e.shape[1])).tolist(), "weights": p.step("weights").value.round(4).tolist()}
    a = tmp_path / "a.json"
    a.write_text(_json.dumps(answers), encoding="utf-8")
    st_ = {r.name: r.status for r in check_answers(key, a).problems[0].steps}
    assert st_["scores"] == "incorrect" and st_["weights"] == "correct"
