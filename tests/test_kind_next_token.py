"""next-token: logits h W_vocab / T, softmax, greedy prediction (label as the
exact entry, 0-based index as the value, ties to the first); exact vs numpy,
hand-mode guarantees, files, CLI, LaTeX, golden files."""

from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from kinds_util import build_and_compile, check_golden, floats, solve_error, solve_everywhere
from worksheet.build import build_document, solve_inputs
from worksheet.policy.errors import GenerationError, InputError, ParamError, ShapeError
from worksheet.exact import to_sympy
from worksheet.kinds import next_token as kind
from worksheet.render.json import problem as problem_json
from worksheet.solution.maths import Node, Text, walk

KIND = "next-token"
entries = st.fractions(min_value=-3, max_value=3, max_denominator=4)


@st.composite
def problems(draw):
    d, v = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    h = (tuple(draw(entries) for _ in range(d)),)
    W = tuple(tuple(draw(entries) for _ in range(v)) for _ in range(d))
    T = draw(st.fractions(min_value=F(1, 10), max_value=5, max_denominator=10).filter(lambda t: t > 0))
    return {"h": h, "W_vocab": W}, T


@settings(max_examples=30, deadline=None)
@given(problems())
def test_exact_matches_numpy_and_the_prediction_is_the_first_largest(problem):
    mats, T = problem
    p = solve_inputs(KIND, mats, {"temperature": str(T)})
    z = floats(mats["h"]) @ floats(mats["W_vocab"]) / float(T)
    prob = np.exp(z - z.max())
    prob /= prob.sum()
    np.testing.assert_allclose(floats(p.step("logits").exact), z * float(T), rtol=1e-12, atol=1e-12)  # h W_vocab
    scaled = p.step("scaled_logits" if T != 1 else "logits")
    np.testing.assert_allclose(floats(scaled.exact), z, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(floats(p.step("probabilities").exact), prob, rtol=1e-9, atol=1e-12)
    pred = p.step("prediction")
    exact_logits = p.step("logits").exact[0]
    first = next(k for k, x in enumerate(exact_logits) if x == max(exact_logits))
    assert pred.value[0, 0] == first
    assert pred.exact == ((p.params["vocab"][first],),)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(1, 5),
    st.integers(1, 7),
    st.sampled_from(["1", "1/2", "2", "0.8"]),
    st.sampled_from(["hand", "calculator"]),
)
def test_generated_problems_verify_for_random_sizes_and_seeds(seed, d, v, T, numbers):
    vocab = tuple(f"w{k}" for k in range(v))
    params = kind.Params.from_options({"d_model": d, "vocab": list(vocab), "temperature": T, "numbers": numbers})
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)  # add_step verifies
    assert [s.name for s in p.steps] == (
        ["logits", "probabilities", "prediction"]
        if T == "1"
        else ["logits", "scaled_logits", "probabilities", "prediction"]
    )
    assert p.inputs["W_vocab"].shape == (d, v) and p.step("probabilities").shape == (1, v)
    assert abs(p.step("probabilities").value.sum() - 1) < 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 5), st.integers(2, 6), st.sampled_from(["1", "1/2", "2"]))
def test_hand_mode_has_integer_products_pleasant_logits_and_a_unique_choice(seed, d, v, T):
    params = kind.Params.from_options({"d_model": d, "vocab": [f"w{k}" for k in range(v)], "temperature": T})
    p = kind.solve(kind.generate(np.random.default_rng(seed), params), params)
    assert p.inputs["h"].integral and all(-1 <= x <= 2 for x in p.inputs["h"].exact[0])
    assert all(x in (-1, 0, 1) for r in p.inputs["W_vocab"].exact for x in r)
    assert all(x.denominator == 1 for x in p.step("logits").exact[0])  # the model's logits h W_vocab
    z = p.step("scaled_logits" if T != "1" else "logits").exact[0]
    assert all((x * params.temperature).denominator == 1 for x in z)  # integers / T
    assert max(abs(x) for x in z) <= 6 and 0 < max(z) - min(z) <= 4
    assert sum(x == max(z) for x in z) == 1  # no tie to break
    assert len(p.aids) == 1 and {x - max(z) for x in z} <= set(p.aids[0].values)


def test_prediction_holds_the_label_and_its_index():
    p = solve_inputs(KIND, {"h": ((1, 0),), "W_vocab": ((0, 1, 2, 0), (1, 1, 1, 1))})
    pred = p.step("prediction")
    assert pred.exact == (("étudiant",),) and pred.value[0, 0] == 2
    assert p.params["vocab"] == ["Je", "suis", "étudiant", "<eos>"]
    data = problem_json(p)["steps"][-1]
    assert data["exact"] == [["étudiant"]] and data["value"] == [[2.0]]
    w = p.step("probabilities").exact[0]
    assert sympy.simplify(sum(to_sympy(x) for x in w) - 1) == 0


def test_ties_go_to_the_first_token_in_the_vocabulary_and_the_sheet_says_so():
    p = solve_inputs(KIND, {"h": ((1,),), "W_vocab": ((0, 2, 1, 2),)}, {"vocab": ["a", "b", "c", "d"]})
    pred = p.step("prediction")
    assert pred.exact == (("b",),) and pred.value[0, 0] == 1
    assert any("tie between" in str(w) for w in pred.work)
    assert "first in the vocabulary" in p.intro and "first in the vocabulary" in pred.note


def test_formulas_and_its_own_worked_lines_are_trees_with_labels_as_text_leaves():
    """Issue 26: the kind's formulas, symbols and worked lines are trees (the softmax
    step's lines are the shared softmax builder's); a token's label is a text leaf,
    never markup, whatever its characters."""
    vocab = ["a_b", "<eos>", "{x}"]
    p = solve_inputs(KIND, {"h": ((1,),), "W_vocab": ((2, 2, 1),)}, {"vocab": vocab, "temperature": "1/2"})
    for s in p.steps:
        own = s.work if s.name != "probabilities" else ()
        assert all(isinstance(x, Node) for x in (s.formula, *own, s.symbol)), s.name
    assert str(p.inputs["W_vocab"].symbol) == r"W_{\mathrm{vocab}}"
    assert str(p.step("scaled_logits").formula) == r"z' = \frac{z}{T}, \quad T = \frac{1}{2}"
    assert str(p.step("prediction").formula) == r"\hat{y} = \arg \max_j \, p_j"
    labels = [n.text for s in p.steps for w in s.work if isinstance(w, Node) for n in walk(w) if isinstance(n, Text)]
    assert {"a_b", "<eos>"} <= set(labels) and "tie between " in labels  # a tie: a_b and <eos>, a_b wins
    assert str(p.step("prediction").work[0]).endswith(r"\quad (\text{a\_b})")


def test_temperature_divides_the_logits_but_never_changes_the_choice():
    mats = {"h": ((1, 2),), "W_vocab": ((1, 0, -1), (0, 1, 1))}
    cold = solve_inputs(KIND, mats, {"temperature": "0.5", "vocab": ["x", "y", "z"]})
    hot = solve_inputs(KIND, mats, {"temperature": "4", "vocab": ["x", "y", "z"]})
    assert [str(x) for x in cold.step("logits").exact[0]] == ["1", "2", "1"]  # h W_vocab, whatever T
    assert [str(x) for x in hot.step("logits").exact[0]] == ["1", "2", "1"]
    assert [str(x) for x in cold.step("scaled_logits").exact[0]] == ["2", "4", "2"]
    assert [str(x) for x in hot.step("scaled_logits").exact[0]] == ["1/4", "1/2", "1/4"]
    assert [s.name for s in hot.steps] == ["logits", "scaled_logits", "probabilities", "prediction"]
    assert cold.step("prediction").exact == hot.step("prediction").exact == (("y",),)
    assert cold.step("probabilities").value.max() > hot.step("probabilities").value.max()
    assert "never the greedy choice" in hot.step("prediction").note
    assert r"1 \cdot 0 + 2 \cdot 1 = 2" in str(hot.step("logits").work[0])
    assert r"\frac{z_{2}}{T} = \frac{2}{4} = \frac{1}{2}" in str(hot.step("scaled_logits").work[0])
    assert r"softmax}(z')" in str(hot.step("probabilities").formula)


def test_default_labels_for_other_vocabulary_sizes():
    assert kind.default_vocab(4) == ("Je", "suis", "étudiant", "<eos>")
    assert kind.default_vocab(3) == ("Thinking", "Machines", "<eos>")
    assert kind.default_vocab(1) == ("<eos>",)
    p = solve_inputs(KIND, {"h": ((1,),), "W_vocab": ((0, 1, 0),)})
    assert p.params["vocab"] == ["Thinking", "Machines", "<eos>"]


def test_params_are_checked():
    with pytest.raises(ParamError, match="temperature must be greater than 0"):
        kind.Params(temperature=F(0))
    with pytest.raises(ParamError, match="the label 'a' twice"):
        kind.Params(vocab=("a", "b", "a"))
    assert kind.Params.from_options({"temperature": "0.2"}).temperature == F(1, 5)


def test_generation_gives_up_after_bounded_retries_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(kind.blocks, "pleasant_logits", lambda *a, **k: False)
    with pytest.raises(GenerationError, match="next-token: no hand-friendly numbers.*--numbers calculator"):
        kind.generate(np.random.default_rng(0), kind.Params())


@pytest.mark.parametrize(
    "mats, options, error, message",
    [
        ({"h": ((1, 2),), "W_vocab": ((1, 2),)}, {}, ShapeError, "h is 1 x 2 and W_vocab is 1 x 2"),
        ({"h": ((1,), (2,)), "W_vocab": ((1, 2),)}, {}, ShapeError, "h is 2 x 1 but must be 1 x any"),
        ({"h": ((1,),)}, {}, InputError, "missing matrix 'W_vocab'"),
        ({"W_vocab": ((1,),)}, {}, InputError, "missing matrix 'h'"),
        ({"h": ((1,),), "W_vocab": ((1, 2),)}, {"vocab": ["a", "b", "c"]}, InputError, "3 labels for the 2 columns"),
    ],
)
def test_shape_and_missing_matrix_errors(mats, options, error, message):
    with pytest.raises(error, match=message):
        solve_inputs(KIND, mats, options)


# ---------------------------------------------------------------- files and CLI


def test_solve_from_json_and_toml_files(runner, cli, tmp_path):
    table = {
        "h": [1, "0.5", -1],
        "W_vocab": [[1, 0, 0], [0, 2, 0], ["1/2", 0, 1]],
        "vocab": ["didn't", "étudiant", "<eos>"],
        "temperature": "0.5",
    }
    p = solve_everywhere(runner, cli, KIND, table, tmp_path)
    assert p.params["temperature"] == "1/2" and p.params["vocab"] == ["didn't", "étudiant", "<eos>"]
    assert [str(x) for x in p.step("logits").exact[0]] == ["1/2", "1", "-1"]
    assert [str(x) for x in p.step("scaled_logits").exact[0]] == ["1", "2", "-2"]
    assert p.step("prediction").exact == (("étudiant",),)
    r = runner.invoke(cli, ["solve", KIND, "-i", str(tmp_path / "in.toml")])
    assert "étudiant" in r.output and "didn't" in r.output


@pytest.mark.parametrize(
    "table, message",
    [
        ({"h": [1, 2], "W_vocab": [[1, 2]]}, "h is 1 x 2 and W_vocab is 1 x 2"),
        ({"h": [1, 2]}, "missing matrix 'W_vocab'"),
        ({"h": [1], "W_vocab": [[1, 2]], "temperature": "-1"}, "temperature must be greater than 0"),
        ({"h": [1], "W_vocab": [[1, 2]], "temperature": "hot"}, "temperature"),
        ({"h": [1], "W_vocab": [[1, 2]], "vocab": ["a"]}, "vocab: 1 labels for the 2 columns of W_vocab"),
    ],
)
def test_bad_input_is_one_line_exit_2(runner, cli, tmp_path, table, message):
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.json")
    assert message in solve_error(runner, cli, KIND, table, tmp_path / "bad.toml")


@pytest.mark.parametrize(
    "args",
    [
        [KIND],
        [KIND, "--d-model", "2", "--seed", "5"],
        ["next-token:vocab=I am a student <eos>,temperature=0.5", "--d-model", "4"],
    ],
)
def test_cli_builds_md_tex_json_and_the_tex_compiles(runner, cli, tmp_path, args):
    data = build_and_compile(runner, cli, args, tmp_path)
    p = data["problems"][0]
    pred = p["steps"][-1]
    assert pred["name"] == "prediction" and pred["exact"][0][0] == p["params"]["vocab"][int(pred["value"][0][0])]


def test_labels_with_accents_and_apostrophes_render_in_every_format():
    doc = build_document(["next-token:vocab=l'étudiant didn't Über <eos>"], seed=3)
    from worksheet.build import render_document

    files = render_document(doc, ["md", "tex", "json"])
    for text in files.values():
        assert "l'étudiant" in text and "didn't" in text and "Über" in text


@pytest.mark.parametrize(
    "case, spec", [("default", KIND), ("temperature", "next-token:temperature=0.5,vocab=a b c d e")]
)
def test_golden_files(case, spec):
    check_golden(KIND, [spec], case=case)


def test_every_step_has_a_title_a_formula_and_worked_arithmetic():
    params = kind.Params()
    p = kind.solve(kind.generate(np.random.default_rng(2), params), params)
    for s in p.steps:
        assert s.title and s.formula and s.work, s.name


def test_temperature_one_has_no_scaled_logits_step():
    p = solve_inputs(KIND, {"h": ((1, 2),), "W_vocab": ((1, 0, -1), (0, 1, 1))}, {"vocab": ["x", "y", "z"]})
    assert [s.name for s in p.steps] == ["logits", "probabilities", "prediction"]
    assert str(p.step("probabilities").formula).endswith("softmax}(z)")


def test_carried_forward_marking_recomputes_from_the_scaled_logits():
    ref = kind.reference(
        {"h": np.array([[1.0, 2.0]]), "W_vocab": np.array([[1.0, 0, -1], [0, 1, 1]])},
        kind.Params(temperature=F(2)),
        given={"scaled_logits": np.array([[0.0, 3.0, 0.0]])},
    )
    assert ref["logits"].tolist() == [[1.0, 2.0, 1.0]]
    assert ref["probabilities"].argmax() == 1 and ref["prediction"][0, 0] == 1
    assert ref["probabilities"][0, 1] == pytest.approx(np.exp(3) / (np.exp(3) + 2))


def test_prediction_is_numbered_like_the_columns():
    p = solve_inputs(KIND, {"h": ((1, 0),), "W_vocab": ((0, 1, 2, 0), (1, 1, 1, 1))})
    work = " ".join(map(str, p.step("prediction").work))
    assert r"p_{3}" in work and "token 3 of 4" in work and "counting from 0" not in work
    assert "p_{13}" not in " ".join(map(str, p.step("probabilities").work))  # one index: p_j
