"""Small wording a lecturer would correct by hand before printing (issue 18 §3)."""

from __future__ import annotations

import re

import pytest

from worksheet.build import build_document


@pytest.mark.parametrize("kind", ["decoder-block", "encoder-block"])
def test_one_head_is_one_head_not_one_heads(kind):
    (one,) = build_document([f"{kind}:heads=1"], seed=1).problems
    assert "$H = 1$ head," in one.intro and "1$ heads" not in one.intro
    (two,) = build_document([f"{kind}:heads=2"], seed=1).problems
    assert "$H = 2$ heads," in two.intro


def test_with_one_head_the_concat_line_lists_no_further_heads():
    for kind in ("decoder-block", "encoder-block:heads=1", "multi-head-attention:heads=1"):
        (p,) = build_document([kind], seed=1).problems
        lines = [w for s in p.steps if s.name.endswith("concat") for w in map(str, s.work)]
        assert lines and all(r"\cdots" not in w and r"\middle|" not in w for w in lines), kind
        # c_1 of the (self-)attention; the decoder's cross-attention writes {C_c}_1 and head_{c,1}
        assert all(re.match(r"(c_\{1\}|\{C_c\}_\{1\}) = \\text\{row 1 of \} \\mathrm\{head\}_", w) for w in lines), kind
    (p,) = build_document(["multi-head-attention:heads=2"], seed=1).problems
    assert re.search(r"\\middle\|\s*\\;\s*\\cdots", str(p.step("concat").work[0]))  # head_1 row 1 | ...


@pytest.mark.parametrize("kind", ["attention", "alignment", "next-token", "multi-head-attention", "cross-attention"])
def test_a_calculator_sheets_dot_products_write_its_decimals_as_decimals(kind):
    """The sheet gives -0.1, so its worked line writes (-0.1) * 0.7 + ... = -0.18,
    not (-1/10) * 7/10 + ... = -9/50 (issue 18: on calculator sheets decimals lead)."""
    (p,) = build_document([kind], seed=1, options={"numbers": "calculator"}).problems
    lines = [w for s in p.steps for w in map(str, s.work) if r"\cdot" in w and "=" in w]
    dots = [w for w in lines if re.search(r"\(-0\.\d+\) \\cdot|\d\.\d+ \\cdot", w)]
    assert dots, lines[:3]
    assert not any(re.search(r"\\frac\{\d+\}\{10+\}", w) for w in dots), dots[:2]


def test_a_weighted_sum_says_equals_only_where_no_weight_was_rounded():
    """z = sum_k alpha_k v_k: a masked row's weights 1 and 0 give '= 1 * 1 + 0 * 2 = 1';
    softmax weights read from a table give '\\approx' (carried or not), and an
    integer result prints as one."""
    from fractions import Fraction as F

    from worksheet.steps.line_trees import weighted_sum as trees

    def weighted_sum(*args, **kwargs) -> str:
        return str(trees(*args, **kwargs))

    assert weighted_sum([F(1), F(0)], [F(1), F(2)], F(1)) == r"= 1 \cdot 1 + 0 \cdot 2 = 1"
    assert weighted_sum([F(1, 2), F(1, 2)], [F(1), F(3)], F(2)) == r"= 0.5000 \cdot 1 + 0.5000 \cdot 3 = 2"
    carried = weighted_sum([F(8176, 10000), F(1824, 10000)], [F(-1), F(-1)], F(-1), carried=True)
    assert carried == r"\approx 0.8176 \cdot (-1) + 0.1824 \cdot (-1) \approx -1"
    assert weighted_sum([F(1, 10)], [F(-7, 10)], F(-7, 100), decimals=True) == r"= 0.1000 \cdot (-0.7) = -0.0700"
    (p,) = build_document(["attention"], seed=1).problems  # softmax weights: irrational, read from the table
    assert r"\approx 0.2119 \cdot (-1)" in str(p.step("output").work[0])


def test_self_attention_basic_says_the_scores_are_symmetric_and_the_weights_need_not_be():
    """Its own table shows alpha_12 = 0.4223 and alpha_21 = 0.1173: a key must not
    say a token cannot attend to another differently from how that one attends to it."""
    for seed in range(4):
        (p,) = build_document(["self-attention-basic"], seed=seed).problems
        notes = " ".join(s.note for s in p.steps)
        assert "scores are symmetric" in notes and "weights need not be symmetric" in notes
        assert "cannot attend to another differently" not in notes


def test_softmax_scaling_reads_the_weight_its_table_shows():
    """The table shows the chain's 0.7310 (0.3679/1.3679 rounded): the comment and the
    model answer quote that, not the exact value's 0.7311."""
    for seed in range(10):
        (p,) = build_document(["softmax-scaling"], seed=seed).problems
        answer = p.step("written").written
        for s in p.steps:
            if s.chain is None:
                continue
            top = max(s.chain[0])
            shown = f"{float(top):.4f}"
            assert f"Largest weight ${shown}$" in s.note, (seed, s.name, s.note)
            assert f"the largest weight is ${shown}$" in answer, (seed, s.name)


@pytest.mark.parametrize(
    "kinds",
    [["attention"], ["positional-encoding"], ["lstm-cell"], ["feed-forward"], ["attention", "positional-encoding"]],
)
def test_the_hand_line_names_exactly_the_tables_the_sheet_prints(kinds):
    """Not "read e^x, sigma, tanh, sqrt x, sin, cos from the tables" where only e^x is printed."""
    from worksheet.solution.document import table_function

    doc = build_document(kinds, seed=1)
    printed = {table_function(arg) for p in doc.problems for aid in p.aids for arg, _ in aid.entries}
    line = doc.rounding
    for func, tex in {"exp": "$e^x$", "sigma": r"$\sigma$", "tanh": r"$\tanh$", "sqrt": r"$\sqrt{x}$"}.items():
        assert (tex in line) == (func in printed), (kinds, func, line)
    for func in ("sin", "cos"):
        assert (f"$\\{func}$" in line) == (func in printed), (kinds, func, line)
    assert ("from the table" in line) == bool(printed)


@pytest.mark.parametrize("kind", ["attention", "layer-norm", "feed-forward", "multi-head-attention", "cross-attention"])
def test_a_calculator_key_writes_the_sheets_decimals_as_decimals(kind):
    """The sheet gave 14.4: the key's exact tables write 14.4, not 72/5 (1/3 stays a fraction)."""
    from fractions import Fraction

    from worksheet.build import render_document
    from worksheet.solution.number_format import terminating_places

    doc = build_document([kind], seed=2, options={"numbers": "calculator"})
    files = render_document(doc, ["md", "html"], name="c")
    cells = [c.strip() for line in files["c-key.md"].splitlines() if line.startswith("|") for c in line.split("|")]
    fracs = [re.fullmatch(r"\$-?\\frac\{(\d+)\}\{(\d+)\}\$", c) for c in cells]
    assert not [f[0] for f in fracs if f and terminating_places(Fraction(int(f[1]), int(f[2]))) is not None]
    assert any(re.fullmatch(r"\$-?\d+\.\d+\$", c) for c in cells)  # its decimals
    for m in re.finditer(
        r"<mtd>(?:<mo>[^<]*</mo>)?<mfrac><mn>(\d+)</mn><mn>(\d+)</mn></mfrac></mtd>", files["c-key.html"]
    ):
        assert terminating_places(Fraction(int(m[1]), int(m[2]))) is None, m[0]


def test_next_token_quotes_the_probability_its_table_shows():
    for seed in range(8):
        (p,) = build_document(["next-token"], seed=seed).problems
        chain = p.step("probabilities").chain
        line = str(p.step("prediction").work[0])
        assert f"\\approx {float(max(chain[0])):.4f}" in line, (seed, line)
