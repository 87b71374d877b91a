"""Add & Norm: residual connection and layer normalisation (Ba et al. 2016), row vectors.

Each token (row) is normalised across its d features, with the population
variance (divide by d, not d - 1):

    residual  R = X + S                                  # only when S (a sublayer output) is given;
                                                         # printed R = X + F (S is the scores elsewhere)
    mean      mu_i      = (1/d) sum_j r_ij               # (n, 1): one per token
    variance  sigma^2_i = (1/d) sum_j (r_ij - mu_i)^2    # (n, 1): one per token
    normalized  xhat_ij = (r_ij - mu_i) / sqrt(sigma^2_i + eps)
    output      y_ij    = gamma_j xhat_ij + beta_j       # gamma, beta: 1 x d

Without ``S`` the rows of X are normalised directly (R = X, no ``residual``
step).  ``mean`` and ``variance`` are n x 1 column matrices, one entry per
token, as the sheet says.

``eps`` (a Fraction; ``layer-norm:eps=1/10`` on the command line) defaults to
0 in hand mode and to 1/100000 (1e-5, PyTorch's default) in calculator mode;
``solve`` takes a user's numbers in calculator mode, so its default is 1e-5
unless the file says ``eps = 0``.  The intro on the sheet states the value used.

Hand mode (eps = 0): every row of R = X + S is drawn with an integer mean and a
variance that is the square of a rational (in practice a perfect square such
as 1, 4 or 9), so sqrt(sigma^2) and every normalised entry are rational.  Rows
are drawn as mean + deviations in [-3, 3] summing to 0; the first row (each other one with
probability 1/2) has deviations in [-5, 5] not all of one size, normalising to fractions (d = 4:
(-5, 1, 1, 3)/3) where the width allows (not d = 2, where x-hat is always +-1);
widths with no such row at all (d = 1, and d = 3, where 2(a^2 + ab + b^2) = 3k^2
has no solution) end, after bounded retries, in a GenerationError naming the
kind and the width.  S has entries in [-2, 2] and X = R - S stays within
[-5, 5]; gamma is drawn from {-1, 1, 2} and beta from {-1, 0, 1}.
Calculator mode: X and S one-decimal in [-1, 1], gamma = 1 + [-0.5, 0.5],
beta in [-0.5, 0.5], each row of R with variance at least 0.01.

``solve`` also takes ``carry`` (a :class:`worksheet.steps.scaled_dot_product.Carry`): the encoder
block passes one so that long exact values are carried rounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import mistakes
from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..steps import standard_tables as tables
from ..policy.errors import GenerationError, InputError, ShapeError
from ..exact import add, is_rational, mul, power, sqrt
from ..solution.maths import Node
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.maths.nodes import Num, Op, Script, Value
from ..solution.number_format import decimal, given, terminating_places
from ..solution.problem import Aid, Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from . import base
from . import shared_conventions as cv

TITLE = "Add & Norm (layer normalisation)"
CONVENTIONS = (cv.TOKEN_ROWS, cv.LAYER_NORM, cv.EXACT)
# printed symbols: the sublayer output (input S) is F, as in LayerNorm(X + F(X)); S is the
# attention scores on every sheet, so it is not used here (R: residual, Y: output)
SYMBOLS = {"S": m.sym("F")}
MU = m.sym("mu")  # the column of means
SIGMA2 = m.sym("sigma", sup=2)  # the column of variances
X_HAT = m.hat(m.sym("x"))  # the entry letter of the normalised values
INPUTS = ("X", "S", "gamma", "beta")
CALCULATOR_EPS = Fraction(1, 100000)


@dataclass(frozen=True)
class Params(base.Params):
    carries = True  # solve takes carry= (see base.Params.carries)
    seq_len: int = 2  # n, the number of tokens (rows)
    d_model: int = 4  # d, the number of features normalised in each row
    eps: Fraction | None = None  # added to the variance; None: 0 in hand mode, 1/100000 in calculator mode
    residual: bool = True  # build: also give a sublayer output S and practise X + S (solve: S given or not)
    tokens: tuple[str, ...] | None = None  # row labels; default: a lecture sentence of seq_len words

    def validate(self):
        base.positive("--seq-len", self.seq_len, 12)
        base.positive("--d-model", self.d_model, 16)
        if self.eps is not None and self.eps < 0:
            raise base.ParamError(f"eps must be 0 or more, not {self.eps}")

    @property
    def epsilon(self) -> Fraction:
        if self.eps is not None:
            return Fraction(self.eps)
        return Fraction(0) if self.numbers == "hand" else CALCULATOR_EPS


# ---------------------------------------------------------------- generating


def _square_ratio(s: int, d: int) -> bool:
    """Is s / d (d > 0) the square of a rational number?  (Both of its lowest terms are
    squares; in integers, without a Fraction: the draw tries this a hundred times a row.)"""
    g = math.gcd(s, d)
    return base.is_square(s // g) and base.is_square(d // g)


def _pleasant_row(rng: np.random.Generator, d: int, fractional: bool = False) -> Matrix | None:
    """One row with an integer mean and a variance that is a rational square (> 0).
    ``fractional``: deviations in [-5, 5] not all of one size and entries in [-5, 5], so the
    row normalises to fractions (d = 4: (-5, 1, 1, 3)/3); None when the width has none."""
    spread = 5 if fractional else 3
    if fractional and d < 4:  # d = 2, 3: no such row (two deviations are always +-sigma)
        return None

    def make():
        dev = rng.integers(-spread, spread + 1, size=d - 1).tolist() if d > 1 else []  # Python ints
        return int(rng.integers(-2, 3)), dev + [-sum(dev)]

    def ok(c):
        mean, dev = c
        s = sum(x * x for x in dev)
        if not (abs(dev[-1]) <= spread and s > 0 and _square_ratio(s, d)):
            return False
        return not fractional or (len({abs(x) for x in dev}) > 1 and max(abs(mean + x) for x in dev) <= 5)

    why = (
        f"no row of width d_model = {d} with an integer mean and a perfect-square variance "
        f"(there is none for d_model = 1 or 3)"
    )
    try:
        mean, dev = base.retry("layer-norm", make, ok, why)
    except GenerationError:
        if not fractional:
            raise
        return None
    return tuple(Fraction(mean + x) for x in dev)


def _rows(rng: np.random.Generator, n: int, d: int) -> Matrix:
    """The rows of R = X + S: the first (where the sheet works an entry) normalises to
    fractions when the width allows, each other one with probability 1/2."""
    rows = [_pleasant_row(rng, d, fractional=True) if i == 0 or rng.random() < 0.5 else None for i in range(n)]
    return tuple(row if row is not None else _pleasant_row(rng, d) for row in rows)


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d = params.seq_len, params.d_model
    if params.numbers == "calculator":

        def make():
            out = {"X": base.decimal_matrix(rng, n, d)}
            if params.residual:
                out["S"] = base.decimal_matrix(rng, n, d)
            out["gamma"] = tuple(tuple(1 + x for x in row) for row in base.decimal_matrix(rng, 1, d, -5, 5))
            out["beta"] = base.decimal_matrix(rng, 1, d, -5, 5)
            return out

        def ok(m):
            R = to_array(m["X"]) + (to_array(m["S"]) if "S" in m else 0)
            return R.var(axis=1).min() >= 0.01

        return base.retry("layer-norm", make, ok, f"seq_len={n}, d_model={d} with non-constant rows")
    R = _rows(rng, n, d)

    def make():
        out = {
            "gamma": base.int_matrix(rng, 1, d, (-1, 1, 2), (0.15, 0.6, 0.25)),
            "beta": base.int_matrix(rng, 1, d, (-1, 0, 1), (0.3, 0.4, 0.3)),
        }
        if params.residual:
            S = base.int_matrix(rng, n, d, (-2, -1, 0, 1, 2), (0.15, 0.2, 0.3, 0.2, 0.15))
            out["X"] = blocks.entrywise(lambda r, s: r - s, R, S)
            out["S"] = S
        else:
            out["X"] = R
        return {k: out[k] for k in INPUTS if k in out}

    def ok(m):
        X = to_array(m["X"])
        return np.abs(X).max() <= 5 and np.count_nonzero(to_array(m["beta"])) > 0

    return base.retry("layer-norm", make, ok, f"seq_len={n}, d_model={d} with X in [-5, 5]")


# ---------------------------------------------------------------- float64 check


def np_mean(R: np.ndarray) -> np.ndarray:
    return R.mean(axis=1, keepdims=True)


def np_variance(R: np.ndarray, mean: np.ndarray) -> np.ndarray:
    return ((R - mean) ** 2).mean(axis=1, keepdims=True)


SQRT_AID = r"Values of $\sqrt{x}$ you may need"


def add_sqrt_aid(p: Problem, args, places: int) -> None:
    """Hand mode: the table of square roots a carried layer norm divides by (rounded to
    ``places``, as the chain uses them), each beside a distractor 0.1 to 0.3 away, so
    the table does not say what the variance is; one per problem (blocks add to it)."""
    if not blocks.aids_allowed(p):
        return
    xs = {Fraction(a) for a in args if is_rational(a) and not is_rational(sqrt(a))}
    if not xs:
        return
    for a in list(xs):
        step = Fraction(1 + int(a * 10**4) % 3, 10)  # 0.1, 0.2 or 0.3, from the value's digits
        xs.add(a + step if int(a * 10**4) % 2 or a - step <= 0 else a - step)
    old = next((aid for aid in p.aids if aid.title == SQRT_AID), None)
    if old is not None:
        xs.update(old.values)
        p.aids.remove(old)
    vals = sorted(xs)
    # one table, one number of places: 2.6530 beside 6.8838, not 2.653 (a carried value's 0)
    p.aids.append(
        Aid(
            SQRT_AID,
            tuple(
                (  # an Aid holds LaTeX (the sheet's function list reads it): the tree, printed
                    str(m.sqrt(lines.work_term(x, places=places)[0])),
                    decimal(blocks.round_exact(sqrt(x), places), places),
                )
                for x in vals
            ),
            tuple(vals),
        )
    )


def np_normalized(R: np.ndarray, mean: np.ndarray, var: np.ndarray, eps: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant row with eps = 0: caught by solve
        return (R - mean) / precise.sqrt(var + eps)


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against
    (:func:`np_steps` of the inputs X, S when given, gamma and beta, with
    ``params.epsilon``).

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    return np_steps(
        inputs["X"], inputs.get("S"), inputs["gamma"], inputs["beta"], precise.number(params.epsilon), given=given
    )


def np_steps(
    X: np.ndarray,
    S: np.ndarray | None,
    gamma: np.ndarray,
    beta: np.ndarray,
    eps: float,
    *,
    given: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The float64 steps of one (Add &) Norm of X (+ S): ``residual`` (with S),
    ``mean``, ``variance``, ``normalized``, ``output``; the block kinds call it
    for each of their Add & Norms."""
    g = given or {}
    out = {}
    R = X if S is None else X + S
    if S is not None:
        out["residual"] = R = base.given_or(g, "residual", lambda: R)
    out["mean"] = mean = base.given_or(g, "mean", lambda: np_mean(R))
    out["variance"] = var = base.given_or(g, "variance", lambda: np_variance(R, mean))
    out["normalized"] = N = base.given_or(g, "normalized", lambda: np_normalized(R, mean, var, eps))
    out["output"] = base.given_or(g, "output", lambda: gamma * N + beta)
    return out


# ---------------------------------------------------------------- solving


def check_inputs(inputs: dict[str, Matrix]) -> None:
    base.require_inputs(inputs, ("X", "gamma", "beta"), "give X, gamma and beta, and S for Add & Norm")
    n, d = shape(inputs["X"])
    if "S" in inputs and shape(inputs["S"]) != (n, d):
        raise ShapeError(
            f"X is {n} x {d} and S is {shape(inputs['S'])[0]} x {shape(inputs['S'])[1]}: X + S needs the same shape"
        )
    for name in ("gamma", "beta"):
        r, c = shape(inputs[name])
        if (r, c) != (1, d):
            raise ShapeError(f"X is {n} x {d} and {name} is {r} x {c}: {name} must be 1 x {d} (one entry per feature)")


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(  # noqa: PLR0915
    inputs: dict[str, Matrix], params: Params, *, seed: int | None = None, carry: blocks.Carry | None = None
) -> Problem:
    check_inputs(inputs)
    X, S, gamma, beta = inputs["X"], inputs.get("S"), inputs["gamma"], inputs["beta"]
    n, d = shape(X)
    eps = params.epsilon
    tokens = base.row_labels(params.tokens, n)
    actual = base.solved_params(params, seq_len=n, d_model=d, eps=eps, residual=S is not None, tokens=tokens)
    eps_text = f"$\\varepsilon = {given(eps)}$"
    p = Problem(
        "layer-norm",
        TITLE,
        actual,
        seed=seed,
        intro=(
            ("Add the sublayer output $F$ to $X$ (residual connection), then l" if S is not None else "L")
            + f"ayer-normalise each token (row) over its ${d}$ features with {eps_text} "
            "and the population variance (divide by $d$), then scale by $\\gamma$ and shift "
            "by $\\beta$. The mean and the variance are one number per token: "
            f"${n} \\times 1$ columns."
        ),
    )
    for name in INPUTS:
        if name in inputs:
            p.add_input(name, inputs[name], rows=tokens if name in ("X", "S") else None, latex_name=SYMBOLS.get(name))
    arr = {k: q.value for k, q in p.inputs.items()}
    ref = reference(arr, params)
    A = to_array
    floats = {k: A(inputs[k]) for k in INPUTS if k in inputs}  # the carried inputs, as the steps read them

    def carried_value(name: str, **earlier):  # reference's value, from the carried values once carry rounds
        return base.carried_step(carry, reference, floats, params, name, ref, **earlier)

    def after(mat: Matrix) -> Matrix:
        return carry.after(p) if carry is not None else mat

    # 1) residual
    if S is not None:
        blocks.sum_step(
            p,
            "residual",
            X,
            S,
            carried_value("residual"),
            title="Residual connection",
            formula=line(m.sym("R"), "=", m.sym("X"), "+", SYMBOLS["S"]),
            sym=m.sym("r"),
            a_sym=m.sym("x"),
            b_sym=m.sym("f"),
            rows=tokens,
            latex_name=m.sym("R"),
            places=carry.places if carry and carry.rounding else None,
            note="Add the sublayer's input back before normalising (Add & Norm).",
        )
        R, r_sym = after(p.steps[-1].exact), m.sym("r")
    else:
        R, r_sym = X, m.sym("x")
    # a carried chain (encoder block): the values come rounded, the work is in decimals and the
    # square root is rounded like every carried value before dividing by it
    carried = carry is not None and carry.rounding
    places = carry.places if carry is not None else 4

    def term(x) -> Node:
        return _decimal_term(x, places) if carried else lines.work_term(x)[0]

    def result(x) -> Node:
        return _decimal_result(x, places) if carried else lines.work_result(x)

    # 2) mean, one per row
    M = tuple((add(*row) * Fraction(1, d),) for row in R)
    i = next((r for r in range(n) if M[r][0] != 0), 0)  # the worked row: a mean of 0 teaches nothing
    terms = lines.join_terms([term(x) for x in R[i]])
    p.add_step(
        "mean",
        M,
        carried_value("mean", residual=R),
        title="Mean of each token (row)",
        formula=line(_mean("i"), "=", _average(d), m.sym(r_sym, sub="ij")),
        work=[
            line(_mean(i + 1), "=", m.frac(1, d), m.fenced(terms), result(M[i][0]), lines.terms_count(d)),
        ],
        rows=tokens,
        cols=("mean",),
        latex_name=MU,
        note=f"Along each row (across the features of one token), not down the columns: one number per token, a ${n} \\times 1$ column.",
    )
    M = after(p.steps[-1].exact)

    # 3) population variance, one per row
    devs = [tuple(add(x, mul(-1, M[r][0])) for x in R[r]) for r in range(n)]
    V = tuple((add(*(mul(x, x) for x in dv)) * Fraction(1, d),) for dv in devs)
    sq = lines.join_terms([_squared(term(x), term(M[i][0])) for x in R[i]])
    sq_vals = lines.join_terms([term(mul(x, x)) for x in devs[i]])
    p.add_step(
        "variance",
        V,
        carried_value("variance", residual=R, mean=M),
        title="Variance of each token (population: divide by $d$)",
        formula=line(_variance("i"), "=", _average(d), _squared(m.sym(r_sym, sub="ij"), _mean("i"))),
        work=[
            line(_variance(i + 1), "=", m.frac(1, d), m.fenced(sq)),
            line(_variance(i + 1), "=", m.frac(1, d), m.fenced(sq_vals), result(V[i][0]), lines.terms_count(d)),
        ],
        rows=tokens,
        cols=("variance",),
        latex_name=SIGMA2,
        note=f"The population variance divides by $d = {d}$, not by $d - 1 = {d - 1}$.",
    )
    V = after(p.steps[-1].exact)

    # 4) normalise
    for r in range(n):
        if add(V[r][0], eps) == 0:
            raise InputError(
                f"every feature of token {r + 1} is the same, so its variance is 0 and with "
                "eps = 0 it cannot be normalised (give eps > 0)",
                field="S" if S is not None else "X",
                row=r + 1,
            )
    sds = [sqrt(add(V[r][0], eps)) for r in range(n)]
    reads = {}  # by hand, a carried chain reads each square root on the standard tables, at these x
    if carried and places == 4 and blocks.aids_allowed(p):
        reads = {r: tables.sqrt_argument(Fraction(add(V[r][0], eps))) for r in range(n)}
        sds = [blocks.round_exact(sqrt(reads[r]), places) for r in range(n)]
        top = max(tables.SQRT_TOP, int(max(reads.values())) + 1)  # a file's larger variance: a longer table
        for aid in tables.sqrt_aids(top):
            tables.add_table(p.aids, aid)
    elif carried:
        sds = [blocks.round_exact(x, places) for x in sds]
        add_sqrt_aid(p, [add(V[r][0], eps) for r in range(n)], places)
    inv_sd = [power(x, -1) for x in sds]
    N = tuple(tuple(mul(add(x, mul(-1, M[r][0])), inv_sd[r]) for x in R[r]) for r in range(n))
    j = next((jj for jj in range(d) if N[i][jj] != 0), 0)
    sd = sds[i]
    read = i in reads and reads[i] != add(V[i][0], eps)  # the table is read at the variance rounded
    sd_line = line(
        _root(i + 1),
        "=",
        m.sqrt(line(term(V[i][0]), "+", lines.work_term(eps)[0])),
        *(("≈", m.sqrt(m.number(tables.argument_text(reads[i])))) if read else ()),
        line("≈", term(sd)) if carried else lines.work_result(sd),
    )
    p.add_step(
        "normalized",
        N,
        # carried: divided by the rounded square roots, as the sheet does (no step of reference's)
        blocks.carried(carry, lambda: (A(R) - A(M)) / np.array([[float(x)] for x in sds]), ref["normalized"])
        if carried
        else carried_value("normalized", residual=R, mean=M, variance=V),
        title="Normalised values",
        formula=line(m.sym(X_HAT, sub="ij"), "=", m.frac(line(m.sym(r_sym, sub="ij"), "-", _mean("i")), _root("i"))),
        work=[
            sd_line,
            line(
                lines.entry(X_HAT, i, j),
                "=",
                m.frac(line(lines.entry(r_sym, i, j), "-", _mean(i + 1)), _root(i + 1)),
                "=",
                m.frac(line(term(R[i][j]), "-", term(M[i][0])), term(sd) if carried else _short(sd)),
                result(N[i][j]),
            ),
        ],
        rows=tokens,
        latex_name=m.hat(m.sym("X")),
        note=(
            r"Each row now has mean 0 and (with $\varepsilon = 0$) variance 1."
            if eps == 0
            else "Each row now has mean 0 and variance close to 1."
        )
        + (
            f" The square root is rounded to {places} places before dividing, like every carried value."
            if carried
            else ""
        ),
    )
    N = after(p.steps[-1].exact)

    # 5) scale and shift
    Y = tuple(tuple(add(mul(g, x), b) for x, g, b in zip(row, gamma[0], beta[0])) for row in N)
    ok = [jj for jj in range(d) if N[i][jj] != 0 and Y[i][jj] != 0]  # y = 0, or y = 1 x + 0, teaches nothing
    j = next((jj for jj in ok if gamma[0][jj] != 1), next((jj for jj in ok if beta[0][jj] != 0), next(iter(ok), j)))
    lhs = line(
        lines.entry("y", i, j), "=", m.sym("gamma", sub=j + 1), lines.entry(X_HAT, i, j), "+", m.sym("beta", sub=j + 1)
    )
    p.add_step(
        "output",
        Y,
        carried_value("output", normalized=N),
        title="Scale and shift (output)",
        formula=line(
            m.sym("y", sub="ij"), "=", m.sym("gamma", sub="j"), m.sym(X_HAT, sub="ij"), "+", m.sym("beta", sub="j")
        ),
        work=[
            line(
                lhs,
                "=",
                lines.work_term(gamma[0][j])[0],
                "⋅",
                term(N[i][j]),
                "+",
                lines.work_term(beta[0][j])[0],
                result(Y[i][j]),
            )
            if carried
            else lines.dot_work(lhs, [gamma[0][j]], [N[i][j]], Y[i][j], plus=beta[0][j])
        ],
        rows=tokens,
        latex_name=m.sym("Y"),
        note=r"$\gamma$ and $\beta$ act per feature (column), the same for every token.",
    )
    after(Y)
    return p


# -- the pieces of the formulas
def _mean(sub) -> Node:
    """``\\mu_i``, ``\\mu_{1}``."""
    return m.sym("mu", sub=sub)


def _variance(sub) -> Node:
    """``\\sigma^2_i``: the variance of token i (the block renames it ``(\\sigma^{[k]}_i)^2``)."""
    return m.sym("sigma", sub=sub, sup=2)


def _root(sub) -> Node:
    """``\\sqrt{\\sigma^2_i + \\varepsilon}``."""
    return m.sqrt(line(_variance(sub), "+", m.sym("varepsilon")))


def _average(d: int) -> Node:
    """``\\frac{1}{d} \\sum_{j=1}^{d}``."""
    return line(m.frac(1, d), m.total(sub=line(m.sym("j"), "=", 1), sup=d))


def _squared(a: Node, b: Node) -> Node:
    """``(a - b)^2``, the square on the closing bracket as TeX sets it."""
    return m.row(Op("("), a, Op("\u2212"), b, Script(Op(")"), None, Num("2")))


def _decimal_digits(x, places: int) -> str:
    """A carried value's digits: an integer as an integer (``3``, not ``3.0000``),
    else a decimal with ``places`` places, or the exact decimal when it has a few
    more (a square of a carried value)."""
    if blocks.is_rational(x) and Fraction(x).denominator == 1:
        return str(Fraction(x).numerator)
    p = terminating_places(Fraction(x), 2 * places) if blocks.is_rational(x) else None
    return _exact_decimal(Fraction(x), p) if p is not None and p > places else blocks.approx(x, places)


def _decimal_term(x, places: int) -> Node:
    """A carried value in a worked line (:func:`_decimal_digits`), in parentheses when negative."""
    s = _decimal_digits(x, places)
    return m.paren(m.number(s)) if s.startswith("-") else m.number(s)


def _exact_decimal(q: Fraction, p: int) -> str:
    """A terminating fraction with ``p`` places as its exact decimal string (no float rounding)."""
    k = abs(q.numerator) * (10**p // q.denominator)
    digits = str(k).rjust(p + 1, "0")
    return ("-" if q < 0 else "") + digits[:-p] + "." + digits[-p:]


def _decimal_result(x, places: int) -> Node:
    """``= value`` when ``x`` is a decimal of at most ``places`` places, else ``= exact ≈ rounded``."""
    r = blocks.round_exact(x, places)
    if blocks.is_rational(x) and Fraction(x) == r:
        return line("=", m.number(_decimal_digits(r, places)))
    exact, rounded = _decimal_digits(x, places), blocks.approx(r, places)
    return line("=", m.number(exact), "≈", m.number(rounded)) if exact != rounded else line("≈", m.number(rounded))


def _short(x) -> Node:
    """A value in a fraction: exact if short, else 4 decimals."""
    if is_rational(x) or len(str(x)) <= blocks.SHORT:
        return Value(x)
    return lines.approx_number(x)


# ---------------------------------------------------------------- mistakes
# residual (when S is given), mean and variance (n x 1), normalized, output.
def _R(v: mistakes.Values) -> np.ndarray:
    return v["residual"] if "residual" in v else v["X"]


def _eps(params) -> float:
    eps = params.get("eps")
    return precise.number(Fraction(0) if eps in (None, "") else Fraction(str(eps)))


@mistakes.register("layer-norm", "residual", "missing-residual")
def _no_residual(v, params):
    return v["S"]  # LayerNorm(Sublayer(x)) instead of LayerNorm(x + Sublayer(x))


@mistakes.register("layer-norm", "variance", "sample-variance")
def _sample_variance(v, params):
    R = _R(v)
    if R.shape[1] < 2:
        return None
    return ((R - v["mean"]) ** 2).sum(axis=1, keepdims=True) / (R.shape[1] - 1)


@mistakes.register("layer-norm", "mean", "normalized-across-tokens")
def _mean_down_columns(v, params):
    return _R(v).mean(axis=0, keepdims=True)  # (1, d) instead of (n, 1)


@mistakes.register("layer-norm", "variance", "normalized-across-tokens")
def _variance_down_columns(v, params):
    return _R(v).var(axis=0, keepdims=True)


@mistakes.register("layer-norm", "normalized", "normalized-across-tokens")
def _normalized_down_columns(v, params):
    R = _R(v)
    return (R - R.mean(axis=0, keepdims=True)) / precise.sqrt(R.var(axis=0, keepdims=True) + _eps(params))
