"""One reader for answer files, the practice page and the library: a table of
what a student writes, each with the value it must be read as (an exact form in
the key's own syntax) or "unreadable", run through :func:`parse_entry`, through
an answer file marked by ``check_answers`` and through ``POST /check``."""

from __future__ import annotations

import json
import math

import pytest

from worksheet.check import check_answers, parse_entry, read_problem
from worksheet.check.tolerance import mp_value
from worksheet.parse import parse_exact

U = "unreadable"
# (entry, decimal separator of the file/page, the key's exact value, verdict)
TABLE = [
    ("√3", "point", "sqrt(3)", "correct"),
    ("sqrt(3)", "point", "sqrt(3)", "correct"),
    ("1/√3", "point", "sqrt(3)/3", "correct"),
    ("√(2)/2", "point", "sqrt(2)/2", "correct"),
    ("2√3", "point", "2*sqrt(3)", "correct"),
    ("\\sqrt{2}", "point", "sqrt(2)", "correct"),
    ("e^-1", "point", "exp(-1)", "correct"),
    ("e^{-1}", "point", "exp(-1)", "correct"),
    ("exp(-1)", "point", "exp(-1)", "correct"),
    ("-e^-1", "point", "-exp(-1)", "correct"),
    ("2e^-1", "point", "2*exp(-1)", "correct"),
    ("2 e^{-1}", "point", "2*exp(-1)", "correct"),
    ("e^-1/(1+2e^-1)", "point", "exp(-1)/(1 + 2*exp(-1))", "correct"),
    ("σ(2)", "point", "1/(1 + exp(-2))", "correct"),
    ("sigma(2)", "point", "1/(1 + exp(-2))", "correct"),
    ("sigmoid(0)", "point", "1/2", "correct"),
    ("\\sigma(-3)", "point", "1/(1 + exp(3))", "correct"),
    ("1/(1+e^-2)", "point", "1/(1 + exp(-2))", "correct"),
    ("1 / (1 + e^{-2})", "point", "1/(1 + exp(-2))", "correct"),
    ("e^2/(1+e^2)", "point", "1/(1 + exp(-2))", "correct"),
    ("tanh(0.5)", "point", "tanh(1/2)", "correct"),
    # the sheet's own arithmetic, with the sheet's tolerance
    ("0.3679/1.7358", "point", "exp(-1)/(1 + 2*exp(-1))", "correct"),
    ("-0.2119-0.5761", "point", "-197/250", "correct"),
    ("0.8808*0.7146", "point", "0.62942", "correct"),
    ("3·2", "point", "6", "correct"),
    ("3×2", "point", "6", "correct"),
    # the text sheets' own notation (worksheet solve, --format text): ⋅ and superscript powers
    ("3 ⋅ 2", "point", "6", "correct"),
    ("e⁻¹", "point", "exp(-1)", "correct"),
    ("e⁻²/(1 + e⁻² + e^(−5/2))", "point", "exp(-2)/(1 + exp(-2) + exp(-5/2))", "correct"),
    ("2 ⋅ e⁻¹", "point", "2*exp(-1)", "correct"),
    ("e⁰", "point", "1", "correct"),
    ("2¹⁰", "point", "1024", "correct"),
    # signs and infinity
    ("−0.5", "point", "-1/2", "correct"),
    ("+0.5", "point", "1/2", "correct"),
    ("−∞", "point", "-oo", "correct"),
    ("-inf", "point", "-oo", "correct"),
    ("-oo", "point", "-oo", "correct"),
    # plain numbers
    ("3/4", "point", "3/4", "correct"),
    ("0.75", "point", "3/4", "correct"),
    ("1e-3", "point", "1/1000", "correct"),
    ("2e-1", "point", "1/5", "correct"),  # a decimal exponent: 2e^-1 is 2/e
    ("\\frac{1}{2}", "point", "1/2", "correct"),
    # a decimal comma, where the file or page says so
    ("0,5", "comma", "1/2", "correct"),
    ("1,5", "comma", "3/2", "correct"),
    ("0,3679/1,7358", "comma", "exp(-1)/(1 + 2*exp(-1))", "correct"),
    ("0.5", "comma", "1/2", "correct"),
    # exact forms are compared exactly; decimals within 0.001
    ("1/(1+e^-2.0001)", "point", "1/(1 + exp(-2))", "incorrect"),
    ("0.879", "point", "1/(1 + exp(-2))", "incorrect"),
    ("sqrt(2)", "point", "sqrt(3)", "incorrect"),
    # what cannot be read: its own verdict, never "incorrect"
    ("0,5", "point", "1/2", U),
    ("four", "point", "4", U),
    ("1/0", "point", "1", U),
    ("sqrt(-1)", "point", "1", U),
    ("__import__('os').system('x')", "point", "1", U),
    ("2 3", "point", "6", U),
    ("((1)", "point", "1", U),
    ("NaN", "point", "1", U),
    ("9" * 200, "point", "1", U),
    ("e^(10^9)", "point", "1", U),
    ("e²⁻", "point", "1", U),
    ("e" + "⁹" * 150, "point", "1", U),
]


def _key(exact: str) -> dict:
    value = parse_exact(exact)
    x = None if exact == "-oo" else float(mp_value(value))
    return {
        "kind": "reader-table",
        "params": {},
        "inputs": {},
        "steps": [{"name": "x", "exact": [[exact]], "value": [[x]]}],
    }


def test_the_table_is_long_enough():
    assert len(TABLE) >= 40 and sum(v == U for *_, v in TABLE) >= 8


@pytest.mark.parametrize("text, decimal, exact, verdict", TABLE, ids=[repr(t[0])[:30] + t[1] for t in TABLE])
def test_the_library_reads_it(text, decimal, exact, verdict):
    if verdict == U:
        with pytest.raises(ValueError) as info:
            parse_entry(text, False, decimal=decimal)
        assert str(info.value)  # a reason
        return
    g = parse_entry(text, False, decimal=decimal)
    if exact == "-oo":
        assert g.neg_inf
        return
    want = float(mp_value(parse_exact(exact)))
    if verdict == "correct":
        assert math.isclose(g.value, want, abs_tol=1e-3)


@pytest.mark.parametrize("text, decimal, exact, verdict", TABLE, ids=[repr(t[0])[:30] + t[1] for t in TABLE])
def test_an_answer_file_reads_it_alike(tmp_path, text, decimal, exact, verdict):
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"problems": [_key(exact)]}), encoding="utf-8")
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"decimal": decimal, "x": [[text]]}, ensure_ascii=False), encoding="utf-8")
    step = check_answers(key, answers).problems[0].steps[0]
    assert step.status == verdict, step.message
    if verdict == U:
        assert step.unread_cells and step.unread_cells[0].reason
        assert step.to_dict()["unreadable_cells"][0]["read_as"]


pytest.importorskip("starlette")
pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def client():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from worksheet.practice import create_app

    with TestClient(create_app()) as c:
        yield c


@pytest.mark.filterwarnings("ignore:Using `httpx`")
@pytest.mark.parametrize("text, decimal, exact, verdict", TABLE, ids=[repr(t[0])[:30] + t[1] for t in TABLE])
def test_post_check_reads_it_alike(client, monkeypatch, text, decimal, exact, verdict):
    import worksheet.practice.exercises as ex

    if len(text) > 200:
        pytest.skip("the page refuses entries over 200 characters before reading them")
    monkeypatch.setattr(ex, "_key", lambda ask: read_problem(_key(exact)))
    r = client.post(
        "/check",
        json={
            "kind": "attention",
            "seed": 1,
            "numbers": "hand",
            "settings": {},
            "decimal": decimal,
            "cells": {"x": {"1,1": text}},
        },
    )
    assert r.status_code == 200, r.text
    (v,) = r.json()["verdicts"]
    assert v["verdict"] == {"correct": "right", "incorrect": "wrong", U: U}[verdict], v
    if verdict == U:
        assert v["message"] and (v["read_as"] == text or text.startswith(v["read_as"].removesuffix("...")))


def test_every_unreadable_entry_of_a_csv_is_reported_and_the_rest_marked(tmp_path, runner, cli):
    key = tmp_path / "key.json"
    step = {"name": "scores", "exact": [["0", "0", "2"], ["0", "1", "0"]], "value": [[0, 0, 2], [0, 1, 0]]}
    key.write_text(json.dumps({"problems": [{"kind": "reader-table", "steps": [step]}]}), encoding="utf-8")
    a = tmp_path / "a.csv"
    a.write_text(
        "problem,step,row,col,value\n1,scores,1,1,0\n1,scores,1,2,four\n1,scores,1,3,3\n"
        '1,scores,2,1,"0,5"\n1,scores,2,2,1\n1,scores,2,3,0\n',
        encoding="utf-8",
    )
    r = runner.invoke(cli, ["check", str(key), str(a), "--format", "json"])
    assert r.exit_code == 1, r.output
    (s,) = json.loads(r.output)["problems"][0]["steps"]
    assert s["status"] == "unreadable" and s["marks"] == 0
    unread = {(u["row"], u["col"]): u for u in s["unreadable_cells"]}
    assert set(unread) == {(1, 2), (2, 1)}
    assert unread[1, 2]["read_as"] == "four" and "four" in unread[1, 2]["reason"]
    assert unread[2, 1]["read_as"] == "0,5" and "decimal = \"comma\"" in unread[2, 1]["reason"]
    # the entries read are marked: row 1, column 3 is wrong, the rest right
    assert [(c["row"], c["col"]) for c in s["wrong_cells"]] == [(1, 3)]
    text = runner.invoke(cli, ["check", str(key), str(a)]).output
    assert "(read as 'four')" in text and "(read as '0,5')" in text
    # with the file's decimal comma, "0,5" is read (and is wrong: the key has 0)
    a.write_text(a.read_text(encoding="utf-8") + ",decimal,,,comma\n", encoding="utf-8")
    (s,) = json.loads(runner.invoke(cli, ["check", str(key), str(a), "--format", "json"]).output)["problems"][0][
        "steps"
    ]
    assert [(u["row"], u["col"]) for u in s["unreadable_cells"]] == [(1, 2)]
    assert {(c["row"], c["col"]) for c in s["wrong_cells"]} == {(1, 3), (2, 1)}


def test_a_bad_decimal_setting_is_one_line(tmp_path, runner, cli):
    from tests.common import one_line_error

    key = tmp_path / "key.json"
    key.write_text(json.dumps({"problems": [_key("1")]}), encoding="utf-8")
    a = tmp_path / "a.toml"
    a.write_text('decimal = "semicolon"\nx = 1\n', encoding="utf-8")
    assert 'must be "point" or "comma"' in one_line_error(runner.invoke(cli, ["check", str(key), str(a)]))
