"""Exact-string golden outputs of every format at a fixed seed.

Regenerate after an intended change with WORKSHEET_UPDATE_GOLDEN=1 and read
the diff before committing it.
"""

import os
from pathlib import Path

import pytest

from worksheet.build import build_document, render_document

GOLDEN = Path(__file__).parent / "golden" / "attention"
UPDATE = os.environ.get("WORKSHEET_UPDATE_GOLDEN") == "1"

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
        path = GOLDEN / name
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.exists(), f"missing golden file {path}; run with WORKSHEET_UPDATE_GOLDEN=1"
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_worked_lines_never_repeat_a_side(numbers):
    """``a = b = b`` says nothing twice: no worked line of any kind does it."""
    from worksheet import kinds

    for seed in range(1, 6):
        doc = build_document(kinds.names(), seed=seed, options={"numbers": numbers})
        for p in doc.problems:
            for s in p.steps:
                for line in s.work:
                    sides = line.split(" = ")
                    assert all(a != b for a, b in zip(sides, sides[1:])), f"{p.kind}.{s.name}: {line}"
