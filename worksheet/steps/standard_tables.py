r"""The standard tables a hand-mode sheet prints: the same for every variant of a kind.

Like the statistical tables of an exam, a standard table covers the whole range a
kind's hand mode can produce, on a grid, and so says nothing about one problem's
numbers.  Three shapes:

* :func:`sqrt_aids`: √x like an exam's table of square roots: x = 0.00 ... 9.99 at
  every 0.01, then x = 10.0 ... 99.9 at every 0.1 (a carried layer norm's variance);
  a longer x is read rounded to 2 decimals below 10 and to 1 decimal from 10 on
  (:func:`sqrt_argument`);
* :func:`integer_aid`: σ or tanh at every integer in [-top, top] (a recurrent
  cell's first pre-activations), printed as a short list;
* :func:`grid_aid`: σ(x), tanh x or e^{-x} at every x = 0.00, 0.01, ..., top,
  printed as an exam's table of the normal distribution (a row per first decimal,
  a column per second decimal); σ(-x) = 1 - σ(x) and tanh(-x) = -tanh x give the
  negative arguments.  A value whose argument has more decimals than the grid is
  read at the argument rounded to 2 decimals (half away from zero): the rule the
  sheet states and the key follows (:data:`GRID_PLACES`).

Every value is rounded from the exact one (:func:`worksheet.solution.number_format.decimal`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from ..exact import add, exp, mul, power, sqrt, tanh
from ..solution.number_format import decimal
from ..solution.problem import Aid

__all__ = [
    "GRID_DRIFT",
    "GRID_PLACES",
    "SQRT_TOP",
    "add_table",
    "argument_text",
    "grid_aid",
    "integer_aid",
    "sigmoid",
    "grid_argument",
    "sqrt_aids",
    "sqrt_argument",
]

GRID_PLACES = 2  # a grid table lists every 0.01; a longer argument is rounded to it
GRID_DRIFT = 0.02  # how far a chain read on the 0.01 grid (and what follows it) may lie from the exact one


def sigmoid(a):
    """The logistic function σ(a) = 1 / (1 + e^{-a}), exactly (σ(0) = 1/2)."""
    return power(add(1, exp(mul(-1, a))), -1)


# func: (its LaTeX, the exact value at x >= 0 of what the table lists, the title's head, its rule for -x)
_FUNCS = {
    "sigma": (r"\sigma", sigmoid, r"Values of $\sigma(x)$", r"; $\sigma(-x) = 1 - \sigma(x)$"),
    "tanh": (r"\tanh", tanh, r"Values of $\tanh x$", r"; $\tanh(-x) = -\tanh x$"),
    "exp": ("e", lambda x: exp(mul(-1, x)), r"Values of $e^{-x}$", ""),
}


def _arg(k: int) -> str:
    """k/100 written as a table argument: ``0.37``, ``2.1``, ``3``."""
    whole, cents = divmod(k, 100)
    return f"{whole}" if cents == 0 else f"{whole}.{cents:02d}".rstrip("0")


def _entry(func: str, k: int) -> str:
    latex = _FUNCS[func][0]
    if func == "exp":
        return "e^{0}" if k == 0 else f"e^{{-{_arg(k)}}}"
    return f"{latex}({_arg(k)})"


def grid_argument(x: Fraction) -> Fraction:
    """``x`` rounded to the grid (2 decimals, half away from zero): where a table is read."""
    n = x * 10**GRID_PLACES
    whole = int(n)
    if abs(n - whole) * 2 >= 1:
        whole += 1 if n > 0 else -1
    return Fraction(whole, 10**GRID_PLACES)


@lru_cache(maxsize=8)
def grid_aid(func: str, top: int) -> Aid:
    """``func`` ("sigma", "tanh" or "exp": e^{-x}) at every x = 0.00, 0.01, ..., ``top``."""
    _, value, head, rule = _FUNCS[func]
    last = top * 100
    values = {k: decimal(value(Fraction(k, 100))) for k in range(last + 1)}
    grid = [("x",) + tuple(f"0.0{c}" for c in range(10))]
    for r in range(last // 10 + 1):
        grid.append((f"{r // 10}.{r % 10}",) + tuple(values.get(10 * r + c, "") for c in range(10)))
    title = (
        f"{head} for $x = 0.00, 0.01, \\ldots, {top}.00$ (row: $x$ to one decimal; column: its second decimal; "
        f"round a longer $x$ to 2 decimals first){rule}"
    )
    sign = -1 if func == "exp" else 1  # the exact arguments: e^{-x} is e at -x
    return Aid(
        title,
        tuple((_entry(func, k), v) for k, v in values.items()),
        tuple(Fraction(sign * k, 100) for k in values),
        tuple(grid),
    )


def add_table(aids: list[Aid], aid: Aid) -> None:
    """Put the grid table ``aid`` in ``aids`` once.  The same table with a shorter range (its
    title up to " for " names it) gives way to a longer one: a file whose numbers reach
    further gets one longer table, not a second one beside the standard."""
    head = aid.title.split(" for ")[0]
    for i, old in enumerate(aids):
        if old.grid and old.title.split(" for ")[0] == head:
            if len(old.grid) < len(aid.grid):
                aids[i] = aid
            return
    aids.append(aid)


def integer_aid(func: str, top: int) -> Aid:
    """σ or tanh at every integer in [-top, top], as a list."""
    latex, value, head, _ = _FUNCS[func]
    xs = tuple(Fraction(k) for k in range(-top, top + 1))
    return Aid(f"{head} at the integers", tuple((f"{latex}({int(x)})", decimal(value(x))) for x in xs), xs)


SQRT_TOP = 100  # the square-root tables cover x < 100; a file's larger variance extends the second


def _round(x: Fraction, places: int) -> Fraction:
    n = x * 10**places
    whole = int(n)
    if abs(n - whole) * 2 >= 1:
        whole += 1 if n > 0 else -1
    return Fraction(whole, 10**places)


def sqrt_argument(x: Fraction) -> Fraction:
    """Where the square-root tables are read: ``x`` rounded to 2 decimals below 10, else to 1."""
    fine = _round(Fraction(x), 2)
    return fine if fine < 10 else _round(Fraction(x), 1)


def argument_text(x: Fraction) -> str:
    """A table's argument (2 decimals at most) as printed: ``4.5``, ``13.9``, ``3``."""
    return _arg(int(x * 100))


def _sqrt_entry(cents: int) -> str:
    return rf"\sqrt{{{_arg(cents)}}}"


@lru_cache(maxsize=4)
def sqrt_aids(top: int = SQRT_TOP) -> tuple[Aid, Aid]:
    """√x for x = 0.00 ... 9.99 (every 0.01) and x = 10.0 ... ``top`` - 0.1 (every 0.1)."""
    fine = {k: decimal(sqrt(Fraction(k, 100))) for k in range(1000)}
    coarse = {k: decimal(sqrt(Fraction(k, 10))) for k in range(100, 10 * top)}
    fine_grid = [("x",) + tuple(f"0.0{c}" for c in range(10))]
    fine_grid += [(f"{r // 10}.{r % 10}",) + tuple(fine[10 * r + c] for c in range(10)) for r in range(100)]
    coarse_grid = [("x",) + tuple(f"0.{c}" for c in range(10))]
    coarse_grid += [(f"{r}",) + tuple(coarse[10 * r + c] for c in range(10)) for r in range(10, top)]
    rule = "round a longer $x$ to 2 decimals below 10 and to 1 decimal from 10 on, first"
    return (
        Aid(
            rf"Values of $\sqrt{{x}}$ below 10 for $x = 0.00, 0.01, \ldots, 9.99$ (row: $x$ to one decimal; "
            rf"column: its second decimal; {rule})",
            tuple((_sqrt_entry(k), v) for k, v in fine.items()),
            tuple(Fraction(k, 100) for k in fine),
            tuple(fine_grid),
        ),
        Aid(
            rf"Values of $\sqrt{{x}}$ from 10 on for $x = 10.0, 10.1, \ldots, {top - 1}.9$ (row: the whole number; "
            rf"column: the first decimal; {rule})",
            tuple((_sqrt_entry(10 * k), v) for k, v in coarse.items()),
            tuple(Fraction(k, 10) for k in coarse),
            tuple(coarse_grid),
        ),
    )
