"""``worksheet check``: reading keys and answer files, marking step by step,
carried-forward marks, tolerances, reports, exit codes, a class folder, and
untrusted answer files."""

from __future__ import annotations

import csv
import io
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from check_util import key_values, make_key, mistakes_of, recompute, statuses, table, write_csv, write_json, write_toml
from worksheet import kinds
from worksheet.check import (
    Expected,
    Tolerance,
    check_answers,
    check_folder,
    close,
    expected_float,
    mp_value,
    parse_entry,
    read_answers,
    read_key,
)
from worksheet.policy.errors import InputError, OutputError, WorksheetError
from worksheet.exact import to_str
from common import one_line_error


@pytest.fixture(scope="module")
def keydir(tmp_path_factory):
    return tmp_path_factory.mktemp("keys")


@pytest.fixture(scope="module")
def causal(keydir):
    """A causal attention key (seed 3) and its document."""
    return make_key(keydir, seed=3, options={"causal": True}, name="causal.json")


# ---------------------------------------------------------------- right answers
@pytest.mark.parametrize("kind", kinds.names())
def test_key_rounded_to_4_decimals_marks_every_step_correct(tmp_path, kind):
    key, doc = make_key(tmp_path, [kind], seed=5)
    p = doc.problems[0]
    values = key_values(p)
    steps = {}
    for s in p.steps:
        if s.is_written:  # words (softmax-scaling): left to a person
            continue
        if any(isinstance(x, str) for row in s.exact for x in row):  # a label: give its text
            steps[s.name] = [[x for x in row] for row in s.exact]
        else:
            steps[s.name] = table(values, steps=[s.name])[s.name]
    report = check_answers(key, write_toml(tmp_path / "a.toml", steps))
    assert {st for name, st in statuses(report).items() if not p.step(name).is_written} == {"correct"}, report.text()
    assert all(statuses(report)[s.name] == "by-person" for s in p.steps if s.is_written)
    assert report.exit_code == 0 and report.marks == report.out_of == sum(not s.is_written for s in p.steps)


def test_the_keys_own_exact_strings_are_accepted(tmp_path, causal):
    key, doc = causal
    data = json.loads(key.read_text())["problems"][0]
    answers = write_json(tmp_path / "a.json", {s["name"]: s["exact"] for s in data["steps"]})
    report = check_answers(key, answers)
    assert set(statuses(report).values()) == {"correct"}, report.text()


def test_several_problems_are_numbered_and_every_format_marks_the_same(tmp_path):
    key, doc = make_key(tmp_path, ["attention", "attention:causal=true"], seed=4)
    tables = {i + 1: table(key_values(p)) for i, p in enumerate(doc.problems)}
    tables[2]["weights"][1][0] = "0.5"  # one wrong entry in problem 2
    files = [
        write_toml(tmp_path / "a.toml", {}, numbered=tables),
        write_json(tmp_path / "a.json", {str(k): v for k, v in tables.items()}),
        write_csv(tmp_path / "a.csv", tables),
    ]
    for f in files:
        report = check_answers(key, f)
        assert statuses(report, 0) == {s.name: "correct" for s in doc.problems[0].steps}
        st2 = statuses(report, 1)
        assert st2["weights"] == "incorrect" and st2["output"] == "correct", report.text()
        assert report.marks == report.out_of - 1


def test_one_problem_may_leave_out_its_number_but_several_may_not(tmp_path, causal):
    key, doc = causal
    t = table(key_values(doc.problems[0]))
    assert check_answers(key, write_toml(tmp_path / "a.toml", {}, numbered={1: t})).ok
    assert check_answers(key, write_csv(tmp_path / "a.csv", {None: t})).ok
    key2, _ = make_key(tmp_path, ["attention", "attention"], name="two.json")
    with pytest.raises(InputError, match="under its number"):
        check_answers(key2, write_toml(tmp_path / "b.toml", {"scores": [[1]]}))
    report = check_answers(key2, write_toml(tmp_path / "c.toml", {}, numbered={3: {"scores": [[1]]}}))
    assert report.unread == ["line 2, problem 3: the key has 2 problems, so there is no problem 3"]
    assert report.exit_code == 1 and "could not be read" in report.text()


# ---------------------------------------------------------------- tolerance
def expected(x) -> Expected:
    from worksheet.parse import parse_exact

    return Expected(mp_value(parse_exact(x)), True, x)


@pytest.mark.parametrize(
    "text, ok",
    [
        ("0.88", True),
        ("0.881", True),
        ("0.8808", True),
        ("0.9", False),
        ("0.8800", True),
        ("0.8815", True),
        ("0.8819", False),
        ("0.8797", False),
        ("0.879", False),
        ("1/(1+e^-2)", True),
        ("1/(1 + exp(-2))", True),
        ("e^2/(1+e^2)", True),
        ("e^2/(e^2+1)", True),
        ("0.880797077977882", True),
        ("1/(1+e^-2.0001)", False),
        ("22/25", False),
        ("1", False),
    ],
)
def test_decimals_within_the_printed_tolerance_of_0_001_are_right(text, ok):
    assert close(parse_entry(text, False), expected("1/(1 + exp(-2))"), Tolerance()) is ok


def test_exact_forms_people_write_are_read():
    for text, value in [
        ("e^2", math.exp(2)),
        ("exp(-1)", math.exp(-1)),
        ("sqrt(2)", math.sqrt(2)),
        ("e^{1/2}", math.exp(0.5)),
        ("3/4", 0.75),
        ("-3", -3.0),
        ("\\frac{1}{3}", 1 / 3),
    ]:
        assert math.isclose(parse_entry(text, False).value, value), text
    assert parse_entry("-inf", False).neg_inf and parse_entry("-oo", False).neg_inf
    assert parse_entry("0.50", False).places == 2 and parse_entry("3", False).places == 0
    assert parse_entry("1/3", False).places is None


def test_minus_infinity_matches_only_minus_infinity():
    assert close(parse_entry("-oo", False), Expected(None, True, "-oo"), Tolerance())
    assert not close(parse_entry("0", False), Expected(None, True, "-oo"), Tolerance())
    assert not close(parse_entry("-inf", False), expected("0"), Tolerance())


def test_rtol_and_atol_replace_the_default_rules():
    e = expected("1/(1 + exp(-2))")
    assert close(parse_entry("0.9", False), e, Tolerance(atol=0.02))
    assert not close(parse_entry("0.9", False), e, Tolerance(rtol=0.01))
    assert close(parse_entry("0.9", False), e, Tolerance(rtol=0.03))
    assert not close(parse_entry("0.8808", False), e, Tolerance(atol=0))
    with pytest.raises(WorksheetError):
        Tolerance(rtol=-1)


@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**6))
def test_a_fraction_parses_back_to_itself_exactly(q):
    text = f"{q.numerator}/{q.denominator}"
    assert close(parse_entry(text, False), expected(to_str(q)), Tolerance())
    assert not close(parse_entry(text, False), expected(to_str(q + Fraction(1, 10**12))), Tolerance())


@given(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False), st.integers(0, 8))
def test_a_decimal_rounded_to_3_or_more_places_is_accepted_and_one_further_off_than_0_001_is_not(x, places):
    """Rounded to 3 or more places: right (within the sheet's 0.001); to fewer, right
    only within 0.001; 0.0012 off is wrong whatever the places."""
    text = f"{x:.{places}f}"
    e = expected_float(x)
    assert close(parse_entry(text, False), e, Tolerance()) is (places >= 3 or abs(float(text) - x) <= 0.001)
    if abs(x) < 100 and places >= 4:  # well above the float noise of x
        off = f"{float(text) + 0.0012 + 10.0**-places:.{places}f}"
        assert not close(parse_entry(off, False), e, Tolerance())


@given(st.integers(-(10**6), 10**6), st.integers(1, 1000), st.integers(1, 200))
def test_exact_forms_round_trip_through_the_printer(a, b, c):
    from worksheet.exact import exp, mul, power, sqrt

    x = mul(Fraction(a, b), power(1 + exp(Fraction(-c, 7)), -1)) + sqrt(c)
    g = parse_entry(to_str(x), False)
    assert close(g, expected(to_str(x)), Tolerance())
    assert math.isclose(g.value, float(x), rel_tol=1e-12)
    if g.places is None:  # an exact form (not a plain integer): compared exactly
        assert not close(g, expected(to_str(x + Fraction(1, 10**20))), Tolerance())


# ---------------------------------------------------------------- carried forward
def test_a_slip_in_scores_is_carried_forward_through_every_later_step(tmp_path, causal):
    key, doc = causal
    p = doc.problems[0]
    S = p.step("scores").value.copy()
    S[2, 1] += 3
    values = recompute(p, {"scores": S})
    report = check_answers(key, write_toml(tmp_path / "a.toml", table(values)))
    st_ = statuses(report)
    names = [s.name for s in p.steps]
    k = names.index("scores")
    assert all(st_[n] == "correct" for n in names[:k])
    assert st_["scores"] == "incorrect" and mistakes_of(report) == {"scores": "arithmetic-slip"}
    assert all(st_[n] == "carried-forward" for n in names[k + 1 :]), report.text()
    step = report.problems[0].steps[k]
    assert [(c.row, c.col) for c in step.cells] == [(3, 2)] and step.wrong_count == 1
    assert report.marks == report.out_of - 1 and report.exit_code == 1
    later = report.problems[0].steps[k + 1]
    assert later.carried_from == ["scores"] and "follows from your own scores" in later.message


def test_honest_rounding_of_earlier_answers_is_carried_forward(tmp_path, causal):
    """Weights written to 3 places (right), output worked out from those 3-place weights:
    both correct (nothing earlier is wrong, so the output is not "carried forward")."""
    key, doc = causal
    p = doc.problems[0]
    W = np.round(p.step("weights").value, 3)
    values = {**key_values(p), "weights": W, "output": W @ p.step("V").value}
    steps = table(values)
    steps["weights"] = table({"w": W}, places=3)["w"]
    report = check_answers(key, write_toml(tmp_path / "a.toml", steps))
    st_ = statuses(report)
    assert st_["weights"] == "correct", report.text()
    assert st_["output"] == "correct" and report.exit_code == 0, report.text()


def test_a_wrong_later_step_is_not_carried_forward(tmp_path, causal):
    key, doc = causal
    p = doc.problems[0]
    S = p.step("scores").value.copy()
    S[2, 1] += 3
    values = recompute(p, {"scores": S})
    values["output"] = values["output"] + 0.25
    report = check_answers(key, write_toml(tmp_path / "a.toml", table(values)))
    assert statuses(report)["output"] == "incorrect", report.text()
    assert statuses(report)["weights"] == "carried-forward"


def test_missing_steps_are_marked_missing_and_cost_their_marks(tmp_path, causal):
    key, doc = causal
    t = table(key_values(doc.problems[0]))
    del t["Q"], t["output"]
    report = check_answers(key, write_toml(tmp_path / "a.toml", t))
    assert statuses(report)["Q"] == "missing" and statuses(report)["output"] == "missing"
    assert report.marks == report.out_of - 2 and report.exit_code == 1


# ---------------------------------------------------------------- reports and the command
def test_text_report_has_a_line_per_step_and_the_marks(tmp_path, causal, runner, cli):
    key, doc = causal
    p = doc.problems[0]
    values = recompute(p, {"scaled": p.step("scores").value})
    t = table(values)
    del t["Q"]
    r = runner.invoke(cli, ["check", str(key), str(write_toml(tmp_path / "a.toml", t))])
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert any(line.strip().startswith("– Q") and "missing" in line for line in lines)
    assert any(line.strip().startswith("✓ K") for line in lines)
    assert any(
        line.strip().startswith("✗ scaled")
        and "not divided by sqrt(d_k)" in line
        and "expected" in line
        and "given" in line
        for line in lines
    ), r.output
    assert any(line.strip().startswith("↪ weights") for line in lines)
    assert lines[-1] == f"Total: {len(p.steps) - 2}/{len(p.steps)}"


def test_json_report_per_problem_and_step(tmp_path, causal, runner, cli):
    key, doc = causal
    p = doc.problems[0]
    values = recompute(p, {"scaled": p.step("scores").value / 4})
    r = runner.invoke(cli, ["check", str(key), str(write_toml(tmp_path / "a.toml", table(values))), "--format", "json"])
    assert r.exit_code == 1
    data = json.loads(r.output)
    steps = {s["name"]: s for s in data["problems"][0]["steps"]}
    assert steps["scaled"]["status"] == "incorrect" and steps["scaled"]["mistake"] == "scaled-by-d_k"
    cell = steps["scaled"]["wrong_cells"][0]
    assert set(cell) >= {"row", "col", "given", "expected"} and cell["row"] >= 1
    assert steps["weights"]["status"] == "carried-forward" and steps["weights"]["marks"] == 1
    assert steps["Q"] == {**steps["Q"], "status": "correct", "mistake": None, "wrong_cells": [], "marks": 1}
    assert data["marks"] == len(p.steps) - 1 and data["out_of"] == len(p.steps)
    assert {s["status"] for s in data["problems"][0]["steps"]} <= {"correct", "carried-forward", "incorrect", "missing"}


def test_exit_code_0_when_all_right(tmp_path, causal, runner, cli):
    key, doc = causal
    a = write_toml(tmp_path / "a.toml", table(key_values(doc.problems[0])))
    r = runner.invoke(cli, ["check", str(key), str(a)])
    assert r.exit_code == 0 and r.output.splitlines()[-1].startswith("Total: 8/8"), r.output
    r = runner.invoke(cli, ["check", str(key), str(a), "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["marks"] == 8


def test_rtol_on_the_command_line(tmp_path, causal, runner, cli):
    key, doc = causal
    t = table(key_values(doc.problems[0]), places=1)
    a = write_toml(tmp_path / "a.toml", t)
    assert runner.invoke(cli, ["check", str(key), str(a)]).exit_code == 1
    assert runner.invoke(cli, ["check", str(key), str(a), "--atol", "0.06"]).exit_code == 0
    one_line_error(runner.invoke(cli, ["check", str(key), str(a), "--rtol", "-1"]))


def test_solve_json_is_a_key(tmp_path, runner, cli):
    inp = tmp_path / "in.toml"
    inp.write_text('Q = [[1, 0], [0, 1]]\nK = [[1, 1], [0, 1]]\nV = [[1, 2], [3, 4]]\n')
    r = runner.invoke(cli, ["solve", "attention", "-i", str(inp), "--format", "json"])
    assert r.exit_code == 0, r.output
    key = tmp_path / "solved.json"
    key.write_text(r.output)
    a = write_toml(tmp_path / "a.toml", {"scores": [[1, 0], [1, 1]], "scaled": [["1/sqrt(2)", 0], [0.7071, 0.7071]]})
    report = check_answers(key, a)
    assert statuses(report)["scores"] == "correct" and statuses(report)["scaled"] == "correct"


def test_variants_are_chosen_by_the_answers_variant_field(tmp_path, causal):
    key, doc = causal
    data = json.loads(key.read_text())
    other, doc2 = make_key(tmp_path, seed=9, name="other.json")
    data2 = json.loads(other.read_text())
    vkey = write_json(
        tmp_path / "v.json",
        {
            "variants": [
                {"id": "A", "seed": 3, "problems": data["problems"]},
                {"id": "B", "seed": 9, "problems": data2["problems"]},
            ]
        },
    )
    tb = table(key_values(doc2.problems[0]))
    assert check_answers(vkey, write_toml(tmp_path / "b.toml", tb, meta={"variant": "B"})).ok
    assert not check_answers(vkey, write_toml(tmp_path / "a.toml", tb, meta={"variant": "A"})).ok
    with pytest.raises(InputError, match="variants"):
        check_answers(vkey, write_toml(tmp_path / "c.toml", tb))
    with pytest.raises(InputError, match="no variant"):
        check_answers(vkey, write_toml(tmp_path / "d.toml", tb, meta={"variant": "Z"}))


# ---------------------------------------------------------------- untrusted answer files
# A file that cannot be read at all: one error line (exit 2) naming the file and where.
BAD_FILES = {
    "big-int.toml": ("scores = [[" + "9" * 200_000 + "]]", "a.toml"),
    "big.csv": ("step,row,col,value\nscores,1,1," + "9" * 200_000 + "\n", "a.csv"),
    "nested.json": ('{"scores": ' + "[" * 100_000 + "]" * 100_000 + "}", "a.json"),
    "nested.toml": ("scores = " + "[" * 100_000 + "]" * 100_000, "a.toml"),
    "empty.csv": ("", "a.csv"),
    "header.csv": ("a,b,c\n1,2,3\n", "header"),
    "toplevel.json": ("[1, 2]", "a.json"),
    "bad.toml": ("scores = [[1,", "invalid TOML"),
}

# One bad step or line: the rest of the file is marked (exit 1), and the report names
# the line and what is wrong with it.
BAD_STEPS = {
    "code.toml": ('scores = [["__import__(\'os\').system(\'touch PWNED\')"]]', "line 1, row 1, column 1"),
    "code.json": ('{"scores": [["__import__(\'os\').system(\'touch PWNED\')"]]}', "line 1, row 1, column 1"),
    "code.csv": ("step,row,col,value\nscores,1,1,__import__('os').system('touch PWNED')\n", "line 2, row 1, column 1"),
    "big-str.toml": ('scores = [["' + "9" * 200_000 + '"]]', "line 1, row 1, column 1"),
    "big-int.json": ('{"scores": [[' + "9" * 200_000 + "]]}", "line 1, row 1, column 1"),
    "nested-small.json": ('{"scores": [[[[[1]]]]]}', "line 1, row 1, column 1"),
    "huge.json": ('{"scores": [' + ",".join(["[" + ",".join(["1"] * 300) + "]"] * 300) + "]}", "line 1, "),
    "wide.toml": ("scores = [" + ", ".join(["1"] * 100) + "]", "line 1, row 1"),
    "shape.toml": ("scores = [[1, 2], [3, 4]]", "Your matrix is 2 x 2; the key's is 3 x 3"),
    "unknown.toml": ("socres = [[1]]", "line 1, socres: unknown step; did you mean 'scores'"),
    "ragged.toml": ("scores = [[1, 2, 3], [1, 2]]", "ragged"),
    "expo.toml": ('scores = [["e^(10^9)"]]', "line 1, row 1, column 1"),
    "bool.toml": ("scores = [[true]]", "line 1, row 1, column 1"),
    "date.toml": ("scores = [[1979-05-27]]", "line 1, row 1, column 1"),
    "csv-row.csv": ("step,row,col,value\nscores,0,1,1\n", "line 2: the row must be a number"),
    "csv-gap.csv": ("step,row,col,value\nscores,1,1,1\nscores,2,2,1\n", "line 2, row 1, column 2: no entry"),
    "csv-dup.csv": ("step,row,col,value\nscores,1,1,1\nscores,1,1,2\n", "line 3: scores: a second entry"),
    "mixed.toml": ('scores = [1, [2]]', "mix of rows"),
    "nan.json": ('{"scores": [[NaN, 1, 2]]}', "line 1, row 1, column 1: not a finite number"),
    "control.toml": ('"sc\\u001b[31mores" = [[1]]', "unknown step"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_untrusted_answer_files_give_one_clear_error(tmp_path, causal, runner, cli, name, monkeypatch):
    key, _ = causal
    text, where = BAD_FILES[name]
    a = tmp_path / ("a" + name[name.rindex(".") :])
    a.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(cli, ["check", str(key), str(a)])
    line = one_line_error(r)
    assert str(a) in line and where in line, line
    assert "\x1b" not in line
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("name", sorted(BAD_STEPS))
def test_a_bad_step_or_line_is_reported_and_the_rest_is_marked(tmp_path, causal, runner, cli, name, monkeypatch):
    key, doc = causal
    text, where = BAD_STEPS[name]
    a = tmp_path / ("a" + name[name.rindex(".") :])
    # one right answer beside the bad one: it is still marked
    good = table(key_values(doc.problems[0]), steps=["weights"])["weights"]
    if name.endswith(".csv"):
        text += "".join(f"weights,{i},{j},{x}\n" for i, row in enumerate(good, 1) for j, x in enumerate(row, 1))
    elif name.endswith(".json"):
        text = text[:-1] + ', "weights": ' + json.dumps(good) + "}"
    else:
        text += "\nweights = " + json.dumps(good) + "\n"
    a.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(cli, ["check", str(key), str(a)])
    assert r.exit_code == 1, r.output
    assert where in r.output and "\x1b" not in r.output, r.output
    assert "✓ weights" in r.output and "Total: 1/8" in r.output
    assert not (tmp_path / "PWNED").exists()


def test_non_utf8_bytes(tmp_path, causal, runner, cli):
    key, _ = causal
    a = tmp_path / "a.toml"
    a.write_bytes(b"scores = [[1, \xff\xfe]]")
    assert "not UTF-8" in one_line_error(runner.invoke(cli, ["check", str(key), str(a)]))


def test_a_file_too_large_is_refused_before_parsing(tmp_path, causal, runner, cli, monkeypatch):
    key, _ = causal
    a = tmp_path / "a.json"
    a.write_text('{"scores": [' + ",".join(["[1]"] * 400_000) + "]}")
    line = one_line_error(runner.invoke(cli, ["check", str(key), str(a)]))
    assert "larger than" in line and "512 KB" in line
    k = read_key(key)  # the key is fine; the answer file must not even be parsed

    def no_parsing(*args, **kw):
        raise AssertionError("the answer file was parsed")

    monkeypatch.setattr(json, "loads", no_parsing)
    with pytest.raises(InputError, match="larger than the limit of 512 KB"):
        check_answers(k, a)


def test_costly_entries_stop_when_the_files_work_budget_is_spent(tmp_path, causal):
    """Every entry is a costly (but legal) square root, each spending the most
    trial divisions one entry may: reading stops at a counted entry, the same on
    every machine (work is counted, never timed)."""
    from worksheet.policy.limits import ANSWER_WORK
    from worksheet.parse import _ROOT_BUDGET

    key, doc = causal
    # all different, so the cache of square-free parts cannot help
    slow = (f"sqrt({99999999977 + 2 * k})" for k in range(10**6))
    t = {s.name: [[next(slow) for _ in range(s.shape[1])] for _ in range(s.shape[0])] for s in doc.problems[0].steps}
    cells = [
        (s.name, i, j)
        for s in doc.problems[0].steps
        for i in range(1, s.shape[0] + 1)
        for j in range(1, s.shape[1] + 1)
    ]
    name, row, col = cells[ANSWER_WORK[0] // _ROOT_BUDGET]  # the first entry past the budget
    with pytest.raises(InputError, match="too costly to read") as info:
        check_answers(key, write_toml(tmp_path / "a.toml", t))
    assert (info.value.field, info.value.row, info.value.col) == (name, row, col)


def test_an_answer_file_of_ordinary_exact_forms_never_spends_the_work_budget():
    """As many ordinary exact forms as fit in the largest answer file stay
    within the file's budget (counted on one, times how many fit)."""
    from worksheet.policy.limits import ANSWER_WORK, MAX_ANSWER_BYTES
    from worksheet.parse import Budget, parse_exact

    for text in ("0.8808", "3/4", "1/(1+e^-2)", "e^2/(e^2+e^(3/2))", "-oo"):
        budget = Budget(*ANSWER_WORK)
        parse_exact(text, budget)
        fit = MAX_ANSWER_BYTES // (len(text) + 1)  # entries of the file, with a separator each
        assert (ANSWER_WORK[0] - budget.roots) * fit <= ANSWER_WORK[0], text
        assert (ANSWER_WORK[1] - budget.nodes) * fit <= ANSWER_WORK[1], text


def test_bad_keys(tmp_path, runner, cli):
    a = write_toml(tmp_path / "a.toml", {"scores": [[1]]})
    for text, msg in [
        ("{}", "not an answer key"),
        ("[", "not a JSON answer key"),
        ('{"problems": []}', "no problems"),
        ('{"problems": [{"kind": "attention"}]}', "steps"),
    ]:
        k = tmp_path / "k.json"
        k.write_text(text)
        line = one_line_error(runner.invoke(cli, ["check", str(k), str(a)]))
        assert str(k) in line and msg in line, line
    line = one_line_error(runner.invoke(cli, ["check", str(tmp_path / "nope.json"), str(a)]))
    assert "cannot read" in line


def test_usage_errors(tmp_path, causal, runner, cli):
    key, _ = causal
    one_line_error(runner.invoke(cli, ["check", str(key)]))
    one_line_error(runner.invoke(cli, ["check", str(key), "a.toml", "--answers-dir", str(tmp_path)]))
    one_line_error(runner.invoke(cli, ["check", str(key), "a.toml", "--summary", "s.csv"]))


# ---------------------------------------------------------------- a class folder
def _class_folder(tmp_path, doc):
    folder = tmp_path / "class"
    folder.mkdir()
    p = doc.problems[0]
    write_toml(folder / "alice.toml", table(key_values(p)), meta={"student": "Alice"})
    S = p.step("scores").value.copy()
    S[0, 0] += 1
    write_csv(folder / "bob.csv", {None: table(recompute(p, {"scores": S}))})
    write_json(
        folder / "carol.json",
        {**table(recompute(p, {"scaled": p.step("scores").value})), "student": "=HYPERLINK(\"x\")"},
    )
    (folder / "dave.toml").write_text('scores = [["__import__(\'os\')"]')
    (folder / "erin.json").write_bytes(b"\xff\xfe")
    (folder / "notes.txt").write_text("not an answer file")
    return folder


def test_a_class_folder_of_good_and_bad_files(tmp_path, causal, runner, cli):
    key, doc = causal
    folder = _class_folder(tmp_path, doc)
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    assert r.exit_code == 1, r.output
    out = r.output
    assert "alice.toml  8/8" in out and "bob.csv" in out and "7/8" in out
    assert "dave.toml" in out and "error:" in out and "erin.json" in out and "notes.txt" not in out
    summary = folder / "summary.csv"
    rows = list(csv.DictReader(io.StringIO(summary.read_text())))
    by_file = {row["file"]: row for row in rows}
    assert set(by_file) == {"alice.toml", "bob.csv", "carol.json", "dave.toml", "erin.json"}
    assert by_file["alice.toml"]["total (of 8)"] == "8" and by_file["alice.toml"]["student"] == "Alice"
    assert by_file["bob.csv"]["1 Scaled dot-product attention (of 8)"] == "7"
    assert "problem 1: step 4 scores incorrect (arithmetic-slip)" == by_file["bob.csv"]["lost"]
    assert "arithmetic-slip" in by_file["bob.csv"]["mistakes"]
    assert "no-scaling" in by_file["carol.json"]["mistakes"]
    assert by_file["carol.json"]["student"].startswith("'=")  # no spreadsheet formula
    assert by_file["dave.toml"]["status"] == "error" and "dave.toml" in by_file["dave.toml"]["error"]
    assert by_file["erin.json"]["status"] == "error"
    # the summary is not overwritten without --force, and never read as answers
    again = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder)])
    assert "already exists" in one_line_error(again)
    r = runner.invoke(cli, ["check", str(key), "--answers-dir", str(folder), "--force", "--format", "json"])
    data = json.loads(r.output)
    assert [f["file"] for f in data["files"]] == sorted(by_file)
    assert data["files"][0]["report"]["marks"] == 8 and data["files"][3]["error"]


def test_class_folder_library_call_and_summary_path(tmp_path, causal):
    key, doc = causal
    folder = _class_folder(tmp_path, doc)
    report = check_folder(key, folder, summary=tmp_path / "marks.csv")
    assert report.summary == str(tmp_path / "marks.csv") and not (folder / "summary.csv").exists()
    assert report.exit_code == 1 and len(report.files) == 5
    with pytest.raises(OutputError):
        check_folder(key, folder, summary=tmp_path / "marks.csv")
    with pytest.raises(InputError, match="no answer files"):
        (tmp_path / "empty").mkdir()
        check_folder(key, tmp_path / "empty")


def test_read_answers_keeps_decimal_places(tmp_path):
    a = write_toml(tmp_path / "a.toml", {"weights": [["0.50", "0.880"]]})
    assert read_answers(a).problems[None]["weights"] == [["0.50", "0.880"]]
    j = write_json(tmp_path / "a.json", {"weights": [[0.5, 0.880]]})
    j.write_text('{"weights": [[0.50, 0.880, 12]]}')
    assert read_answers(j).problems[None]["weights"] == [["0.50", "0.880", "12"]]


def test_read_key_reads_build_json(causal):
    key, doc = causal
    k = read_key(key)
    (p,) = k.problems()
    assert p.kind == "attention" and [s.name for s in p.steps] == [s.name for s in doc.problems[0].steps]
    masked = p.step("masked")
    assert masked.cells[0][1].neg_inf and masked.cells[0][0].precise


def kinds_with_carried_forward():
    out = []
    for name in kinds.names():
        module = kinds.get(name)
        import inspect

        if "given" in inspect.signature(module.reference).parameters:
            out.append(name)
    return out


@pytest.mark.parametrize("kind", kinds_with_carried_forward())
def test_a_slip_in_the_first_step_is_carried_forward_in_every_kind(tmp_path, kind):
    key, doc = make_key(tmp_path, [kind], seed=5)
    p = doc.problems[0]
    first = next(s for s in p.steps if s.value.size and not any(isinstance(x, str) for row in s.exact for x in row))
    bad = first.value.copy()
    bad[0, 0] += 1
    values = recompute(p, {first.name: bad})
    answers = table(values, steps=[s.name for s in p.steps if s.name in values])
    answers.update(
        {
            s.name: [list(row) for row in s.exact]
            for s in p.steps  # labels: their text
            if any(isinstance(x, str) for row in s.exact for x in row)
        }
    )
    report = check_answers(key, write_toml(tmp_path / "a.toml", answers))
    st_ = statuses(report)
    assert st_[first.name] == "incorrect", report.text()
    if first.value.size > 1:
        assert mistakes_of(report)[first.name] == "arithmetic-slip"
    later = p.steps[p.steps.index(first) + 1 :]
    assert all(st_[s.name] in ("carried-forward", "correct", "by-person") for s in later), report.text()
    assert report.problems[0].carried_forward and report.marks == report.out_of - 1


@pytest.mark.parametrize("kind", kinds.names())
def test_the_keys_own_exact_strings_are_accepted_in_every_kind(tmp_path, kind):
    key, _ = make_key(tmp_path, [kind], seed=7)
    data = json.loads(key.read_text())["problems"][0]
    answers = write_json(tmp_path / "a.json", {s["name"]: s["exact"] for s in data["steps"]})
    report = check_answers(key, answers)
    written = {s["name"] for s in data["steps"] if s.get("written")}
    assert report.ok and {st for n, st in statuses(report).items() if n not in written} == {"correct"}, report.text()
    assert all(statuses(report)[n] == "by-person" for n in written)


# ---------------------------------------------------------------- written answers
def test_a_written_step_is_marked_by_a_person_not_missing(tmp_path):
    key, doc = make_key(tmp_path, ["softmax-scaling"], seed=1)
    p = doc.problems[0]
    assert p.step("written").is_written
    numbers = {s.name: table(key_values(p), steps=[s.name])[s.name] for s in p.steps if not s.is_written}
    for answers in (numbers, {**numbers, "written": "too peaked, about right, too flat"}):
        report = check_answers(key, write_json(tmp_path / "a.json", answers))
        st_ = statuses(report)
        assert st_["written"] == "by-person" and "missing" not in st_.values(), report.text()
        assert "marked by a person" in report.text()
        assert report.exit_code == 0 and report.marks == report.out_of == 3
        data = report.to_dict()["problems"][0]["steps"][-1]
        assert data["status"] == "by-person" and data["out_of"] == 0 and "marked by a person" in data["message"]


def test_a_wrong_number_still_fails_beside_a_written_step(tmp_path):
    key, doc = make_key(tmp_path, ["softmax-scaling"], seed=1)
    p = doc.problems[0]
    numbers = {s.name: table(key_values(p), steps=[s.name])[s.name] for s in p.steps if not s.is_written}
    numbers["softmax_raw"] = [["0.5", "0.5"]]
    report = check_answers(key, write_json(tmp_path / "a.json", numbers))
    assert statuses(report)["softmax_raw"] == "incorrect" and statuses(report)["written"] == "by-person"
    assert report.exit_code == 1


def test_an_exam_question_is_a_written_step_marked_by_a_person(tmp_path, runner, cli):
    spec = tmp_path / "exam.toml"
    spec.write_text(
        '[[sections]]\nkind = "layer-norm"\npoints = 4\n'
        'question = "Why divide by $d$, not $d - 1$?"\n'
        "answer = '''Layer norm uses the population variance.'''\n",
        encoding="utf-8",
    )
    res = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "json", "-o", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "out" / "worksheet.json").read_text(encoding="utf-8"))
    last = data["problems"][0]["steps"][-1]
    assert last["name"] == "written" and last["title"] == "Why divide by $d$, not $d - 1$?"
    assert last["written"] == "Layer norm uses the population variance."
    mean = next(st for st in data["problems"][0]["steps"] if st["name"] == "mean")
    answers = write_json(tmp_path / "a.json", {"mean": mean["exact"]})
    report = check_answers(tmp_path / "out" / "worksheet.json", answers)
    assert statuses(report)["written"] == "by-person"
    assert sum(st == "missing" for st in statuses(report).values()) == len(data["problems"][0]["steps"]) - 2


def test_a_students_name_with_control_characters_is_shown_escaped(tmp_path, causal, runner, cli):
    key, doc = causal
    n = len(doc.problems[0].inputs["X"].exact)  # scores are n x n
    a = write_toml(tmp_path / "a.toml", {"scores": [[0] * n] * n}, meta={"student": "Eve\x1b[2J\nerror: forged"})
    r = runner.invoke(cli, ["check", str(key), str(a)])
    assert r.exit_code == 1, r.output
    first = r.output.splitlines()[0]
    assert "\x1b" not in r.output and "Eve\\x1b[2J\\nerror: forged" in first
