"""Recomputation: later steps recomputed from a student's own earlier answers
by the kind's ``reference(..., given=answers)`` (:func:`recomputer`, of the
kinds layer), and the
answers so far with the slack their rounding allows (:class:`_Own`): what
carried-forward marking and diagnosis compare against."""

from __future__ import annotations

import numpy as np

from ..kinds.base import Recompute, precise_reference, recomputer
from ..policy.errors import WorksheetError
from ..steps.precise import to_float64
from .degenerate import why_degenerate
from .key import KeyProblem

__all__ = ["Recompute", "recomputer"]  # (the recomputation is the kinds' own; _Own is private to check)

SLACK_ENTRIES = 32  # rounded earlier entries moved one by one (more: 8 draws of random signs)


def precise_recomputer(kind_name: str, params: dict, inputs: dict[str, np.ndarray]) -> Recompute:
    """``given -> steps`` as :func:`recomputer`, but run at high precision
    (:func:`worksheet.kinds.base.precise_reference`: mpmath at 60 digits on the
    key's float inputs and the student's values, each taken as the binary
    number it is), each step the float64 correctly rounded from it: the same
    on every machine.  What a report prints as an expected value carried
    forward; the marking itself compares with the float64 :func:`recomputer`."""

    def run(given: dict) -> dict | None:
        try:
            with np.errstate(all="ignore"):
                out = precise_reference(kind_name, params, inputs, given)
            return {k: to_float64(v) for k, v in out.items()}
        except (ArithmeticError, ValueError, KeyError, TypeError, IndexError, WorksheetError):
            return None  # a student's odd shapes or values: simply no recomputation

    return run


class _Own:
    """A student's answers so far, and the values recomputed from them.

    Two ways a student may carry their own values forward: with every earlier
    answer as written (rounded values used by hand), or with only the wrong
    ones (the rest kept at full precision, as with a calculator).  Both are
    recomputed by the kind's reference; :meth:`bases` lists them.
    """

    def __init__(self, kp: KeyProblem, run: Recompute | None):
        self.kp, self.run = kp, run
        self.order = [s.name for s in kp.steps]
        self.answers: dict[str, np.ndarray] = {}
        self.rounding: dict[str, np.ndarray] = {}  # per entry, see Given.rounding
        self.wrong: set[str] = set()  # steps marked incorrect
        self.degenerate: dict[str, str] = {}  # step -> why it is no source of carried credit (.degenerate)
        self.others: dict[str, list[np.ndarray]] = {}  # step -> other variants' key values
        self._cache: dict = {}
        self._precise = None  # the high-precision recomputation (precise_recomputer), made when first asked
        self._precise_cache: dict = {}

    def record(self, name: str, values: np.ndarray, rounding: np.ndarray) -> None:
        """A step's answer read in full, of the key's shape: a source of carried
        credit for later steps unless it is degenerate (:mod:`.degenerate`)."""
        self.answers[name], self.rounding[name] = values, rounding
        ks = self.kp.step(name)
        why = why_degenerate(name, values, ks.value, self.kp.inputs, self.others.get(name, ()))
        if why:
            self.degenerate[name] = why
        else:
            self.degenerate.pop(name, None)

    def givens(self, k: int, honest: bool = True) -> list[dict[str, np.ndarray]]:
        """The overrides for recomputing step k: all earlier answers, then only the wrong ones;
        with ``honest``, never a degenerate one (the key's value stands in for it)."""
        earlier = [s for s in self.order[:k] if not (honest and s in self.degenerate)]
        out = []
        for g in (
            {s: self.answers[s] for s in earlier if s in self.answers},
            {s: self.answers[s] for s in earlier if s in self.wrong and s in self.answers},
        ):
            if g and all(set(g) != set(h) for h in out):
                out.append(g)
        return out

    def recompute(self, given: dict[str, np.ndarray]) -> dict | None:
        if self.run is None:
            return None
        key = tuple(sorted((n, id(v)) for n, v in given.items()))
        if key not in self._cache:
            self._cache[key] = (self.run(given), given)  # keep given alive: ids stay unique
        return self._cache[key][0]

    def recompute_precise(self, given: dict[str, np.ndarray]) -> dict | None:
        """:meth:`recompute` at high precision: the values a report prints."""
        if self.run is None:
            return None
        if self._precise is None:
            self._precise = precise_recomputer(self.kp.kind, self.kp.params, self.kp.inputs)
        key = tuple(sorted((n, id(v)) for n, v in given.items()))
        if key not in self._precise_cache:
            self._precise_cache[key] = (self._precise(given), given)
        return self._precise_cache[key][0]

    def slack(self, given: dict[str, np.ndarray], step: str) -> np.ndarray | None:
        """How far the rounding of the ``given`` answers can move ``step`` (a linear bound).

        Each rounded entry is moved by its rounding and the changes of
        ``step`` added up (finite differences through the kind's reference).
        With more than SLACK_ENTRIES rounded entries, every entry is moved at
        once with random signs (as rounding errors are), eight times, and the
        largest change, times 3, is the slack: a few recomputations however
        large the problem.
        """
        base = self.recompute(given)
        if base is None or step not in base:
            return None
        entries = [
            (n, i, j, float(u))
            for n in given
            if n in self.rounding
            for (i, j), u in np.ndenumerate(self.rounding[n])
            if u > 0
        ]
        total = np.zeros_like(base[step])
        if not entries:
            return total

        def moved(changes) -> np.ndarray:
            g = {n: v.copy() for n, v in given.items()}
            for n, i, j, d in changes:
                g[n][i, j] += d
            out = self.run(g)
            if out is None or step not in out or out[step].shape != total.shape:
                return np.full_like(total, np.inf)
            with np.errstate(all="ignore"):
                diff = np.abs(out[step] - base[step])
            return np.where(np.isnan(diff), 0.0, diff)  # -inf stays -inf: no change

        if len(entries) <= SLACK_ENTRIES:
            for e in entries:
                total += moved([e])
            return total * 1.1
        rng = np.random.default_rng(0)
        for _ in range(8):
            signs = rng.choice([-1.0, 1.0], size=len(entries))
            total = np.maximum(total, moved([(n, i, j, s * u) for (n, i, j, u), s in zip(entries, signs)]))
        return total * 3.0

    def bases(self, k: int, key_vals: dict) -> list[tuple[dict, dict]]:
        """(overrides, values) to apply a wrong rule at step k to: the key's, then the student's."""
        out = [({}, key_vals)]
        for g in self.givens(k, honest=False):  # a diagnosis explains the answer; it gives no credit
            r = self.recompute(g)
            if r is not None:
                out.append((g, {**self.kp.inputs, **r}))
        return out
