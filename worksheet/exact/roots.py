"""Rational powers of rationals, over prime factors: the integer arithmetic
behind roots (``sqrt(2) sqrt(6) = 2 sqrt(3)``).

Trial division stops at 10^5 (:data:`TRIAL_BOUND`): a cofactor left over is
kept as one base after taking out exact powers and common factors.  Works on
ints and Fractions only (no expression types).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from .core import ONE, ZERO, rational

TRIAL_BOUND = 100_000  # roots: prime factors are looked for up to here
_PRIMES: list = []


def _primes() -> list:
    """The primes below TRIAL_BOUND (a sieve, built on first use)."""
    if not _PRIMES:
        n = TRIAL_BOUND
        sieve = bytearray([1]) * n
        sieve[0:2] = b"\0\0"
        for p in range(2, math.isqrt(n) + 1):
            if sieve[p]:
                sieve[p * p :: p] = bytes(len(range(p * p, n, p)))
        _PRIMES.extend(p for p in range(n) if sieve[p])
    return _PRIMES


@lru_cache(maxsize=4096)
def _factor(n: int) -> tuple[tuple[int, int], ...]:
    """``n >= 2`` as ((base, multiplicity), ...): primes below TRIAL_BOUND, and
    what is left as one base that is not a perfect power (prime if below
    TRIAL_BOUND**2)."""
    out = []
    if n < 10**8:
        candidates = range(2, math.isqrt(n) + 1)
    else:
        candidates = _primes()
    for p in candidates:
        if p * p > n:
            break
        if n % p == 0:
            k = 0
            while n % p == 0:
                n //= p
                k += 1
            out.append((p, k))
    if n > 1:
        root, k = _perfect_power(n)
        out.append((root, k))
    return tuple(out)


def _perfect_power(n: int) -> tuple[int, int]:
    """``n = root ** k`` with the largest k (root not a perfect power)."""
    if n < TRIAL_BOUND * TRIAL_BOUND:
        return n, 1  # n has no prime factor below the bound: n is prime
    for k in range(n.bit_length(), 1, -1):
        r = _int_root(n, k)
        if r is not None:
            return r, k
    return n, 1


# long: one case per node type of the canonical tree
def radical_parts(rads) -> tuple[Fraction, list]:  # noqa: C901
    """``prod b ** e`` for rational b > 0: (rational coefficient, [(m, g/d), ...]),
    the roots ``m ** (g/d)`` in the order of d (:func:`.tree._radicals` makes
    them Pow factors and sorts them).

    Exponents are summed per prime; the whole part of each goes to the
    coefficient; what is left, in (0, 1), is grouped by root: primes p with
    exponents n_p / d give one factor ``m ** (g/d)``, g = gcd(n_p),
    ``m = prod p ** (n_p / g)``.
    """
    coeff = ONE
    exps: dict[int, Fraction] = {}
    for b, e in rads:
        if e._denominator == 1:
            coeff *= b**e._numerator
            continue
        if b < 0:
            raise ValueError("root of a negative number")
        if b == 0:
            if e < 0:
                raise ZeroDivisionError("0 to a negative power")
            return ZERO, []
        for n, s in ((b._numerator, e), (b._denominator, -e)):
            if n != 1:
                for p, k in _factor(n):
                    exps[p] = exps.get(p, 0) + k * s
    if len(exps) > 1 and max(exps) >= TRIAL_BOUND * TRIAL_BOUND:
        exps = _coprime(exps)
    groups: dict[int, list] = {}
    for p, r in exps.items():
        whole = r.numerator // r.denominator
        if whole:
            coeff *= Fraction(p) ** whole
        r -= whole
        if r:
            groups.setdefault(r.denominator, []).append((p, r.numerator))
    factors = []
    for d in sorted(groups):
        items = groups[d]
        g = 0
        for _, n in items:
            g = math.gcd(g, n)
        m = 1
        for p, n in items:
            m *= p ** (n // g)
        factors.append((rational(m), Fraction(g, d)))
    return coeff, factors


def _coprime(exps: dict) -> dict:
    """Split large bases on their common factors until they are pairwise coprime."""
    exps = dict(exps)
    while True:
        keys = sorted(exps)
        big = [p for p in keys if p >= TRIAL_BOUND * TRIAL_BOUND]  # only these may be composite
        pair = next(((a, b) for a in big for b in keys if b != a and math.gcd(a, b) > 1), None)
        if pair is None:
            return {p: r for p, r in exps.items() if r}
        a, b = pair
        g = math.gcd(a, b)
        ea, eb = exps.pop(a), exps.pop(b)
        for n, r in ((g, ea + eb), (a // g, ea), (b // g, eb)):
            if n > 1:
                for p, k in _factor(n):
                    exps[p] = exps.get(p, 0) + k * r


def _int_root(n: int, q: int):
    """The exact q-th root of a non-negative int, or None.

    A root below 2 (q >= bits of n) is decided at once; otherwise integer
    Newton steps (no float overflow or rounding, a few big-int powers).
    """
    if n < 2:
        return n
    if q == 2:
        r = math.isqrt(n)
        return r if r * r == n else None
    if q >= n.bit_length() or n.bit_length() > 20000:
        return None
    x = 1 << -(-n.bit_length() // q)  # >= the root; integer Newton from above
    while True:
        y = ((q - 1) * x + n // x ** (q - 1)) // q
        if y >= x:
            return x if x**q == n else None
        x = y
