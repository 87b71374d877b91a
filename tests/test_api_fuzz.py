"""Issue 17 §3/§4: every public library function, given a wrong type or shape,
raises worksheet's own error, a WorksheetError that is also a ValueError or a
TypeError, with one line naming the argument; never a RecursionError,
AttributeError, KeyError or numpy error.

Each function is called with each hostile value in each argument (explicit
cases below), then with values hypothesis builds (nested lists, tuples and
dicts of odd numbers and text)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import worksheet
from worksheet.build import ProblemSpec
from worksheet.policy.errors import ArgumentError, UnknownStepError, WorksheetError


def _self_referencing():
    m: list = [[1, 2]]
    m.append(m)
    return m


def _deep(levels: int = 3000):
    x: object = 1
    for _ in range(levels):
        x = [x]
    return x


HOSTILE = {
    "None": None,
    "ragged": [[1, 2], [3]],
    "deep": _deep(),
    "self-referencing": _self_referencing(),
    "longdouble": np.longdouble("0.1"),
    "longdouble-inf": np.longdouble("inf"),
    "complex": 1 + 2j,
    "numpy-complex": np.complex128(1 + 1j),
    "Decimal": Decimal("0.1"),
    "Decimal-NaN": Decimal("NaN"),
    "NaN": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "string": "abc",
    "kind name": "attention",
    "empty list": [],
    "empty dict": {},
    "dict": {"a": 1},
    "set": {1, 2},
    "bytes": b"x",
    "object": object(),
    "bool": True,
    "huge int": 10**5000,
    "negative": -1,
    "3-d array": np.zeros((2, 2, 2)),
    "numpy nan": np.float64("nan"),
    "Fraction": Fraction(1, 3),
    "problem": None,  # replaced below by a Problem (a problem where a matrix or a kind is expected)
}

_P = None
IDENTITY = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]  # as big as the scores of solved()


def solved():
    global _P
    if _P is None:
        _P = worksheet.problem("self-attention-basic", seed=1)
    return _P


def _calls():
    """(name, the words one of which the message must contain, call(v))."""
    X = [[1, 0], [0, 1]]
    return [
        ("problem(kind)", ("kind",), lambda v: worksheet.problem(v)),
        ("problem(seed)", ("seed",), lambda v: worksheet.problem("attention", seed=v)),
        ("problem(seq_len)", ("seq_len",), lambda v: worksheet.problem("attention", seq_len=v)),
        ("problem(tokens)", ("tokens",), lambda v: worksheet.problem("attention", tokens=v)),
        ("problem(causal)", ("causal",), lambda v: worksheet.problem("attention", causal=v)),
        ("solve(kind)", ("kind", "W_Q", "X"), lambda v: worksheet.solve(v, {"X": X})),
        ("solve(inputs)", ("inputs", "X"), lambda v: worksheet.solve("self-attention-basic", v)),
        ("solve(X)", ("X",), lambda v: worksheet.solve("self-attention-basic", {"X": v})),
        ("solve(entry)", ("X",), lambda v: worksheet.solve("self-attention-basic", {"X": [[v, 0], [0, 1]]})),
        ("solve(causal)", ("causal",), lambda v: worksheet.solve("self-attention-basic", {"X": X}, causal=v)),
        ("check(p)", ("p ", "scores"), lambda v: worksheet.check(v, {"scores": [[1]]})),
        ("check(answers)", ("answers",), lambda v: worksheet.check(solved(), v)),
        ("check(matrix)", ("scores",), lambda v: worksheet.check(solved(), {"scores": v})),
        ("check(entry)", ("scores",), lambda v: worksheet.check(solved(), {"scores": [[v, 0], [0, 1]]})),
        ("Problem.step", ("name",), lambda v: solved().step(v)),
        ("Problem[...]", ("name",), lambda v: solved()[v]),
        ("Marks[...]", ("step",), lambda v: worksheet.check(solved(), {"scores": IDENTITY})[v]),
        ("build_document(problems)", ("problems", "problem"), lambda v: worksheet.build_document(v)),
        ("build_document(seed)", ("seed",), lambda v: worksheet.build_document(["attention"], seed=v)),
        (
            "build_document(options)",
            ("options", "causal"),
            lambda v: worksheet.build_document(["attention"], options=v),
        ),
        ("build_document(title)", ("title",), lambda v: worksheet.build_document(["attention"], title=v)),
        ("build_document(course)", ("course",), lambda v: worksheet.build_document(["attention"], course=v)),
        (
            "build_document(prompt)",
            ("prompt",),
            lambda v: worksheet.build_document([ProblemSpec("attention", {}, prompt=v)]),
        ),
        ("solve_inputs(inputs)", ("inputs", "X"), lambda v: worksheet.solve_inputs("self-attention-basic", v)),
        ("solve_inputs(X)", ("inputs", "X"), lambda v: worksheet.solve_inputs("self-attention-basic", {"X": v})),
        ("solve_file(path)", ("path", "file", "such"), lambda v: worksheet.solve_file("self-attention-basic", v)),
    ]


CALLS = _calls()


def value(name: str):
    return solved() if name == "problem" else HOSTILE[name]


def assert_ours(call, words, v) -> None:
    """``call(v)`` succeeds, or raises our error: a ValueError or TypeError, one
    line, naming the argument."""
    try:
        call(v)
    except WorksheetError as exc:
        assert isinstance(exc, (ValueError, TypeError)), repr(exc)
        assert not isinstance(exc, KeyError), repr(exc)
        message = str(exc)
        assert message and "\n" not in message and len(message) < 400, message
        assert any(w in message.replace("-", "_") for w in words), message  # --seq-len names seq_len


@pytest.mark.parametrize("what", list(HOSTILE))
@pytest.mark.parametrize("name, words, call", CALLS, ids=[c[0] for c in CALLS])
def test_every_public_function_raises_only_our_one_line_error(name, words, call, what):
    assert_ours(call, words, value(what))


# hypothesis: odd values, nested
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.builds(lambda e: (-10) ** e, st.sampled_from([4400, 5001])),
    st.floats(),
    st.complex_numbers(),
    st.decimals(),
    st.fractions(),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.sampled_from(
        [
            np.longdouble("0.1"),
            np.float32("nan"),
            np.int64(3),
            np.complex64(1j),
            np.zeros((2, 2, 2)),
            np.array([["a", "b"]]),
            object(),
        ]
    ),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=8,
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(CALLS))), _values)
@example(CALLS.index(next(c for c in CALLS if c[0] == "solve(X)")), [[np.longdouble("1e4000")]])
@example(CALLS.index(next(c for c in CALLS if c[0] == "solve(entry)")), Decimal("-Infinity"))
@example(CALLS.index(next(c for c in CALLS if c[0] == "problem(tokens)")), np.array(["a", "b", "c"]))
@example(CALLS.index(next(c for c in CALLS if c[0] == "check(entry)")), [1, [2]])
@example(CALLS.index(next(c for c in CALLS if c[0] == "problem(seq_len)")), 10**5000)
@example(CALLS.index(next(c for c in CALLS if c[0] == "problem(tokens)")), (False, -(10**4400)))  # found once
@example(CALLS.index(next(c for c in CALLS if c[0] == "build_document(problems)")), ("", ""))  # found once
def test_any_value_in_any_argument_gives_a_result_or_our_error(k, v):
    name, words, call = CALLS[k]
    assert_ours(call, words, v)


# ---------------------------------------------------------------- the unknown step name, exactly
def test_an_unknown_step_name_is_our_error_a_lookup_and_value_error_never_a_key_error():
    p = solved()
    with pytest.raises(UnknownStepError) as info:
        p.step("nope")
    assert isinstance(info.value, LookupError) and isinstance(info.value, ValueError)
    assert not isinstance(info.value, KeyError)
    assert str(info.value) == (
        "name 'nope' is not a step of self-attention-basic; its steps are scores, weights, output"
    )
    with pytest.raises(UnknownStepError, match="neither an input nor a step"):
        p["nope"]
    marks = worksheet.check(p, {"scores": IDENTITY})
    with pytest.raises(UnknownStepError, match="'nope' was not marked"):
        marks["nope"]


def test_a_kind_name_where_a_problem_is_expected_says_how_to_build_one():
    with pytest.raises(ArgumentError) as info:
        worksheet.check("attention", {"weights": [[1]]})
    assert isinstance(info.value, TypeError)
    assert str(info.value) == (
        "p must be a Problem (from worksheet.problem or worksheet.solve), not the text "
        "'attention'; build it first, e.g. worksheet.problem('attention')"
    )


def test_a_string_where_a_matrix_is_expected_names_the_matrix():
    with pytest.raises(WorksheetError, match=r"X, row 1, column 1: not a number") as info:
        worksheet.solve("self-attention-basic", {"X": "abc"})
    assert isinstance(info.value, ValueError)


def test_numbers_of_every_python_and_numpy_type_are_read_exactly():
    p = worksheet.solve(
        "self-attention-basic", {"X": [[np.longdouble("0.5"), Decimal("0.25")], [Fraction(1, 2), np.float32(0.5)]]}
    )
    assert [[str(x) for x in row] for row in p.inputs["X"].exact] == [["1/2", "1/4"], ["1/2", "1/2"]]


def test_the_displays_and_exact_views_of_a_problem_work():
    p = solved()
    assert p._repr_html_() and p._repr_markdown_()
    assert (
        set(p.to_sympy()) == set(p.to_numpy()) == set(p.arrays()) == {"X", "scores", "weights", "output"}
    )  # inputs too
    marks = worksheet.check(p, {"scores": IDENTITY})
    assert str(marks) and marks._repr_markdown_()
