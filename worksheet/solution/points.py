"""Points: a problem's points split over its steps, exactly.

An exam spec gives each section ``points``; by default every step of the
problem (a written question included) gets an equal share.  A section may say
more (see :mod:`worksheet.build.spec`):

* ``step_points = {scores = 4, written = 2}`` gives those steps exactly those
  points; the rest of the section's points are split over the other steps;
* ``step_weights = {output = 2}`` gives a step a larger share of what is split
  (every step not named weighs 1).

The JSON key records a step's own ``"points"`` or ``"weight"`` (only those the
spec gave) beside the problem's ``"points"``; ``worksheet check`` and the
Moodle export split them again with :func:`split_points`, so the sheet, the
key, Moodle and the marks always agree.  Shares are :class:`fractions.Fraction`;
:func:`points_text` writes one rounded from the exact value.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable

__all__ = ["split_points", "points_text", "points_number", "as_fraction"]


def as_fraction(x: Any) -> Fraction:
    """A number of points (int, float read from its shortest text, Fraction) exactly."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, float):
        return Fraction(repr(x))
    return Fraction(x)


def split_points(total: Any, steps: Iterable[tuple[str, Any, Any]]) -> dict[str, Fraction]:
    """Each step's share of ``total`` points.

    ``steps`` holds ``(name, weight, points)`` with ``weight`` and ``points``
    None where the spec says nothing.  Steps with their own points keep them;
    what is left of ``total`` is split over the others in proportion to their
    weights (1 each by default).  Raises ValueError when the steps' own points
    exceed ``total``, or cover every step but do not add up to it.
    """
    steps = list(steps)
    total = as_fraction(total)
    fixed = {name: as_fraction(p) for name, _, p in steps if p is not None}
    rest = total - sum(fixed.values(), Fraction(0))
    if rest < 0:
        raise ValueError(
            f"the steps' own points add up to {points_text(sum(fixed.values()))}, "
            f"more than the {points_text(total)} of the problem"
        )
    free = [(name, as_fraction(1 if w is None else w)) for name, w, p in steps if p is None]
    weight = sum((w for _, w in free), Fraction(0))
    if not free:
        if rest:
            raise ValueError(
                f"every step has its own points and they add up to "
                f"{points_text(total - rest)}, not the problem's {points_text(total)}"
            )
        return fixed
    if weight <= 0:
        raise ValueError("the steps without their own points weigh nothing")
    shares = {name: rest * w / weight for name, w in free}
    return {name: fixed.get(name, shares.get(name)) for name, _, _ in steps}


def points_text(x: Any, places: int = 2) -> str:
    """Points for people: ``5``, ``2.5``, ``1.67`` (rounded half to even from the exact value)."""
    x = as_fraction(x)
    if x.denominator == 1:
        return str(x.numerator)
    scaled = x * 10**places
    n = scaled.numerator // scaled.denominator
    r = scaled - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2):
        n += 1
    text = format(Decimal(n).scaleb(-places), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def points_number(x: Any) -> int | float:
    """Points for JSON: an int, or the float of :func:`points_text` (rounded from the exact value)."""
    text = points_text(x)
    return int(text) if "." not in text else float(text)
