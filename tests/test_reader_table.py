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
