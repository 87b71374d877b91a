"""Calculator keys in decimals (issue 29 §5): a calculator key's worked lines write
the numbers as the sheet gave them (18.4, e^{-14.4}), never as fractions the sheet
never printed (92/5, e^{-72/5}, 1/(1 + e^{31/50}) for σ(-0.62)); and a hand key's
carried 4-place values print with their 4 places (-0.5380, not -0.538)."""

from __future__ import annotations

import re

import pytest

from worksheet import kinds
from worksheet.build import build_document

FRACTION_POWER = re.compile(r"e\^\{-?\\frac")


@pytest.mark.parametrize("kind", kinds.names())
def test_no_calculator_line_writes_an_exponent_as_a_fraction(kind):
    bad = []
    for seed in (1, 2, 3):
        p = build_document([kind], seed=seed, options={"numbers": "calculator"}).problems[0]
        bad += [f"seed {seed}, {s.name}: {w}" for s in p.steps for w in map(str, s.work) if FRACTION_POWER.search(w)]
    assert not bad, "\n".join(bad[:10])


def test_softmax_scaling_writes_the_given_scores_as_the_sheet_gave_them():
    p = build_document(["softmax-scaling"], seed=3, options={"numbers": "calculator"}).problems[0]
    given = p.inputs["scores"].exact[0]
    line = str(p.step("softmax_raw").work[0])
    assert r"\frac" not in line and "18.4" in line, line
    assert all(f"{float(x):g}" in line for x in given), line


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_hand_keys_concatenated_heads_keep_their_four_places(seed):
    p = build_document(["multi-head-attention"], seed=seed).problems[0]
    for name in ("concat", "output"):
        line = str(p.step(name).work[0])
        for number in re.findall(r"-?\d+\.\d+", line):
            assert len(number.split(".")[1]) == 4, (name, number, line)
