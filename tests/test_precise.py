"""The references and mistake rules are precision-generic (worksheet/steps/precise.py):
the same code on float64 arrays (the independent cross-check) and on object
arrays of mpmath mpf at 60 digits (the same digits on every machine)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import worksheet
from worksheet import kinds
from worksheet.kinds import base, mistakes
from worksheet.steps import precise

NUDGE = Path(__file__).parent / "last_bit"
SOURCE = Path(worksheet.__file__).resolve().parents[1]
KINDS = [k for k in kinds.names() if k != "find-the-mistake"]


RULE_OPTIONS = {"alignment": {"score": "scaled-dot"}}  # its rules are for this score


def _problem(name: str, numbers: str, seed: int, **options):
    m = kinds.get(name)
    params = m.Params(numbers=numbers, **options)
    inputs = m.generate(np.random.default_rng(seed), params)
    return m, params, m.solve(inputs, params, seed=seed)


def _close(hp: np.ndarray, fl: np.ndarray, what) -> None:
    got, want = precise.to_float64(hp), np.asarray(fl, dtype=np.float64)
    assert got.shape == want.shape, what
    assert (np.isinf(got) == np.isinf(want)).all() and (np.isnan(got) == np.isnan(want)).all(), what
    live = np.isfinite(want)
    scale = max(1.0, float(np.abs(want[live]).max())) if live.any() else 1.0
    np.testing.assert_allclose(got[live], want[live], rtol=1e-12, atol=1e-12 * scale, err_msg=str(what))


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
@pytest.mark.parametrize("name", KINDS)
def test_every_reference_gives_the_same_values_at_high_precision(name, numbers):
    for seed in (1, 2, 3):
        m, params, p = _problem(name, numbers, seed)
        floats = m.reference({k: q.value for k, q in p.inputs.items()}, params)
        high = base.precise_reference(name, params, {k: q.exact for k, q in p.inputs.items()})
        assert sorted(high) == sorted(floats)
        for step, value in floats.items():
            assert high[step].dtype == object and all(isinstance(x, precise.MPF) for x in high[step].flat), step
            _close(high[step], value, (name, seed, step))


@pytest.mark.parametrize("name", KINDS)
def test_every_mistake_rule_gives_the_same_values_at_high_precision(name):
    tried = 0
    for numbers in ("hand", "calculator"):
        m, params, p = _problem(name, numbers, 5, **RULE_OPTIONS.get(name, {}))
        fl = {k: q.value for k, q in p.inputs.items()} | {s.name: s.value for s in p.steps if not s.is_written}
        high = base.precise_reference(name, params, {k: q.exact for k, q in p.inputs.items()})
        mp = {k: precise.to_mp(q.exact) for k, q in p.inputs.items()} | high
        for s in p.steps:
            for code, rule, ctx in mistakes.rules(name, s.name):
                try:
                    with np.errstate(all="ignore"):
                        want = rule(mistakes.Values(fl, **ctx), p.params)
                except (KeyError, ValueError, IndexError):
                    continue
                try:
                    with precise.high_precision():
                        got = rule(mistakes.Values(mp, **ctx), p.params)
                except ZeroDivisionError:  # mpmath raises where numpy gives nan or inf
                    assert not np.isfinite(np.asarray(want, dtype=np.float64)).all(), (name, s.name, code)
                    continue
                if want is None:
                    assert got is None
                    continue
                tried += 1
                _close(got, want, (name, s.name, code))
    assert tried or mistakes.codes_for(name) == [mistakes.SLIP]


_DIGITS = """
import numpy as np
from worksheet import kinds
from worksheet.kinds import base
from worksheet.solution.problem import to_array
for name in kinds.names():
    if name == "find-the-mistake":
        continue
    m = kinds.get(name)
    for numbers in ("hand", "calculator"):
        params = m.Params(numbers=numbers)
        inputs = m.generate(np.random.default_rng(11), params)
        m.reference({k: to_array(v) for k, v in inputs.items()}, params)  # numpy's (nudged) exp, tanh, ...
        for step, v in sorted(base.precise_reference(name, params, inputs).items()):
            print(name, numbers, step, [x._mpf_ for x in v.flat])  # every bit
"""


def test_the_high_precision_run_does_not_move_when_exp_tanh_sin_cos_answer_one_bit_up(tmp_path):
    def run(nudged: bool) -> str:
        log = tmp_path / "calls"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WS_NUDGE_LOG")}
        env["PYTHONPATH"] = os.pathsep.join(([str(NUDGE)] if nudged else []) + [str(SOURCE)])
        env["WS_NUDGE_LOG"] = str(log)
        r = subprocess.run([sys.executable, "-c", _DIGITS], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout

    plain, nudged = run(False), run(True)
    calls = sum(int(x) for x in (tmp_path / "calls").read_text().split())
    assert calls > 100, "the nudge was not active (the float64 references call numpy's exp and tanh)"
    assert plain.count("\n") > 200
    assert plain == nudged


def test_the_functions_dispatch_on_the_dtype():
    x = np.array([[0.5, -1.25]])
    for fn, ref in (
        (precise.exp, np.exp),
        (precise.tanh, np.tanh),
        (precise.sin, np.sin),
        (precise.cos, np.cos),
        (precise.sqrt, lambda a: np.sqrt(np.abs(a))),
    ):
        arg = np.abs(x) if fn is precise.sqrt else x
        assert fn(arg).dtype == np.float64 and (fn(arg) == ref(x)).all()  # float64: numpy's, bit for bit
        with precise.high_precision():
            high = fn(precise.as_mp(arg))
            assert high.dtype == object
        assert np.allclose(precise.to_float64(high), ref(x), rtol=1e-15)
    with precise.high_precision():
        third = precise.number(__import__("fractions").Fraction(1, 3))
        assert abs(third * 3 - 1) < 1e-55
        assert precise.isinf(precise.as_mp(np.array([[-np.inf, 1.0]]))).tolist() == [[True, False]]
    assert precise.number(2) == 2.0 and type(precise.number(2)) is float


def test_a_screened_generation_decision_is_the_high_precision_one(monkeypatch):
    """A threshold right at a value: numpy's exp nudged one bit either way moves the
    float64 value across it, the decision (kinds/screen.py) stays the high-precision one."""
    from worksheet.kinds import multi_head_attention as mha, screen

    params = mha.Params()
    m = mha.generate(np.random.default_rng(4), params)
    high = base.precise_reference("multi-head-attention", params, m, floats=True)
    t = float(high["weights_1"][0, 0])
    exp = np.exp
    for step in (np.inf, -np.inf):
        monkeypatch.setattr(np, "exp", lambda x, step=step: np.nextafter(exp(x), step))
        for test in (lambda ref: ref["weights_1"][0, 0] > t, lambda ref: ref["weights_1"][0, 0] >= t):
            assert screen.screened("multi-head-attention", mha.reference, params, m, test) == test(high)


def test_threads_get_the_same_digits_while_mpmaths_global_precision_changes():
    """A practice server marks in several threads: each computes in its own context
    at 60 digits, whatever another thread does with mpmath's global precision."""
    import threading

    m = kinds.get("decoder-block")
    params = m.Params()
    inputs = m.generate(np.random.default_rng(2), params)
    want = {k: [x._mpf_ for x in v.flat] for k, v in base.precise_reference("decoder-block", params, inputs).items()}
    results, stop = [], threading.Event()

    def churn():
        while not stop.is_set():
            with mpmath.workprec(20):
                mpmath.exp(mpmath.mpf(1))

    def work():
        out = base.precise_reference("decoder-block", params, inputs)
        results.append({k: [x._mpf_ for x in v.flat] for k, v in out.items()})

    churner = threading.Thread(target=churn)
    churner.start()
    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    churner.join()
    assert len(results) == 4 and all(r == want for r in results)


@pytest.mark.parametrize("name", ["lstm-cell", "gru-cell"])
def test_a_carried_cell_measures_its_drift_against_the_high_precision_chain(name):
    """Whether the carried chain drifts too far (5e-3) is decided on the 60-digit
    unrounded chain: a rounded step's value is that chain's float64."""
    from worksheet.build import build_document

    for seed in (1, 2):
        p = build_document([f"{name}:steps=2"], seed=seed).problems[0]
        high = base.precise_reference(name, p.params, {k: q.exact for k, q in p.inputs.items()}, floats=True)
        rounded = [s for s in p.steps if s.rounded]
        assert rounded
        for s in rounded:
            assert np.array_equal(s.value, high[s.name]), s.name


_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 5e-13, 1e-12, 1.0, 1.0 + 1e-9, 1.0 + 2e-9, math.inf, -math.inf, math.nan]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_FLOATS, _FLOATS), min_size=1, max_size=6))
def test_same_floats_is_numpys_allclose(pairs):
    """The mistakes' "changes nothing" test (float_check.same_floats) decides as
    np.allclose(rtol=1e-9, atol=1e-12, equal_nan=True) does, NaN and infinities included."""
    from worksheet.steps.float_check import same_floats

    a = np.array([x for x, _ in pairs]).reshape(1, -1)
    b = np.array([y for _, y in pairs]).reshape(1, -1)
    with np.errstate(all="ignore"):
        want = bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
    assert same_floats(a, b) is want


_LOGITS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -6.0, 6.0, 6.0000001, 4.0, math.inf, -math.inf, math.nan]) | (
    st.floats(-10, 10)
)


@settings(max_examples=500, deadline=None)
@given(
    st.integers(1, 3).flatmap(
        lambda n: st.integers(1, 5).flatmap(
            lambda m: st.lists(st.lists(_LOGITS, min_size=m, max_size=m), min_size=n, max_size=n)
        )
    ),
    st.sampled_from([6, 2]),
    st.sampled_from([4, 1.5]),
)
def test_pleasant_logits_decides_as_numpy_nan_functions_do(rows, limit, spread):
    """The generators' logits test (float_check.pleasant_logits, in Python floats) gives
    what its numpy form gave: infinities and NaN are not live, a row with none live fails."""
    import warnings

    from worksheet.steps.float_check import pleasant_logits

    S = np.array(rows, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        live = np.where(np.isinf(S), np.nan, S)
        spans = np.nanmax(live, axis=1) - np.nanmin(live, axis=1)
        want = bool(np.nanmax(np.abs(live)) <= limit and spans.max() <= spread and spans.max() > 0)
    assert pleasant_logits(S, limit=limit, spread=spread) is want
