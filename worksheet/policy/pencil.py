r"""The rounding chain: what a student does with a pencil, and what the key agrees with.

Every hand-mode sheet prints this chain in one line (:data:`HAND_LINE`), the
docs/student.md explains it ("Doing a sheet by hand"), and the key, the worked lines,
``worksheet check`` and the Moodle export all follow it:

1. **Exact.** The given numbers are exact, and so is every step whose entries
   are integers or short decimals (Q, K, V, scores, scaled scores with an
   integer √d_k, a layer-norm mean and variance, a feed-forward layer of
   integers): they are written as they are.
2. **Tables.** A value of e^x, σ(x), tanh(x), √x, sin x or cos x is read from
   the table the sheet prints, to :data:`TABLE_PLACES` (4) decimals; a table's
   arguments are exact (``e^{-1/2}``), or lie on a standard grid of every 0.01
   (the recurrent cells, which carry their state to 2 decimals; the additive
   and cosine alignment scores), where an argument with more decimals is
   rounded to 2 first (:mod:`worksheet.steps.standard_tables`, docs/tables.md).
3. **Rounding.** Every other result is rounded once, to :data:`PLACES` (4)
   decimals, when it is written down (an entry, not each term of it), and the
   next step goes on from the rounded value.  Halves round away from zero.
4. **Tolerance.** An answer within :data:`TOLERANCE` (0.001) of the key --
   the value this chain gives -- or of the exact value gets full marks; an
   exact form (``e^2/(1+e^2)``) that equals the exact value does too.
   ``worksheet check`` uses this tolerance for every decimal and integer, and
   the Moodle export gives it to every numerical field.

Calculator-mode sheets print :data:`CALCULATOR_LINE` (no tables: a calculator
gives every value; round the answer to 4 decimals; the same tolerance).

The chain keeps a student's error small: a table value is off by at most
half a unit in its 4th place, a rounded entry by as much, and a step
computed from rounded entries stays within a few units of the 4th place of
the exact value, well inside the tolerance; ``worksheet check`` also
recomputes a step from the student's own earlier answers (carried forward),
so an error never accumulates from step to step.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = [
    "PLACES",
    "TABLE_PLACES",
    "TOLERANCE",
    "HAND_LINE",
    "CALCULATOR_LINE",
    "TABLE_FUNCTIONS",
    "hand_line",
    "line_for",
    "round_places",
    "round_ratio",
]

PLACES = 4  # decimals an intermediate result and an answer are rounded to
TABLE_PLACES = 4  # decimals of every value a sheet's table prints
TOLERANCE = 0.001  # full marks within this of the key (or of the exact value)

TABLE_FUNCTIONS = ("exp", "sigma", "tanh", "sqrt", "sin", "cos")  # the functions a sheet's tables can hold
_TABLE_LATEX = {
    "exp": "$e^x$",
    "sigma": r"$\sigma$",
    "tanh": r"$\tanh$",
    "sqrt": r"$\sqrt{x}$",
    "sin": r"$\sin$",
    "cos": r"$\cos$",
}


def hand_line(functions=TABLE_FUNCTIONS, where: str = "sheet") -> str:
    """The hand sheet's line, naming exactly the ``functions`` whose tables it prints
    (none: no word of tables); ``where``: "sheet", or "page" for a web page."""
    names = [_TABLE_LATEX[f] for f in TABLE_FUNCTIONS if f in set(functions)]
    listed = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + (names[-1] if names else "")
    tables = "the tables" if len(names) > 1 else "the table"
    read = f" read {listed} from {tables} on this {where} (4 decimals);" if names else ""
    return (
        r"By hand: given numbers, and results that are whole numbers or short decimals, are exact;"
        rf"{read} round every other result once, to 4 decimals, and go on with the rounded value; "
        r"an answer within 0.001 of the key gets full marks."
    )


HAND_LINE = hand_line()
CALCULATOR_LINE = (
    r"With a calculator: keep full precision while you work, round each answer to 4 "
    r"decimals; an answer within 0.001 of the key gets full marks."
)


def line_for(numbers: str, functions=TABLE_FUNCTIONS, where: str = "sheet") -> str:
    """The line a sheet (or a web ``where="page"``) prints for its number mode (``hand``,
    naming the ``functions`` whose tables it prints; else the calculator's)."""
    return hand_line(functions, where) if numbers == "hand" else CALCULATOR_LINE


def round_places(x: Fraction, places: int = PLACES) -> Fraction:
    """``x`` rounded to ``places`` decimals, halves away from zero (as by hand), exactly."""
    if type(x) is Fraction:
        return round_ratio(x._numerator, x._denominator, places)
    if type(x) is int:
        return Fraction(x)
    scale = 10**places
    n = x * scale
    whole = int(n)  # towards zero
    rest = abs(n - whole)
    if rest * 2 >= 1:
        whole += 1 if n > 0 else -1
    return Fraction(whole, scale)


def round_ratio(num: int, den: int, places: int = PLACES) -> Fraction:
    """``num / den`` (``den > 0``) rounded as :func:`round_places` rounds it, in
    integers, without making the fraction first: ``|num| 10^places = q den + r``,
    and q goes up when r is half of den or more."""
    scale = 10**places
    q, r = divmod(abs(num) * scale, den)
    if 2 * r >= den:
        q += 1
    return Fraction(-q if num < 0 else q, scale)
