"""Issue 29: every decimal in one printed table has the same number of places.

A block's table of square roots lists carried values (4 places) as arguments; one that
happens to end in 0 still prints its 4 places (``\\sqrt{2.6530}``, not ``\\sqrt{2.653}``
beside ``\\sqrt{6.8838}``), as do the sums such as 1.25 (``\\sqrt{1.2500}``)."""

from __future__ import annotations

import re

import pytest

from block_util import generator
from worksheet.kinds import decoder_block, encoder_block
from worksheet.kinds.layer_norm import SQRT_AID

DECIMAL = re.compile(r"\d\.(\d+)")


def places_in(aid) -> set[int]:
    texts = [t for entry in aid.entries for t in entry] + [t for row in aid.grid for t in row]
    return {len(d) for t in texts for d in DECIMAL.findall(t)}


@pytest.mark.parametrize("kind", [decoder_block, encoder_block], ids=lambda k: k.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 7, 11])
def test_every_decimal_of_a_table_has_the_same_places(kind, seed):
    _, p, _ = generator(kind)(seed)
    roots = [a for a in p.aids if a.title == SQRT_AID]
    assert roots, "a hand block divides by square roots it reads from a table"
    for aid in p.aids:
        assert len(places_in(aid)) <= 1, (aid.title, aid.entries)
    assert places_in(roots[0]) == {4}


def test_a_carried_value_ending_in_0_keeps_its_places():
    """Seed 1 of decoder-block carries 2.653 (2.6530) and 1.25 into the √ table."""
    _, p, _ = generator(decoder_block)(1)
    (aid,) = [a for a in p.aids if a.title == SQRT_AID]
    args = [x for x, _ in aid.entries]
    assert r"\sqrt{2.6530}" in args and r"\sqrt{1.2500}" in args
    assert not any(re.search(r"\{\d+\.\d{1,3}\}", x) for x in args)
