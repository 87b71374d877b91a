"""Values a student cannot earn carried-forward credit from.

Error carried forward (ECF) gives a later step full marks when it follows from
the student's own earlier answer.  Typed on purpose, a trivial earlier answer
makes every later step trivial: zeros give zeros, the identity gives the
other matrix back, uniform weights give column means.  So an earlier answer
is no source of carried credit when it is *degenerate* and the key's own
value of that step is not degenerate in the same way:

* all zeros (two or more entries);
* all entries equal (four or more entries; of a shape unlike the key's, any
  number: ``Q = [[0]]`` for a 3 x 4 ``Q``);
* the identity (a square matrix of two or more rows);
* a copy of one of the problem's inputs (the same shape and entries);
* uniform weights: every row sums to 1 and its non-zero entries are equal;
* a copy of another variant's key for the same step (a neighbour's answers);
* the key's own value transposed (a square matrix that is not symmetric): the
  later steps of a transposed chain are no work of the student's.

An answer one entry off the key (an arithmetic slip), and a value that a
named mistake explains (``missing-residual`` leaves the input ``S`` as the
residual; ``scores-transposed`` is ``K Q^T``), are honest errors, not
tricks: :mod:`.marking` keeps them sources of carried credit.

:func:`why_degenerate` gives the reason in words (``"Q is all zeros"``), or
None; :mod:`.recompute` keeps the reasons, and :mod:`.marking` refuses the
carried credit with the reason named ("follows from your Q, but Q is all
zeros: no credit").
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

ATOL = 5e-4  # a rounded entry still counts as the degenerate value (0.3333 for 1/3)


def _finite(a: np.ndarray) -> bool:
    return a.size > 0 and bool(np.all(np.isfinite(a)))


def _zeros(a: np.ndarray) -> bool:
    return a.size >= 2 and _finite(a) and bool(np.all(np.abs(a) <= ATOL))


def _all_equal(a: np.ndarray) -> bool:
    """Four entries or more, all equal (two equal means of two tokens are too likely honest)."""
    return a.size >= 4 and _finite(a) and bool(np.all(np.abs(a - a.flat[0]) <= ATOL))


def _identity(a: np.ndarray) -> bool:
    return (
        a.ndim == 2 and a.shape[0] == a.shape[1] >= 2 and _finite(a) and np.allclose(a, np.eye(a.shape[0]), atol=ATOL)
    )


def _uniform_rows(a: np.ndarray) -> bool:
    """Every row sums to 1 and its non-zero entries are equal (uniform attention, causal or not)."""
    if a.ndim != 2 or a.shape[1] < 2 or not _finite(a):
        return False
    for row in a:
        nonzero = row[np.abs(row) > ATOL]
        if abs(row.sum() - 1) > 2 * ATOL * a.shape[1] or nonzero.size == 0:
            return False
        if np.any(np.abs(nonzero - nonzero[0]) > ATOL):
            return False
    return True


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all((a == b) | (np.abs(a - b) <= ATOL)))


_TESTS = (
    (_zeros, "is all zeros"),
    (_identity, "is the identity matrix"),
    (_uniform_rows, "gives every entry of a row the same weight"),
    (_all_equal, "has all its entries equal"),
)


def why_degenerate(
    name: str,
    given: np.ndarray,
    key: np.ndarray,
    inputs: dict[str, np.ndarray],
    others: Iterable[np.ndarray] = (),
) -> str | None:
    """Why the answer ``given`` to step ``name`` is no source of carried credit
    (``"Q is all zeros"``), or None.  ``key`` is the key's value of the step;
    ``others`` are other variants' key values of the same step."""
    given, key = np.asarray(given, dtype=np.float64), np.asarray(key, dtype=np.float64)
    if given.shape != key.shape:  # another shape (a mistake such as concat-wrong-axis may give one)
        one_value = _finite(given) and np.all(np.abs(given - given.flat[0]) <= ATOL)
        if one_value and not (key.size > 1 and np.all(np.abs(key - key.flat[0]) <= ATOL)):
            return f"{name} is a {given.shape[0]} x {given.shape[1]} matrix of one value"
    elif _same(given, key):
        return None
    for test, words in _TESTS:
        if test(given) and not test(key):
            return f"{name} {words}"
    square = given.shape == key.shape == key.T.shape and given.shape[0] >= 2
    if square and _same(given, key.T) and not _same(key, key.T):
        return f"{name} is the right {name} transposed"
    for input_name, x in inputs.items():
        if x.shape == given.shape and _same(given, x) and not _same(key, x):
            return f"{name} is a copy of the input {input_name}"
    for other in others:
        if other.shape == given.shape and _same(given, other) and not _same(key, other):
            return f"{name} is the answer of another variant"
    return None
