"""Hand numbers that exercise each step: the audit over every kind and 30 seeds.

A step whose answers are trivial in every seed teaches nothing: its entries all in
{0, 1, -1}, or all equal, in every one of 30 hand-mode problems.  Each such step
below is named with the reason it is so by nature (a mask's -inf, a choice, a
layer norm of width 2, ...), and every other step must have a seed where it is not.
"""

from __future__ import annotations

import os

import pytest

from worksheet import kinds
from worksheet.build import build_document

SEEDS = range(int(os.environ.get("WORKSHEET_AUDIT_SEEDS", "30")))
KINDS = kinds.names() + [
    "alignment:score=location",
    "alignment:score=additive",
    "alignment:score=cosine",
    "alignment:score=general",
    "attention:causal=true",
    "lstm-cell:steps=3",
    "gru-cell:steps=3",
    "layer-norm:d_model=6",
    "layer-norm:d_model=2",
]

# (kind, step): why its answers are trivial in every problem
JUSTIFIED: dict[tuple[str, str], str] = {
    ("layer-norm:d_model=2", "normalized"): "two features deviate from their mean by +-sigma: x-hat is +-1",
}


def trivial(values: list[float]) -> bool:
    """All in {0, 1, -1}, or all equal."""
    return all(v in (0.0, 1.0, -1.0) for v in values) or len(set(values)) <= 1


def entries(step) -> list[float] | None:
    out = []
    for row in step.exact:
        for x in row:
            try:
                out.append(round(float(x), 9))
            except (TypeError, ValueError, OverflowError):
                return None  # a label (a chosen token, a mistake's code): not a number
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_no_step_is_trivial_in_every_seed(kind):
    always: dict[str, bool] = {}
    for seed in SEEDS:
        p = build_document([kind], seed=seed).problems[0]
        for s in p.printed_steps(key=False):
            if s.is_written:
                continue
            values = entries(s)
            if values is None:
                continue
            always[s.name] = always.get(s.name, True) and trivial([v for v in values if v != float("-inf")])
    bad = sorted(name for name, t in always.items() if t and (kind, name) not in JUSTIFIED)
    assert not bad, f"{kind}: steps with trivial answers in every seed: {bad}"


def test_the_audit_sees_a_trivial_step():
    """Layer norm of width 2 normalises to +-1 in every problem (the justified case above),
    and width 4 no longer does (it did: variance 1, 4 or 9 with every deviation +-sigma)."""
    for kind, expect in (("layer-norm:d_model=2", True), ("layer-norm", False)):
        seen = [trivial(entries(build_document([kind], seed=s).problems[0].step("normalized"))) for s in SEEDS]
        assert all(seen) is expect, kind
    assert trivial([1.0, -1.0, 0.0]) and trivial([0.5, 0.5]) and not trivial([0.5, 1.0])
