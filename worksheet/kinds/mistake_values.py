"""The value each named mistake gives in each step of a problem, and which of a
step's mistakes its numbers can tell apart.

For each step, every mistake rule registered for it (:func:`worksheet.kinds.mistakes.rules`:
the step is the mistake's origin) is applied to the key's own values, as
``worksheet check`` applies it first: the inputs and the earlier steps exact
(a step carried rounded: its carried value), at 60 digits
(:mod:`worksheet.steps.precise`, mpmath, no libm), and each entry's float64 is
the one correctly rounded from that value -- the same on every machine.  A rule
that does not apply (None, an error, another shape than the step's, NaN) or
that changes nothing (within 1e-9) is left out.  The JSON key writes these
values under the step's ``"mistakes"``; Moodle's 0% answers read them
(:mod:`worksheet.render.moodle`), and nothing computes them twice.

A step's mistake is *diagnosable* when some entry a student types (not a
masked one) takes, with it, a value farther than the sheet's tolerance from
every right answer (the exact value's float and, in hand mode, the rounding
chain's) and from the value every other mistake of the step gives there: a
student who made it, and only it, is told so by that entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Mapping

import numpy as np

from . import mistakes
from ..exact import NegInf, to_float
from ..solution.problem import Problem, Step
from ..steps import precise
from ..steps.float_check import same_floats

__all__ = ["StepMistakes", "PLACES", "tolerance", "right_values", "of_problem", "diagnosable", "asked", "untold"]

PLACES = 4  # the decimals a student types; the tolerance is check's for this many
_ERRORS = (KeyError, ValueError, IndexError, TypeError, ZeroDivisionError, ArithmeticError)


@dataclass(frozen=True)
class StepMistakes:
    """One step's mistakes: code -> float64 array in the step's shape (-inf where masked),
    in catalogue order, and the codes its entries tell apart (:func:`diagnosable`)."""

    values: dict = field(default_factory=dict)
    diagnosable: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()  # the codes that change some asked entry to a finite value (tellable at all)


@lru_cache(maxsize=4096)
def tolerance(value: float) -> float:
    """The tolerance ``worksheet check`` allows an answer to ``value`` (the sheet prints it)."""
    from ..parse.numbers import decimal_tolerance

    return float(decimal_tolerance(PLACES, abs(value)))


def right_values(s: Step, i: int, j: int) -> list[float]:
    """The right answers to entry (i, j) of a step: the double nearest its exact value
    and, in hand mode, the rounding chain's value (when it differs)."""
    out = [to_float(s.exact[i][j])]
    if s.chain is not None and not isinstance(s.chain[i][j], (str, NegInf)):
        c = to_float(s.chain[i][j])
        if abs(c - out[0]) > 1e-9:
            out.append(c)
    return out


def _labels(q) -> bool:
    return any(isinstance(x, str) for row in q.exact for x in row)


def _rules_of(p: Problem) -> tuple[str, dict, dict]:
    """The kind whose rules explain the steps, its params and aliases (a kind's
    ``mistakes_of``: find-the-mistake names the kind its solution is of)."""
    from . import registry

    if p.kind not in registry.KINDS:
        return p.kind, p.params, {}
    return registry.kind(p.kind).mistakes_of(p.params, p.inputs)


class _Lazy(Mapping):
    """The key's own values at high precision, by name: inputs and steps, exact (a
    label step: its index), each converted when a rule first reads it."""

    def __init__(self, p: Problem):
        self.sources = {k: q for k, q in p.inputs.items() if not _labels(q)}
        self.sources.update({s.name: s for s in p.steps if not s.is_written})
        self.done: dict = {}

    def __getitem__(self, name: str):
        got = self.done.get(name)
        if got is None:
            q = self.sources[name]
            got = self.done[name] = precise.as_mp(q.value) if _labels(q) else precise.to_mp(q.exact)
        return got

    def __contains__(self, name) -> bool:
        return name in self.sources

    def __iter__(self) -> Iterator[str]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


def _apply(rule, data: dict, context: dict, params: dict):
    try:
        with np.errstate(all="ignore"), precise.high_precision():
            wrong = rule(mistakes.Values(data, **context), params)
            return None if wrong is None else precise.to_float64(precise.as_mp(wrong))
    except _ERRORS:
        return None


def of_problem(p: Problem) -> dict[str, StepMistakes]:
    """Step name -> its mistakes, for the steps with at least one that applies; computed
    once per problem (kept in ``p.named_mistakes``: the draw, the JSON key and Moodle
    read the same values)."""
    if p.named_mistakes is None:
        p.named_mistakes = _compute(p)
    return p.named_mistakes


def _compute(p: Problem) -> dict[str, StepMistakes]:
    kind, params, aliases = _rules_of(p)
    steps = [s for s in p.steps if not s.is_written and not _labels(s)]
    found = {s.name: mistakes.rules(kind, s.name) for s in steps}
    if not any(found.values()):
        return {}
    data = _Lazy(p)
    order = {c: k for k, c in enumerate(mistakes.CATALOGUE)}
    out = {}
    for s in steps:
        right = np.array([[-math.inf if isinstance(x, NegInf) else to_float(x) for x in row] for row in s.exact])
        values: dict[str, np.ndarray] = {}
        for code, rule, context in found[s.name]:
            if code in values:
                continue
            if aliases:
                context = {**context, "aliases": {**aliases, **context.get("aliases", {})}}
            wrong = _apply(rule, data, context, params)
            if wrong is None or wrong.shape != right.shape or np.isnan(wrong).any() or np.isposinf(wrong).any():
                continue
            if same_floats(right, wrong):
                continue  # changes nothing here
            values[code] = wrong
        if values:
            values = dict(sorted(values.items(), key=lambda kv: order.get(kv[0], len(order))))
            out[s.name] = StepMistakes(values, diagnosable(s, values), asked(s, values))
    return out


def _far(a: float, b: float) -> bool:
    return abs(a - b) > max(tolerance(a), tolerance(b))


def diagnosable(s: Step, values: dict[str, np.ndarray]) -> tuple[str, ...]:
    """The codes some asked entry of ``s`` tells apart from the right answers and the other codes."""
    out = []
    for code, wrong in values.items():
        others = [v for c, v in values.items() if c != code]
        for i, row in enumerate(s.exact):
            hit = False
            for j, x in enumerate(row):
                w = float(wrong[i, j])
                if isinstance(x, NegInf) or not math.isfinite(w):
                    continue
                if all(_far(w, r) for r in right_values(s, i, j)) and all(
                    not math.isfinite(float(o[i, j])) or _far(w, float(o[i, j])) for o in others
                ):
                    hit = True
                    break
            if hit:
                out.append(code)
                break
    return tuple(out)


def asked(s: Step, values: dict[str, np.ndarray]) -> tuple[str, ...]:
    """The codes a draw of other numbers could tell apart: those that move some asked
    entry of ``s`` to a finite value by more than :data:`NOISE` (a mistake that changes
    only masked entries, or makes asked ones -oo, never shows: a student cannot type it;
    nor one that moves entries no more than a carried step's rounding does, such as
    $\\sqrt{d_\\mathrm{model}}$ when it is $\\sqrt{d_k}$), but not one that gives the
    very same matrix as an earlier code (the same computation on these sizes)."""
    out = []
    for k, (code, wrong) in enumerate(values.items()):
        if any(np.array_equal(wrong, earlier) for earlier in list(values.values())[:k]):
            continue
        for i, row in enumerate(s.exact):
            if any(_moves(x, float(wrong[i, j])) for j, x in enumerate(row)):
                out.append(code)
                break
    return tuple(out)


NOISE = 1e-4  # what the 4-place rounding of carried steps moves a value by, at most (about)


def _moves(x, w: float) -> bool:
    return not isinstance(x, NegInf) and math.isfinite(w) and abs(w - to_float(x)) > NOISE


def untold(p: Problem) -> int:
    """How many (step, mistake) pairs of a problem that change an asked entry its numbers
    do not tell apart (0: every such mistake is diagnosable)."""
    return sum(len(set(m.asked) - set(m.diagnosable)) for m in of_problem(p).values())
