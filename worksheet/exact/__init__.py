"""Small exact arithmetic for worked examples.

Why not sympy on the hot path: building and printing a 3 x 3 softmax with sympy
costs ~50 ms and prints ``\\frac{1}{e (e^{-2} + e^{-1} + 1)}``.  The values a
worksheet needs are few and simple, so we keep them in a tiny expression tree:

* rationals are plain :class:`fractions.Fraction` (fast, exact);
* everything else is an :class:`Expr`: ``Add``, ``Mul`` (a rational
  coefficient times factors), ``Pow`` (a rational power of an integer or of an
  expression; ``sqrt`` is ``Pow(m, 1/2)``) and ``Func`` (``exp``, ``sin``,
  ``cos``, ``tanh``);
* a masked score is the singleton :data:`NEG_INF` (``-oo``).

Every value prints in sympy's ``str`` syntax (``1/(1 + exp(-2))``, ``sqrt(3)``,
``-oo``) so that ``sympy.sympify`` of the printed string gives the same number,
prints in LaTeX (``\\frac{1}{1 + e^{-2}}``), converts to float, and converts to
sympy with :func:`to_sympy` for library users and tests (sympy is the test
oracle: ``tests/test_exact_oracle.py``).

The normal form is canonical: the constructors give one tree per value
whatever the order of the arguments, so equal values are equal objects with
equal hashes and equal strings, and a value that is rational is a Fraction.

* ``add`` folds rationals, collects like terms and sorts the terms by a total
  order on their structure (:func:`_order`): exponentials by the size of the
  exponent, ``1 + e^{-1} + e^{-2}``, ``2 + e + e^{2}``.
* ``mul`` folds rationals, merges powers of one base (``e^a e^b = e^{a+b}``)
  and sorts its factors.  Rational powers of rationals are kept over prime
  factors and printed grouped by root (``sqrt(2) sqrt(6) = 2 sqrt(3)``,
  ``16^{1/3} 4^{1/3} = 4``, ``1/10000^{2/5} = 10^{2/5}/100``), with exponents
  in (0, 1) and the rest pulled into the coefficient (so ``1/sqrt(3)`` is
  ``sqrt(3)/3``).  Trial division stops at 10^5 (:data:`TRIAL_BOUND`): a
  cofactor left over is kept as one base after taking out exact powers and
  common factors, so a root whose radicand has two distinct prime factors above
  10^5 is correct but may not be fully merged with other roots.
* A sum that is a base (``1/(1 + 2 e^{-1})``) is kept *primitive*: integer
  coefficients with no common factor and a positive leading one, the content
  going to the coefficient; so a ratio of proportional sums is rational
  (``(-2 - 4 e^{-1}) / (1 + 2 e^{-1}) = -2``).  A product with a sum factor
  (exponent 1) carries its coefficient inside that sum:
  ``(1/2 + e^{-1}) / (1 + e^{-1})``.
* ``sin(-x) = -sin(x)``, ``tanh(-x) = -tanh(x)``, ``cos(-x) = cos(x)``
  (``-x`` read off the printed sign).

Signs are decided exactly (:func:`sign`): from the structure where it tells
(a sum of exponentials is positive), else by interval arithmetic, first in
outward-rounded floats, then with mpmath intervals at growing precision; a
value whose sign stays undecided up to 4096 bits (a zero the normal form does
not see, e.g. ``sin(1)^2 + cos(1)^2 - 1``) raises ValueError rather than guess.

``-oo`` (a masked score) obeys ``-oo + x = -oo``, ``c (-oo) = -oo`` for
``c > 0``, ``e^{-oo} = 0``, ``tanh(-oo) = -1``, ``1/(-oo) = 0``.  Anything
that would be undefined or ``+oo`` (``0 (-oo)``, ``-1 (-oo)``, ``sin(-oo)``)
raises ValueError: masked scores are never negated or zeroed.  A softmax row
with no unmasked entry raises ValueError.

The package, one job per module (each imports only those before it; the
node types reach the constructors, ``float`` and ``str`` through
:data:`.nodes.OPERATIONS`, which those modules fill in):

* :mod:`.core`: the number core: shared Fractions, :func:`rational`, the memo wrapper;
* :mod:`.roots`: rational powers of rationals over prime factors (integers only);
* :mod:`.nodes`: the node types ``Add``, ``Mul``, ``Pow``, ``Func``, ``NegInf``, :func:`key`;
* :mod:`.numeric`: :func:`to_float` and the exact :func:`sign`;
* :mod:`.rounding`: the correctly rounded double and N-place decimals of a
  value, decided at rising precision (what every written decimal comes from);
* :mod:`.tree`: the canonical form: ``add``, ``mul``, ``power``, ``exp``, ...;
* :mod:`.printing`: :data:`to_str` and :data:`to_latex`;
* :mod:`.mathml`: :data:`to_mathml` (presentation MathML, for HTML), on the same printer base;
* :mod:`.sympy_view`: :func:`to_sympy`.

The softmax of exact rows (``softmax_row``, ``ratio_of_exp_sums``,
``exp_combination``, ``over_sum``) builds on this layer: it lives in
:mod:`worksheet.steps.softmax_steps`.

This layer imports nothing of worksheet but :mod:`worksheet.policy`'s errors
(``to_sympy`` without sympy installed raises ``MissingExtraError``): every
layer above builds on it.

Floats (:func:`to_float`) are the correctly rounded double of the value, the
same on every machine (no libm), and never raise: ``e^{1000}`` is ``inf``,
``e^{-1000}`` is ``0.0``, ``1/(1 + e^{729})`` the subnormal float it is,
``10^{400}`` is ``inf``.
"""

from __future__ import annotations

from .core import HALF, ONE, ZERO, is_rational, rational
from .nodes import NEG_INF, Add, Exact, Expr, Func, Mul, NegInf, Pow, exact, key
from .numeric import sign, to_float
from .mathml import to_mathml
from .printing import to_latex, to_str
from .roots import TRIAL_BOUND
from .sympy_view import to_sympy
from .tree import add, cos, exp, mul, power, sin, sqrt, tanh

__all__ = [
    "Expr",
    "Add",
    "Mul",
    "Pow",
    "Func",
    "NegInf",
    "NEG_INF",
    "Exact",
    "exact",
    "key",
    "rational",
    "sqrt",
    "exp",
    "sin",
    "cos",
    "tanh",
    "power",
    "add",
    "mul",
    "sign",
    "to_float",
    "to_str",
    "to_latex",
    "to_mathml",
    "to_sympy",
    "is_rational",
    "HALF",
    "ZERO",
    "ONE",
    "TRIAL_BOUND",
]
