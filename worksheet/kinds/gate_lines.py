"""The worked lines of the recurrent cells (LSTM, GRU), as maths trees
(:mod:`worksheet.solution.maths`): indices by time step and unit
(``f_{2,1}``), a gate's pre-activation written out (``a^f_{1,1} = (x W_f)_{1}
+ (h_{0} W_{hf})_{1} + b_{f,1} = ...``) and its activation (``f_{1,1} =
σ(2) = 1/(1 + e^{-2}) ≈ 0.8808``).  :mod:`.recurrent` builds the steps with
them; the cells reach them as ``rec.<name>``.
"""

from __future__ import annotations

from functools import lru_cache

from ..exact import to_latex
from ..solution.maths import Node, Row
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.number_format import decimal
from ..steps import line_trees as lines

__all__ = [
    "sub",
    "prev_h",
    "prev_state",
    "products",
    "dot_terms",
    "pre_sym",
    "affine_work",
    "act_work",
    "units",
    "x_sym",
    "prev_unit",
    "num",
]


def sub(letter: str, t: int, T: int, j: int | None = None) -> Node:
    """``f_{2,1}`` (time 2, unit 1), ``h_{1}`` (time 1, whole row): the lecture's f_t, c_t, h_t,
    with t = 1 for a single step too (its inputs are h_0 and c_0)."""
    return m.sym(letter, sub=t if j is None else f"{t},{j + 1}")


def prev_h(t: int, T: int) -> Node:
    return prev_state("h", t, T)


def prev_state(letter: str, t: int, T: int) -> Node:
    """The state before time step t: ``h_{0}`` at t = 1, else ``h_{t-1}``."""
    return m.sym(letter, sub=0) if t == 1 else sub(letter, t - 1, T)


def products(a_row, col) -> Row:
    """``1 ⋅ 2 + 0 ⋅ (−1)`` with numbers as the sheet prints them (every term: no elision)."""
    return m.join(line(lines.work_term(x)[0], "⋅", lines.work_term(w)[0]) for x, w in zip(a_row, col))


def dot_terms(a_row, col) -> Row:
    """``(1 ⋅ 2 + 0 ⋅ (−1))``: :func:`products` in parentheses."""
    return m.paren(products(a_row, col))


def pre_sym(gate: str, t: int, j: int) -> Node:
    """``a^f_{1,2}``: the pre-activation of gate ``f`` at time 1, unit 2."""
    return m.sym("a", sub=f"{t},{j + 1}", sup=gate)


def affine_work(gate: str, t: int, T: int, j: int, x_row, W, h_row, W_h, b, a) -> Row:
    """``a^f_{1,1} = (x W_f)_{1} + (h_{0} W_{hf})_{1} + b_{f,1} = (...) + (...) + 1 = 2``: entry j of
    each product (column j of the weights), in the lecture's notation, not numpy's slices."""
    return line(
        _affine_head(gate, t, T, j),
        dot_terms(x_row, [r[j] for r in W]),
        "+",
        dot_terms(h_row, [r[j] for r in W_h]),
        "+",
        lines.work_term(b[0][j])[0],
        lines.work_result(a),
    )


@lru_cache(maxsize=1024)
def _affine_head(gate: str, t: int, T: int, j: int) -> Row:
    """``a^f_{1,1} = (x W_f)_{1} + (h_{0} W_{hf})_{1} + b_{f,1} =``: the symbols that begin
    :func:`affine_work`'s line, the same on every problem (made and printed once)."""
    return line(
        pre_sym(gate, t, j),
        "=",
        m.indexed(line(x_sym(t, T), m.sym("W", sub=gate)), j + 1),
        "+",
        m.indexed(line(prev_h(t, T), m.sym("W", sub="h" + gate)), j + 1),
        "+",
        m.sym("b", sub=f"{gate},{j + 1}"),
        "=",
    )


def act_work(lhs: Node, act, a, value) -> Row:
    """``f_{1} = σ(2) = 1/(1 + e^{-2}) ≈ 0.8808`` (``act``: a :class:`.recurrent.Act`)."""
    out = line(lhs, "=", act.of(lines.unwrapped(lines.work_term(a)[0])))
    # the exact form only where it says more than the argument: 1/(1 + e^{-2}), not
    # 1/(1 + e^{31/50}) for sigma(-0.62) (a fraction the sheet never wrote); the
    # exact value's LaTeX is only looked at here, to decide
    exact = to_latex(value)
    fraction_power = r"^{\frac" in exact or r"^{-\frac" in exact
    if exact != decimal(value) and len(exact) <= 60 and r"\tanh" not in exact and not fraction_power:
        out = line(out, "=", m.atom(value))
    return line(out, "≈", m.number(decimal(value)))


def units(d_h: int) -> range:
    """The units whose arithmetic the key writes out (all of a small state)."""
    return range(min(d_h, 2))


def x_sym(t: int, T: int) -> Node:
    """``x`` (T = 1) or ``x_{t}``."""
    return m.sym("x") if T == 1 else sub("x", t, T)


def prev_unit(letter: str, t: int, T: int, j: int) -> Node:
    """Unit j of the state before time step t: ``h_{0,1}`` at t = 1, else ``h_{t-1,1}``."""
    return m.sym(letter, sub=f"0,{j + 1}") if t == 1 else sub(letter, t - 1, T, j)


def num(x) -> Node:
    """A number inside a worked product: a short given decimal as is, else 4 decimals."""
    return lines.work_term(x, limit=0)[0]
