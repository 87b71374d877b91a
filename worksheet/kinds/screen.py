"""Generation decisions that are the same on every CPU.

A generator accepts or rejects a draw by comparing reference values with
thresholds (scaled scores in [-6, 6], layer-norm variances of at least 1/4,
...).  numpy's float64 values may differ in the last bit between machines, so
a draw within about 1e-16 of a threshold could be accepted on one CPU and
rejected on another, and the same seed would draw another problem.  So the
decision is made on the high-precision reference
(:func:`worksheet.kinds.base.precise_reference`, mpmath at 60 digits, each
value the correctly rounded float64 of it).

That costs about ten times the float64 reference, which matters for the long
chains (the blocks, multi-head attention), whose draws are mostly rejected:
:func:`screened` screens with float64 first and rejects a draw there only when
the rejection is robust -- the test rejects the float64 values, and the same
values scaled by 1 + 1e-9 and by 1 - 1e-9, a margin a thousand times the
float64 reference's error (rel 1e-12, ``tests/test_precise.py``).  Every other
draw (accepted, or rejected near a threshold) is decided on the
high-precision values.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from ..solution.problem import to_array
from .base import precise_reference

MARGIN = 1e-9  # relative: the float64 reference is within 1e-12 of the high-precision one


def precise_floats(kind_name: str, params, inputs: dict) -> dict | None:
    """:func:`~worksheet.kinds.base.precise_reference` with ``floats=True``,
    remembered for the last few problems: a draw a generator accepted is solved
    next, and the solve measures the drift of its carried chain against the
    same values (each caller gets its own copy of the arrays)."""
    try:
        out = _remembered(kind_name, params, tuple(sorted(inputs.items())))
    except TypeError:  # unhashable inputs (arrays): not remembered
        return precise_reference(kind_name, params, inputs, floats=True)
    return None if out is None else {k: v.copy() for k, v in out.items()}


@lru_cache(maxsize=16)
def _remembered(kind_name: str, params, inputs: tuple) -> dict | None:
    return precise_reference(kind_name, params, dict(inputs), floats=True)


def screened(kind_name: str, reference: Callable, params, inputs: dict, test: Callable[[dict], bool]) -> bool:
    """``test(reference values)`` decided on the high-precision values, screened by float64
    (``reference``, the kind's own; see the module docstring); a reference that
    divides by zero rejects the draw."""
    floats = {k: to_array(v) for k, v in inputs.items()}
    with np.errstate(all="ignore"):
        ref = reference(floats, params)
        if not any(test({k: v * s for k, v in ref.items()}) for s in (1.0, 1.0 + MARGIN, 1.0 - MARGIN)):
            return False  # rejected however the last bits fall
    high = precise_floats(kind_name, params, inputs)
    return high is not None and bool(test(high))
