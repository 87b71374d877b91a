"""Marks you can defend: no credit from nothing.  A table of attempts to game
error carried forward (trivial earlier answers that make later steps easy),
against several kinds, each earning no more than an honest blank: no step is
"carried forward" from them (only from a step diagnosed with a named mistake,
an honest error such as ``scores-transposed``), and a step is "correct" only
where the answer written is the key's own value."""

from __future__ import annotations

import json

import numpy as np
import pytest

from worksheet.build import ProblemSpec, build_document, build_variants
from worksheet.check import check_answers, read_key
from worksheet.check.degenerate import why_degenerate
from worksheet.kinds import mistakes
from worksheet.kinds.base import recomputer
from worksheet.policy.errors import InputError
from worksheet.render.json import dumps, document, variant_text, variants_text

KINDS = {
    "attention": {},
    "self-attention-basic": {},
    "layer-norm": {},
    "feed-forward": {},
    "softmax-scaling": {},
}


def key_file(tmp_path, kind, seed=4):
    doc = build_document([ProblemSpec(kind, KINDS[kind])], seed=seed)
    path = tmp_path / f"{kind}.json"
    path.write_text(dumps(document(doc)), encoding="utf-8")
    return path


def entries(m: np.ndarray) -> list:
    return [["-inf" if x == -np.inf else repr(float(x)) for x in row] for row in np.asarray(m)]


def chain(kp, start: dict) -> dict:
    """The degenerate ``start`` values, and every later step recomputed from them by the
    kind's own reference: an answer file whose later steps all follow from its start."""
    run = recomputer(kp.kind, kp.params, kp.inputs)
    later = run(start) or {}
    names = [s.name for s in kp.steps]
    first = min(names.index(n) for n in start)
    out = dict(start)
    for s in kp.steps[first:]:
        if s.name not in out and s.name in later and later[s.name].shape == s.shape:
            out[s.name] = later[s.name]
    return out


def _first(kp, test):
    return next(s for s in kp.steps if not s.written and test(s))


ATTEMPTS = {
    "1x1 zeros everywhere": lambda kp: {s.name: np.zeros((1, 1)) for s in kp.steps if not s.written},
    "zeros of the right shape everywhere": lambda kp: {s.name: np.zeros(s.shape) for s in kp.steps if not s.written},
    "ones everywhere": lambda kp: {s.name: np.ones(s.shape) for s in kp.steps if not s.written},
    "a zero first step, the rest following": lambda kp: chain(kp, {kp.steps[0].name: np.zeros(kp.steps[0].shape)}),
    "all-equal first step, the rest following": lambda kp: chain(
        kp, {kp.steps[0].name: np.full(kp.steps[0].shape, 2.0)}
    ),
    "identity at the first square step, the rest following": lambda kp: chain(
        kp, {(s := _first(kp, lambda s: s.shape[0] == s.shape[1] > 1)).name: np.eye(s.shape[0])}
    ),
    "a copy of an input, the rest following": lambda kp: chain(
        kp,
        {
            s.name: x
            for s in kp.steps[:1]
            for x in [next((v for v in kp.inputs.values() if v.shape == s.shape), np.full(s.shape, 3.0))]
        },
    ),
    "copies of the inputs wherever the shape fits": lambda kp: {
        s.name: next(v for v in kp.inputs.values() if v.shape == s.shape)
        for s in kp.steps
        if not s.written and any(v.shape == s.shape for v in kp.inputs.values())
    },
    "uniform weights, the rest following": lambda kp: chain(
        kp,
        {
            s.name: np.full(s.shape, 1 / s.shape[1])
            for s in [_first(kp, lambda s: s.name in ("weights", "softmax_raw") or s.shape[1] > 1)]
        },
    ),
    "every step transposed": lambda kp: {
        s.name: s.value.T for s in kp.steps if not s.written and s.shape[0] == s.shape[1] > 1
    },
    "a transposed first square step, the rest following": lambda kp: chain(
        kp, {(s := _first(kp, lambda s: s.shape[0] == s.shape[1] > 1)).name: s.value.T}
    ),
}


def _mark(tmp_path, key, answers: dict):
    a = tmp_path / "a.json"
    a.write_text(json.dumps({k: entries(v) for k, v in answers.items()}), encoding="utf-8")
    return check_answers(key, a)


HONEST = set(mistakes.CATALOGUE) - {mistakes.SLIP, mistakes.TRUNCATED}


def _honestly_carried(report, s) -> bool:
    """Carried forward only from steps diagnosed with a named mistake: an honest error
    (``scores-transposed`` is ``K Q^T``), whose later steps keep their marks by design."""
    steps = {r.name: r for r in report.problems[0].steps}
    return bool(s.carried_from) and all(steps[n].mistake in HONEST for n in s.carried_from)


def _earns_nothing_it_did_not_write(report, kp, answers):
    for s in report.problems[0].steps:
        assert s.status != "carried-forward" or _honestly_carried(report, s), (s.name, s.message)
        if s.status == "correct":  # only where the answer written is the key's own value
            assert np.allclose(answers[s.name], kp.step(s.name).value, atol=1e-3), (s.name, s.message)
            assert why_degenerate(s.name, answers[s.name], kp.step(s.name).value, kp.inputs) is None


def test_the_gaming_table_is_long_enough():
    assert len(ATTEMPTS) * len(KINDS) + 2 >= 12 and len(ATTEMPTS) >= 10


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_an_attempt_earns_no_more_than_an_honest_blank(tmp_path, kind, attempt):
    key = key_file(tmp_path, kind)
    kp = read_key(key).problems()[0]
    try:
        answers = ATTEMPTS[attempt](kp)
    except StopIteration:
        pytest.skip(f"{kind} has no step this attempt needs")
    if not answers:
        pytest.skip(f"{kind} has no step this attempt needs")
    blank = _mark(tmp_path, key, {}).marks
    report = _mark(tmp_path, key, answers)
    right = sum(
        s.out_of
        for s in report.problems[0].steps
        if s.name in answers
        and answers[s.name].shape == kp.step(s.name).shape
        and np.allclose(answers[s.name], kp.step(s.name).value, atol=1e-3)
    )
    honest = sum(s.out_of for s in report.problems[0].steps if s.status == "carried-forward")
    assert report.marks <= blank + right + honest, report.text()
    _earns_nothing_it_did_not_write(report, kp, answers)


def test_the_report_names_the_reason(tmp_path):
    key = key_file(tmp_path, "attention")
    kp = read_key(key).problems()[0]
    zeros = {n: np.zeros(kp.step(n).shape) for n in ("Q", "K", "V")}
    report = _mark(tmp_path, key, chain(kp, zeros))
    scores = next(s for s in report.problems[0].steps if s.name == "scores")
    assert scores.status == "incorrect"
    assert scores.message == "incorrect: follows from your Q, K, V, but Q is all zeros: no credit."
    assert report.marks == 0


def test_honest_carried_credit_still_counts(tmp_path):
    """One honest slip in Q: the later steps that follow from it keep their marks."""
    key = key_file(tmp_path, "attention")
    kp = read_key(key).problems()[0]
    q = kp.step("Q").value.copy()
    q[0, 0] += 1
    report = _mark(tmp_path, key, chain(kp, {"Q": q, "K": kp.step("K").value, "V": kp.step("V").value}))
    statuses = {s.name: s.status for s in report.problems[0].steps}
    assert statuses["Q"] == "incorrect" and statuses["K"] == statuses["V"] == "correct"
    assert statuses["scores"] == "carried-forward"


def test_a_step_of_the_wrong_shape_or_unread_is_no_source_of_credit(tmp_path):
    key = key_file(tmp_path, "attention")
    kp = read_key(key).problems()[0]
    later = chain(kp, {"Q": np.zeros((1, 1)), "K": np.zeros((1, 1)), "V": np.zeros((1, 1))})
    report = _mark(tmp_path, key, {**later, "scores": np.zeros((1, 1))})
    assert report.marks == 0
    a = tmp_path / "b.json"
    a.write_text(json.dumps({"Q": [["x"] * kp.step("Q").shape[1]] * kp.step("Q").shape[0]}), encoding="utf-8")
    report = check_answers(key, a)
    q = report.problems[0].steps[0]
    assert q.status == "unreadable" and len(q.unread_cells) == kp.step("Q").value.size


def _variants_key(tmp_path):
    docs = build_variants(["attention"], 3, seed=8)
    path = tmp_path / "exam.json"
    path.write_text(variants_text(docs[0], [variant_text(d) for d in docs]), encoding="utf-8")
    return path


def test_another_variants_answers_earn_nothing(tmp_path):
    key = _variants_key(tmp_path)
    k = read_key(key)
    theirs = k.problems("v01")[0]
    a = tmp_path / "copied.json"
    a.write_text(json.dumps({"variant": "v02", **{s.name: entries(s.value) for s in theirs.steps}}), encoding="utf-8")
    report = check_answers(key, a)
    assert report.marks == 0, report.text()
    assert "the answer of another variant" in report.text()


def test_a_stale_template_is_refused(tmp_path):
    key = _variants_key(tmp_path)
    k = read_key(key)
    right = k.problems("v02")[0]
    a = tmp_path / "stale.json"
    a.write_text(
        json.dumps(
            {"variant": "v02", "fingerprint": "0123456789ab", **{s.name: entries(s.value) for s in right.steps}}
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        check_answers(key, a)
    assert "made for another key" in str(info.value) and "0123456789ab" in str(info.value)


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.fixture(scope="module")
def attention_key(tmp_path_factory):
    return key_file(tmp_path_factory.mktemp("key"), "attention")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    c=st.integers(-9, 9),
    first=st.sampled_from(["Q", "K", "V", "scores", "scaled"]),
)
def test_a_constant_earlier_answer_never_carries_credit(tmp_path_factory, attention_key, c, first):
    """Whatever constant a student types for an earlier step, the steps computed from it earn nothing."""
    kp = read_key(attention_key).problems()[0]
    answers = chain(kp, {first: np.full(kp.step(first).shape, float(c))})
    report = _mark(tmp_path_factory.mktemp("a"), attention_key, answers)
    _earns_nothing_it_did_not_write(report, kp, answers)


@settings(max_examples=40, deadline=None)
@given(whole=st.integers(-999, 999), frac=st.integers(0, 9999))
def test_a_decimal_comma_reads_as_the_point(whole, frac):
    from worksheet.check import parse_entry

    point, comma = f"{whole}.{frac:04d}", f"{whole},{frac:04d}"
    assert parse_entry(comma, False, decimal="comma").mp == parse_entry(point, False).mp
    with pytest.raises(ValueError, match="comma"):
        parse_entry(comma, False)


def test_a_slip_that_happens_to_look_degenerate_still_carries(tmp_path):
    """scores all zeros when the key's has one non-zero entry: an arithmetic slip, not a trick."""
    import worksheet
    from worksheet.render.json import problem

    p = worksheet.solve("self-attention-basic", {"X": [[0, 0, 0], [0, 0, 0], [0, 0, 1]]})
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"problems": [problem(p)]}), encoding="utf-8")
    kp = read_key(key).problems()[0]
    assert np.count_nonzero(kp.step("scores").value) == 1
    answers = chain(kp, {"scores": np.zeros(kp.step("scores").shape)})
    report = _mark(tmp_path, key, answers)
    statuses = {s.name: s.status for s in report.problems[0].steps}
    assert statuses["scores"] == "incorrect" and statuses["weights"] == "carried-forward", report.text()
