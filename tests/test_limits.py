"""Bounded work (issue 10, sections 2 and 3): every limit of worksheet.policy.limits is
checked before any work, with one line naming file, field and the limit, and
the biggest accepted inputs stay small.  Nothing here is timed: sizes, counts
and limits are asserted, so the tests mean the same on every machine."""

from __future__ import annotations

import json
import random

import pytest

from common import one_line_error, solve_error
from worksheet.policy import limits


def nasty(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    """Entries with all 12 decimal places used: the worst numbers the limits accept."""
    return [[f"{rng.choice('-+')}0.{rng.randrange(10**11, 10**12)}" for _ in range(cols)] for _ in range(rows)]


# ---------------------------------------------------------------- sizes, before any entry is read
def test_too_many_rows_is_refused_naming_the_field_and_limit(runner, cli, tmp_path):
    line = solve_error(
        runner, cli, "attention", {"Q": [[1]] * 17, "K": [[1]] * 17, "V": [[1]] * 17}, tmp_path / "in.json"
    )
    assert "Q: 17 rows, more than the limit of 16" in line


def test_too_many_columns_is_refused_naming_the_row(runner, cli, tmp_path):
    line = solve_error(runner, cli, "attention", {"Q": [[1] * 65], "K": [[1] * 65], "V": [[1]]}, tmp_path / "in.json")
    assert "Q, row 1: 65 columns, more than the limit of 64" in line


def test_too_many_entries_together_is_refused(runner, cli, tmp_path):
    m = [[1] * 64] * 6  # 384 entries each, 1152 together
    line = solve_error(runner, cli, "attention", {"Q": m, "K": m, "V": m}, tmp_path / "in.json")
    assert "V: the matrices have more than 1024 entries together (the limit)" in line


def test_shapes_are_checked_before_entries_are_read(runner, cli, tmp_path):
    """A bad entry in a matrix that is too large: the size is what is reported."""
    m = [["not a number"] * 64] * 17
    assert "17 rows" in solve_error(runner, cli, "attention", {"Q": m, "K": m, "V": m}, tmp_path / "in.json")


def test_the_64_mb_kind_of_input_file_is_refused_by_its_size(runner, cli, tmp_path):
    f = tmp_path / "big.json"
    f.write_text('{"Q": [[1]], "pad": "' + "x" * limits.MAX_INPUT_BYTES + '"}')
    line = one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f)]))
    assert f"{f}: file is larger than the limit of 1 MB" in line


def test_fractions_over_many_denominators_are_refused(runner, cli, tmp_path):
    """1/p for distinct primes: sums with denominators of thousands of digits."""
    primes = [p for p in range(2, 400) if all(p % q for q in range(2, p))]
    it = iter(primes)
    m = [[f"1/{next(it)}" for _ in range(8)] for _ in range(2)]
    line = solve_error(runner, cli, "attention", {"Q": m, "K": m, "V": [[1], [1]]}, tmp_path / "in.json")
    # 2 * 3 * ... * 47 < 10^18 < 2 * 3 * ... * 53: the 16th prime is the first too many
    assert "Q, row 2, column 8: the entries have no common denominator of at most 10^18 (the limit)" in line


def test_small_denominators_and_12_place_decimals_are_accepted(runner, cli, tmp_path):
    f = tmp_path / "ok.json"
    f.write_text(
        json.dumps({"Q": [["1/3", "1/7"], ["0.123456789012", "2"]], "K": [[1, 0], [0, 1]], "V": [["1/11"], ["1/13"]]})
    )  # common denominator 3003 * 10^12
    r = runner.invoke(cli, ["solve", "attention", "-i", str(f)])
    assert r.exit_code == 0, r.output


# ---------------------------------------------------------------- the range of numbers
@pytest.mark.parametrize(
    "kind, table, where",
    [
        ("attention", {"Q": [["1e308"]], "K": [[1]], "V": [[1]]}, "Q, row 1, column 1: out of range"),
        ("attention", {"Q": [[1]], "K": [["1e999"]], "V": [[1]]}, "K, row 1, column 1: out of range"),
        ("attention", {"Q": [[1]], "K": [[1]], "V": [[10**99]]}, "V, row 1, column 1: out of range"),
        ("attention", {"Q": [[1, "-1000001"]], "K": [[1, 1]], "V": [[1]]}, "Q, row 1, column 2: out of range"),
        ("layer-norm", {"X": [[1, "1e-1000"]]}, "X, row 1, column 2: too many decimal places"),
        ("layer-norm", {"X": [[1, 2]], "eps": "1e-13"}, "eps: too many decimal places"),
        (
            "next-token",
            {"h": [[1, 0]], "W_vocab": [[1, 0], [0, 1]], "temperature": "1e-1000"},
            "temperature: too many decimal places",
        ),
        (
            "next-token",
            {"h": [[1, 0]], "W_vocab": [[1, 0], [0, 1]], "temperature": "1e308"},
            "temperature: out of range",
        ),
    ],
)
def test_numbers_beyond_the_stated_range_are_one_line(runner, cli, tmp_path, kind, table, where):
    line = solve_error(runner, cli, kind, table, tmp_path / "in.json")
    assert where in line, line


def test_toml_floats_beyond_the_range_are_refused(runner, cli, tmp_path):
    f = tmp_path / "in.toml"
    f.write_text("Q = [[1e308]]\nK = [[1]]\nV = [[1]]\n")
    line = one_line_error(runner.invoke(cli, ["solve", "attention", "-i", str(f)]))
    assert f"{f}, Q, row 1, column 1: out of range: |x| must be at most 10^6" in line


def test_the_range_limits_hold_at_their_edges():
    from fractions import Fraction

    assert limits.check_number(Fraction(10**6)) is None
    assert limits.check_number(Fraction(-(10**6))) is None
    assert limits.check_number(Fraction(1, 10**12)) is None
    assert limits.check_number(Fraction(10**6 + 1)) and limits.check_number(Fraction(1, 10**12 + 1))


# ---------------------------------------------------------------- the lecture examples fit
def test_the_lecture_examples_are_within_the_limits(runner, cli):
    from worksheet.kinds.lecture_examples import EXAMPLES

    for name in EXAMPLES:
        r = runner.invoke(cli, ["solve", "--example", name])
        assert r.exit_code == 0, (name, r.output)


# ---------------------------------------------------------------- the worst accepted inputs stay small
def test_the_biggest_accepted_attention_writes_under_3_mb(runner, cli, tmp_path):
    """16 tokens (the most rows), 21 wide, every entry 12 significant digits."""
    rng = random.Random(5)
    f = tmp_path / "worst.json"
    f.write_text(json.dumps({"Q": nasty(rng, 16, 21), "K": nasty(rng, 16, 21), "V": nasty(rng, 16, 21)}))
    r = runner.invoke(cli, ["solve", "attention", "-i", str(f)])
    assert r.exit_code == 0, r.output
    assert len(r.output.encode()) < 3_000_000


def test_the_biggest_accepted_multi_head_attention_carries_decimals_and_stays_small(tmp_path):
    """7 heads over 16 tokens: exact forms past 200 characters become 4-place
    decimals (marked rounded, as the key says) instead of 14 MB of Markdown."""
    from worksheet.build import solve_file
    from worksheet.solution.document import Document
    from worksheet.exact import to_str
    from worksheet.render import get

    rng = random.Random(5)
    table = {"X": nasty(rng, 16, 14), "heads": 7, **{w: nasty(rng, 14, 14) for w in ("W_Q", "W_K", "W_V", "W_O")}}
    f = tmp_path / "worst.json"
    f.write_text(json.dumps(table))
    problem = solve_file("multi-head-attention", f)
    assert any(s.rounded for s in problem.steps)
    for s in problem.steps:
        if not s.rounded:
            assert all(len(to_str(x)) <= limits.MAX_EXACT_CHARS for row in s.exact for x in row), s.name
    text = get("md").render(Document("worst", [problem], seed=None, numbers="own"), key=True)
    assert len(text.encode()) < 1_000_000 and "rounded" in text


def test_small_multi_head_inputs_stay_exact(tmp_path):
    from worksheet.build import solve_file

    f = tmp_path / "small.json"
    f.write_text(
        json.dumps(
            {
                "X": [[1, 0], [0, 1]],
                "W_Q": [[1, 0], [0, 1]],
                "W_K": [[1, 0], [0, 1]],
                "W_V": [[1, 0], [0, 1]],
                "W_O": [[1, 0], [0, 1]],
                "heads": 2,
            }
        )
    )
    assert not any(s.rounded for s in solve_file("multi-head-attention", f).steps)


# ---------------------------------------------------------------- a hostile key: sizes and shapes first
@pytest.fixture(scope="module")
def hostile_key(tmp_path_factory):
    """About 20 MB of steps whose exact strings are each a costly (legal) square root."""
    path = tmp_path_factory.mktemp("hostile") / "key.json"
    n = iter(range(10**7))
    steps = [
        {
            "name": f"s{s}",
            "value": [[1.5] * 64 for _ in range(64)],
            "exact": [[f"sqrt({99999999977 + 2 * next(n)})" for _ in range(64)] for _ in range(64)],
        }
        for s in range(1, 181)
    ]
    path.write_text(json.dumps({"problems": [{"kind": "attention", "inputs": {}, "steps": steps}]}))
    assert path.stat().st_size > 19_000_000
    return path


def counting_parser(monkeypatch) -> dict:
    """Count the exact strings parsed (answers' and key's), and those parsed with work
    left in a budget."""
    from worksheet.check import answers as check_answers_module, key as check_key_module

    real = check_key_module.parse_exact
    count = {"calls": 0, "with_work": 0}

    def parse(text, budget=None):
        count["calls"] += 1
        if budget is None or not budget.spent:
            count["with_work"] += 1
        return real(text, budget)

    for module in (check_key_module, check_answers_module):  # the key's strings, the answers'
        monkeypatch.setattr(module, "parse_exact", parse)
    return count


def test_a_hostile_key_with_a_wrong_shaped_answer_parses_no_entry(runner, cli, tmp_path, hostile_key, monkeypatch):
    count = counting_parser(monkeypatch)
    a = tmp_path / "a.toml"
    a.write_text("s1 = [[1]]\n")
    r = runner.invoke(cli, ["check", str(hostile_key), str(a)])
    assert r.exit_code == 1  # the step is reported, the rest of the file marked
    assert "Your matrix is 1 x 1; the key's is 64 x 64" in r.output
    assert count["calls"] == 1  # the answer's one entry; none of the key's


def test_a_hostile_key_is_read_within_its_work_budget(tmp_path, hostile_key, monkeypatch):
    """A full-size answer to a costly step: only that step's strings are read,
    and once the key's budget is spent the rest use the float values."""
    from worksheet.check import check_answers

    count = counting_parser(monkeypatch)
    a = tmp_path / "a.toml"
    a.write_text("s1 = [" + ", ".join(["[" + ", ".join(["1.5"] * 64) + "]"] * 64) + "]\n")
    report = check_answers(hostile_key, a)
    assert count["calls"] <= 2 * 64 * 64  # the answer's and one step's entries, not 180 steps'
    # each root costs the most one entry may: the budget reads this many exactly
    # (whose values, about 316228, are not the 1.5 of "value"); the rest use the floats
    read = limits.KEY_WORK[0] // 100_000
    step = report.problems[0].steps[0]
    assert step.status == "incorrect" and step.wrong_count == read


def test_a_key_with_a_huge_step_is_refused_before_its_entries(runner, cli, tmp_path):
    k = tmp_path / "k.json"
    k.write_text(
        json.dumps(
            {"problems": [{"kind": "attention", "steps": [{"name": "s", "value": [[0] * 65], "exact": [["0"] * 65]}]}]}
        )
    )
    a = tmp_path / "a.toml"
    a.write_text("s = [[1]]\n")
    line = one_line_error(runner.invoke(cli, ["check", str(k), str(a)]))
    assert f"{k}" in line and "larger than 64 x 64" in line


@pytest.mark.parametrize(
    "problems, steps, message",
    [
        (1001, 1, "1001 problems in one variant, more than the limit of 1000"),
        (1, 401, "problem 1 has 401 steps, more than the limit of 400"),
    ],
)
def test_a_key_with_too_many_problems_or_steps_is_refused(runner, cli, tmp_path, problems, steps, message):
    step = {"name": "s", "value": [[0]], "exact": [["0"]]}
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"problems": [{"kind": "attention", "steps": [step] * steps}] * problems}))
    a = tmp_path / "a.toml"
    a.write_text("s = [[1]]\n" if problems == 1 else "variant = \"x\"\n[1]\ns = [[1]]\n")
    line = one_line_error(runner.invoke(cli, ["check", str(k), str(a)]))
    assert f"{k}: {message}" in line


def test_a_key_value_beyond_float64_is_one_line(runner, cli, tmp_path):
    k = tmp_path / "k.json"
    k.write_text('{"problems": [{"kind": "attention", "steps": [{"name": "s", "value": [[1%s]]}]}]}' % ("0" * 400))
    a = tmp_path / "a.toml"
    a.write_text("s = [[1]]\n")
    line = one_line_error(runner.invoke(cli, ["check", str(k), str(a)]))
    assert f"{k}" in line and "step s: \"value\" is not a matrix of numbers" in line


def test_each_variant_of_a_key_has_its_own_work_budget(tmp_path):
    """Marking one variant cannot use up the budget of another (a class folder
    is marked the same whatever the order of its files)."""
    from worksheet.check import read_key

    step = {"name": "s", "value": [[2.0]], "exact": [["2"]]}
    k = tmp_path / "k.json"
    k.write_text(
        json.dumps(
            {"variants": [{"id": v, "problems": [{"kind": "attention", "steps": [step]}]} for v in ("v01", "v02")]}
        )
    )
    key = read_key(k)
    a, b = key.problems("v01")[0].steps[0], key.problems("v02")[0].steps[0]
    a.budget.roots = a.budget.nodes = -1  # spent
    assert b.budget is not a.budget and not b.budget.spent
    assert b.cells[0][0].precise  # read exactly
