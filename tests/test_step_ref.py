"""Step names read once (``worksheet.solution.step_ref.StepRef``): part, name,
index; the text written back is the name as files and keys spell it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worksheet import kinds
from worksheet.build import build_document
from worksheet.kinds import mistakes
from worksheet.solution.step_ref import StepRef


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("scores", StepRef("", "scores")),
        ("scores_2", StepRef("", "scores", 2)),
        ("attn.scores_12", StepRef("attn", "scores", 12)),
        ("norm1.mean", StepRef("norm1", "mean")),
        ("pe.X_plus_PE", StepRef("pe", "X_plus_PE")),
        ("softmax_sqrt_dk", StepRef("", "softmax_sqrt_dk")),
        ("h_3", StepRef("", "h", 3)),
        ("x_0", StepRef("", "x_0")),  # indices count from 1
    ],
)
def test_a_step_name_reads_as_part_name_and_index(text, ref):
    assert StepRef.parse(text) == ref and str(ref) == text


def test_a_step_moves_into_and_out_of_a_part():
    ref = StepRef.parse("attn.weights_2")
    assert ref.prefix == "attn." and ref.suffix == "_2"
    assert str(ref.local) == "weights_2" and str(ref.base) == "attn.weights"
    assert ref.local.within("attn.") == ref == ref.local.within("attn")


@given(st.text(alphabet="ab_.12", max_size=12))
def test_every_text_is_written_back_as_it_was_read(text):
    assert str(StepRef.parse(text)) == text


def _step_names() -> list[tuple[str, str]]:
    out = []
    for name in kinds.names():
        for p in build_document([name], seed=1).problems:
            out += [(name, s.name) for s in p.steps]
    for spec in ("lstm-cell:steps=3", "decoder-block"):
        p = build_document([spec], seed=1).problems[0]
        out += [(p.kind, s.name) for s in p.steps]
    return out


def test_every_step_name_of_every_kind_is_read_back_unchanged():
    names = _step_names()
    assert all(str(StepRef.parse(n)) == n for _, n in names)
    heads = {StepRef.parse(n) for k, n in names if k == "multi-head-attention"}
    assert StepRef("", "scores", 2) in heads
    parts = {StepRef.parse(n).part for k, n in names if k == "decoder-block"}
    assert parts == {"", "self", "norm1", "cross", "norm2", "ffn", "norm3"}


def test_a_block_steps_rules_read_its_parts_values_by_head_and_part():
    """``attn.scores_2`` of the encoder block is multi-head attention's ``scores``
    rules, reading ``attn.Q_2`` for ``Q``."""
    found = mistakes.rules("encoder-block", "attn.scores_2")
    assert found
    data = {"attn.Q_2": 1, "Q": 2, "attn.K": 3, "K_2": 4}
    for _, _, ctx in found:
        v = mistakes.Values(data, **ctx)
        assert ctx["at"] == StepRef("attn", "scores", 2) or ctx["at"] == StepRef("attn", "scores")
        if ctx["at"].index == 2:
            assert (v["Q"], v["K"]) == (1, 3)
    assert mistakes.rules("encoder-block", "output") == []
