r"""Named mistakes inside Moodle (issue 27, part 1): every Cloze field of every kind
passes what Moodle's importer reads and checks (tests/moodle_util.py ports
``qtype_multianswer_extract_question`` and ``qtype_multianswer_validate_question``);
each NUMERICAL field carries, as 0% answers with the student's hint as feedback,
the values the step's named mistakes give, which the JSON key records (computed
once, at 60 digits); hand-mode draws prefer numbers that tell the mistakes apart.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import moodle_util as mu
from worksheet import kinds
from worksheet.build import ProblemSpec, build_document, make_problem, problem_rng
from worksheet.build.sheets import DIAGNOSABLE_DRAWS
from worksheet.check import check_problem
from worksheet.kinds import find_the_mistake, mistake_values
from worksheet.kinds.hints import HINTS, parens_maths
from worksheet.kinds.mistakes import CATALOGUE
from worksheet.render import cloze
from worksheet.solution.maths import Text
from worksheet.render.json import problem as problem_json
from worksheet.render.moodle import MoodleRenderer

FIND = "find-the-mistake"
PLAIN_KINDS = [k for k in kinds.names() if k != FIND]
OF_KINDS = sorted(set(find_the_mistake.usable()) | {"alignment"})


def questions_of(specs, *, seed: int, numbers: str = "hand", options=None) -> tuple[list[mu.Question], list[dict]]:
    """The Moodle questions and the JSON problems of one document."""
    doc = build_document(list(specs), seed=seed, options={"numbers": numbers, **(options or {})})
    xml = MoodleRenderer().render(doc)
    return mu.questions(xml), [problem_json(p) for p in doc.problems]


def read_both(text: str) -> list[mu.Field]:
    documented, moodles = mu.fields(text), mu.moodle_fields(text)
    assert [(f.weight, f.type, f.alternatives) for f in documented] == [
        (f.weight, f.type, f.alternatives) for f in moodles
    ]
    return moodles


def asked(problem: dict):
    for s in problem["steps"]:
        if "written" in s or s.get("on_sheet") is False:
            continue
        for i, row in enumerate(s["value"]):
            for j, v in enumerate(row):
                if v is not None:
                    yield s, i, j, s["exact"][i][j], v


def text_of(fragment: str) -> str:
    return mu.html_tags_and_text(fragment)[1]


def hint_html(code: str) -> str:
    return str(MoodleRenderer().prose(CATALOGUE[code].hint))


# ---------------------------------------------------------------- the grammar, every kind and of=
def _assert_importable(qs):
    for q in qs:
        fs = read_both(q.text)
        assert mu.import_errors(fs) == [], q.name
        for f in fs:
            if f.type == "MULTICHOICE":
                assert len(f.alternatives) >= 2, (q.name, f.text)


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
@pytest.mark.parametrize("kind", PLAIN_KINDS)
def test_every_field_of_every_kind_is_one_moodle_imports(kind, numbers):
    qs, _ = questions_of([kind], seed=7, numbers=numbers)
    _assert_importable(qs)


@pytest.mark.parametrize("seed", [1, 2, 3, 7])
@pytest.mark.parametrize("of", OF_KINDS)
def test_every_find_the_mistake_drop_down_has_two_choices_for_every_of(of, seed):
    qs, problems = questions_of([f"{FIND}:of={of}"], seed=seed)
    _assert_importable(qs)
    (q,), (p,) = qs, problems
    fs = read_both(q.text)
    types = [f.type for f in fs]
    assert len(fs) == 2  # the step and the mistake: the corrected steps are on the key only
    if len(p["offered"]) < 2:  # one code on offer (alignment without a scaled score): a short answer
        assert types[1] == "SHORTANSWER" and fs[1].right[0].answer == p["mistake"]
    else:
        assert types[1] == "MULTICHOICE"


def test_the_alignment_defect_of_issue_27_is_gone():
    """``find-the-mistake:of=alignment`` wrote ``{1:MULTICHOICE:=arithmetic-slip}``: one
    choice, which Moodle refuses, and with it the whole file."""
    for seed in (1, 2, 3, 7):
        qs, _ = questions_of([f"{FIND}:of=alignment"], seed=seed)
        assert "MULTICHOICE:=arithmetic-slip}" not in qs[0].text
        _assert_importable(qs)


def test_the_command_of_the_issue_writes_a_bank_moodle_imports(runner, cli):
    for seed in ("1", "2", "3", "7"):
        r = runner.invoke(
            cli, ["build", "find-the-mistake:of=alignment", "--seed", seed, "--format", "moodle", "-o", "-"]
        )
        assert r.exit_code == 0, r.output
        qs = mu.questions(r.output)
        assert len(qs) == 1
        _assert_importable(qs)


def test_a_drop_down_of_one_choice_or_blank_choices_becomes_a_short_answer():
    assert cloze.choice_field(2, ["only"], 0, "only") == "{2:SHORTANSWER:=only}"
    assert cloze.choice_field(2, ["a", " "], 0, "a") == "{2:SHORTANSWER:=a}"
    assert cloze.choice_field(2, None, 0, "x") == "{2:SHORTANSWER:=x}"
    assert cloze.choice_field(2, ["a", "b"], 1, "b") == "{2:MULTICHOICE:a~=b}"
    assert mu.import_errors(mu.moodle_fields("{1:MULTICHOICE:=arithmetic-slip}")) != []  # the checker sees it


def test_the_import_checker_refuses_what_moodle_refuses():
    bad = {
        "{1:MULTICHOICE:=only}": "at least 2 choices",
        "{1:NUMERICAL:=abc:0.1}": "not a number",
        "{2:SHORTANSWER:%50%half}": "full grade",
        "{1:MULTICHOICE:%0%a~b}": "full grade",
    }
    for field, why in bad.items():
        (error,) = mu.import_errors(mu.moodle_fields(field))
        assert why in error, (field, error)
    good = "{3:NUMERICAL:=1.5:0.001~%0%2:0.001#You \\} slipped~%-50%3#x}{1:MULTICHOICE:a~=b}{1:SA:=x\\#y}"
    fs = read_both(good)
    assert mu.import_errors(fs) == [] and [f.weight for f in fs] == [3, 1, 1]
    assert [a.fraction for a in fs[0].alternatives] == [1.0, 0.0, -0.5]
    assert fs[0].alternatives[1].feedback == "You } slipped" and fs[2].alternatives[0].answer == "x#y"
    # an unescaped "}" in a feedback ends the field early: the readers see another field or none
    assert mu.moodle_fields("{1:NUMERICAL:=1:0.1#a}b}")[0].alternatives[0].feedback == "a"


# ---------------------------------------------------------------- mistakes as 0% answers
def test_a_no_scaling_answer_gets_its_hint_in_moodle():
    qs, problems = questions_of(["attention"], seed=1)
    fields = read_both(qs[0].text)
    cells = list(asked(problems[0]))
    hits = 0
    for f, (s, i, j, x, v) in zip(fields, cells, strict=True):
        if s["name"] != "scaled":
            continue
        wrong = s["mistakes"]["no-scaling"][i][j]  # what a student who did not scale writes
        typed = float(f"{wrong:.4f}")
        got = mu.numerical_match(f, typed)
        if abs(wrong - v) <= cloze.tolerance(v):
            assert got is not None and got.fraction == 1.0  # no mistake to see in this entry
            continue
        assert got is not None and got.fraction == 0.0, f.text
        assert text_of(hint_html("no-scaling")) in text_of(got.feedback)
        assert r"\(\sqrt{d_k}\)" in got.feedback
        hits += 1
    assert hits > 0


def test_every_zero_answer_is_a_mistake_of_the_json_with_its_hints():
    qs, problems = questions_of(["attention", "layer-norm", "lstm-cell", "gru-cell"], seed=2)
    for q, p in zip(qs, problems):
        for f, (s, i, j, x, v) in zip(read_both(q.text), asked(p), strict=True):
            if f.type != "NUMERICAL":
                continue
            right = [a for a in f.alternatives if a.fraction == 1.0]
            wrong = [a for a in f.alternatives if a.fraction == 0.0]
            assert f.alternatives == right + wrong  # right answers first: Moodle takes the first that fits
            values = {c: m[i][j] for c, m in s.get("mistakes", {}).items()}
            for a in wrong:
                named = [c for c in values if text_of(hint_html(c)) in text_of(a.feedback)]
                assert named and all(abs(values[c] - a.value) <= cloze.tolerance(a.value) for c in named)
                assert all(abs(a.value - r.value) > r.tolerance for r in right)


def test_mistake_groups_leave_out_values_a_right_answer_accepts_and_share_equal_ones():
    tol = cloze.tolerance(1.0)
    groups = cloze.mistake_groups(
        [1.0, 1.0004],
        {"a": 1.0 + tol / 2, "b": 2.0, "c": 2.0 + tol / 3, "d": -math.inf, "e": 1.0004 + tol, "f": 3.0},
    )
    assert groups == [(2.0, ["b", "c"]), (3.0, ["f"])]


@given(
    right=st.lists(st.floats(-5, 5), min_size=1, max_size=3),
    wrong=st.dictionaries(st.sampled_from(list(CATALOGUE)), st.floats(-5, 5), max_size=6),
)
def test_every_mistake_far_from_the_right_answers_is_in_exactly_one_group(right, wrong):
    groups = cloze.mistake_groups(right, wrong)
    codes = [c for _, cs in groups for c in cs]
    assert len(codes) == len(set(codes))
    far = {c for c, w in wrong.items() if all(abs(w - r) > cloze.tolerance(r) for r in right)}
    assert set(codes) == far
    for v, cs in groups:
        assert all(abs(wrong[c] - v) <= cloze.tolerance(v) for c in cs)


@settings(max_examples=200)
@given(st.text(max_size=40))
def test_any_feedback_reads_back_the_same_in_both_readers_and_starts_nothing(text):
    html = cloze.html_text(text)
    field = cloze.numerical(3, [1.0], [(2.0, html)])
    got = read_both(f"<p>{field}</p>")
    assert len(got) == 1 and mu.import_errors(got) == []
    assert [a.fraction for a in got[0].alternatives] == [1.0, 0.0]
    assert got[0].alternatives[1].feedback == html


HOSTILE = ["a}b", "#x", "~", "/", '"q"', "back\\", "<b>x</b>", "{1:SHORTANSWER:=x}", "&amp;", "$x$", r"\(y\)"]


def test_hostile_labels_stay_text_and_never_reach_the_feedback():
    tokens = HOSTILE[:3]
    doc = build_document(["attention"], seed=1, options={"tokens": tokens, "seq_len": len(tokens)})
    qs = mu.questions(MoodleRenderer().render(doc))
    hints = {text_of(hint_html(c)) for c in CATALOGUE}
    for q in qs:
        fs = read_both(q.text)
        assert mu.import_errors(fs) == []
        feedbacks = [a.feedback for f in fs for a in f.alternatives if a.fraction == 0.0]
        assert feedbacks
        for fb in feedbacks:
            assert all(part in hints for part in text_of(fb).split(" Or: "))
            assert not any(t in fb for t in tokens)


# ---------------------------------------------------------------- the JSON's mistakes
def _floats(m):
    return [[-math.inf if x is None else x for x in row] for row in m]


CHECKED = [
    "attention",
    "attention:causal=true",
    "self-attention-basic:causal=true",
    "softmax-scaling",
    "multi-head-attention",
    "positional-encoding",
    "layer-norm",
    "feed-forward",
    "cross-attention",
    "lstm-cell",
    "gru-cell",
]


@pytest.mark.parametrize("spec", CHECKED)
def test_each_recorded_mistake_is_what_check_names_for_those_values(spec):
    """Write a step as the JSON says the mistake gives it (the steps before it right):
    ``worksheet check`` names that mistake, or one whose recorded values are the same
    within the tolerance."""
    for seed in (1, 2):
        p = make_problem(ProblemSpec.parse(spec), {}, seed=seed, index=0)
        raw = problem_json(p)
        steps = [s for s in raw["steps"] if "written" not in s]
        for k, s in enumerate(steps):
            for code in s.get("diagnosable", []):
                # the steps before it as the sheet's chain gives them: a carried step's
                # shown (rounded) values, which the mistake's recorded value starts from
                answers = {
                    b["name"]: b["exact"]
                    if b.get("rounded")
                    else [[repr(x) if x is not None else "-oo" for x in row] for row in b["value"]]
                    for b in steps[:k]
                }
                answers[s["name"]] = [[repr(x) if x is not None else "-oo" for x in row] for row in s["mistakes"][code]]
                got = check_problem(p, answers)[s["name"]]
                assert got.status == "incorrect" and got.mistake is not None, (spec, seed, s["name"], code)
                if got.mistake != code:
                    same = np.array(_floats(s["mistakes"].get(got.mistake, [[math.nan]])))
                    want = np.array(_floats(s["mistakes"][code]))
                    assert same.shape == want.shape and np.all((same == want) | (np.abs(same - want) <= 2e-3))


def test_recorded_mistake_values_are_rounded_from_the_exact_value():
    """softmax over columns of the attention example, at 80 digits with mpmath directly:
    the JSON float is the double nearest it (never a libm float)."""
    p = make_problem(ProblemSpec.parse("attention"), {}, seed=1, index=0)
    got = problem_json(p)
    (weights,) = [s for s in got["steps"] if s["name"] == "weights"]
    scaled = p.step("scaled").exact
    with mpmath.workdps(80):
        from fractions import Fraction

        S = [[mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in row] for row in scaled]
        n = len(S)
        want = [[None] * n for _ in range(n)]
        for j in range(n):
            col = [mpmath.exp(S[i][j]) for i in range(n)]
            total = mpmath.fsum(col)
            for i in range(n):
                want[i][j] = float(col[i] / total)
    assert weights["mistakes"]["softmax-over-columns"] == want


def test_a_mistake_is_recorded_once_and_moodle_reads_the_same_source():
    p = make_problem(ProblemSpec.parse("attention"), {}, seed=3, index=0)
    first = mistake_values.of_problem(p)
    r = MoodleRenderer()
    assert r._mistakes(p) is r._mistakes(p)  # once per problem
    assert {k: {c: a.tolist() for c, a in m.values.items()} for k, m in r._mistakes(p).items()} == {
        k: {c: a.tolist() for c, a in m.values.items()} for k, m in first.items()
    }


# ---------------------------------------------------------------- diagnosable draws
def _draws(spec: str, seed: int):
    kind = kinds.get(ProblemSpec.parse(spec).kind)
    params = kind.Params.from_options(ProblemSpec.parse(spec).options)
    rng = problem_rng(seed, 0, 0)
    out = []
    for _ in range(DIAGNOSABLE_DRAWS):
        out.append(kind.solve(kind.generate(rng, params), params, seed=seed))
    return out


@pytest.mark.parametrize("spec", ["attention", "gru-cell", "lstm-cell", "positional-encoding", "layer-norm"])
def test_hand_mode_takes_the_first_draw_that_tells_the_mistakes_apart(spec):
    for seed in range(6):
        chosen = make_problem(ProblemSpec.parse(spec), {}, seed=seed, index=0)
        draws = _draws(spec, seed)
        left = [mistake_values.untold(d) for d in draws]
        stop = next((k for k, n in enumerate(left) if n == 0), None)
        k = stop if stop is not None else left.index(min(left))
        assert problem_json(chosen)["inputs"] == problem_json(draws[k])["inputs"], (spec, seed, left)


def test_some_first_draw_was_not_diagnosable_and_a_later_one_is():
    found = []
    for seed in range(40):
        draws = _draws("gru-cell", seed)
        first = mistake_values.untold(draws[0])
        if first:
            chosen = make_problem(ProblemSpec.parse("gru-cell"), {}, seed=seed, index=0)
            found.append((first, mistake_values.untold(chosen)))
    assert found and all(after <= before for before, after in found) and any(a < b for b, a in found)


@pytest.mark.parametrize("spec", ["attention", "cross-attention", "multi-head-attention", "gru-cell"])
def test_each_diagnosable_mistake_has_a_moodle_answer_naming_it_alone(spec):
    for seed in (1, 4):
        qs, problems = questions_of([spec], seed=seed)
        alone = {}
        for f, (s, i, j, x, v) in zip(read_both(qs[0].text), asked(problems[0]), strict=True):
            for a in f.alternatives:
                if a.fraction == 0.0 and " Or: " not in text_of(a.feedback):
                    alone.setdefault(s["name"], set()).update(
                        c for c in s.get("mistakes", {}) if text_of(hint_html(c)) == text_of(a.feedback)
                    )
        for s in problems[0]["steps"]:
            assert set(s.get("diagnosable", [])) <= alone.get(s["name"], set()), (spec, seed, s["name"])


def test_the_same_seed_gives_the_same_problem_and_key():
    a = [problem_json(make_problem(ProblemSpec.parse("decoder-block"), {}, seed=13, index=0)) for _ in range(2)]
    assert a[0] == a[1]


# ---------------------------------------------------------------- hints
def test_every_mistake_has_a_hint_for_the_student_with_typeset_maths():
    assert set(HINTS) == set(CATALOGUE)
    for code, m in CATALOGUE.items():
        assert m.hint == HINTS[code] and m.hint.startswith("You"), code
        for part in m.hint.parts:  # every formula passes the allow-list and is read (words hold no $)
            assert type(part) is not Text or "$" not in part.text, (code, part)
        assert "sqrt(" not in m.hint and "^T" not in m.hint, code  # no ASCII pseudo-maths


def test_parens_maths_writes_dollars_as_mathjax_delimiters():
    assert parens_maths(r"You divided by $\sqrt{d_k}$ twice.") == r"You divided by \(\sqrt{d_k}\) twice."
    assert parens_maths("a $b$ c $d") == r"a \(b\) c $d"
    assert parens_maths(HINTS["scaled-by-sqrt-d_model"]).startswith(r"You divided by \(\sqrt{d_\mathrm{model}}\)")


# ---------------------------------------------------------------- the same bytes on every machine
def test_mistakes_diagnosable_draws_and_moodle_answers_change_no_byte_on_another_machine(tmp_path):
    """tests/last_bit (see tests/test_same_bytes.py): with exp, tanh, sin and cos one bit up,
    the mistakes' values, the diagnosable codes, the draws they choose and Moodle's 0%
    answers are the same bytes (they come from the 60-digit values, never from libm)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    import worksheet

    nudge = Path(__file__).parent / "last_bit"
    source = Path(worksheet.__file__).resolve().parents[1]
    log = tmp_path / "nudged-calls"

    def build(out: Path, nudged: bool) -> dict[str, bytes]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WS_NUDGE_LOG")}
        env["PYTHONPATH"] = os.pathsep.join([str(nudge), str(source)] if nudged else [str(source)])
        if nudged:
            env["WS_NUDGE_LOG"] = str(log)
        args = ["build", "attention", "gru-cell", "positional-encoding", "--variants", "6", "--seed", "7"]
        r = subprocess.run(
            [sys.executable, "-m", "worksheet.cli", *args, "--format", "json,moodle", "--jobs", "1", "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}

    plain, other = build(tmp_path / "plain", False), build(tmp_path / "other", True)
    assert sum(int(x) for x in log.read_text().split()) > 100, "the nudge was not active"
    assert plain == other
    key = json.loads(next(v for k, v in plain.items() if k.endswith(".json")))
    steps = [s for v in key["variants"] for p in v["problems"] for s in p["steps"]]
    assert any("softmax-over-columns" in s.get("mistakes", {}) for s in steps)  # exp at 60 digits
    assert any("pe-sin-cos-swapped" in s.get("mistakes", {}) for s in steps)  # sin and cos at 60 digits
