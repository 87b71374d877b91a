"""The flawed worked solution of find-the-mistake (:mod:`.find_the_mistake`),
computed at high precision (:mod:`worksheet.steps.precise`: mpmath at 60
digits, no libm), so every shown 4-place value is rounded, half away from zero
and exactly, from a value that is the same on every machine.

The chain follows what the right solution carries.  A step the kind carries
rounded (``Step.rounded``: the encoder and decoder blocks, the recurrent cells
in hand mode) goes on rounded to the step's places, so later steps are computed
from the values the sheet shows, as a student checking it with a pencil would.
Before the mistake a rounded step is the key's own carried value
(``Step.exact``), so the shown steps before the mistake are exactly the key's.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from . import base, mistakes
from ..exact import NEG_INF, NegInf
from ..solution.problem import Matrix, Problem, Step
from ..steps import precise
from ..steps.layer_steps import round_matrix

SHOWN_PLACES = 4  # decimals of the shown worked solution
_ERRORS = (KeyError, ValueError, IndexError, TypeError, ZeroDivisionError, ArithmeticError)


@dataclass(frozen=True)
class Planted:
    code: str  # the mistake's code
    step: str  # the first wrong step
    values: dict  # step name -> the flawed worked solution's values (object arrays of mpf)


def exact_of(value: np.ndarray) -> Matrix:
    """A high-precision array (no NaN, no +oo: see :func:`printable`) as exact
    numbers: each mpf (or float) as the Fraction it is, -oo as -oo."""

    def one(v):
        if not isinstance(v, precise.MPF):
            return NEG_INF if v == -np.inf else Fraction(float(v))
        if precise.isinf(v) or precise.isnan(v):
            if v < 0:
                return NEG_INF
            raise ValueError("a sheet cannot show NaN or +oo")
        sign, man, exp, _ = v._mpf_  # the value is (-1)^sign man 2^exp, exactly
        return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)

    return tuple(tuple(one(v) for v in row) for row in np.asarray(value, dtype=object).tolist())


def rounded(value: np.ndarray, places: int) -> Matrix:
    """The array rounded to ``places`` decimals, half away from zero, exactly (-oo stays)."""
    return round_matrix(exact_of(value), places)


def printable(value: np.ndarray) -> bool:
    """A flawed value a sheet can show: no NaN and no +oo (a division by a zero
    variance, say); -oo (a masked score) is fine."""
    f = precise.to_float64(value)
    return not (np.isnan(f).any() or np.isposinf(f).any())


def changes(wrong, right: np.ndarray) -> bool:
    """Does the wrong value show on a sheet with 4 decimals?  (Decided on the
    correctly rounded float64 of the high-precision values: the same everywhere.)"""
    if wrong is None:
        return False
    wrong, right = precise.to_float64(wrong), precise.to_float64(right)
    if wrong.shape != right.shape:
        return True  # kept only if the later steps can follow from it
    with np.errstate(invalid="ignore"):
        same_inf = np.isinf(wrong) & np.isinf(right) & (np.sign(wrong) == np.sign(right))
        diff = np.where(same_inf, 0.0, np.abs(wrong - right))
    return bool(np.nanmax(np.where(np.isnan(diff), np.inf, diff)) > 5e-4)


def labels(s: Step) -> bool:
    return any(isinstance(x, str) for row in s.exact for x in row)


def mp_inputs(problem: Problem) -> dict[str, np.ndarray]:
    """The problem's inputs as high-precision arrays (from their exact values)."""
    return {k: precise.to_mp(q.exact) for k, q in problem.inputs.items()}


def _reference(problem: Problem, inputs: dict, given: dict) -> dict | None:
    try:
        with np.errstate(all="ignore"):
            return base.precise_reference(problem.kind, problem.params, inputs, given)
    except _ERRORS:  # a mistake spanning several steps, half made; or values no step can follow
        return None


def _carry(s: Step, value):
    """A rounded step goes on with its shown places (as the right solution carries it)."""
    if not s.rounded or np.asarray(value).dtype != object or not printable(value):
        return value  # (a value no sheet can show is dropped at the end: candidates)
    return precise.to_mp(rounded(value, s.places))


def walk(
    problem: Problem,
    inputs: dict,
    steps: list[Step],
    wrong_at: Callable[[Step, dict], object],
    right: list | None = None,
) -> tuple[str, dict] | None:
    """The flawed chain: each step recomputed (high precision) from the steps so
    far, or ``wrong_at(step, data)`` where that gives a value; rounded steps
    carried rounded.  ``(first wrong step, values)``, or None when no step
    went wrong or a later step cannot follow.  ``right``: the recomputations of
    the chain without a mistake, step by step (:func:`right_chain`), which the
    steps before the mistake reuse."""
    data = dict(inputs)
    given: dict[str, np.ndarray] = {}
    first, out, stale, values = None, None, True, {}
    for k, s in enumerate(steps):
        if first is None and right is not None and k < len(right):
            out, stale = right[k], False  # the same given so far: the right chain's
        elif stale:
            out, stale = _reference(problem, inputs, given), False
        if first is None and right is not None and k == len(right):
            right.append(out)  # recording the right chain (right_chain)
        recomputed = None if out is None else out.get(s.name)
        if first is None and s.rounded and not labels(s):
            recomputed = precise.to_mp(s.exact)  # before the mistake: the key's carried value
        data[s.name] = (
            recomputed if recomputed is not None else (values.get(s.name) if s.name in values else _right_value(s))
        )
        wrong = wrong_at(s, data)
        if wrong is not None:
            given[s.name] = data[s.name] = _carry(s, wrong)
            first, stale = first or s.name, True
        elif recomputed is None:
            return None
        elif s.rounded or first is not None:
            given[s.name] = data[s.name] = _carry(s, recomputed)
            stale = stale or s.rounded
        values[s.name] = data[s.name]
    if first is None:
        return None
    return first, values


def _right_value(s: Step) -> np.ndarray:
    """A step of the right solution where no recomputation gives it (a mistake that
    spans several steps, half made): its exact value, or for labels its index."""
    return precise.as_mp(s.value) if labels(s) else precise.to_mp(s.exact)


def right_chain(problem: Problem, inputs: dict, steps: list[Step]) -> list:
    """The reference's results as :func:`walk` recomputes them step by step when no
    mistake is made (before the mistake every flawed chain is this one)."""
    outs: list = []
    walk(problem, inputs, steps, lambda s, data: None, outs)
    return outs


def plant(problem: Problem, inputs: dict, steps: list[Step], code: str, right: list | None = None) -> Planted | None:
    """Mistake ``code`` made wherever its rule applies (and changes the value)."""

    def wrong_at(s: Step, data: dict):
        for c, rule, ctx in mistakes.rules(problem.kind, s.name):
            if c != code:
                continue
            try:
                with np.errstate(all="ignore"), precise.high_precision():
                    candidate = rule(mistakes.Values(data, **ctx), problem.params)
            except _ERRORS:
                continue
            if candidate is not None and changes(candidate, data[s.name]):
                return precise.as_mp(candidate)
        return None

    found = walk(problem, inputs, steps, wrong_at, right)
    return None if found is None else Planted(code, *found)


def slip(problem: Problem, inputs: dict, steps: list[Step], right: list | None = None) -> Planted | None:
    """One entry of one step changed (by 1 on an integer step, else by 0.1), the
    later steps following from it: the entry is drawn from the middle step with
    at least two entries (stable)."""
    usable = [s for s in steps if s.value.size >= 2 and not labels(s) and np.isfinite(s.value).any()]
    if not usable:
        return None
    chosen = usable[len(usable) // 2]
    finite = [(i, j) for i, row in enumerate(chosen.exact) for j, x in enumerate(row) if not isinstance(x, NegInf)]
    i, j = finite[len(finite) // 2]
    integral = all(isinstance(x, Fraction) and x.denominator == 1 for row in chosen.exact for x in row)

    def wrong_at(s: Step, data: dict):
        if s is not chosen:
            return None
        out = np.array(data[s.name], dtype=object, copy=True)
        with precise.high_precision():
            out[i, j] = out[i, j] + precise.number(1 if integral else Fraction(1, 10))
        return out

    found = walk(problem, inputs, steps, wrong_at, right)
    return None if found is None else Planted(mistakes.SLIP, *found)


def candidates(problem: Problem) -> list[Planted]:
    """Every (mistake, first step) that changes this worked solution, each with
    its consistent flawed chain, in catalogue order."""
    steps = [s for s in problem.steps if not s.is_written]
    inputs = mp_inputs(problem)
    right = right_chain(problem, inputs, steps)
    found: dict[str, Planted] = {}
    for code in mistakes.codes_for(problem.kind):
        if code == mistakes.SLIP:
            planted = slip(problem, inputs, steps, right)
        else:
            planted = plant(problem, inputs, steps, code, right)
        if planted is not None and all(printable(v) for v in planted.values.values()):
            found[code] = planted
    return [found[c] for c in mistakes.CATALOGUE if c in found]


def shown(value: np.ndarray) -> Matrix:
    """A flawed step as printed: 4 decimals, rounded exactly from the
    high-precision value (-oo stays -oo)."""
    return rounded(value, SHOWN_PLACES)
