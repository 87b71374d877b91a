"""Marking one answer file: each step correct, carried forward, incorrect (with
the mistake that explains it) or missing (see :mod:`worksheet.check`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..kinds import mistakes
from ..steps.float_check import same_floats
from ..policy.errors import InputError, WorksheetError
from .answers import Answers, read_answers
from .grids import _at, parse_answers
from .key import Key, KeyProblem, KeyStep, read_key
from .reading import _shown_entry
from .recompute import _Own, precise_recomputer, recomputer
from .report import Cell, ProblemResult, Report, StepResult, Unread
from .tolerance import Expected, Given, Tolerance, close, decimal_text, expected_float

WRONG_CELLS_SHOWN = 20  # wrong entries listed per step in the JSON report


def check_answers(
    key: Path | str | Key,
    answers: Path | str | Answers,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    tolerance: Tolerance | None = None,
) -> Report:
    """Mark one answer file (or :class:`Answers` already read) against a key
    (a path or a :class:`Key` already read).

    A step whose answer cannot be read (not a number, the wrong shape, a CSV
    line missing) is marked incorrect with the reason and its line; a line or
    step name that belongs nowhere is reported in ``Report.unread``; the rest
    of the file is marked.  Only a file that cannot be read at all (its
    syntax, size, or work budget) is an :class:`InputError`."""
    tol = tolerance or Tolerance(rtol, atol)
    key = key if isinstance(key, Key) else read_key(key)
    ans = answers if isinstance(answers, Answers) else read_answers(answers)
    key.bind(ans.variant, ans.fingerprint, ans.path)  # a file made for another key or variant: refused
    try:
        problems = key.problems(ans.variant)
    except InputError as exc:
        if exc.file:  # the key itself is wrong
            raise
        raise InputError(exc.reason, file=ans.path, field=exc.field) from None
    grids, broken, unread = parse_answers(ans, problems)
    many = len(problems) > 1
    original = (lambda n: None) if None in ans.problems else (lambda n: n)
    vid = key.variant_id(ans.variant)
    results = [
        _mark_problem(
            p,
            grids.get(p.number, {}),
            tol,
            ans.path,
            many,
            broken.get(p.number, {}),
            {s.name: _at(ans, original(p.number), s.name) for s in p.steps},
            _other_variants(key, vid, p),
        )
        for p in problems
    ]
    return Report(key.path, ans.path, results, ans.student, ans.variant, unread)


MAX_OTHER_VARIANTS = 400  # other variants whose key values are no source of carried credit


def _other_variants(key: Key, vid: str, kp: KeyProblem) -> dict[str, list[np.ndarray]]:
    """Each step's values in the other variants of the key (the same problem number and kind):
    a neighbour's answers copied are no source of carried credit (:mod:`.degenerate`)."""
    out: dict[str, list[np.ndarray]] = {}
    for other in list(key.variants)[:MAX_OTHER_VARIANTS]:
        if other == vid:
            continue
        try:
            problems = key.problems(other)
        except InputError:
            continue
        if kp.number <= len(problems) and problems[kp.number - 1].kind == kp.kind:
            for s in problems[kp.number - 1].steps:
                out.setdefault(s.name, []).append(s.value)
    return out


def _array(grid: list[list[Given]]) -> np.ndarray:
    return np.array([[g.value for g in row] for row in grid], dtype=np.float64)


def _rounding(grid: list[list[Given]]) -> np.ndarray:
    return np.array([[g.rounding for g in row] for row in grid], dtype=np.float64)


def _shape(grid: list[list[Given]]) -> tuple[int, int]:
    return (len(grid), len(grid[0]))


def _wrong(
    grid: list[list[Given]], expected, tol: Tolerance, slack: np.ndarray | None = None
) -> list[tuple[int, int, Expected]] | None:
    """The wrong entries (0-based i, j, expected) against a KeyStep's cells or a float array
    (each entry allowed ``slack[i, j]`` more); None when the shapes differ."""
    if isinstance(expected, np.ndarray):
        if expected.ndim != 2 or expected.shape != _shape(grid):
            return None
        cells = [[expected_float(float(x)) for x in row] for row in expected]
    else:
        cells = expected
        if (len(cells), len(cells[0])) != _shape(grid):
            return None
    return [
        (i, j, cells[i][j])
        for i, row in enumerate(grid)
        for j, g in enumerate(row)
        if not close(g, cells[i][j], tol, 0.0 if slack is None else float(slack[i, j]))
    ]


def _cells(grid, wrong) -> list[Cell]:
    out = []
    for i, j, e in wrong[:WRONG_CELLS_SHOWN]:
        shown = e.text
        if e.label is None and e.precise and e.mp is not None and len(shown) <= 40:
            dec = decimal_text(float(e.mp))
            if dec != shown:
                shown = f"{shown} ≈ {dec}"
        elif len(shown) > 40:
            shown = decimal_text(float(e.mp)) if e.mp is not None else shown[:37] + "..."
        out.append(Cell(i + 1, j + 1, _shown_entry(grid[i][j].text), shown, e.value))
    return out


def _precise_cells(wrong, own: _Own, given: dict, name: str):
    """The wrong entries found against a float64 recomputation, each expected value
    taken from the same recomputation at high precision (the same on every machine)."""
    r = own.recompute_precise(given)
    v = None if r is None else r.get(name)
    if v is None or v.ndim != 2 or any(i >= v.shape[0] or j >= v.shape[1] for i, j, _ in wrong):
        return wrong
    return [(i, j, expected_float(float(v[i, j]))) for i, j, _ in wrong]


def _unrounded(kp: KeyProblem, run) -> None:
    """A step the key carries rounded is right both as carried (its exact
    string) and as the unrounded chain gives it (its JSON ``value``, computed
    at high precision when the key was written): that float is recomputed here
    at high precision (``run``: :func:`.recompute.precise_recomputer`) from the
    key's inputs, so a key written before the ``value`` was the unrounded one
    is marked the same."""
    rounded = [ks for ks in kp.steps if ks.rounded and not ks.__dict__.get("_unrounded")]
    if not rounded or run is None:
        return
    ref = run({})
    for ks in rounded:
        v = None if ref is None else ref.get(ks.name)
        if v is not None and v.shape == ks.value.shape and np.array_equal(np.isinf(v), np.isinf(ks.value)):
            ks.value = v
            ks.__dict__.pop("_cells", None)  # the expected entries are made again with this float
        ks.__dict__["_unrounded"] = True


# long: marks a problem's steps in sheet order, carrying what was read and what is degenerate from step to step
def _mark_problem(  # noqa: C901, PLR0915
    kp: KeyProblem,
    grids: dict[str, list[list[Given]]],
    tol: Tolerance,
    file: str,
    many: bool = False,
    broken: dict[str, str] | None = None,
    lines: dict[str, str] | None = None,
    others: dict[str, list[np.ndarray]] | None = None,
) -> ProblemResult:
    run = recomputer(kp.kind, kp.params, kp.inputs)
    _unrounded(kp, None if run is None else precise_recomputer(kp.kind, kp.params, kp.inputs))
    key_vals = {**kp.inputs, **{s.name: s.value for s in kp.steps}}
    own = _Own(kp, run)
    own.others = others or {}
    shares = kp.shares()
    lines = lines or {}
    results: list[StepResult] = []
    for k, ks in enumerate(kp.steps):
        if ks.written:
            results.append(StepResult(ks.name, "by-person", title=ks.title, out_of=0, by_hand=shares[ks.name]))
            continue
        if broken and ks.name in broken:
            results.append(StepResult(ks.name, "unreadable", title=ks.title, unreadable=broken[ks.name]))
            continue
        grid = grids.get(ks.name)
        if grid is None:
            results.append(StepResult(ks.name, "missing", title=ks.title))
            continue
        unread = [u for row in grid for u in row if isinstance(u, Unread)]
        if unread:  # those entries void, the others marked against the key; no source of carried credit
            results.append(_partly_read(ks, grid, unread, tol, lines.get(ks.name, "")))
            continue
        own.record(ks.name, _array(grid), _rounding(grid))  # degenerate ones are no source (.degenerate)
        # the key's exact strings are read only for an answer of the key's shape
        wrong_key = _wrong(grid, ks.cells, tol) if _shape(grid) == ks.shape else None
        if wrong_key == []:
            own.degenerate.pop(ks.name, None)  # right: whatever it looks like, the key's own
            results.append(StepResult(ks.name, "correct", title=ks.title))
            continue
        carried = []  # wrong entries against each recomputation from the student's own answers
        bases = []  # the answers each of those was recomputed from
        for g in own.givens(k):
            r = own.recompute(g)
            if r is not None and ks.name in r:
                w = _wrong(grid, r[ks.name], tol)
                if w:  # allow for the rounding of the earlier answers it was computed from
                    w = _wrong(grid, r[ks.name], tol, own.slack(g, ks.name))
                carried.append(w)
                bases.append(g)
                if w == []:
                    break
        if [] in carried:
            earlier = [r.name for r in results if r.status == "incorrect" and r.name not in own.degenerate]
            # right from the student's own earlier answers, none of them wrong: the rounding
            # chain (worksheet.policy.pencil) done by hand, so simply correct
            status = "carried-forward" if earlier else "correct"
            own.degenerate.pop(ks.name, None)  # it follows from honest work: a source in turn
            results.append(StepResult(ks.name, status, carried_from=earlier, title=ks.title))
            continue
        own.wrong.add(ks.name)
        refused = refused_credit(own, k, grid, tol)
        code = _diagnose(kp, k, grid, key_vals, own, tol)
        slip = wrong_key is not None and len(wrong_key) == 1  # one entry off the key: a slip, not a trick
        if not refused and (slip or code not in (None, mistakes.SLIP, mistakes.TRUNCATED)):
            own.degenerate.pop(ks.name, None)  # an honest error: the steps after it carry forward from it
        res = StepResult(ks.name, "incorrect", mistake=code, title=ks.title, expected_shape=ks.shape, refused=refused)
        nearest = min((w for w in carried if w is not None), key=len, default=None)
        if nearest:  # the expected values a report prints: from the high-precision recomputation
            nearest = _precise_cells(nearest, own, bases[carried.index(nearest)], ks.name)
        if wrong_key is None:  # a shape the key does not have
            res.given_shape = _shape(grid)
            if nearest:
                res.against, res.cells, res.wrong_count = "own", _cells(grid, nearest), len(nearest)
        elif code == mistakes.SLIP and nearest is not None and len(nearest) == 1 and len(wrong_key) != 1:
            res.against, res.cells, res.wrong_count = "own", _cells(grid, nearest), 1
        else:
            res.cells, res.wrong_count = _cells(grid, wrong_key), len(wrong_key)
        results.append(res)
    for r in results:
        if r.status != "by-person":
            r.out_of = shares[r.name]
    return ProblemResult(kp.number, kp.kind, results, run is not None, kp.title, kp.points is not None)


def refused_credit(own: _Own, k: int, grid, tol: Tolerance) -> str:
    """Why step k gets no carried credit though it follows from the student's own
    earlier answers: some of them are degenerate (:mod:`.degenerate`); "" if it
    does not follow from them.  The step is then degenerate for later steps too."""
    name = own.order[k]
    for g in own.givens(k, honest=False):
        tainted = [s for s in g if s in own.degenerate]
        if not tainted:
            continue
        r = own.recompute(g)
        if r is None or name not in r:
            continue
        w = _wrong(grid, r[name], tol)
        if w:
            w = _wrong(grid, r[name], tol, own.slack(g, name))
        if w == []:
            why = own.degenerate[tainted[0]]
            own.degenerate[name] = why  # and so is no source of carried credit either
            return f"follows from your {', '.join(tainted)}, but {why}: no credit"
    return ""


def _partly_read(ks: KeyStep, grid, unread: list[Unread], tol: Tolerance, line: str) -> StepResult:
    """A step with entries that could not be read: 0 marks; the entries read are marked
    against the key (when the matrix has the key's shape) and reported."""
    res = StepResult(
        ks.name, "unreadable", title=ks.title, unreadable=line, unread_cells=unread, expected_shape=ks.shape
    )
    if _shape(grid) == ks.shape:
        cells = ks.cells
        wrong = [
            (i, j, cells[i][j])
            for i, row in enumerate(grid)
            for j, g in enumerate(row)
            if not isinstance(g, Unread) and not close(g, cells[i][j], tol)
        ]
        res.cells, res.wrong_count = _cells(grid, wrong), len(wrong)
    else:
        res.given_shape = _shape(grid)
    return res


def _truncated(g: Given, e: Expected) -> bool:
    """A plain decimal whose digits are the expected value's, cut off (not rounded) after
    its last place: 0.88 for 0.8858 (which rounds to 0.89)."""
    if g.places is None or g.places <= 0 or g.mp is None or e.mp is None or e.label is not None:
        return False
    from fractions import Fraction

    try:
        given = Fraction(g.text.strip())
        expected = Fraction(str(e.mp))
    except (ValueError, ZeroDivisionError):
        return False
    scale = 10**g.places
    cut = Fraction(int(expected * scale), scale)  # int() cuts toward zero
    return given == cut and abs(expected - cut) * scale >= Fraction(1, 2)


def _rules_of(kp: KeyProblem) -> tuple[str, dict, dict]:
    """The kind whose mistake rules explain this problem's steps, its params,
    and aliases of the values the rules read: the problem's own, or those a
    kind names with its ``mistakes_of(params, inputs)`` (find-the-mistake: the
    kind its worked solution is of, and the shown steps before the mistake)."""
    from .. import kinds

    try:
        contract = kinds.kind(kp.kind)
    except WorksheetError:
        return kp.kind, kp.params, {}
    return contract.mistakes_of(kp.params, kp.inputs)


def _with_aliases(context: dict, aliases: dict) -> dict:
    if not aliases:
        return context
    return {**context, "aliases": {**aliases, **context.get("aliases", {})}}


def _diagnose(kp: KeyProblem, k: int, grid, key_vals: dict, own: _Own, tol: Tolerance) -> str | None:
    """The mistake that explains the answer to step k, or None.

    Mistakes of step k itself are tried first, then those of earlier steps
    (nearest first) followed into step k by recomputation; each applied to
    the key's values and to the student's own (:meth:`_Own.bases`).  A rule
    that gives the right value on a base (``sqrt(d_model)`` when it equals
    ``sqrt(d_k)``) is no mistake there.  Then an arithmetic slip: exactly one
    entry wrong against the key or against the student's own values.
    """
    step = own.order[k]
    for code, candidate in mistake_candidates(kp, k, key_vals, own):
        if _wrong(grid, candidate, tol) == []:
            return code
    ks = kp.steps[k]
    wrong_key = _wrong(grid, ks.cells, tol) if _shape(grid) == ks.shape else None
    if wrong_key and all(_truncated(grid[i][j], e) for i, j, e in wrong_key):
        return mistakes.TRUNCATED
    if _shape(grid)[0] * _shape(grid)[1] >= 2:
        if wrong_key is not None and len(wrong_key) == 1:
            return mistakes.SLIP
        for g in own.givens(k):
            r = own.recompute(g)
            if r is not None and step in r:
                w = _wrong(grid, r[step], tol)
                if w is not None and len(w) == 1:
                    return mistakes.SLIP
    return None


def mistake_candidates(kp: KeyProblem, k: int, key_vals: dict, own: _Own):
    """``(code, value)``: what step k would be with each named mistake, in the
    order :func:`_diagnose` tries them (those of step k, then those of earlier
    steps followed into it; on the key's values, then on the student's own).
    A rule that changes nothing on a base is skipped there."""
    order = own.order
    step = order[k]
    kind, params, aliases = _rules_of(kp)
    for o in range(k, -1, -1):
        origin = order[o]
        found = mistakes.rules(kind, origin)
        if not found:
            continue
        bases = own.bases(o, key_vals)
        for code, rule, context in found:
            for given, vals in bases:
                try:
                    with np.errstate(all="ignore"):
                        wrong = rule(mistakes.Values(vals, **_with_aliases(context, aliases)), params)
                except (KeyError, ValueError, IndexError, TypeError):
                    continue
                if wrong is None:
                    continue
                wrong = np.asarray(wrong, dtype=np.float64)
                right = vals.get(origin)
                if right is not None and right.shape == wrong.shape and same_floats(right, wrong):
                    continue  # the rule changes nothing here
                if o == k:
                    candidate = wrong
                else:
                    out = own.recompute({**given, origin: wrong})
                    candidate = out.get(step) if out else None
                if candidate is not None:
                    yield code, candidate
