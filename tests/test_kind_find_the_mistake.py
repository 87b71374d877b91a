"""find-the-mistake: a worked solution of another kind with exactly one
planted mistake, everything after it following from it, and a key that names
the step and the mistake and gives the corrected steps."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from common import one_line_error
from worksheet.kinds import mistakes
from worksheet.build import build_document
from worksheet.cli import main
from worksheet.kinds import find_the_mistake as ftm
from worksheet.steps import precise
from worksheet.steps.layer_steps import round_matrix

KINDS = ftm.usable()


def _shown(p, name):
    return p.inputs[f"shown.{name}"].value


def _problem(of, seed, **opts):
    extra = "".join(f",{k}={v}" for k, v in opts.items())
    return build_document([f"find-the-mistake:of={of}{extra}"], seed=seed).problems[0]


def test_every_kind_with_named_mistakes_can_be_used():
    assert {
        "attention",
        "self-attention-basic",
        "softmax-scaling",
        "multi-head-attention",
        "positional-encoding",
        "layer-norm",
        "feed-forward",
        "cross-attention",
    } <= set(KINDS)
    # the blocks too: their flawed chain carries the shown 4-place values, as the key does
    assert {"encoder-block", "decoder-block"} <= set(KINDS) and "find-the-mistake" not in KINDS


@pytest.mark.parametrize("of", KINDS)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_exactly_one_mistake_and_everything_after_follows_from_it(of, seed):
    p = _problem(of, seed)
    right = build_document([of], seed=seed).problems[0]  # the same numbers: same rng stream
    code, first = p.record["mistake"], p.record["step"]
    names = [s.name for s in right.steps if not s.is_written]
    at = names.index(first)
    for name in names[:at]:  # the steps before the mistake are right: exactly what the key shows
        if not any(isinstance(x, str) for row in right.step(name).exact for x in row):
            assert p.inputs[f"shown.{name}"].exact == round_matrix(right.step(name).exact, 4), name
    assert (
        not np.allclose(_shown(p, first), right.step(first).value, atol=5e-4)
        if _shown(p, first).shape == right.step(first).value.shape
        else True
    )
    # every later shown step is the kind's own computation from the shown steps before it
    given = {n: _shown(p, n) for n in names[: at + 1]}
    floats = {k: q.value for k, q in right.inputs.items()}
    for name in names[at + 1 :]:
        if code != mistakes.SLIP and any(c == code for c, _, _ in mistakes.rules(of, name)):
            given[name] = _shown(p, name)  # the same mistake, made again in this step
            continue
        expected = ftm.of_reference(floats, of, right.params, given)[name]
        step = right.step(name)  # a state carried to 2 decimals (the recurrent cells by hand): half its last place
        atol = max(5e-4, 0.51 * 10.0**-step.places) if step.rounded else 5e-4
        np.testing.assert_allclose(_shown(p, name), expected, atol=atol)
        given[name] = _shown(p, name)
    # the key: the step, the mistake, and the corrected steps asked: from the wrong one on,
    # within its sublayer, whole steps of at most 30 numbers (the wrong step always)
    assert p.step("step").exact == ((first,),) and p.step("mistake").exact == ((code,),)
    corrected = [s.name for s in p.steps if s.name not in ("step", "mistake", "corrections")]
    assert corrected == names[at : at + len(corrected)] and corrected
    sizes = [right.step(n).value.size for n in corrected]
    assert len(corrected) == 1 or sum(sizes) <= ftm.ASKED_ENTRIES
    assert len({n.split(".")[0] for n in corrected if "." in n}) <= 1  # one sublayer of a block
    for name in corrected:
        assert p.step(name).exact == right.step(name).exact
        assert not p.step(name).on_sheet
        assert p.step(name).number == f"({names.index(name) + 1})"  # the student's solution's number


def test_the_shown_solution_is_on_the_sheet_and_the_corrections_are_not():
    doc = build_document(["find-the-mistake"], seed=3)
    from worksheet.build import render_document

    files = render_document(doc, ["md"], name="f")
    sheet, key = files["f.md"], files["f-key.md"]
    p = doc.problems[0]
    corrected = [s for s in p.steps if not s.on_sheet]
    assert corrected
    for s in corrected:
        assert f"(`{s.name}`)" not in sheet
        assert f"(`{s.name}`)" in key
    assert "(`step`)" in sheet and "(`mistake`)" in sheet


@pytest.mark.parametrize(
    "code",
    [
        "no-scaling",
        "scaled-by-sqrt-d_model",
        "softmax-over-columns",
        "mask-zero-instead-of-inf",
        "weights-times-X",
        "arithmetic-slip",
    ],
)
def test_a_named_mistake_is_planted_where_asked(code):
    p = _problem("attention", 5, causal="true", d_model=2, mistake=code)
    assert p.record["mistake"] == code and p.params["mistake"] == code


@pytest.mark.parametrize(
    "of, code",
    [
        ("layer-norm", "sample-variance"),
        ("positional-encoding", "pe-sin-cos-swapped"),
        ("cross-attention", "cross-sources-swapped"),
    ],
)
def test_the_catalogue_of_the_issue_can_be_planted(of, code):
    p = _problem(of, 2, mistake=code)
    assert p.record["mistake"] == code


def test_cross_sources_swapped_takes_queries_from_the_encoder():
    p = _problem("cross-attention", 2, mistake="cross-sources-swapped")
    assert p.record["step"] == "Q"
    H, W = p.inputs["H_enc"].value, p.inputs["W_Q"].value
    np.testing.assert_allclose(_shown(p, "Q"), H @ W)
    np.testing.assert_allclose(_shown(p, "K"), p.inputs["X_dec"].value @ p.inputs["W_K"].value)


def test_variants_draw_different_mistakes():
    codes = {_problem("attention", seed, causal="true").record["mistake"] for seed in range(1, 21)}
    assert len(codes) >= 4


def test_the_same_seed_plants_the_same_mistake():
    a, b = _problem("layer-norm", 7), _problem("layer-norm", 7)
    assert a.record == b.record


def test_json_records_mistake_and_step(tmp_path):
    r = CliRunner().invoke(
        main, ["build", "find-the-mistake:of=layer-norm", "--seed", "2", "--format", "json", "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    prob = json.loads((tmp_path / "worksheet.json").read_text())["problems"][0]
    assert prob["kind"] == "find-the-mistake"
    assert prob["mistake"] in mistakes.CATALOGUE
    assert prob["step"] == prob["params"]["step"]
    assert [s["name"] for s in prob["steps"]][:2] == ["step", "mistake"]


def _answers_from(prob, use_shown: bool) -> str:
    lines = []
    for s in prob["steps"]:
        if "written" in s:
            continue
        if use_shown and f"shown.{s['name']}" in prob["inputs"]:  # as printed: 4 decimals
            rows = [
                ["-inf" if v is None else f"{v:.4f}" for v in row]
                for row in prob["inputs"][f"shown.{s['name']}"]["value"]
            ]
        else:
            rows = s["exact"]
        lines.append(f"{json.dumps(s['name'])} = {json.dumps(rows)}")
    return "\n".join(lines) + "\n"


def _check_own_answers(tmp_path, spec: str, seed: int, use_shown: bool):
    """Build ``spec`` as a JSON key, answer it (from the key, or by copying the
    shown flawed solution) and mark the answers: (problem, check's result)."""
    runner = CliRunner()
    r = runner.invoke(main, ["build", spec, "--seed", str(seed), "--format", "json", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    prob = json.loads((tmp_path / "worksheet.json").read_text())["problems"][0]
    (tmp_path / "a.toml").write_text(_answers_from(prob, use_shown=use_shown), encoding="utf-8")
    return prob, runner.invoke(
        main, ["check", str(tmp_path / "worksheet.json"), str(tmp_path / "a.toml"), "--format", "json"]
    )


@pytest.mark.parametrize("of", ["attention", "layer-norm", "feed-forward"])
def test_check_marks_the_key_answers_correct(tmp_path, of):
    _, r = _check_own_answers(tmp_path, f"find-the-mistake:of={of}", 4, use_shown=False)
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("seed", range(1, 7))
def test_check_names_the_planted_mistake_in_a_copied_flawed_solution(tmp_path, seed):
    """A student who copies the flawed solution is told the planted mistake."""
    prob, r = _check_own_answers(tmp_path, "find-the-mistake:of=attention,causal=true", seed, use_shown=True)
    assert r.exit_code == 1, r.output
    report = json.loads(r.output)
    steps = {s["name"]: s for s in report["problems"][0]["steps"]}
    first = steps[prob["step"]]
    assert first["status"] == "incorrect"
    if prob["mistake"] != mistakes.SLIP:
        assert first["mistake"] == prob["mistake"]


def test_unknown_mistake_and_unusable_kind_are_one_line_errors(tmp_path):
    runner = CliRunner()
    for spec, words in [
        ("find-the-mistake:mistake=typo", "mistake 'typo'"),
        ("find-the-mistake:of=find-the-mistake", "cannot use of=find-the-mistake"),
        ("find-the-mistake:of=next-token", "no named mistakes"),
        ("find-the-mistake:of=atention", "did you mean 'attention'"),
        ("find-the-mistake:of=layer-norm,mistake=no-scaling", "not one for layer-norm"),
    ]:
        r = runner.invoke(main, ["build", spec, "-o", str(tmp_path / "o")])
        assert r.exit_code == 2
        assert words in one_line_error(r)
        assert not (tmp_path / "o").exists()


# the blocks' sheets (half a second a build) are swept by test_pencil's
# test_no_planted_mistake_in_a_block_leaves_nan_or_inf, where they are built for the student anyway
BUILT_IN_TEST_PENCIL = {"encoder-block", "decoder-block"}


@pytest.mark.parametrize("of", [k for k in KINDS if k not in BUILT_IN_TEST_PENCIL])
def test_every_seed_gives_a_printable_worked_solution(of):
    """No planted mistake leaves NaN or +inf on the sheet (e.g. a zero variance)."""
    for seed in range(1, 26):
        assert_printable(_problem(of, seed), seed)


def assert_printable(p, seed):
    for name, q in p.inputs.items():
        if name.startswith("shown."):
            assert not np.isnan(q.value).any() and not np.isposinf(q.value).any(), (seed, name)


def test_the_blocks_are_swept_for_nan_in_test_pencil():
    from test_pencil import PRINTABLE_BLOCKS

    assert BUILT_IN_TEST_PENCIL <= set(KINDS)
    assert {f"find-the-mistake:of={k}" for k in BUILT_IN_TEST_PENCIL} == set(PRINTABLE_BLOCKS)


def test_a_mistake_that_would_divide_by_a_zero_variance_is_not_offered():
    """normalized-across-tokens on two tokens with an equal feature divides by 0: never planted."""
    right = build_document(["layer-norm"], seed=6).problems[0]  # two tokens with an equal feature
    options = ftm.candidates(right)
    assert options and "normalized-across-tokens" not in {o.code for o in options}
    for o in options:
        assert all(not np.isnan(precise.to_float64(v)).any() for v in o.values.values())


# ---------------------------------------------------------------- issue 18: pencil-true
def _ftm_key(tmp_path, spec, seed):
    from worksheet.build import build_document, render_document

    doc = build_document([spec], seed=seed)
    path = tmp_path / "k.json"
    path.write_text(render_document(doc, ["json"], name="k")["k.json"], encoding="utf-8")
    return doc.problems[0], path


def test_the_wrong_step_is_right_as_its_number_its_name_or_its_symbol(tmp_path):
    import json as _json

    from worksheet.check import check_answers

    p, key = _ftm_key(tmp_path, "find-the-mistake", 2)  # attention; the wrong step is the output, (7), Z
    step = p.record["step"]
    number = p.step("step").choices.index(step) + 1
    symbol = {"output": "Z", "weights": "A", "scores": "S", "scaled": "S'"}.get(step, step)
    for answer in (step, str(number), f"({number})", symbol, f"${symbol}$"):
        a = tmp_path / "a.json"
        a.write_text(_json.dumps({"step": [[answer]], "mistake": [[p.record["mistake"]]]}), encoding="utf-8")
        st = {r.name: r.status for r in check_answers(key, a).problems[0].steps}
        assert st["step"] == "correct" and st["mistake"] == "correct", (answer, st)
    a.write_text(_json.dumps({"step": [[str(number + 1)]]}), encoding="utf-8")
    assert check_answers(key, a).problems[0].steps[0].status == "incorrect"


def test_the_key_names_the_wrong_entry_for_an_arithmetic_slip_too():
    from worksheet.build import build_document

    p = build_document(["find-the-mistake:mistake=arithmetic-slip"], seed=3).problems[0]
    assert any("First wrong entry: row" in w for w in map(str, p.step("step").work)), p.step("step").work


def test_the_flawed_solution_keeps_trailing_zeros_like_the_correct_one():
    from worksheet.build import build_document, render_document

    doc = build_document(["find-the-mistake"], seed=2)
    q = doc.problems[0].inputs["shown.weights"]
    assert q.given_places == 4
    sheet = render_document(doc, ["md"], name="w")["w.md"]
    assert re.search(r"\$0\.\d{4}\$", sheet)


def test_only_mistakes_that_can_be_planted_are_offered():
    from worksheet.build import build_document

    for seed in range(6):
        p = build_document(["find-the-mistake:of=multi-head-attention"], seed=seed).problems[0]
        assert "concat-wrong-axis" not in p.record["offered"] and "concat-wrong-axis" not in p.intro
        assert p.record["mistake"] in p.record["offered"] == list(p.step("mistake").choices)


def test_mistake_sentences_are_typeset_on_keys_with_no_ascii_pseudo_maths():
    """The text report keeps the plain sentence; tex and html keys typeset it."""
    from worksheet.build import build_document, render_document
    from worksheet.kinds.mistakes import CATALOGUE

    for code in ("c-without-forget", "scaled-by-d_k", "mask-zero-instead-of-inf", "missing-W_O"):
        assert not re.search(r"sqrt\(|-inf\b|_\(t-1\)|\bW_O\b|\*", CATALOGUE[code].typeset), code
    for spec in ("find-the-mistake:of=lstm-cell", "find-the-mistake:of=multi-head-attention"):
        for seed in range(3):
            doc = build_document([spec], seed=seed)
            for fmt in ("tex", "html"):
                text = "".join(render_document(doc, [fmt], name="t").values())
                assert not re.search(r"sqrt\(|_\(t-1\)| \* ", text), (spec, seed, fmt)


def test_the_shown_solution_keeps_its_trailing_zeros_in_html_too():
    """The flawed solution prints every decimal with 4 places (0.0000, 1.8340)
    in the HTML as in the PDF and Markdown, like the correct solution."""
    from worksheet.build import render_document
    from worksheet.exact import NegInf
    from worksheet.solution.number_format import decimal

    doc = build_document(["find-the-mistake:of=decoder-block"], seed=1)
    html = render_document(doc, ["html"], name="w")["w.html"]
    (p,) = doc.problems
    shown = [q for name, q in p.inputs.items() if name.startswith("shown.") and q.given_places]
    assert shown
    for q in shown:
        for row in q.exact:
            for x in row:
                if not isinstance(x, (str, NegInf)):
                    assert re.search(rf"<mn>[-\u2212]?{re.escape(decimal(abs(x), q.given_places))}</mn>", html), (
                        q.name,
                        x,
                    )


def test_a_mistake_that_cannot_be_planted_is_refused_in_one_line_that_names_those_that_can(tmp_path):
    """concat-wrong-axis is a code of multi-head attention, but later steps cannot
    follow from it: one line, exit 2, the codes this problem can take, no file."""
    r = CliRunner().invoke(
        main, ["build", "find-the-mistake:of=multi-head-attention,mistake=concat-wrong-axis", "-o", str(tmp_path)]
    )
    assert r.exit_code == 2
    line = r.output.strip()
    assert "\n" not in line and "cannot be made on this multi-head-attention problem" in line
    codes = line.split("choose one of ")[1].split(", or let it be drawn")[0].split(", ")
    assert "concat-wrong-axis" not in codes and "no-scaling" in codes and "arithmetic-slip" in codes
    assert not any(tmp_path.iterdir())


def test_a_decoder_blocks_corrections_fit_a_page_and_the_key_numbers_them_as_the_solution_does():
    """Of decoder-block, a mistake in step (11) meant redoing 27 steps (about 200
    numbers) on 8 ruled lines: now the wrong step's sublayer, at most 30 numbers."""
    from worksheet.build import render_document

    for seed in range(1, 6):
        doc = build_document(["find-the-mistake:of=decoder-block"], seed=seed)
        p = doc.problems[0]
        asked = [s for s in p.steps if not s.on_sheet]
        assert asked and (len(asked) == 1 or sum(s.value.size for s in asked) <= 30)
        assert "whole steps, at most 30 numbers" in p.intro
        files = render_document(doc, ["md", "tex", "html"], name="f")
        sheet, key = files["f.md"], files["f-key.md"]
        for s in asked:  # the key's section has the number the student's solution gives the step
            n = s.number
            assert re.search(rf"^### {re.escape(n)} ", key, re.M), (seed, n)
            assert f"\\text{{{n}}}" in sheet  # the shown step (11) on the sheet
        assert not re.search(r"^### [0-9]+\. ", key, re.M) and "### a. The first wrong step" in sheet
        heading = ftm.SOLUTION_HEADING  # the student's solution has a heading, in every format
        assert sheet.count(heading) == files["f.tex"].count(heading) == 1
        assert files["f.html"].count(heading.replace("'", "&#39;")) == 1
        # the tables come before the student's solution (on page 1 when it has room)
        if p.aids:
            assert sheet.index("you may need") < sheet.index(ftm.SOLUTION_HEADING)


@pytest.mark.parametrize("code", ["pe-index-not-halved", "pe-sin-cos-swapped", "arithmetic-slip"])
def test_positional_encodings_table_is_the_same_whatever_the_mistake_and_holds_the_flawed_angles(code):
    """The sin/cos table of find-the-mistake of positional encoding does not single out
    the right angles Θ that the corrections ask for: it is the same table whatever the
    mistake, and it also holds the angles of the flawed step (1), so the student's own
    solution can be followed from the sheet."""
    from fractions import Fraction

    from worksheet.exact import to_latex

    tables = set()
    for seed in (1, 2, 3):
        p = _problem("positional-encoding", seed, mistake=code)
        (aid,) = p.aids
        tables.add(aid.entries)
        args = {a for a, _ in aid.entries}
        for row in _shown(p, "angles"):
            for a in row:
                if a:
                    x = Fraction(a).limit_denominator(10**6)
                    assert rf"\sin\left({to_latex(x)}\right)" in args, (seed, x)
    assert len(tables) == 1
    plain = build_document(["positional-encoding"], seed=1).problems[0].aids[0].entries
    (table,) = tables
    assert set(plain) < set(table)  # the right angles, among others
