"""The worked lines of the recurrent cells (LSTM, GRU), in LaTeX: indices by
time step and unit (``f_{2,1}``), a gate's pre-activation written out
(``a^f_{1} = x W_{f}[:,1] + h_{0} W_{hf}[:,1] + b_{f,1} = ...``) and its
activation (``f_{1} = \\sigma(2) \\approx 0.8808``).  :mod:`.recurrent` builds
the steps with them; the cells reach them as ``rec.<name>``.
"""

from __future__ import annotations

from ..exact import to_latex
from ..solution.number_format import decimal
from ..steps import scaled_dot_product as blocks

__all__ = ["sub", "prev_h", "prev_state", "dot_terms", "affine_work", "act_work", "units", "x_sym", "prev_unit", "num"]


def sub(letter: str, t: int, T: int, j: int | None = None) -> str:
    """``f_{2,1}`` (time 2, unit 1), ``h_{1}`` (time 1, whole row): the lecture's f_t, c_t, h_t,
    with t = 1 for a single step too (its inputs are h_0 and c_0)."""
    idx = [str(t)]
    if j is not None:
        idx.append(str(j + 1))
    return f"{letter}_{{{','.join(idx)}}}" if idx else letter


def prev_h(t: int, T: int) -> str:
    return prev_state("h", t, T)


def prev_state(letter: str, t: int, T: int) -> str:
    """The state before time step t: ``h_{0}`` at t = 1, else ``h_{t-1}``."""
    return f"{letter}_{{0}}" if t == 1 else sub(letter, t - 1, T)


def dot_terms(a_row, col) -> str:
    """``(1 \\cdot 2 + 0 \\cdot (-1))`` with numbers as the sheet prints them."""
    terms = []
    for x, w in zip(a_row, col):
        terms.append(f"{blocks.work_term(x)[0]} \\cdot {blocks.work_term(w)[0]}")
    return "(" + " + ".join(terms) + ")"


def affine_work(pre_sym: str, t: int, T: int, j: int, gate: str, x_row, W, h_row, W_h, b, a) -> str:
    """``a^f_{1} = (x W_{f})_{1} + (h_{0} W_{hf})_{1} + b_{f,1} = (...) + (...) + 1 = 2``: entry j of
    each product (column j of the weights), in the lecture's notation, not numpy's slices."""
    xs = x_sym(t, T)
    lhs = f"{pre_sym}_{{{t},{j + 1}}}"
    return (
        rf"{lhs} = ({xs} W_{{{gate}}})_{{{j + 1}}} + ({prev_h(t, T)} W_{{h{gate}}})_{{{j + 1}}} + b_{{{gate},{j + 1}}}"
        rf" = {dot_terms(x_row, [r[j] for r in W])} + {dot_terms(h_row, [r[j] for r in W_h])}"
        rf" + {blocks.work_term(b[0][j])[0]} {blocks.work_result(a)}"
    )


def act_work(lhs: str, act, a, value) -> str:
    """``f_{1} = \\sigma(2) = \\frac{1}{1 + e^{-2}} \\approx 0.8808``."""
    arg = blocks.work_term(a)[0]
    arg = arg[1:-1] if arg.startswith("(") and arg.endswith(")") else arg
    exact = to_latex(value)
    line = rf"{lhs} = {act.latex}({arg})"
    # the exact form only where it says more than the argument: 1/(1 + e^{-2}), not
    # 1/(1 + e^{31/50}) for sigma(-0.62) (a fraction the sheet never wrote)
    fraction_power = r"^{\frac" in exact or r"^{-\frac" in exact
    if exact != decimal(value) and len(exact) <= 60 and r"\tanh" not in exact and not fraction_power:
        line += f" = {exact}"
    return line + rf" \approx {decimal(value)}"


def units(d_h: int) -> range:
    """The units whose arithmetic the key writes out (all of a small state)."""
    return range(min(d_h, 2))


def x_sym(t: int, T: int) -> str:
    """``x`` (T = 1) or ``x_{t}``."""
    return "x" if T == 1 else sub("x", t, T)


def prev_unit(letter: str, t: int, T: int, j: int) -> str:
    """Unit j of the state before time step t: ``h_{0,1}`` at t = 1, else ``h_{t-1,1}``."""
    return f"{letter}_{{0,{j + 1}}}" if t == 1 else sub(letter, t - 1, T, j)


def num(x) -> str:
    """A number inside a worked product: a short given decimal as is, else 4 decimals."""
    return blocks.work_term(x, limit=0)[0]
