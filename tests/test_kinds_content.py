"""What the kinds print (issue 9): long sums elided, exact weights in the form
the printed e^x table supports, no value tables in calculator mode, notation
that agrees with itself, conventions per kind and worked entries that teach."""

from __future__ import annotations

import re
from fractions import Fraction as F

import numpy as np
import pytest

from worksheet import kinds
from worksheet.steps import scaled_dot_product as blocks
from worksheet.build import build_document, render_document, solve_example, solve_inputs
from worksheet.exact import NegInf, is_rational, to_latex, to_str
from worksheet.solution.problem import EXACT_SHOWN_CHARS

CONVENTION_TEXT = {k: c.text for k, c in kinds.every_convention().items()}

HAND_SEEDS = range(1, 6)


def problem(kind: str, seed: int = 1, **options):
    return build_document([kind], seed=seed, options=options).problems[0]


# ---------------------------------------------------------------- §1 long sums
def test_a_64_term_dot_product_shows_three_terms_dots_the_last_and_its_count():
    work = str(solve_example("thinking-machines").step("scores").work[0])
    assert r"2 \cdot 1 + 2 \cdot 1 + 2 \cdot 1 + \dots + 0 \cdot 0 = 96" in work
    assert work.endswith(r"\quad (\text{64 terms})") and work.count(r"\cdot") == 4 + 1  # 4 terms + q . k


def test_short_sums_are_written_in_full():
    from worksheet.solution.maths.build import sym

    terms = [sym("t", sub=k) for k in range(blocks.LONG_SUM)]
    assert str(blocks.join_terms(terms)) == " + ".join(map(str, terms)) and not blocks.terms_count(blocks.LONG_SUM)
    assert str(blocks.join_terms(terms + [sym("u")])) == r"t_{0} + t_{1} + t_{2} + \dots + u"


def test_a_long_weighted_sum_is_elided_too():
    n = 10
    p = solve_inputs("self-attention-basic", {"X": tuple((F(k % 3),) for k in range(n))})
    work = str(p.step("output").work[0])
    assert r"\dots" in work and r"(\text{10 terms})" in work


# ---------------------------------------------------------------- §3 exact forms
EXP = re.compile(r"exp\(([^()]*)\)")


def _denominator(s: str) -> str | None:
    """D of "1/(D)" or "exp(x)/(D)" or "(...)/(D)"."""
    m = re.search(r"/\((.*)\)$", s)
    return m.group(1) if m else None


@pytest.mark.parametrize(
    "kind, options",
    [
        ("attention", {}),
        ("attention", {"causal": True}),
        ("self-attention-basic", {}),
        ("cross-attention", {}),
        ("alignment", {}),
        ("next-token", {}),
        ("softmax-scaling", {}),
    ],
)
def test_every_exponent_of_a_weight_is_at_most_0_and_in_the_printed_table(kind, options):
    softmax = {"next-token": "probabilities", "softmax-scaling": "softmax_sqrt_dk"}.get(kind, "weights")
    for seed in HAND_SEEDS:
        p = problem(kind, seed, **options)
        (aid,) = [a for a in p.aids if a.title == blocks.EXP_AID]
        table = {arg for arg, _ in aid.entries}
        for row in p.step(softmax).exact:
            for w in row:
                if w == 0:
                    continue
                for x in EXP.findall(to_str(w)):
                    assert F(x) <= 0, (seed, to_str(w))
                    assert f"e^{{{to_latex(F(x))}}}" in table, (seed, x, table)


@pytest.mark.parametrize("kind", ["attention", "self-attention-basic", "cross-attention"])
def test_weights_and_outputs_of_a_row_are_written_over_one_denominator(kind):
    for seed in HAND_SEEDS:
        p = problem(kind, seed)
        for wrow, zrow in zip(p.step("weights").exact, p.step("output").exact):
            dens = {_denominator(to_str(x)) for x in wrow if x != 0} - {None}
            dens |= {_denominator(to_str(x)) for x in zrow if not is_rational(x)}
            assert len(dens) <= 1, (seed, dens)


def test_the_lecture_weights_are_exp_of_minus_2_over_one_plus_exp_of_minus_2():
    w = solve_example("thinking-machines").step("weights")
    assert [to_str(x) for x in w.exact[0]] == ["1/(1 + exp(-2))", "exp(-2)/(1 + exp(-2))"]
    assert r"\frac{e^{-2}}{1 + e^{-2}} \approx 0.1192" in " ".join(map(str, w.work))


def test_calculator_mode_shows_only_short_exact_forms():
    p = problem("attention", 3, numbers="calculator")
    weights = p.step("weights")
    assert not weights.exact_shown and not p.step("output").exact_shown
    assert p.step("scores").exact_shown  # short fractions stay
    assert all(len(to_latex(x)) > EXACT_SHOWN_CHARS for x in [max(weights.exact[0], key=lambda x: len(to_latex(x)))])
    assert r"\frac{e^{-\frac" not in " ".join(map(str, weights.work + p.step("output").work))  # decimals lead
    assert solve_example("thinking-machines").step("weights").exact_shown  # 1/(1 + e^{-2}) is short


@pytest.mark.parametrize("seed", HAND_SEEDS)
def test_hand_mode_always_shows_the_exact_forms(seed):
    p = problem("attention", seed)
    assert all(s.exact_shown for s in p.steps)


# ---------------------------------------------------------------- §4 calculator sheets
@pytest.mark.parametrize("kind", kinds.names())
def test_no_kind_prints_a_table_of_values_in_calculator_mode(kind):
    for seed in (1, 2, 3):
        assert problem(kind, seed, numbers="calculator").aids == [], (kind, seed)


def test_the_calculator_sheet_of_the_issue_gives_nothing_away():
    doc = build_document(["attention", "layer-norm"], seed=3, options={"numbers": "calculator"})
    sheet = render_document(doc, ["md"], roles=("sheet",))["worksheet.md"]
    assert "1749" not in sheet and "Values of" not in sheet and "\\approx" not in sheet


@pytest.mark.parametrize(
    "kind", ["attention", "self-attention-basic", "softmax-scaling", "next-token", "positional-encoding", "alignment"]
)
def test_hand_mode_keeps_its_tables(kind):
    assert problem(kind, 1).aids


# ---------------------------------------------------------------- §6 notation
def test_the_mask_of_self_attention_basic_masks_s_not_s_prime():
    basic = str(problem("self-attention-basic", 1, causal=True).step("masked").formula)
    scaled = str(problem("attention", 1, causal=True).step("masked").formula)
    assert "S_{ij}" in basic and "S'" not in basic
    assert "S'_{ij}" in scaled


def test_layer_norm_prints_the_sublayer_output_as_f_not_the_scores_symbol():
    p = (
        problem("layer-norm", 1, residual=True)
        if "residual" in kinds.get("layer-norm").Params.field_names()
        else solve_inputs("layer-norm", {"X": ((1, 2),), "S": ((1, 0),), "gamma": ((1, 1),), "beta": ((0, 0),)})
    )
    assert str(p.inputs["S"].symbol) == "F" and str(p.step("residual").formula) == "R = X + F"
    assert "f_{11}" in str(p.step("residual").work[0]) and "$F$" in p.intro and "$S$" not in p.intro
    assert str(p.step("output").symbol) == "Y"


def test_layer_norm_writes_epsilon_never_eps():
    for eps in ("0", "1/10"):
        p = solve_inputs("layer-norm", {"X": ((1, 3),), "gamma": ((1, 1),), "beta": ((0, 0),)}, {"eps": eps})
        printed = " ".join(
            [p.intro] + [s.title + " " + s.note + " " + str(s.formula) + " ".join(map(str, s.work)) for s in p.steps]
        )
        assert not re.search(r"\beps\b", printed) and r"\varepsilon" in printed


def test_alignment_writes_one_index_throughout():
    p = problem("alignment", 1)
    printed = " ".join(map(str, p.step("weights").work + p.step("context").work))
    assert r"\alpha_{1" not in printed.replace(r"\alpha_{1}", "") and "e_{1j}" not in printed
    assert r"\max_j e_j" in printed and r"\exp(e_j - m)" in printed  # exp: e names a score
    assert re.search(r"c_\{\d\} = \\sum_k \\alpha_k", printed)


def test_positional_encoding_numbers_every_column_from_0():
    p = solve_inputs("positional-encoding", {"X": ((1, 2, 3, 4), (0, 1, 0, 1))})
    pe, total, X = p.step("PE"), p.step("X_plus_PE"), p.inputs["X"]
    assert [c.split()[0] for c in pe.cols] == list(total.cols) == list(X.cols) == ["0", "1", "2", "3"]
    assert total.rows == pe.rows and "pos 1" in total.rows[1]


def test_each_sheet_states_only_the_conventions_its_problems_use():
    ln = build_document(["layer-norm"], seed=1).conventions
    assert CONVENTION_TEXT["layer_norm"] in ln and not any("softmax" in c or "Scores" in c for c in ln)
    for kind in ("positional-encoding", "feed-forward", "alignment"):
        assert CONVENTION_TEXT["scores"] not in build_document([kind], seed=1).conventions
    plain = build_document(["attention"], seed=1).conventions
    assert CONVENTION_TEXT["causal"] not in plain and CONVENTION_TEXT["scores"] in plain
    both = build_document(["attention:causal=true", "feed-forward"], seed=1).conventions
    assert both.index(CONVENTION_TEXT["causal"]) < both.index(CONVENTION_TEXT["ffn"])  # first-use order
    assert CONVENTION_TEXT["token_rows"] not in both and both[-1] == CONVENTION_TEXT["exact"]
    assert len(set(both)) == len(both)


OUTSIDE_MATH = re.compile(r"\$[^$]*\$")


@pytest.mark.parametrize("kind", kinds.names())
def test_titles_intros_and_notes_write_their_maths_between_dollars(kind):
    p = problem(kind, 1)
    texts = [p.title, p.intro] + [t for s in p.steps for t in (s.title, s.note, s.written)]
    from worksheet.kinds.mistakes import CATALOGUE

    for text in texts:
        words = OUTSIDE_MATH.sub("", text)
        for code in CATALOGUE:  # find-the-mistake lists the codes: names, not maths
            words = words.replace(code, "")
        for bad in ("sqrt(", "d_k", "e^", "\\"):
            assert bad not in words, (kind, bad, text)
        assert not re.search(r"\beps\b", words), (kind, text)


# ---------------------------------------------------------------- §7 worked entries that teach
def test_the_worked_softmax_row_is_not_a_row_of_equal_weights():
    Q = ((1, 1), (1, 0))
    K = ((1, 0), (0, 1))  # query 1 scores [1, 1]: weights 1/2, 1/2; query 2 scores [1, 0]
    p = solve_inputs("attention", {"Q": Q, "K": K, "V": ((1, 2), (3, 4))})
    work = " ".join(map(str, p.step("weights").work))
    assert "m_{2}" in work and "m_{1}" not in work
    assert str(p.step("output").work[0]).startswith("z_{2")


def test_equal_weights_are_shown_only_when_every_row_has_them():
    assert blocks.teaching_row(((F(1), F(1)), (F(2), F(2)))) == 0
    assert blocks.teaching_row(((F(1), NegInf()), (F(0), F(0)), (F(1), F(0)))) == 2
    assert blocks.teaching_row(((F(1), NegInf()), (F(0), F(0)))) == 1  # two live entries beat one


def test_the_worked_entry_of_a_product_is_not_0():
    p = solve_inputs("attention", {"Q": ((1, 0), (0, 1)), "K": ((1, 0), (0, 1)), "V": ((1, 2), (3, 4))})
    work = str(p.step("scores").work[0])  # s_12 = 0: another entry is worked
    assert not work.endswith("= 0") and "s_{11}" in work
    assert "s'_{11}" in str(p.step("scaled").work[-1])


def test_the_worked_output_entry_is_not_0():
    p = solve_inputs("self-attention-basic", {"X": ((0, 1), (0, 2))})
    line = str(p.step("output").work[0])
    assert line.startswith("z_{12}") and not line.endswith(r"\approx 0.0000")


@pytest.mark.parametrize("seed", HAND_SEEDS)
def test_default_hand_problems_work_a_row_with_different_weights(seed):
    p = problem("attention", seed)
    i = int(re.search(r"m_\{(\d+)\}", str(p.step("weights").work[0])).group(1)) - 1
    row = p.step("weights").value[i]
    live = row[row > 0]
    assert np.ptp(live) > 0 or all(np.ptp(r[r > 0]) == 0 for r in p.step("weights").value)


def test_long_sums_of_the_layer_kinds_are_elided_with_their_count():
    ffn = problem("feed-forward", 1, d_model=11, numbers="calculator")
    line = str(ffn.step("hidden_pre").work[0])
    assert r"\dots" in line and r"(\text{12 terms})" in line  # 11 products and the bias
    ln = problem("layer-norm", 1, d_model=12, numbers="calculator")
    for line in map(str, (ln.step("mean").work[0], ln.step("variance").work[-1])):
        assert r"\dots" in line and r"(\text{12 terms})" in line


def test_every_kind_says_which_conventions_it_uses():
    """Each kind module declares its conventions, texts and all (one text per key
    across the kinds: a convention two kinds state is the one shared record)."""
    from worksheet.kinds.shared_conventions import Convention

    for name in kinds.names():
        module = kinds.get(name)
        assert all(isinstance(c, Convention) for c in module.CONVENTIONS), name
        assert all(kinds.every_convention()[c.key] is c for c in module.CONVENTIONS), name
        assert len({c.key for c in module.CONVENTIONS}) == len(module.CONVENTIONS), name
        assert module.CONVENTIONS or kinds.kind(name).passes_settings_on, name


def test_find_the_mistake_states_the_conventions_of_its_kind():
    from worksheet.build import build_document

    shown = build_document(["find-the-mistake:of=layer-norm"]).conventions
    assert shown == build_document(["layer-norm"]).conventions
