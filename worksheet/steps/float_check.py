"""The numpy references: float64 computations of the attention steps,
independent of the exact arithmetic, that every exact step is checked against
at solve time (and that ``worksheet check`` recomputes with a student's values
carried forward: a step named in ``given`` takes that value).
"""

from __future__ import annotations

import math

import numpy as np

from . import precise

__all__ = ["given_value", "same_floats", "np_softmax", "np_causal", "np_attention", "pleasant_logits"]


def given_value(given: dict, name: str, compute):
    """The float value of step ``name`` in a reference: ``given[name]`` when the
    step is given (a student's value, carried forward by ``worksheet check``),
    else ``compute()`` (called only then) -- the one place for the pattern
    ``g[name] if name in g else <computation>``."""
    return given[name] if name in given else compute()


def same_floats(a: np.ndarray, b: np.ndarray, rtol: float = 1e-9, atol: float = 1e-12) -> bool:
    """``np.allclose(a, b, rtol, atol, equal_nan=True)`` for two float arrays of one
    shape, entry by entry in Python floats: the same test, the same float64
    arithmetic (``|a - b| <= atol + rtol |b|`` where ``b`` is finite, else
    ``a == b``; NaN matches NaN), without numpy's cost on a small matrix (a
    problem's mistakes make it thousands of times a build)."""
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        if x == y:
            continue
        if x != x and y != y:  # NaN and NaN
            continue
        if not (abs(x - y) <= atol + rtol * abs(y) and math.isfinite(y)):
            return False
    return True


def np_softmax(S: np.ndarray) -> np.ndarray:
    """Row softmax (float64: the independent check; or high precision, :mod:`.precise`); -inf entries give 0."""
    m = np.max(S, axis=-1, keepdims=True)
    e = precise.exp(S - m)
    return e / e.sum(axis=-1, keepdims=True)


def np_causal(S: np.ndarray) -> np.ndarray:
    out = S.copy()
    out[np.triu_indices(S.shape[0], k=1, m=S.shape[1])] = precise.number(-np.inf) if precise.is_high(S) else -np.inf
    return out


def np_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, causal: bool = False, given: dict | None = None
) -> dict:
    """Float64 ``softmax(Q K^T / sqrt(d_k)) V`` step by step (the independent check).

    Keys: ``scores``, ``scaled``, ``masked`` (causal only), ``weights``, ``output``.
    A step named in ``given`` takes that value and later steps follow from it
    (carried-forward marking in ``worksheet check``).
    """
    g = given or {}
    out = {"scores": given_value(g, "scores", lambda: Q @ K.T)}
    out["scaled"] = logits = given_value(g, "scaled", lambda: out["scores"] / precise.sqrt(K.shape[1]))
    if causal:
        out["masked"] = logits = given_value(g, "masked", lambda: np_causal(logits))
    out["weights"] = given_value(g, "weights", lambda: np_softmax(logits))
    out["output"] = given_value(g, "output", lambda: out["weights"] @ V)
    return out


def pleasant_logits(S: np.ndarray, *, limit: float = 6, spread: float = 4) -> bool:
    """Hand-mode test of float logits about to go through a row softmax.

    Every live (finite) entry lies in [-limit, limit], every row spans at
    most ``spread`` (so the e^x table stays short) and some row is not
    constant (so the weights are not all uniform).
    """
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.size == 0:  # (numpy's own answer or error for these)
        live = np.where(np.isinf(S), np.nan, S)
        spans = np.nanmax(live, axis=1) - np.nanmin(live, axis=1)
        return bool(np.nanmax(np.abs(live)) <= limit and spans.max() <= spread and spans.max() > 0)
    # in Python floats (a generator asks this of every draw; numpy's nan-functions cost
    # more than the test on a few entries): NaN and +-inf are not live, as nanmax skips them
    widest, biggest = -math.inf, 0.0
    for row in S.tolist():
        live = [x for x in row if x == x and x != math.inf and x != -math.inf]
        if not live:  # a row with nothing live: numpy's span is NaN, and no test passes
            return False
        top, low = max(live), min(live)
        widest = max(widest, top - low)
        biggest = max(biggest, top, -low)
    return biggest <= limit and 0 < widest <= spread
