"""Why attention divides by sqrt(d_k): one query's scores, softmaxed three ways.

    softmax_raw     = softmax(s)                  # s: (1, n) query-key dot products
    softmax_sqrt_dk = softmax(s / sqrt(d_k))      # what the Transformer does
    softmax_dk      = softmax(s / d_k)            # dividing too much

Steps: ``softmax_raw``, ``softmax_sqrt_dk``, ``softmax_dk``, then ``written``:
the question "too peaked, about right or too flat?" answered in words (the
sheet gives ruled lines, the key a model answer with this problem's numbers;
``worksheet check`` leaves it to a person).

Dot products of d_k-dimensional vectors with unit-variance entries have a
standard deviation of about sqrt(d_k), so raw scores grow with the width and
their softmax is nearly one-hot (saturated, vanishing gradients); dividing by
sqrt(d_k) brings them back to unit scale; dividing by d_k shrinks them
towards 0 and the softmax becomes nearly uniform.  With the lecture's scores
[112, 96] and d_k = 64: [1.0000, 1.1254e-07], [0.8808, 0.1192] (exactly
1/(1 + e^-2) and 1/(1 + e^2)) and [0.5622, 0.4378].

Each step's note gives the largest weight and reads it (w_max, n scores):

* too peaked (nearly one-hot):   w_max >= 0.95;
* too flat (nearly uniform):     w_max - 1/n < 0.1;
* about right:                   otherwise.

Hand mode (lecturer-facing rules):

* d_k is a perfect square of at least 9 with n = 2 scores, at least 16 with
  n >= 3 (default 64, the paper's value): below that no integer scores show
  all three behaviours under the thresholds above (checked by brute force);
* the scores are integer multiples of sqrt(d_k), s_j = sqrt(d_k) t_j with
  integers t_j, so s / sqrt(d_k) is an integer and s / d_k has denominator
  sqrt(d_k); the differences t_j - t_1 are those of integers in [-3, 6], and
  t_1 is drawn from [-30, 45] (the softmax sees only differences, so where
  the row sits changes no weight, but it gives 76 x 4 = 304 different rows of
  two scores at the default d_k = 64: enough for 200 variants);
* draws are retried (boundedly) until the raw softmax is too peaked, the
  /sqrt(d_k) one about right and the /d_k one too flat, and the largest score
  is unique; n is at most 5, so the printed e^x table has at most 13 rows.

Calculator mode draws one-decimal multiples t_j (in [-3, 3]) and rounds the
scores to one decimal, for any d_k, preferring draws that show the three
behaviours.  Solving takes any scores and any d_k >= 1 (sqrt(d_k) then stays
exact, e.g. sqrt(10)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import mistakes
from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..policy.errors import InputError, ParamError, ShapeError
from ..exact import mul, power, sqrt, to_float
from ..solution.maths import Node
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.maths.nodes import Value
from ..solution.number_format import decimal
from ..solution.problem import Matrix, Problem, shape
from ..steps import line_trees as lines
from . import base
from . import shared_conventions as cv
from .shared_conventions import Convention

TITLE = r"Why scale by $\sqrt{d_k}$"
ONE_QUERY = Convention(
    "one_query", r"One query's scores $s$ form one row; the softmax runs along it, so the weights sum to 1."
)
CONVENTIONS = (ONE_QUERY, cv.SOFTMAX_FORM, cv.EXACT)
INPUTS = ("scores",)

QUESTION = "For each of the three softmaxes, say whether it is too peaked, about right or too flat, and why."
WHICH = {"softmax_raw": "Raw scores", "softmax_sqrt_dk": r"Divided by $\sqrt{d_k}$", "softmax_dk": r"Divided by $d_k$"}
WHY = (
    r"A Transformer divides by $\sqrt{d_k}$: dot products of $d_k$-dimensional vectors with "
    r"unit-variance entries have a standard deviation of about $\sqrt{d_k}$, so dividing by "
    r"$\sqrt{d_k}$ brings them back to unit scale, where the softmax is neither saturated nor uniform."
)
PEAKED = 0.95  # the largest weight at or above this: nearly one-hot
FLAT = 0.1  # the largest weight less than this above 1/n: nearly uniform
READING = {  # label, what it shows
    "peaked": (
        "too peaked (nearly one-hot)",
        "the softmax is saturated, almost all the weight goes to one key and the gradients "
        "through the other weights vanish",
    ),
    "right": ("about right", "the largest score is preferred, but the other keys keep a useful share"),
    "flat": ("too flat (nearly uniform)", "the differences between the scores are washed out"),
}


# ---------------------------------------------------------------- symbols
S_SYM, D_K = m.sym("s"), m.sym("d", sub="k")


@dataclass(frozen=True)
class Params(base.Params):
    d_k: int = 64  # width of the queries and keys (the paper: 64); hand mode: a perfect square >= 9 (16 for n >= 3)
    seq_len: int = 2  # n, the number of keys scored by the one query
    tokens: tuple[str, ...] | None = None  # labels of the keys; default: a lecture sentence of seq_len words

    def validate(self):
        base.positive("--d-k", self.d_k, 4096)
        base.positive("--seq-len", self.seq_len, 5 if self.numbers == "hand" else 12)
        base.require_square_d_k(self, self.d_k)
        least = 9 if self.seq_len == 2 else 16  # below it no integer scores show all three readings
        if self.numbers == "hand" and self.d_k < least:
            raise ParamError(
                f"d_k = {self.d_k} is too small to show the effect of scaling by hand "
                f"with {self.seq_len} scores: use a perfect square of at least {least} "
                "(up to 64, the paper's value, or more) or --numbers calculator"
            )


def classify(weights: np.ndarray) -> str:
    """``peaked``, ``right`` or ``flat`` for one row of softmax weights."""
    w_max, n = float(np.max(weights)), weights.size
    if w_max >= PEAKED:
        return "peaked"
    if w_max - 1 / n < FLAT:
        return "flat"
    return "right"


def _softmax(z: np.ndarray) -> np.ndarray:
    """One row's softmax at 60 digits (the float row taken as the binary numbers it
    is), as float64: a draw is accepted the same way on every machine."""
    with precise.high_precision():
        return precise.to_float64(blocks.np_softmax(precise.as_mp(z)))


def _shows_all_three(t: np.ndarray, d_k: int) -> bool:
    root = math.sqrt(d_k)
    s = t * root
    return (
        classify(_softmax(s[None, :])) == "peaked"
        and classify(_softmax(t[None, :])) == "right"
        and classify(_softmax(s[None, :] / d_k)) == "flat"
        and np.count_nonzero(t == t.max()) == 1
    )


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d_k = params.seq_len, params.d_k
    if params.numbers == "calculator":
        candidate = None
        for _ in range(200):
            t = rng.integers(-30, 31, size=n) / 10
            candidate = np.round(t * math.sqrt(d_k), 1)
            if _shows_all_three(candidate / math.sqrt(d_k), d_k):
                break
        return {"scores": (tuple(Fraction(round(10 * float(x)), 10) for x in candidate),)}
    root = math.isqrt(d_k)

    def make():
        return rng.integers(-3, 7, size=n)

    first = int(rng.integers(-30, 46))  # where the row sits: the softmax sees only differences
    u = base.retry(
        "softmax-scaling",
        make,
        lambda t: _shows_all_three(t.astype(float), d_k),
        f"seq_len={n}, d_k={d_k} with a peaked raw, a moderate scaled and a flat /d_k softmax",
    )
    t = u - u[0] + first
    return {"scores": (tuple(Fraction(int(x) * root) for x in t),)}


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against.

    ``given`` (step name -> value, from ``worksheet check``) replaces a
    computed step; the three steps do not depend on each other.
    """
    g = given or {}
    s, d_k = inputs["scores"], params.d_k
    return {
        name: base.given_or(g, name, lambda: blocks.np_softmax(s / divisor))
        for name, divisor in (
            ("softmax_raw", 1.0),
            ("softmax_sqrt_dk", precise.sqrt(d_k)),
            ("softmax_dk", precise.number(d_k)),
        )
    }


def _sci(x) -> Node:
    """An exact weight for a worked line: 4 decimals, or when tiny ``d.dddd x 10^e``
    (rounded from the exact value, half away from zero)."""
    v = to_float(x)
    if v == 0 or abs(v) >= 5e-5:
        return lines.approx_number(x)
    q = abs(Fraction(v))  # the exponent from the correctly rounded float, in integers (no libm)
    exp10 = len(str(q.numerator)) - len(str(q.denominator))
    while q < Fraction(10) ** exp10:
        exp10 -= 1
    while q >= Fraction(10) ** (exp10 + 1):
        exp10 += 1
    digits = decimal(mul(x, power(10, -exp10)), 4)  # 1 <= |x| 10^-e < 10, but for rounding up to 10
    if digits.lstrip("-").startswith("10"):
        exp10 += 1
        digits = decimal(mul(x, power(10, -exp10)), 4)
    return line(m.number(digits), "×", m.power(10, exp10))


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    base.require_inputs(inputs, INPUTS, "one query's scores, one row: scores = [[112, 96]]")
    s = inputs["scores"]
    if shape(s)[0] != 1:
        raise ShapeError(
            f"scores is {shape(s)[0]} x {shape(s)[1]} but must be 1 x n: one query's scores against n keys, in one row"
        )
    n = shape(s)[1]
    if n < 2:
        raise ShapeError("scores is 1 x 1 but needs at least 2 entries: a softmax of one score is always 1")
    if params.tokens is not None and len(params.tokens) != n:
        raise InputError(f"{len(params.tokens)} labels for {n} scores", field="tokens")
    d_k = params.d_k
    keys = params.tokens or base.default_tokens(n)
    actual = base.solved_params(params, seq_len=n, tokens=keys)
    p = Problem(
        "softmax-scaling",
        TITLE,
        actual,
        seed=seed,
        intro=(
            "One query has the scores $s$ below against the keys "
            + ", ".join(keys)
            + rf", with $d_k = {d_k}$. Take the softmax of the raw scores, of "
            r"$s / \sqrt{d_k}$ and of $s / d_k$, and say for each whether it is too "
            r"peaked, about right or too flat."
        ),
    )
    p.add_input("scores", s, cols=keys, latex_name=S_SYM)
    ref = reference({"scores": p.inputs["scores"].value}, params)

    root = sqrt(d_k)
    cases = (
        ("softmax_raw", Fraction(1), "Softmax of the raw scores", m.call("softmax", S_SYM), None),
        (
            "softmax_sqrt_dk",
            root,
            r"Softmax of the scores divided by $\sqrt{d_k}$",
            m.call("softmax", m.frac(S_SYM, m.sqrt(D_K)), sized=True),
            m.frac(S_SYM, m.sqrt(d_k)),
        ),
        (
            "softmax_dk",
            Fraction(d_k),
            "Softmax of the scores divided by $d_k$",
            m.call("softmax", m.frac(S_SYM, D_K), sized=True),
            m.frac(S_SYM, d_k),
        ),
    )
    readings = []  # one sentence per softmax, for the model answer
    # one symbol per softmax on the page: alpha, z, m for the raw scores; alpha', z', m' for
    # s / sqrt(d_k) (the scaled scores are S' elsewhere); alpha'', z'', m'' for s / d_k (scaled twice)
    for (name, divisor, title, formula, scaled_sym), mark in zip(cases, (0, 1, 2)):  # mark: the primes
        z = (tuple(mul(x, power(divisor, -1)) for x in s[0]),)  # (1, n)
        value = ref[name]
        # the reading and its numbers from the exact weights (their correctly rounded
        # floats and exact decimals), never from numpy's: the same on every machine
        exact_w = blocks.softmax_rows(z)[0]
        weights = np.array([to_float(x) for x in exact_w])
        kind = classify(weights)
        j = int(np.argmax(weights))
        label, meaning = READING[kind]
        # the weight as the table shows it: by hand, the chain's (0.3679/1.3679 = 0.2690), else the exact one's
        shown_w = exact_w if blocks.calculator(p) else blocks.softmax_chain(z)[0]
        top, flat = decimal(shown_w[j]), decimal(Fraction(1, n))
        note = (
            rf"Largest weight ${top}$ (key {keys[j]}; equal weights would be "
            rf"$1/n = {flat}$), so this softmax is {label}: {meaning}."
        )
        readings.append(
            rf"{WHICH[name]}: the largest weight is ${top}$ (key {keys[j]}; "
            rf"equal weights would be $1/{n} = {flat}$), so it is {label}: {meaning}."
        )
        if name == "softmax_sqrt_dk":
            note += (
                r" Dot products of $d_k$-dimensional vectors grow like $\sqrt{d_k}$; dividing by "
                r"$\sqrt{d_k}$ brings them back to unit scale."
            )
        blocks.softmax_step(
            p,
            name,
            z,
            value,
            sym=m.sym("alpha", prime=mark),
            src_sym=m.sym("z", prime=mark),
            max_sym=m.sym("m", prime=mark),
            title=title,
            formula=line(m.sym("alpha", prime=mark), "=", formula),
            cols=keys,
            note=note,
            latex_name=formula,
            vector=True,
            exp_span=None,  # the exponents are differences of the given scores: the table lists those
        )
        calc = blocks.calculator(p)  # calculator: 18.4
        cells = [lines.nx(x) if calc else Value(x) for x in z[0]]
        before = [line(m.sym("z", prime=mark), "=", scaled_sym or S_SYM, "=", m.row_matrix(cells))]
        if name == "softmax_sqrt_dk":
            before.insert(0, line(m.sqrt(D_K), "=", m.sqrt(d_k), "=", Value(root)))
        tiny = [
            line(m.sym("alpha", sub=k + 1, prime=mark), "≈", _sci(x))
            for k, x in enumerate(exact_w)
            if 0 < to_float(x) < 5e-5
        ]  # 0.0000 to 4 places, but not 0
        blocks.extend_work(p, name, before=before, after=tiny)
    p.add_written("written", title=QUESTION, lines=4, answer=" ".join(readings) + " " + WHY)
    return p


# ---------------------------------------------------------------- mistakes
# softmax_sqrt_dk is the softmax of scores / sqrt(d_k): also taken of the raw scores, or of scores / d_k.
def _softmax_of_scores_over(divisor):
    def rule(v, params):
        d_k = precise.number(int(params["d_k"]))
        return mistakes.softmax(v["scores"] / divisor(d_k))

    return rule


mistakes.register("softmax-scaling", "softmax_sqrt_dk", "no-scaling")(_softmax_of_scores_over(lambda d: 1))
mistakes.register("softmax-scaling", "softmax_sqrt_dk", "scaled-by-d_k")(_softmax_of_scores_over(lambda d: d))
