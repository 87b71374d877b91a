"""Position-wise feed-forward network (Vaswani et al. 2017, eq. 2), row vectors.

The same two linear maps act on every token (row) separately:

    hidden_pre = X W_1 + b_1        # (n, d_ff); b_1 (1 x d_ff) is added to every row
    hidden     = ReLU(hidden_pre)   # max(0, .) entrywise
    output     = hidden W_2 + b_2   # (n, d_model); b_2 is 1 x d_model

ReLU acts on the pre-activation *after* the bias, and only between the two
layers (not after the second one): the sheet says so.

Hand mode draws X from {-1, 0, 1, 2} and W_1, b_1, W_2, b_2 from {-1, 0, 1},
so every entry is an integer.  Draws are retried (boundedly, then a
GenerationError) until the pre-activations hold at least one negative entry
(so ReLU changes something) and at least one positive entry (unless there is
only one), every
pre-activation lies in [-6, 6], no row of X is zero and the output is not all
zero.  Calculator mode uses one-decimal entries in [-1, 1] with the same
sign conditions.

``solve`` also takes ``carry`` (a :class:`worksheet.steps.scaled_dot_product.Carry`): the encoder
block passes one so that long exact values are carried rounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import mistakes
from ..steps import precise
from ..steps import scaled_dot_product as blocks
from ..policy.errors import ShapeError
from ..exact import to_float
from ..solution.maths import Node
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.problem import Matrix, Problem, shape, to_array
from ..steps import line_trees as lines
from . import base
from . import shared_conventions as cv
from . import screen

TITLE = "Position-wise feed-forward network"
CONVENTIONS = (cv.TOKEN_ROWS, cv.FFN, cv.EXACT)
HP = m.sym("h", prime=1)  # entry letter of the pre-activations
INPUTS = ("X", "W_1", "b_1", "W_2", "b_2")


@dataclass(frozen=True)
class Params(base.Params):
    carries = True  # solve takes carry= (see base.Params.carries)
    seq_len: int = 2  # n, the number of tokens (rows of X)
    d_model: int = 4  # width of X and of the output
    d_ff: int = 4  # width of the hidden layer (the paper: 4 d_model = 2048)
    tokens: tuple[str, ...] | None = None  # row labels; default: a lecture sentence of seq_len words

    def validate(self):
        base.positive("--seq-len", self.seq_len, 12)
        base.positive("--d-model", self.d_model, 16)
        base.positive("d_ff", self.d_ff, 32)


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    n, d, f = params.seq_len, params.d_model, params.d_ff
    if params.numbers == "calculator":

        def make():
            return {
                "X": base.decimal_matrix(rng, n, d),
                "W_1": base.decimal_matrix(rng, d, f),
                "b_1": base.decimal_matrix(rng, 1, f),
                "W_2": base.decimal_matrix(rng, f, d),
                "b_2": base.decimal_matrix(rng, 1, d),
            }
    else:
        w = ((-1, 0, 1), (0.3, 0.35, 0.35))

        def make():
            return {
                "X": base.int_matrix(rng, n, d, (-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15)),
                "W_1": base.int_matrix(rng, d, f, *w),
                "b_1": base.int_matrix(rng, 1, f, *w),
                "W_2": base.int_matrix(rng, f, d, *w),
                "b_2": base.int_matrix(rng, 1, d, *w),
            }

    def ok(m):
        ref = screen.precise_floats("feed-forward", params, m)  # the same on any CPU
        if ref is None:  # a division by zero: numpy's nan
            return False
        H = ref["hidden_pre"]
        return (
            (H < 0).any()
            and ((H > 0).any() or H.size == 1)
            and np.abs(H).max() <= 6
            and np.abs(to_array(m["X"])).sum(axis=1).min() > 0
            and np.abs(ref["output"]).max() > 0
        )

    return base.retry(
        "feed-forward", make, ok, f"seq_len={n}, d_model={d}, d_ff={f} with a negative and a positive pre-activation"
    )


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The independent float64 computation every exact step is checked against.

    ``given`` maps step names to values that replace the computed ones, and
    every later step is computed from them (``worksheet check`` marks a step
    "carried forward" when it follows from a student's own earlier answers).
    """
    g = given or {}
    out = {"hidden_pre": base.given_or(g, "hidden_pre", lambda: inputs["X"] @ inputs["W_1"] + inputs["b_1"])}
    out["hidden"] = base.given_or(g, "hidden", lambda: np.maximum(out["hidden_pre"], precise.number(0)))
    out["output"] = base.given_or(g, "output", lambda: out["hidden"] @ inputs["W_2"] + inputs["b_2"])
    return out


def check_inputs(inputs: dict[str, Matrix]) -> None:
    base.require_inputs(inputs, INPUTS, "give X, W_1, b_1, W_2 and b_2")
    blocks.require_matmul("X", inputs["X"], "W_1", inputs["W_1"])
    d_ff = shape(inputs["W_1"])[1]
    blocks.require_shape("b_1", inputs["b_1"], 1, d_ff, f"one bias per hidden unit (W_1 has {d_ff} columns)")
    if shape(inputs["W_2"])[0] != d_ff:
        raise ShapeError(
            f"W_1 is {shape(inputs['W_1'])[0]} x {d_ff} and W_2 is "
            f"{shape(inputs['W_2'])[0]} x {shape(inputs['W_2'])[1]}: "
            f"W_2 needs {d_ff} rows, one per hidden unit"
        )
    d_out = shape(inputs["W_2"])[1]
    blocks.require_shape("b_2", inputs["b_2"], 1, d_out, f"one bias per output column (W_2 has {d_out} columns)")


def relu(x):
    """``max(0, x)`` of an exact value (its sign from its float value)."""
    return x if to_float(x) > 0 else Fraction(0)


def _terms(A: Matrix, W: Matrix, i: int, j: int) -> int:
    """Non-zero terms of the dot product of row i of A and column j of W."""
    return sum(1 for a, r in zip(A[i], W) if a != 0 and r[j] != 0)


def _affine_work(
    sym, a: str, layer: int, A: Matrix, W: Matrix, b: Matrix, C: Matrix, at: tuple[int, int], places=None
) -> Node:
    """``h'_{12} = x_{1} ⋅ {W_1}_{:,2} + b_{1,2} = ...``: one entry of ``A W_layer + b_layer``
    (the bias's own index, then the entry's: ``{b_1}_{2}`` would read as b_12)."""
    i, j = at
    lhs = line(
        lines.entry(sym, i, j),
        "=",
        m.sym(a, sub=i + 1),
        "⋅",
        m.sym(m.sym("W", sub=layer), sub=f":,{j + 1}"),
        "+",
        m.sym("b", sub=f"{layer},{j + 1}"),
    )
    return lines.dot_work(lhs, A[i], [r[j] for r in W], C[i][j], plus=b[0][j], places=places)


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(
    inputs: dict[str, Matrix], params: Params, *, seed: int | None = None, carry: blocks.Carry | None = None
) -> Problem:
    check_inputs(inputs)
    X, W_1, b_1, W_2, b_2 = (inputs[k] for k in INPUTS)
    n, d = shape(X)
    d_ff = shape(W_1)[1]
    tokens = base.row_labels(params.tokens, n)
    actual = base.solved_params(params, seq_len=n, d_model=d, d_ff=d_ff, tokens=tokens)
    p = Problem(
        "feed-forward",
        TITLE,
        actual,
        seed=seed,
        intro=(
            f"Apply the position-wise feed-forward network with $d_\\mathrm{{ff}} = {d_ff}$ hidden "
            f"units to each token ({', '.join(tokens)}): a linear map, ReLU, and a second "
            "linear map. The biases are added to every row."
        ),
    )
    for name in INPUTS:
        p.add_input(name, inputs[name], rows=tokens if name == "X" else None)
    ref = reference({k: q.value for k, q in p.inputs.items()}, params)
    floats = {k: to_array(inputs[k]) for k in INPUTS}  # the carried inputs, as the carried steps read them

    def carried(name: str, **earlier):  # reference's value, from the carried values once carry rounds
        return base.carried_step(carry, reference, floats, params, name, ref, **earlier)

    def after(m: Matrix) -> Matrix:
        return carry.after(p) if carry is not None else m

    def places() -> int | None:  # a carried chain: its decimals print with 4 places, as its tables
        return carry.places if carry is not None and carry.rounding else None

    # 1) first linear map, bias included
    Hp = blocks.add_row(blocks.matmul(X, W_1), b_1)
    neg = [(i, j) for i in range(n) for j in range(d_ff) if to_float(Hp[i][j]) < 0]
    at = max(neg, key=lambda ij: _terms(X, W_1, *ij)) if neg else blocks.busiest_entry(X, W_1)
    p.add_step(
        "hidden_pre",
        Hp,
        carried("hidden_pre"),
        title="Pre-activations (first linear map)",
        formula=line(m.sym("H", prime=1), "=", m.sym("X"), m.sym("W", sub=1), "+", m.sym("b", sub=1)),
        work=[_affine_work(HP, "x", 1, X, W_1, b_1, Hp, at, places())],
        rows=tokens,
        latex_name=m.sym("H", prime=1),
        note="The bias $b_1$ is added to every row (every token).",
    )
    Hp = after(p.steps[-1].exact)

    # 2) ReLU
    H = tuple(tuple(relu(x) for x in row) for row in Hp)
    neg = [(i, j) for i in range(n) for j in range(d_ff) if to_float(Hp[i][j]) < 0]
    pos = [(i, j) for i in range(n) for j in range(d_ff) if to_float(Hp[i][j]) > 0]
    work = [
        line(
            lines.entry("h", i, j),
            "=",
            m.call("max", 0, lines.entry(HP, i, j)),
            "=",
            m.call("max", 0, lines.unwrapped(lines.work_term(Hp[i][j], places=places())[0])),
            lines.work_result(H[i][j], places=places()),
        )
        for i, j in (neg[:1] + pos[:1])
    ]
    p.add_step(
        "hidden",
        H,
        carried("hidden", hidden_pre=Hp),
        title="ReLU",
        formula=line(m.sym("H"), "=", m.call("max", 0, m.sym("H", prime=1))),
        work=work,
        rows=tokens,
        latex_name=m.sym("H"),
        note="ReLU acts on $X W_1 + b_1$ (after the bias), entry by entry; negative entries become 0.",
    )
    H = after(p.steps[-1].exact)

    # 3) second linear map
    O = blocks.add_row(blocks.matmul(H, W_2), b_2)
    p.add_step(
        "output",
        O,
        carried("output", hidden=H),
        title="Output (second linear map)",
        formula=line(m.sym("O"), "=", m.sym("H"), m.sym("W", sub=2), "+", m.sym("b", sub=2)),
        work=[_affine_work("o", "h", 2, H, W_2, b_2, O, blocks.busiest_entry(H, W_2), places())],
        rows=tokens,
        latex_name=m.sym("O"),
        note="No ReLU after the second layer.",
    )
    after(O)
    return p


# ---------------------------------------------------------------- mistakes
# hidden_pre = X W_1 + b_1, hidden = ReLU(hidden_pre), output = hidden W_2 + b_2.
@mistakes.register("feed-forward", "hidden", "relu-after-second-layer")
def _no_relu_first(v, params):
    return v["hidden_pre"]


@mistakes.register("feed-forward", "output", "relu-after-second-layer")
def _relu_second(v, params):
    return np.maximum(v["hidden_pre"] @ v["W_2"] + v["b_2"], precise.number(0))


@mistakes.register("feed-forward", "output", "relu-after-second-layer")
def _relu_both(v, params):
    return np.maximum(v["hidden"] @ v["W_2"] + v["b_2"], precise.number(0))
