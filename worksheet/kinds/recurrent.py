"""What the gated recurrent cells (``lstm-cell``, ``gru-cell``) share: the
exact logistic function, the time-step inputs and names, the gate step with
its worked lines, the carried rounding of the state, the table of σ and
tanh values printed on a hand-mode sheet, and the frame of a kind: drawing
its inputs, recording its reference chain, and setting up and finishing its
problem (each kind keeps its own steps, intro and formulas).

Row convention: x_t (1 x d_in) and h_{t-1} (1 x d_h) are rows, every gate is

    a   = x_t W + h_{t-1} W_h + b      (W: d_in x d_h, W_h: d_h x d_h, b: 1 x d_h)
    gate = σ(a) = 1 / (1 + e^{-a})      or tanh(a)

computed exactly with :mod:`worksheet.exact` (``σ(2)`` is ``1/(1 + exp(-2))``).

Names.  With ``steps`` = T = 1 the steps are plain (``f``, ``c``, ``h``); with
T > 1 each is suffixed with its time step t = 1..T (``f_1``, ..., ``h_1``,
``f_2``, ...), in time order.  The initial states are the inputs ``h0`` (and
``c0``); one time step reads row t of ``X`` (T x d_in), or the one row ``x``.

Carried rounding (the rule a person follows by hand; :mod:`worksheet.policy.pencil`).
In hand mode every gate is used as the table gives it (4 decimals), tanh(c_t)
and the GRU's candidate n_t too; the state -- LSTM c_t and h_t, GRU h_t --
and the GRU's candidate pre-activation x W_n + b_n + r ⊙ (h W_hn + b_hn) are
carried rounded (half away from zero) to ``places`` decimals: 2 by hand, onto
the grid of the standard tables of σ and tanh (:mod:`worksheet.steps.standard_tables`,
every 0.01 in [0, 3], the same for every variant), so that every argument a
student looks up is on the table and the table says nothing about the answers;
4 with a calculator.  From the first rounding on, every step is marked
``rounded``, as in the encoder block.  Each
step's exact value is checked against a float64 recomputation from the
carried values (its own arithmetic, 1e-9); its ``value`` is the unrounded
float64 chain of the kind's ``reference`` (independent numpy, PyTorch's
formulas; the JSON writes as ``value`` the unrounded chain evaluated at 60
digits, as ``exact`` the carried value), which a rounded step must stay within
5 units of the carried last place of (0.05 by hand, 5e-3 with a calculator); a
user's own numbers that drift further are an InputError ("use --numbers calculator").

Hand mode allows at most 3 time steps and d_h <= 4; calculator mode up to 12
steps and d_h <= 8.  A first time step's pre-activations are integers in
[-3, 3] (the short table of σ at the integers when σ is read only there); from
t = 2 on they are 2-decimal numbers in [-3, 3] (h_{t-1} is carried so).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from fractions import Fraction
from typing import Callable, Mapping

import numpy as np

from ..steps import precise
from ..steps import standard_tables as tables
from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ParamError, ShapeError, VerificationError
from ..exact import add, is_rational, tanh
from ..solution.maths import Node, Row
from ..solution.maths.build import line, number, paren, sym
from ..solution.maths.nodes import Named
from ..solution.number_format import decimal
from ..solution.problem import Matrix, Problem, shape, to_array, verify
from ..solution.step_ref import StepRef
from . import base
from . import screen

# the cells use these as rec.<name>: re-exported (F401)
from .gate_lines import (  # noqa: F401
    act_work,
    affine_work,
    num,
    pre_sym,
    prev_h,
    prev_state,
    prev_unit,
    products,
    sub,
    units,
    x_sym,
)

HAND_PLACES = 2  # decimals the state is carried with in hand mode (the table's arguments; the chain's 4)
GATE_PLACES = 4  # decimals of a gate carried after a rounding (the table's values)
CALC_PLACES = 4
HAND_MAX_STEPS = 3  # more time steps by hand: a table of dozens of σ values
HAND_MAX_UNITS = 4  # d_h by hand, for the same reason
HAND_RANGE = 3  # hand mode: every pre-activation in [-3, 3]


# ---------------------------------------------------------------- the functions
sigmoid = tables.sigmoid  # σ(a) = 1 / (1 + e^{-a}), exactly (σ(0) = 1/2)


def np_sigmoid(a: np.ndarray) -> np.ndarray:
    """σ without overflow for large |a| (float64, or high precision: :func:`.precise.sigmoid`)."""
    return precise.sigmoid(a)


@dataclass(frozen=True)
class Act:
    """An activation: exact, float64, and its name (``"sigma"`` or ``"tanh"``, as
    the standard tables name it)."""

    exact: Callable
    np: Callable
    name: str

    @property
    def symbol(self) -> Node:
        """σ (a letter) or tanh (a named operator, set upright)."""
        return sym("sigma") if self.name == "sigma" else Named(self.name)

    def of(self, x) -> Row:
        """The activation applied: ``σ(x)``, ``tanh(x)``."""
        return line(self.symbol, paren(x))


SIGMA = Act(sigmoid, np_sigmoid, "sigma")
TANH = Act(tanh, precise.tanh, "tanh")


# ---------------------------------------------------------------- parameters and inputs
@dataclass(frozen=True)
class Params(base.Params):
    steps: int = 1  # T, the number of time steps (rows of X); hand mode: at most 3
    d_in: int = 2  # width of x_t
    d_h: int = 2  # width of the hidden state (and of every gate)

    def validate(self):
        base.positive("steps", self.steps, 12)
        base.positive("d_in", self.d_in, 8)
        base.positive("d_h", self.d_h, 8)
        if self.numbers == "hand" and self.d_h > HAND_MAX_UNITS:
            raise ParamError(
                f"d_h = {self.d_h}: hand mode allows at most {HAND_MAX_UNITS} hidden units "
                "(the table of σ and tanh values grows with each); use --numbers calculator"
            )
        if self.numbers == "hand" and self.steps > HAND_MAX_STEPS:
            raise ParamError(
                f"steps = {self.steps}: hand mode allows at most {HAND_MAX_STEPS} time steps "
                "(the table of σ and tanh values grows with each); use --numbers calculator"
            )


def name(base_name: str, t: int, T: int) -> str:
    """``f`` when T = 1, else ``f_t`` (a :class:`StepRef` with the time step as its index)."""
    return str(StepRef("", base_name, None if T == 1 else t))


def sequence(inputs: dict[str, Matrix], params: Params) -> tuple[str, Matrix]:
    """The input rows x_1..x_T: ``x`` (one row) or ``X`` (T rows), checked."""
    if "x" in inputs and "X" in inputs:
        raise InputError("give x (one time step) or X (one row per time step), not both", field="X")
    if "x" not in inputs and "X" not in inputs:
        raise InputError("missing matrix 'x' (or 'X' with one row per time step)", field="x")
    key = "x" if "x" in inputs else "X"
    X = inputs[key]
    T = shape(X)[0]
    if key == "x" and T != 1:
        raise ShapeError(f"x has {T} rows but is one time step (1 row); give several time steps as X")
    if T > 12:
        raise ShapeError(f"X has {T} rows: at most 12 time steps")
    if params.steps != 1 and params.steps != T:
        raise ShapeError(f"{key} has {T} rows but steps = {params.steps}: one row per time step")
    return key, X


def require_inputs(inputs: dict[str, Matrix], names: tuple[str, ...], d_in: int, give: str) -> int:
    """Check the weights and states; returns d_h (the width of h0)."""
    for n in names:
        if n not in inputs:
            raise InputError(f"missing matrix '{n}' ({give})", field=n)
    blocks.require_shape("h0", inputs["h0"], 1, None, "the initial hidden state is one row")
    d_h = shape(inputs["h0"])[1]
    for n in names:
        if n.startswith("W_h"):
            blocks.require_shape(n, inputs[n], d_h, d_h, f"it maps h (width {d_h}) to a gate (width {d_h})")
        elif n.startswith("W_"):
            blocks.require_shape(n, inputs[n], d_in, d_h, f"it maps x (width {d_in}) to a gate (width {d_h})")
        elif n.startswith("b_") or n in ("c0",):
            blocks.require_shape(n, inputs[n], 1, d_h, f"one entry per hidden unit (h0 has {d_h})")
    return d_h


def time_labels(T: int) -> tuple[str, ...]:
    return tuple(f"t={t}" for t in range(1, T + 1))


# ---------------------------------------------------------------- generation
def hand_matrix(rng: np.random.Generator, n: int, m: int) -> Matrix:
    """Weights, biases, states: integers in {-1, 0, 1}."""
    return base.int_matrix(rng, n, m, (-1, 0, 1), (0.3, 0.35, 0.35))


def hand_x(rng: np.random.Generator, n: int, m: int) -> Matrix:
    return base.int_matrix(rng, n, m, (-1, 0, 1, 2), (0.25, 0.25, 0.3, 0.2))


def calc_matrix(rng: np.random.Generator, n: int, m: int) -> Matrix:
    return base.decimal_matrix(rng, n, m)


# ---------------------------------------------------------------- exact rows
def affine(x: Matrix, W: Matrix, h: Matrix, W_h: Matrix, b: Matrix) -> Matrix:
    """The exact pre-activation x W + h W_h + b of one time step (one row)."""
    return blocks.entrywise(add, blocks.matmul(x, W), blocks.matmul(h, W_h), b)


def np_affine(x, W, h, W_h, b) -> np.ndarray:
    return x @ W + h @ W_h + b


def apply(act: Act, A: Matrix) -> Matrix:
    return tuple(tuple(act.exact(a) for a in row) for row in A)


def rounded(M: Matrix, places: int) -> Matrix:
    return blocks.round_matrix(M, places)


# ---------------------------------------------------------------- the σ / tanh tables
class Table:
    """Which of σ and tanh a hand-mode problem reads (its arguments collected step by
    step), and the standard tables it then prints: the same for every variant.

    A first time step's pre-activations are integers in [-3, 3] (the generator's
    screen), so a σ read only there gets the short table of σ(-3), ..., σ(3); every
    other argument -- a pre-activation from a state carried to 2 decimals, c_t
    itself, the GRU candidate's carried pre-activation -- is a 2-decimal number in
    [-3, 3], read from the table of every 0.01 (:func:`grid_aid`), with
    σ(-x) = 1 - σ(x) and tanh(-x) = -tanh x.  Nothing in the tables depends on the
    problem's numbers, so they give no answer away.
    """

    def __init__(self):
        self.needed: dict[tuple[str, object], None] = {}

    def need(self, act: Act, A: Matrix) -> None:
        for row in A:
            for a in row:
                self.needed[(act.name, a)] = None

    def add_to(self, p: Problem) -> None:
        for name in ("sigma", "tanh"):
            args = [Fraction(a) for g, a in self.needed if g == name and is_rational(a)]
            if not args:
                continue
            fine = any(a.denominator != 1 for a in args) or name == "tanh" or p.params.get("steps", 1) > 1
            top = max(HAND_RANGE, -int(-max(abs(a) for a in args) // 1))  # a file's larger ones: a longer table
            p.aids.append(tables.grid_aid(name, top) if fine else tables.integer_aid(name, top))


# ---------------------------------------------------------------- the carried chain
class Chain:
    """Adds the steps of a cell, carrying values as :mod:`worksheet.kinds.recurrent` says.

    Each step's exact value is first checked against ``fresh``, its float64
    value recomputed by numpy from the carried values (its own arithmetic).
    A rounding point (``places`` given) rounds it; from the first rounding
    point on, every step is marked ``rounded`` and gates are carried with 4
    decimals (the table's).  ``ref`` -- what the step's ``value`` holds -- is
    the unrounded chain of :func:`reference`, which a rounded step must stay
    within 5e-3 of; for a rounded step that chain at 60 digits (``drift``, when
    given: the same on every machine, so whether a chain drifts too far does
    not depend on numpy's last bit).
    """

    def __init__(
        self,
        p: Problem,
        ref: dict[str, np.ndarray],
        drift: dict | None = None,
        recompute: Callable[[dict], dict] | None = None,
    ):
        self.p, self.ref, self.drift, self.rounding = p, ref, drift or {}, False
        carried = HAND_PLACES if p.params.get("numbers") == "hand" else CALC_PLACES
        self.tolerance = max(5e-3, 5 * 10.0**-carried)  # a state carried to 2 places: within 0.05
        self.given = recompute  # given -> the kind's reference from those carried steps

    def fresh(self, step: str, **earlier: Matrix) -> np.ndarray:
        """The kind's own reference of ``step`` from the carried values of the ``earlier`` steps."""
        return self.given({k: to_array(v) for k, v in earlier.items()})[step]

    def add(
        self, step: str, exact: Matrix, fresh: np.ndarray, *, places: int | None = None, carried: bool = False, **kw
    ) -> Matrix:
        verify(f"{self.p.kind}.{step}", exact, np.atleast_2d(fresh))
        if places is None and not self.rounding and not carried:
            self.p.add_step(step, exact, self.ref[step], **kw)
            return exact
        self.rounding = True
        shown = GATE_PLACES if places is None else places
        R = exact if carried else rounded(exact, shown)
        self.p.add_step(
            step, R, self.drift.get(step, self.ref[step]), rounded=True, places=shown, drift=self.tolerance, **kw
        )
        return R


def gate_step(
    chain: Chain,
    step: str,
    act: Act,
    *,
    letter: str,
    gate: str,
    t: int,
    T: int,
    x_row: Matrix,
    W: Matrix,
    h_row: Matrix,
    W_h: Matrix,
    b: Matrix,
    title: str,
    table: Table | None,
) -> Matrix:
    """Add the step ``act(x_t W + h_{t-1} W_h + b)``; returns its carried row."""
    A = affine(x_row, W, h_row, W_h, b)
    G = apply(act, A)
    if table is not None:
        table.need(act, A)
    work = []
    for j in units(shape(G)[1]):
        work.append(affine_work(gate, t, T, j, x_row[0], W, h_row[0], W_h, b, A[0][j]))
        work.append(act_work(sub(letter, t, T, j), act, A[0][j], G[0][j]))
    fresh = chain.fresh(step, **({name("h", t - 1, T): h_row} if t > 1 else {}))  # h_0: the input
    return chain.add(
        step,
        G,
        fresh,
        title=title,
        formula=_gate_formula(letter, gate, act, t, T),
        work=work,
        latex_name=sub(letter, t, T),
    )


@lru_cache(maxsize=256)
def _gate_formula(letter: str, gate: str, act: Act, t: int, T: int) -> Row:
    """``z_{t} = σ(x_t W_z + h_{t-1} W_{hz} + b_z)`` (made once: the same on every problem,
    so printed once)."""
    inner = line(x_sym(t, T), sym("W", sub=gate), "+", prev_h(t, T), sym("W", sub="h" + gate), "+", sym("b", sub=gate))
    return line(sub(letter, t, T), "=", act.of(inner))


def drift_ok(solve: Callable, inputs: dict[str, Matrix], params: Params) -> bool:
    """Does the chain carried by hand stay within 5e-3 of the unrounded one (generation)?"""
    if params.steps == 1:
        return True
    try:
        solve(inputs, params)
    except InputError:
        return False
    return True


def solved(kind: str, places: int, solve: Callable[[], Problem]) -> Problem:
    """``solve()``, with drift of the carried chain as a clear input error."""
    try:
        return solve()
    except VerificationError as exc:
        where = str(exc).split(":")[0].removeprefix(f"{kind}.")
        raise InputError(
            f"carrying {places} decimals drifts more than 5e-3 from the unrounded values "
            f"(at {where}); use --numbers calculator"
        ) from None


def to_places(x, places: int) -> Row:
    """``≈ 0.89649 → 0.8965``: the value, then as carried (once if they agree)."""
    full, kept = decimal(x), decimal(x, places)
    return line("≈", number(full)) if kept == full else line("≈", number(full), "→", number(kept))


def round_note(places: int, hand: bool) -> str:
    if hand:
        return (
            f"Carried rounded to {places} decimals, as by hand: later steps (and the table of "
            r"$\sigma$ and $\tanh$) use these values."
        )
    return f"Carried rounded to {places} decimals; later steps use these values."


def np_rows(inputs: Mapping[str, np.ndarray]) -> np.ndarray:
    """The float input rows (``x`` or ``X``)."""
    return inputs["x"] if "x" in inputs else inputs["X"]


def to_np(M: Matrix) -> np.ndarray:
    return to_array(M)


def places_of(params: Params) -> int:
    return HAND_PLACES if params.numbers == "hand" else CALC_PLACES


# ---------------------------------------------------------------- what both cells do the same way
def draw_start(rng: np.random.Generator, params: Params, states: tuple[str, ...]) -> tuple[dict[str, Matrix], Callable]:
    """The input rows (``x`` for one time step, else ``X``) and the initial
    ``states`` (1 x d_h each), drawn in that order, and the maker of the weights."""
    if params.numbers == "calculator":
        draw, draw_x = calc_matrix, calc_matrix
    else:
        draw, draw_x = hand_matrix, hand_x
    m = {("x" if params.steps == 1 else "X"): draw_x(rng, params.steps, params.d_in)}
    for s in states:
        m[s] = draw(rng, 1, params.d_h)
    return m, draw


def gate_weights(rng: np.random.Generator, draw: Callable, gates: str, d_in: int, d_h: int) -> dict[str, Matrix]:
    """W_g (d_in x d_h), W_hg (d_h x d_h) and b_g (1 x d_h) of each gate g, drawn in that order."""
    m = {}
    for g in gates:
        m[f"W_{g}"], m[f"W_h{g}"], m[f"b_{g}"] = draw(rng, d_in, d_h), draw(rng, d_h, d_h), draw(rng, 1, d_h)
    return m


def recorder(
    inputs: Mapping[str, np.ndarray], given: Mapping[str, np.ndarray] | None
) -> tuple[np.ndarray, dict[str, np.ndarray], Callable]:
    """(X, out, put) for a kind's ``reference``: the float input rows, and
    ``put(letter, t, fresh)``, which stores the step's value in ``out`` under its
    name and returns it.  A step named in ``given`` takes that value and later
    steps follow from it (``worksheet check``'s error carried forward); any
    other is ``fresh()``."""
    g = given or {}
    X = np_rows(inputs)
    T = X.shape[0]
    out: dict[str, np.ndarray] = {}

    def put(base_name: str, t: int, fresh: Callable[[], np.ndarray]) -> np.ndarray:
        n = name(base_name, t, T)
        out[n] = base.given_or(g, n, fresh)
        return out[n]

    return X, out, put


def solve_cell(
    kind: str,
    inputs: dict[str, Matrix],
    params: Params,
    needed: tuple[str, ...],
    give: str,
    body: Callable[..., Problem],
    seed: int | None,
) -> Problem:
    """Check the inputs (``give`` names what a missing one must be), then
    ``body(inputs, params, seed, key, X, d_h, places)`` with drift as an input error."""
    key, X = sequence(inputs, params)
    d_h = require_inputs(inputs, needed, shape(X)[1], give)
    places = places_of(params)
    return solved(kind, places, lambda: body(inputs, params, seed, key, X, d_h, places))


def start(
    kind: str,
    title: str,
    intro: Callable[[str, int, bool], str],
    inputs: dict[str, Matrix],
    params: Params,
    seed: int | None,
    key: str,
    X: Matrix,
    d_h: int,
    needed: tuple[str, ...],
    latex_names: Mapping[str, Node],
    reference: Callable,
) -> tuple[Problem, Chain, Table | None]:
    """The problem with its inputs, its carried chain and (hand mode) its table.
    ``intro(runs, places, hand)`` writes the task, ``runs`` saying how many time steps."""
    T, d_in = shape(X)
    hand = params.numbers == "hand"
    actual = base.solved_params(params, steps=T, d_in=d_in, d_h=d_h)
    runs = "one time step" if T == 1 else f"{T} time steps (row $t$ of $X$ is $x_t$)"
    p = Problem(kind, title, actual, seed=seed, intro=intro(runs, places_of(params), hand))
    for n in (key,) + needed:
        p.add_input(n, inputs[n], rows=time_labels(T) if n == "X" else None, latex_name=latex_names.get(n))
    drift = screen.precise_floats(kind, params, {n: q.exact for n, q in p.inputs.items()})
    floats = {n: q.value for n, q in p.inputs.items()}
    chain = Chain(p, reference(floats, params), drift, lambda given: reference(floats, params, given=given))
    return p, chain, Table() if hand else None


def titled(title: str, t: int, T: int) -> str:
    """``Forget gate`` (T = 1) or ``Forget gate (t = 2)``."""
    return title + (f" (t = {t})" if T > 1 else "")


def gate_steps(
    chain: Chain, gates, t: int, T: int, x: Matrix, h: Matrix, inputs: dict[str, Matrix], table: Table | None
) -> dict[str, Matrix]:
    """The steps ``act(x_t W_g + h_{t-1} W_hg + b_g)`` of the ``gates`` (letter, act, title) of time step t."""
    G = {}
    for gate, act, title in gates:
        G[gate] = gate_step(
            chain,
            name(gate, t, T),
            act,
            letter=gate,
            gate=gate,
            t=t,
            T=T,
            x_row=x,
            W=inputs[f"W_{gate}"],
            h_row=h,
            W_h=inputs[f"W_h{gate}"],
            b=inputs[f"b_{gate}"],
            title=titled(title, t, T),
            table=table,
        )
    return G


def finish(p: Problem, table: Table | None, places: int, hand: bool) -> Problem:
    """Add the table (hand mode) and the note on carried rounding."""
    if table is not None:
        table.add_to(p)
    p.notes.append(round_note(places, hand))
    return p


# ---------------------------------------------------------------- for the mistakes
def time_of(v) -> int:
    """The time step of a rule's :class:`~worksheet.kinds.mistakes.Values` (``h_2``'s: 2; ``h``'s: 1)."""
    return v.at.index or 1


def before(v, letter: str, t: int, initial: str) -> np.ndarray:
    """The state ``letter`` after time step t - 1 (``h_1``), or the initial one (``h0``)."""
    if t == 1:
        return v[initial]
    return v.data[str(StepRef("", letter, t - 1))]


def np_pre(v, gate: str, h: np.ndarray | None = None) -> np.ndarray:
    """x_t W_gate + h_{t-1} W_hgate + b_gate from a rule's :class:`~worksheet.kinds.mistakes.Values`."""
    t = time_of(v)
    x = v.data["x"] if "x" in v.data else v.data["X"][t - 1 : t]
    h = before(v, "h", t, "h0") if h is None else h
    return x @ v.data[f"W_{gate}"] + h @ v.data[f"W_h{gate}"] + v.data[f"b_{gate}"]


def gate_with(act: str, gate: str):
    """A rule: the gate's pre-activation through ``act`` ("tanh" or "sigma"),
    the wrong one of the two (``tanh-for-sigmoid`` in the LSTM and the GRU)."""

    def rule(v, params):
        a = np_pre(v, gate)
        return precise.tanh(a) if act == "tanh" else np_sigmoid(a)

    return rule
