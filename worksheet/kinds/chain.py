"""The carried chain of the layer kinds (encoder block; decoder block): one
rounding rule, one table per step, the key a student who rounds as told gets.

Rule.  A step keeps its exact value while every entry is a decimal with at
most ``places`` digits after the point (integers, 0.5, 1.25) and nothing it
depends on was rounded.  From the first step that breaks this (in hand mode
the softmax of the first head), the step's entries are rounded to ``places``
decimals (half away from zero) and kept as exact Fractions; that step and
every later step that depends on it is marked ``rounded`` and printed with
exactly ``places`` decimals (trailing zeros included).  Each later step is
computed exactly FROM THE CARRIED values and then rounded:

    carried_k = round(f_k(carried_1, ..., carried_{k-1}), places)

so a student who rounds every step as told writes exactly the key.  The
heads of a multi-head attention are independent branches: head 2 starts
from the block's inputs, not from head 1's rounded weights, so its Q, K, V
and scores stay integers (see ``multi_head_attention.solve``).

Checks.  A rounded step is checked twice: its own arithmetic exactly against
a float64 recomputation from the carried values (``blocks.carried``), and
within ``model.verify``'s rounded tolerance (5e-3) against the float64 value
of the unrounded chain (the step's numpy ``value``; the JSON writes as
``exact`` the carried value, as ``value`` the unrounded chain at 60 digits).  When 4
places drift further than that (a layer norm of a row with a tiny variance
magnifies rounding), the whole block is recomputed carrying 6, 8, 12, then 16
places, and says so.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Callable

import numpy as np

from ..steps import scaled_dot_product as blocks
from ..steps import standard_tables as tables
from ..policy.errors import InputError, ShapeError, VerificationError
from ..exact import NegInf, is_rational
from ..solution.maths import as_latex
from . import block_symbols as names
from ..solution.number_format import terminating_places
from ..solution.problem import Aid, Matrix, Problem, shape, verify
from ..solution.step_ref import StepRef
from . import base, feed_forward, layer_norm, multi_head_attention

PLACES = (4, 6, 8, 12, 16)  # decimals carried; more only when 4 drift too far from the unrounded chain
# how far (absolutely and relatively) a block's carried chain may lie from the unrounded one once
# it reads a standard grid (√x of its carried variances at 2 decimals, or 1 from 10 on; e^{-x} of
# the decoder's carried cross scores at 2 decimals): the grid's error, magnified by the layer
# norms that follow (blocks.GRID_DRIFT for one softmax)
GRID_CHAIN_DRIFT = 0.1


class Chain(blocks.Carry):
    """A :class:`blocks.Carry` whose exact steps are short decimals only.

    ``blocks.Carry`` keeps any exact value that reads in 40 characters
    (``sqrt(11245)/100``); a chain a student follows by hand keeps only
    values they can write down exactly as a decimal of at most ``places``
    digits, and carries everything else rounded.
    """

    def readable(self, M: Matrix) -> bool:
        return all(
            isinstance(x, NegInf) or (is_rational(x) and terminating_places(Fraction(x), self.places) is not None)
            for row in M
            for x in row
        )


class Drift(Exception):
    """A rounded step is further from the unrounded chain than the tolerance."""


def solve_carried(build: Callable[[Chain], Problem]) -> Problem:
    """``build(chain)`` with 4 places carried, else 6, 8, 12, 16; an InputError if none is close enough."""
    for places in PLACES:
        try:
            p = build(Chain(places=places))
        except (Drift, InputError) as exc:
            # too few places: drift beyond the tolerance, or a small variance rounded to 0
            if places == PLACES[-1]:
                if isinstance(exc, InputError):
                    raise
                raise InputError(
                    f"carrying {places} decimals still drifts too far from the exact values "
                    f"({exc}); a layer norm magnifies rounding when a row's variance is tiny: "
                    "use larger numbers or eps > 0"
                ) from None
            continue
        if places > PLACES[0]:
            p.notes.append(
                f"Rounding to {PLACES[0]} decimals drifted too far from the exact chain here, so "
                f"values are carried with {places} decimals."
            )
        return p
    raise AssertionError("unreachable")  # pragma: no cover


def run(stage: str, solve, inputs: dict, params, carry: blocks.Carry) -> Problem:
    """Call a kind's solve; a user error inside names the stage of the block."""
    try:
        return solve(inputs, params, carry=carry)
    except InputError as exc:
        raise InputError(f"in the {stage} step: {exc.reason}") from None
    except ShapeError as exc:
        raise ShapeError(f"in the {stage} step: {exc}") from None


# long: a part's steps copied into its block, one rule per kind of field renamed
def copy(
    p: Problem,
    sub: Problem,
    prefix: str,
    stage: str,
    ref: dict,
    note: str = "",
    last: str | None = None,
    last_title: str | None = None,
    symbols=(),
    drift: dict | None = None,
) -> None:
    """Add ``sub``'s steps to ``p`` as ``prefix + name``, with the unrounded chain's value.

    A rounded step must stay within 5e-3 of the unrounded chain: of ``drift``, that
    chain at 60 digits, when given (the same on every machine, so how many places a
    block carries does not depend on numpy's last bit), else of ``ref``.

    ``last`` renames the final step (the block's ``output`` is the last
    Add & Norm's scale-and-shift step, asked for once, not twice).  ``symbols``
    (rules of :mod:`.block_symbols`) rename the part's matrices in its formulas,
    worked lines, symbols, and the formulas of its notes and titles, so that one
    symbol means one thing in the block (the cross-attention's queries come from
    ``Y_1`` with ``W^Q_{c,1}``, not from ``X`` with ``W^Q_1``): substitution on
    the maths tree, never a pattern over LaTeX.
    """
    grid = any(a.grid for a in (*p.aids, *sub.aids))  # read on a standard grid: drifts further
    bound = GRID_CHAIN_DRIFT if grid else 5e-3
    renamed, carried = names.renaming(symbols), names.kept_decimals_walk()  # kept from problem to problem
    for k, s in enumerate(sub.steps):
        if symbols:
            s = dataclasses.replace(
                s,
                formula=renamed(s.formula),
                work=tuple(renamed(w) for w in s.work),
                note=renamed.prose(s.note),
                title=renamed.prose(s.title),
                latex_name=renamed(s.symbol),
            )
        final = last is not None and k == len(sub.steps) - 1
        name = last if final else str(StepRef.parse(s.name).within(prefix))
        value = ref[name]
        if s.rounded:
            try:
                against = drift[name] if drift is not None and name in drift else value
                verify(f"{p.kind}.{name}", s.exact, against, rounded=True, drift=bound, rtol=bound)
            except VerificationError as exc:
                raise Drift(str(exc)) from None
        title = (last_title or s.title) if final else f"{stage}: {s.title}"
        p.add_step(
            name,
            s.exact,
            value,
            title=title,
            formula=s.formula,
            work=[names.decimals(w, carried) for w in s.work],
            note=" ".join(x for x in ((note if k == 0 else ""), s.note) if x),
            rows=s.rows,
            cols=s.cols,
            latex_name=s.symbol,
            rounded=s.rounded,
            places=s.places,
            drift=bound,
            rtol=bound,
        )
    for aid in sub.aids:
        merge_aid(p, aid)


def reads_standard_tables_by_hand(solve, inputs: dict, params) -> bool:
    """Whether a draw may be used: in hand mode, the exact chain ``solve`` gives reads only
    the standard tables (:func:`reads_standard_tables`), and the problem solved to decide it
    is kept for the solve that follows (:func:`keep_solved`); any draw in calculator mode."""
    if params.numbers != "hand":
        return True
    p = solve(inputs, params)
    keep_solved(inputs, params, p)
    return reads_standard_tables(p)


class Drawn(dict):
    """A block's drawn inputs (what ``generate`` returns), holding the problem that
    ``generate`` solved to accept them in hand mode (:func:`reads_standard_tables`), so that
    the ``solve`` that follows takes it (:func:`take_solved`) instead of solving again."""

    __slots__ = ("solved",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.solved = None


def keep_solved(inputs: dict, params, p: Problem) -> None:
    """Keep ``p``, solved from ``inputs`` with ``params``, for :func:`take_solved`."""
    if type(inputs) is Drawn:
        inputs.solved = (params, dict(inputs), p)


def take_solved(inputs: dict, params, seed: int | None) -> Problem | None:
    """The problem kept for exactly these inputs (the same matrices, none replaced) and
    params, now with ``seed``; once: a second solve of the same inputs solves again."""
    kept = inputs.solved if type(inputs) is Drawn else None
    if kept is None:
        return None
    inputs.solved = None
    kept_params, kept_inputs, p = kept
    if (
        kept_params != params
        or kept_inputs.keys() != inputs.keys()
        or any(inputs[k] is not v for k, v in kept_inputs.items())
    ):
        return None
    p.seed = seed
    return p


def reads_standard_tables(p: Problem) -> bool:
    """Whether a hand-mode block reads only its kind's standard tables: 4 places carried
    and every grid it reads is the fixed one (e^{-x} for x up to ``EXP_GRID``, √x below
    ``SQRT_TOP``), not one a chain reaching further would lengthen.  ``generate`` draws
    again otherwise, so every variant and seed of a kind prints the same tables."""
    standard = [tables.grid_aid("exp", multi_head_attention.EXP_GRID), *tables.sqrt_aids(tables.SQRT_TOP)]
    return all(s.places == PLACES[0] for s in p.steps if s.rounded) and all(a in standard for a in p.aids if a.grid)


def merge_aid(p: Problem, aid: Aid) -> None:
    """Add a table to ``p``; one of the same title (the e^x values of a second
    attention) is merged into the first, its arguments sorted high to low; a
    standard grid table is added once (:func:`standard_tables.add_table`)."""
    if aid.grid:  # a standard table (its own plain decimals): once, the longest range any part reads
        tables.add_table(p.aids, aid)
        return
    aid = dataclasses.replace(aid, entries=tuple((as_latex(names.decimals(x)), v) for x, v in aid.entries))
    same = next((a for a in p.aids if a.title == aid.title), None)
    if same is None:
        p.aids.append(aid)
    elif same != aid and same.values and aid.values:
        entries = dict(zip(same.values, same.entries))
        entries.update(zip(aid.values, aid.entries))
        keys = sorted(entries, reverse=True)
        p.aids[p.aids.index(same)] = Aid(same.title, tuple(entries[k] for k in keys), tuple(keys))


def wire(p: Problem, inputs: dict[str, str]) -> dict[str, Matrix]:
    """A part's inputs from the block built so far (its inputs and the steps copied in).

    ``inputs`` maps each of the part's input names to the block's matrix it
    is (a block's ``PARTS``: ``{"X": "norm1.output", "gamma": "gamma_2"}``);
    a block matrix not there (``pe.X_plus_PE`` without positional encoding)
    falls back to the block's matrix of the part's own name, as
    :class:`worksheet.kinds.mistakes.Values` reads a part's inputs.
    """
    have = {**{n: q.exact for n, q in p.inputs.items()}, **{s.name: s.exact for s in p.steps}}
    return {name: have[block] if block in have else have[name] for name, block in inputs.items()}


# ---------------------------------------------------------------- what the blocks share
# The encoder and decoder blocks differ in their parts (PARTS, STAGES) and words; the
# machinery below is written once for both.


def drawers(rng: np.random.Generator, hand: bool, d: int):
    """A block's ``draw(r, c, values)`` and ``gamma()`` for ``generate``.

    Hand mode: integers from ``values`` (default {-1, 0, 1} with probabilities
    0.3, 0.35, 0.35) and gamma from {1, 2}; calculator mode: one-decimal
    entries and gamma = 1 + [-0.3, 0.3].
    """
    small = ((-1, 0, 1), (0.3, 0.35, 0.35))

    def draw(r, c, values=small):
        return base.int_matrix(rng, r, c, *values) if hand else base.decimal_matrix(rng, r, c)

    def gamma():
        if hand:
            return base.int_matrix(rng, 1, d, (1, 2), (0.7, 0.3))
        return tuple(tuple(1 + x for x in row) for row in base.decimal_matrix(rng, 1, d, -3, 3))

    return draw, gamma


class Reference:
    """A block's float64 chain, built part by part: ``put(prefix, steps)`` records a
    part's steps as ``prefix + name``; ``part(prefix)`` is the part's share of
    ``given`` (prefix dropped); ``add_norm`` and ``ffn`` put the block's layer
    norms and feed-forward network; ``finish(prefix)`` makes the last part's
    ``output`` the block's ``output`` (one step, not two)."""

    def __init__(self, inputs: dict[str, np.ndarray], eps: float, given: dict[str, np.ndarray] | None):
        self.inputs, self.eps = inputs, eps
        self.given = given or {}
        self.out: dict[str, np.ndarray] = {}

    def put(self, prefix: str, steps: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        self.out.update({str(StepRef.parse(k).within(prefix)): v for k, v in steps.items()})
        return steps

    def part(self, prefix: str) -> dict[str, np.ndarray]:
        """The given steps of one part, prefix dropped."""
        refs = {k: StepRef.parse(k) for k in self.given}
        return {str(refs[k].local): v for k, v in self.given.items() if refs[k].prefix == prefix}

    def add_norm(self, prefix: str, X: np.ndarray, S: np.ndarray, k: int) -> dict[str, np.ndarray]:
        """LayerNorm(X + S) with the block's ``gamma_k`` and ``beta_k``."""
        return self.put(
            prefix,
            layer_norm.np_steps(
                X, S, self.inputs[f"gamma_{k}"], self.inputs[f"beta_{k}"], self.eps, given=self.part(prefix)
            ),
        )

    def ffn(self, prefix: str, X: np.ndarray) -> dict[str, np.ndarray]:
        """ReLU(X W_1 + b_1) W_2 + b_2 with the block's W_1, b_1, W_2, b_2."""
        return self.put(
            prefix,
            feed_forward.reference(
                {"X": X, **{k: self.inputs[k] for k in feed_forward.INPUTS[1:]}},
                feed_forward.Params(),
                given=self.part(prefix),
            ),
        )

    def finish(self, prefix: str) -> dict[str, np.ndarray]:
        last = self.out.pop(str(StepRef("", "output").within(prefix)))
        self.out["output"] = base.given_or(self.given, "output", lambda: last)
        return self.out


def validate(params, sizes: tuple[tuple[str, int, int], ...]) -> None:
    """A block's sizes ``(flag, value, most)``, each 1 to most, in order; then d_k
    (1 to 16, a square in hand mode) and eps (0 or more)."""
    for flag, value, most in sizes:
        base.positive(flag, value, most)
    if params.d_k is not None:
        base.positive("--d-k", params.d_k, 16)
    base.require_square_d_k(params, params.key_width)
    if params.eps is not None and params.eps < 0:
        raise base.ParamError(f"eps must be 0 or more, not {params.eps}")


def epsilon(eps: Fraction | None, numbers: str, calculator_eps: Fraction) -> Fraction:
    """A block's layer-norm eps: as given, else 0 in hand mode and ``calculator_eps`` otherwise."""
    if eps is not None:
        return Fraction(eps)
    return Fraction(0) if numbers == "hand" else calculator_eps


def head_width(inputs: dict[str, Matrix], heads: int) -> int | None:
    """d_k as W_Q's width over the heads; None when it does not divide (check_inputs says why)."""
    width = shape(inputs["W_Q"])[1]
    return width // heads if width % heads == 0 else None


def round_as_told(places: int) -> str:
    """The intro's sentence on the carried chain."""
    return (
        f"From the first value that is not a decimal of at most {places} places on, round every step to "
        f"{places} decimals and compute the next step from the rounded values."
    )


def dims(name: str, m: Matrix) -> str:
    return f"{name} is {shape(m)[0]} x {shape(m)[1]}"


def check_widths(inputs: dict[str, Matrix], norms: tuple[str, ...], outputs: tuple[str, ...], ffn_after: str) -> None:
    """Every sublayer of a block keeps X's width d: the layer norms' gamma and beta
    (``norms``) are 1 x d, the attention output matrices (``outputs``) have d
    columns, W_1 has d rows (it multiplies the output of ``ffn_after``) and
    W_2 d columns."""
    X = inputs["X"]
    d = shape(X)[1]
    for name in norms:
        if shape(inputs[name]) != (1, d):
            raise ShapeError(
                f"{dims('X', X)} and {dims(name, inputs[name])}: {name} must be 1 x {d}, one entry per feature"
            )
    for name in outputs:
        if shape(inputs[name])[1] != d:
            raise ShapeError(
                f"{dims('X', X)} and {dims(name, inputs[name])}: the attention output "
                f"concat {name} must have {d} columns to be added to X"
            )
    if shape(inputs["W_1"])[0] != d:
        raise ShapeError(
            f"{dims('X', X)} and {dims('W_1', inputs['W_1'])}: W_1 needs {d} rows "
            f"(it multiplies the d_model-wide output of {ffn_after})"
        )
    if shape(inputs["W_2"])[1] != d:
        raise ShapeError(
            f"{dims('X', X)} and {dims('W_2', inputs['W_2'])}: the feed-forward output "
            f"must have {d} columns to be added back (W_2 needs {d} columns)"
        )


class Builder:
    """One block's solve, part by part: ``add`` solves a part with its kind's
    ``solve`` on the inputs ``PARTS`` wires to it, and copies its steps in
    under the part's prefix (:func:`run`, :func:`wire`, :func:`copy`)."""

    def __init__(
        self, p: Problem, carry: blocks.Carry, ref: dict, parts: dict, stages: dict[str, str], drift: dict | None = None
    ):
        self.p, self.carry, self.ref, self.parts, self.stages = p, carry, ref, parts, stages
        self.drift = drift  # the unrounded chain at 60 digits (see copy)

    def add(self, prefix: str, step: str, solve, params, note: str = "", symbols=(), **last) -> None:
        """Part ``prefix`` (``step`` names it in errors) solved with ``params``; ``last``
        as :func:`copy`'s ``last`` and ``last_title``; ``symbols`` rename its matrices."""
        sub = run(step, solve, wire(self.p, self.parts[prefix][1]), params, self.carry)
        copy(self.p, sub, prefix, self.stages[prefix], self.ref, note, symbols=symbols, drift=self.drift, **last)
