"""Sinusoidal positional encoding (Vaswani et al. 2017, section 3.5).

For a position ``pos`` and the pair index ``i = 0, 1, ...`` (columns 2i and 2i+1,
0-based):

    angle(pos, i) = pos / base^(2i / d_model)            # base = 10000 by default
    PE(pos, 2i)   = sin(angle(pos, i))
    PE(pos, 2i+1) = cos(angle(pos, i))
    X_plus_PE     = X + PE                               # only when X is given

An odd ``d_model`` is allowed: the last column (2i = d_model - 1) is a sine
with no cosine partner.

Steps: ``angles`` (n x ceil(d_model / 2): one angle per position and *pair*,
so the sheet shows that i counts pairs, not columns), ``PE`` (n x d_model),
``X_plus_PE`` (when ``X`` is given).  Exact values are sin and cos of exact
arguments (``sin(1/10000**(2/5))``); decimals are shown to 4 places.

Rows are the positions (``positions``, default 0 .. n-1).  When ``X`` is
given its rows are the tokens at those positions and ``d_model`` is its width.

``build`` always gives an ``X`` (hand mode: integers in [-2, 2]; calculator
mode: one-decimal entries in [-1, 1]), so adding the encoding to the
embeddings is practised too; ``solve`` without ``X`` computes only ``angles``
and ``PE``.  Hand mode keeps the default d_model = 4: with base 10000 the
divisors base^(2i/d_model) are then 1 and 100, so every angle is a rational
number (also for d_model = 2 and 8); a table of the sines and cosines needed
is printed on the sheet, so the exercise is finding the right angle and the
right function, not evaluating sin (the table is printed when at most 20
distinct non-zero angles are needed).  Other widths are allowed in both modes
(the angles then hold roots such as 10000^(2/5)).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from fractions import Fraction

import numpy as np

from . import mistakes
from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ShapeError
from ..exact import add, cos, is_rational, mul, power, sin
from ..solution.maths import Node
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.problem import Aid, MathLabel, Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from . import base
from . import shared_conventions as cv

TITLE = "Sinusoidal positional encoding"
CONVENTIONS = (cv.PE, cv.EXACT)
INPUTS = ("X",)
TRIG_AID = "Values of $\\sin$ and $\\cos$ you may need"
AID_LIMIT = 20  # at most this many distinct non-zero angles get a table of sin and cos
THETA, PE_SYM, POS, PAIR = m.sym("theta"), m.sym("PE"), m.sym("pos"), m.sym("i")  # θ, PE, pos, the pair index i
D_MODEL = m.sym("d", sub=m.sym("model"))
X_PLUS_PE = line(m.sym("X"), "+", PE_SYM)


def trig(fn: str, angle) -> Node:
    """``sin(angle)`` (``fn``: sin or cos) as its exact value prints, ``\\sin\\left(\\frac{1}{100}\\right)``;
    a rational angle is a fraction node, so that the brackets grow around it in every format."""
    q = Fraction(angle) if is_rational(angle) else None
    arg = m.frac(q.numerator, q.denominator) if q is not None and q.denominator > 1 else m.atom(angle)
    return line(m.named(fn), m.fenced(arg))


def _pe_value(PE: Matrix, angles, r: int, j: int) -> Node:
    """Entry (r, j) of PE: sin or cos of its angle, or the number it is (sin 0 = 0, cos 0 = 1)."""
    x = PE[r][j]
    return m.atom(x) if is_rational(x) else trig("sin" if j % 2 == 0 else "cos", angles[r][j // 2])


def _exact_or_approx(x, shown: Node | None = None) -> Node:
    """``= x`` exactly (``shown``: as that node), then ``≈`` 4 decimals when x is not rational."""
    exact = line("=", m.atom(x) if shown is None else shown)
    return exact if is_rational(x) else line(exact, "≈", lines.approx_number(x))


@dataclass(frozen=True)
class Params(base.Params):
    carries = True  # solve takes carry= (see base.Params.carries)
    seq_len: int | None = None  # n, the number of positions; None: len(positions), else 3
    d_model: int | None = None  # width of the encoding; None: the width of X, else 4
    positions: tuple[int, ...] | None = None  # the positions encoded; None: 0 .. n-1
    base: int = 10000  # the base of the wavelengths (the paper: 10000)
    tokens: tuple[str, ...] | None = None  # labels of the rows of X; default: a lecture sentence

    def validate(self):
        if self.seq_len is not None:
            base.positive("--seq-len", self.seq_len, 32)
        if self.d_model is not None:
            base.positive("--d-model", self.d_model, 64)
        if self.base < 2:
            raise base.ParamError(f"base must be at least 2, not {self.base}")
        if self.positions is not None:
            if not self.positions or len(self.positions) > 32:
                raise base.ParamError("positions must list between 1 and 32 positions")
            if any(q < 0 or q > 100000 for q in self.positions):
                raise base.ParamError("positions must be whole numbers from 0 to 100000")
            if self.seq_len is not None and self.seq_len != len(self.positions):
                raise base.ParamError(f"{len(self.positions)} positions given but --seq-len is {self.seq_len}")

    @property
    def n(self) -> int:
        if self.positions is not None:
            return len(self.positions)
        return self.seq_len if self.seq_len is not None else 3

    @property
    def width(self) -> int:
        return self.d_model if self.d_model is not None else 4


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d = params.n, params.width
    if params.numbers == "calculator":
        return {"X": base.decimal_matrix(rng, n, d)}

    def make():
        return {"X": base.int_matrix(rng, n, d, (-2, -1, 0, 1, 2), (0.1, 0.25, 0.3, 0.25, 0.1))}

    def ok(m):
        X = to_array(m["X"])
        return np.abs(X).sum(axis=1).min() > 0 and np.count_nonzero(X) >= X.size // 2

    return base.retry("positional-encoding", make, ok, f"seq_len={n}, d_model={d}")


def pairs(d_model: int) -> int:
    """The number of (sin, cos) pairs, the last one without cos when d_model is odd."""
    return (d_model + 1) // 2


def divisor(base_: int, i: int, d_model: int):
    """``base^(2i/d_model)`` exactly (a rational power of an integer)."""
    return power(base_, Fraction(2 * i, d_model))


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against
    (:func:`np_steps`; the sizes as ``solve`` takes them: from X when given,
    else from the parameters; the positions 0 .. n-1 unless given).

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    X = inputs.get("X")
    n, d = X.shape if X is not None else (params.n, params.width)
    positions = params.positions if params.positions is not None else range(n)
    return np_steps(positions, d, params.base, X, given=given)


def np_steps(
    positions, d_model: int, base_: int, X: np.ndarray | None = None, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The float64 steps ``angles``, ``PE`` and (with X) ``X_plus_PE`` for the
    given positions, width and base (the encoder block calls it too)."""
    g = given or {}
    pos = precise.array(list(positions)).reshape(-1, 1)
    i = precise.arange(pairs(d_model))
    angles = base.given_or(g, "angles", lambda: pos / precise.power(precise.number(base_), 2 * i / d_model))
    PE = base.given_or(g, "PE", lambda: _np_encoding(angles, len(pos), d_model))
    out = {"angles": angles, "PE": PE}
    if X is not None:
        out["X_plus_PE"] = base.given_or(g, "X_plus_PE", lambda: X + PE)
    return out


def _np_encoding(angles: np.ndarray, n: int, d_model: int) -> np.ndarray:
    """sin of the angles in the even columns, cos in the odd ones."""
    PE = precise.empty((n, d_model), angles)
    PE[:, 0::2] = precise.sin(angles)
    PE[:, 1::2] = precise.cos(angles[:, : d_model // 2])
    return PE


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(  # noqa: PLR0915
    inputs: dict[str, Matrix], params: Params, *, seed: int | None = None, carry: blocks.Carry | None = None
) -> Problem:
    extra = sorted(set(inputs) - set(INPUTS))
    if extra:
        raise InputError(f"positional-encoding reads only X, not {', '.join(extra)}", field=extra[0])
    X = inputs.get("X")
    if X is not None:
        n, d = shape(X)
        if params.d_model is not None and params.d_model != d:
            raise ShapeError(
                f"X is {n} x {d} but d_model = {params.d_model}: the encoding must have the width of the embeddings"
            )
        if params.positions is not None and len(params.positions) != n:
            raise ShapeError(f"X is {n} x {d} (n = {n} tokens) but {len(params.positions)} positions are given")
        if params.seq_len is not None and params.seq_len != n:
            raise ShapeError(f"X is {n} x {d} but seq_len = {params.seq_len}")
    else:
        n, d = params.n, params.width
    positions = tuple(params.positions) if params.positions is not None else tuple(range(n))
    tokens = (base.row_labels(params.tokens, n)) if X is not None else None
    rows = (
        tuple(f"{t} (pos {q})" for t, q in zip(tokens, positions)) if tokens else tuple(f"pos {q}" for q in positions)
    )
    b = params.base
    actual = base.solved_params(params, seq_len=n, d_model=d, positions=positions)
    if tokens:
        actual["tokens"] = list(tokens)
    p = Problem(
        "positional-encoding",
        TITLE,
        actual,
        seed=seed,
        intro=(
            f"Compute the sinusoidal positional encoding with $d_\\mathrm{{model}} = {d}$ and base "
            f"${b}$ for the positions {', '.join(map(str, positions))}"
            + (f" and add it to the embeddings $X$ of the tokens {', '.join(tokens)}." if X is not None else ".")
            + " Angles are in radians; $i$ counts the (sin, cos) pairs of columns."
        ),
    )
    # one indexing on the whole sheet: rows by position, columns from 0 (as PE_{pos,2i})
    col_index = tuple(str(jj) for jj in range(d))
    if X is not None:
        p.add_input("X", X, rows=rows, cols=col_index)
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)
    floats = {k: q.value for k, q in p.inputs.items()}  # the carried inputs, as the steps read them

    def carried(name: str, **earlier):  # reference's value, from the carried values once carry rounds
        return base.carried_step(carry, reference, floats, params, name, ref, **earlier)

    # 1) angles: one per position and pair
    k = pairs(d)
    divs = [divisor(b, i, d) for i in range(k)]
    angles = tuple(tuple(mul(q, power(dv, -1)) for dv in divs) for q in positions)
    r = 1 if n > 1 else 0
    i = 1 if k > 1 else 0
    exponent = m.power(b, line(2, "⋅", i, "/", d))  # base^{2 i / d_model}, with the numbers
    work = [
        line(
            exponent,
            "=",
            line(m.power(b, m.atom(Fraction(2 * i, d))), "=", m.atom(divs[i]))
            if is_rational(divs[i])
            else line(m.atom(divs[i]), "≈", lines.approx_number(divs[i])),
        ),
        line(
            m.sym(THETA, sub=m.pair(positions[r], i)),
            "=",
            m.frac(positions[r], exponent),
            _exact_or_approx(angles[r][i]),
        ),
    ]
    p.add_step(
        "angles",
        angles,
        ref["angles"],
        title="Angles (one per position and pair of columns)",
        formula=line(
            m.sym(THETA, sub=m.pair(POS, PAIR)),
            "=",
            m.frac(POS, m.power(b, line(2, PAIR, "/", D_MODEL))),
            ",",
            m.quad(),
            PAIR,
            "=",
            _range(k),
        ),
        work=work,
        rows=rows,
        cols=tuple(MathLabel(f"i = {i}") for i in range(k)),
        latex_name=m.sym("Theta"),
        note=(
            r"$i$ is the pair index: columns $2i$ and $2i+1$ share the angle, so the exponent is "
            r"$2i/d_\mathrm{model}$ with $i$ the pair, not the column."
            + (" $d_\\mathrm{model}$ is odd, so the last pair has only its sine column." if d % 2 else "")
        ),
    )
    angles = carry.after(p) if carry is not None else angles

    # 2) PE: sin on even columns, cos on odd columns
    PE = tuple(tuple(sin(row[j // 2]) if j % 2 == 0 else cos(row[j // 2]) for j in range(d)) for row in angles)
    j = 2 if d > 2 else 0
    work = []
    for jj in sorted({j, j + 1} & set(range(d))):
        fn = "sin" if jj % 2 == 0 else "cos"
        work.append(
            line(
                m.sym(PE_SYM, sub=m.pair(positions[r], jj)),
                "=",
                m.call(fn, m.sym(THETA, sub=m.pair(positions[r], jj // 2))),
                _exact_or_approx(PE[r][jj], _pe_value(PE, angles, r, jj)),
            )
        )
    p.add_step(
        "PE",
        PE,
        carried("PE", angles=angles),
        title="Positional encoding",
        work=work,
        rows=rows,
        formula=line(
            m.sym(PE_SYM, sub=m.pair(POS, line(2, PAIR))),
            "=",
            m.named("sin"),
            m.sym(THETA, sub=m.pair(POS, PAIR)),
            ",",
            m.quad(),
            m.sym(PE_SYM, sub=m.pair(POS, line(2, PAIR, "+", 1))),
            "=",
            m.named("cos"),
            m.sym(THETA, sub=m.pair(POS, PAIR)),
        ),
        cols=tuple(f"{jj} {'sin' if jj % 2 == 0 else 'cos'}" for jj in range(d)),
        latex_name=PE_SYM,
        note="Even columns (0, 2, ...) take the sine, odd columns the cosine; radians, not degrees.",
    )
    PE = carry.after(p) if carry is not None else PE
    _trig_aid(p, d, params.numbers)

    # 3) X + PE
    if X is not None:
        E = blocks.entrywise(add, X, PE)
        # a representative entry: an irrational PE value added to a non-zero x, if any
        cands = [(rr, jj) for rr in range(n) for jj in range(d) if not is_rational(PE[rr][jj])]
        rr, jj = next((c for c in cands if X[c[0]][c[1]] != 0), cands[0] if cands else (0, 0))
        sx = lines.work_term(X[rr][jj])[0]
        sp = lines.work_term(PE[rr][jj])[0] if is_rational(PE[rr][jj]) else _pe_value(PE, angles, rr, jj)
        at = m.pair(positions[rr], jj)
        work = [
            line(
                m.indexed(X_PLUS_PE, at),
                "=",
                m.sym("x", sub=at),
                "+",
                m.sym(PE_SYM, sub=at),
                "=",
                sx,
                "+",
                sp,
                lines.work_result(E[rr][jj]),
            )
        ]
        p.add_step(
            "X_plus_PE",
            E,
            carried("X_plus_PE", PE=PE),
            title="Embeddings plus positional encoding",
            formula=X_PLUS_PE,
            work=work,
            rows=rows,
            cols=col_index,
            latex_name=X_PLUS_PE,
            note="Entry by entry: row = token at position pos, column index j from 0 as in PE.",
        )
        if carry is not None:
            carry.after(p)
    return p


def _trig_aid(p: Problem, d: int, numbers: str, limit: int = AID_LIMIT, *, flawed: bool = False) -> None:
    """In hand mode, a table of the sines and cosines the PE step needs (non-trivial ones).
    It depends only on the positions, d_model and the base: the same in every variant,
    and its arguments are the angles that d_model and the positions fix.

    ``flawed`` (a find-the-mistake sheet): beside each right angle, the angle a student
    gets with the exponent 4i/d_model (the column index for the pair index,
    ``pe-index-not-halved``), whatever the planted mistake.  The flawed angles of step (1)
    can then be followed from the sheet, and the table does not single out the right
    angles that the corrections ask for."""
    if numbers != "hand" or not blocks.aids_allowed(p):
        return
    base_ = int(p.params.get("base") or 10000)
    entries = _trig_entries(tuple(q for q in p.params["positions"] if q != 0), d, base_, limit, flawed)
    if entries is not None:
        p.aids.append(Aid(TRIG_AID, entries))


@lru_cache(maxsize=256)
def _trig_entries(positions: tuple, d: int, base_: int, limit: int, flawed: bool) -> tuple | None:
    """The rows of :func:`_trig_aid`'s table (None: no table), kept by what they depend on:
    the positions, d_model, the base (and ``flawed``), the same in every variant."""
    k = pairs(d)
    needed = {(mul(q, power(divisor(base_, i, d), -1)), 2 * i + 1 < d) for q in positions for i in range(k)}
    if not needed or len(needed) > limit:
        return None
    listed = []  # (angle, with its cosine): by position, the right angle of each pair (then the other)
    for q in positions:
        for i in range(k):
            for dv in (divisor(base_, i, d), divisor(base_, 2 * i, d))[: 2 if flawed else 1]:
                a = (mul(q, power(dv, -1)), 2 * i + 1 < d)
                if a not in listed:
                    listed.append(a)
    entries = []
    for a, with_cos in listed:
        for fn, f in (("sin", sin), ("cos", cos))[: 2 if with_cos else 1]:
            # an Aid holds LaTeX (the sheet's function list reads it): the tree, printed
            entry = (str(trig(fn, a)), str(lines.approx_number(f(a))))
            if entry not in entries:
                entries.append(entry)
    return tuple(entries)


def find_the_mistake_aids(right: Problem) -> list[Aid]:
    """The tables of a find-the-mistake sheet of this problem: sin and cos also at the
    angles of ``pe-index-not-halved`` (:func:`_trig_aid`)."""
    q = Problem(right.kind, right.title, right.params)
    _trig_aid(q, int(right.params["d_model"]), right.params.get("numbers", "hand"), flawed=True)
    return [a for a in right.aids if a.title != TRIG_AID] + q.aids


# ---------------------------------------------------------------- mistakes
# angles (n x pairs): pos / base^(2i/d_model); PE: sin on even columns, cos on odd.
def _positions(v: mistakes.Values) -> np.ndarray:
    return v["angles"][:, :1]  # pair 0 has divisor base^0 = 1: the positions themselves


def _pe_width(v: mistakes.Values, params) -> int:
    return v["PE"].shape[1] if "PE" in v else int(params["d_model"])


def _pe_base(params) -> float:
    return precise.number(int(params.get("base") or 10000))


def _sin_cos(angle_of_column: np.ndarray) -> np.ndarray:
    """PE from one angle per column: sin on even columns, cos on odd ones."""
    out = np.empty_like(angle_of_column)
    out[:, 0::2] = precise.sin(angle_of_column[:, 0::2])
    out[:, 1::2] = precise.cos(angle_of_column[:, 1::2])
    return out


@mistakes.register(("positional-encoding",), "PE", "pe-sin-cos-swapped")
def _pe_swapped(v, params):
    A, d = v["angles"], _pe_width(v, params)
    out = precise.empty((A.shape[0], d), A)
    out[:, 0::2] = precise.cos(A)
    out[:, 1::2] = precise.sin(A[:, : d // 2])
    return out


def _pe_column_exponent(scale: float):
    """PE whose angle for column j uses exponent scale * j / d_model (j the column index)."""

    def rule(v, params):
        d = _pe_width(v, params)
        if not _angles_right(v, params, d):
            return None  # the angles already carry the mistake: PE follows from them, as printed
        j = precise.arange(d)
        return _sin_cos(_positions(v) / precise.power(_pe_base(params), precise.number(scale) * j / d))

    return rule


def _range(k: int) -> Node:
    """``0, 1`` for k = 2 (not "0, ..., 1"), ``0, …, 7`` for k = 8."""
    return m.join(range(k) if k <= 3 else (0, m.sym("…"), k - 1), ",")


def _angles_right(v: mistakes.Values, params, d: int) -> bool:
    """Are the angles so far the right ones, pos / base^(2i/d_model)?  When the
    mistake was made in the angles step, a later PE is computed from the angles
    shown (sin and cos of step (1)), not from another set of angles."""
    A = v["angles"]
    i = precise.arange(A.shape[1])
    right = _positions(v) / precise.power(_pe_base(params), 2 * i / d)
    return bool(np.all(np.abs(precise.to_float64(A) - precise.to_float64(right)) < 1e-9))


mistakes.register("positional-encoding", "PE", "pe-index-not-halved")(_pe_column_exponent(2.0))
mistakes.register("positional-encoding", "PE", "pe-index-not-halved")(_pe_column_exponent(1.0))


@mistakes.register("positional-encoding", "angles", "pe-index-not-halved")
def _angles_by_column(v, params):
    i = precise.arange(v["angles"].shape[1])  # pair i has the sine column 2i
    d = _pe_width(v, params)
    return _positions(v) / precise.power(_pe_base(params), 2 * (2 * i) / d)
