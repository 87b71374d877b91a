"""Golden outputs of every format at a fixed seed: text exactly, in the JSON
the exact strings exactly and the floats within rel 1e-12 (golden_util).

Regenerate after an intended change with WORKSHEET_UPDATE_GOLDEN=1 and read
the diff before committing it.
"""

from pathlib import Path

import pytest

import golden_util
from worksheet.build import build_document, render_document

GOLDEN = Path(__file__).parent / "golden" / "attention"

CASES = {
    "default": (["attention"], {}),
    "causal": (["attention"], {"causal": True, "seq_len": 4}),
}


@pytest.mark.parametrize("case", CASES)
def test_golden_outputs(case):
    kinds, options = CASES[case]
    doc = build_document(kinds, seed=1, options=options)
    files = render_document(doc, ["md", "tex", "json"], name=case)
    for name, text in files.items():
        golden_util.check(GOLDEN / name, text)


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_worked_lines_never_repeat_a_side(numbers):
    """``a = b = b`` says nothing twice: no worked line of any kind does it."""
    from worksheet import kinds

    for seed in range(1, 6):
        doc = build_document(kinds.names(), seed=seed, options={"numbers": numbers})
        for p in doc.problems:
            for s in p.steps:
                for line in s.work:
                    sides = str(line).split(" = ")
                    assert all(a != b for a, b in zip(sides, sides[1:])), f"{p.kind}.{s.name}: {line}"
