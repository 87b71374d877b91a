"""worksheet.check.mark_cells: the cell-by-cell marking of the practice page,
on check's own machinery; a finished step gets check's step verdict."""

from __future__ import annotations

import numpy as np
import pytest

import worksheet
from worksheet import kinds
from worksheet.check import mark_cells, shown_mistakes
from worksheet.policy.errors import InputError
from worksheet.render.json import problem as problem_json


def key(kind="attention", seed=1, **settings):
    p = worksheet.problem(kind, seed=seed, **settings)
    raw = problem_json(p)
    raw["steps"] = [s for s in raw["steps"] if "written" not in s]
    return p, raw


def all_cells(raw, text=lambda e, v: e if len(e) <= 200 else repr(v)):
    return {
        s["name"]: {
            (i + 1, j + 1): text(e, v)
            for i, (er, vr) in enumerate(zip(s["exact"], s["value"]))
            for j, (e, v) in enumerate(zip(er, vr))
        }
        for s in raw["steps"]
    }


@pytest.mark.parametrize("kind", kinds.names())
def test_the_keys_own_values_are_right_in_every_cell_and_step(kind):
    _, raw = key(kind)
    marks = mark_cells(raw, all_cells(raw))
    assert {v.verdict for v in marks.verdicts} == {"right"}
    assert {s.status for s in marks.steps} == {"correct"}
    assert all(s.good == s.filled == s.cells for s in marks.steps)


def test_only_the_cells_given_get_verdicts():
    p, raw = key()
    marks = mark_cells(raw, {"weights": {(2, 1): f"{p.step('weights').value[1, 0]:.4f}"}})
    assert [(v.step, v.row, v.col, v.verdict) for v in marks.verdicts] == [("weights", 2, 1, "right")]
    weights = next(s for s in marks.steps if s.name == "weights")
    assert (weights.filled, weights.good, weights.status) == (1, 1, None)


def test_a_finished_step_agrees_with_check_for_each_named_mistake_it_shows():
    p, raw = key("attention", seed=2, causal=True)
    from worksheet.check.marking import mistake_candidates
    from worksheet.check.recompute import _Own, recomputer
    from worksheet.check.key import Key

    kp = Key("k", {"": [raw]}).problems()[0]
    own = _Own(kp, recomputer(kp.kind, kp.params, kp.inputs))
    key_vals = {**kp.inputs, **{s.name: s.value for s in kp.steps}}
    k = [s.name for s in kp.steps].index("weights")
    tried = 0
    for code, candidate in mistake_candidates(kp, k, key_vals, own):
        if candidate.shape != kp.steps[k].shape or np.allclose(candidate, kp.steps[k].value):
            continue
        rows = [[repr(float(x)) for x in row] for row in candidate]
        step = next(
            s
            for s in mark_cells(
                raw, {"weights": {(i + 1, j + 1): x for i, r in enumerate(rows) for j, x in enumerate(r)}}
            ).steps
            if s.name == "weights"
        )
        marked = worksheet.check(p, {"weights": rows})["weights"]
        assert (step.status, step.mistake) == (marked.status, marked.mistake), code
        tried += 1
    assert tried >= 3


def test_named_mistakes_the_problem_can_show():
    _, raw = key("attention", causal=True)
    shown = shown_mistakes(raw)
    assert {"no-scaling", "mask-zero-instead-of-inf", "softmax-over-columns"} <= set(shown)
    _, plain = key("attention")
    assert "mask-zero-instead-of-inf" not in shown_mistakes(plain)


def test_bad_cells_are_input_errors_and_unreadable_entries_unreadable():
    _, raw = key()
    for cells in (
        {"nope": {(1, 1): "1"}},
        {"weights": {(0, 1): "1"}},
        {"weights": {(1, 9): "1"}},
        {"weights": {(1, 1): "1" * 300}},
    ):
        with pytest.raises(InputError):
            mark_cells(raw, cells)
    v = mark_cells(raw, {"weights": {(1, 1): "2 +"}}).verdicts[0]
    assert v.verdict == "unreadable" and v.message and v.read_as == "2 +"
