"""Small wording a lecturer would correct by hand before printing (issue 18 §3)."""

from __future__ import annotations

import pytest

from worksheet.build import build_document


@pytest.mark.parametrize("kind", ["decoder-block", "encoder-block"])
def test_one_head_is_one_head_not_one_heads(kind):
    (one,) = build_document([f"{kind}:heads=1"], seed=1).problems
    assert "$H = 1$ head," in one.intro and "1$ heads" not in one.intro
    (two,) = build_document([f"{kind}:heads=2"], seed=1).problems
    assert "$H = 2$ heads," in two.intro
