"""No hidden global state: problems built, solved, rendered and marked in many
threads at once give, byte for byte, what one thread gives.

The practice server solves and marks in a thread pool, and a notebook may use
threads too; every numeric context (mpmath's 60-digit reference, the interval
contexts that decide signs and round decimals, the checker's comparisons) is
per thread or per call, never a precision set and restored around a call.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import mpmath
import pytest

from worksheet.build import build_document, render_document

# a mix that reaches every numeric path: sin/cos (interval rounding), tanh and
# sigma tables, exp in softmaxes, 60-digit screening of the long chains
JOBS = [
    ("attention", 1),
    ("attention:causal=true", 2),
    ("positional-encoding", 3),
    ("layer-norm", 4),
    ("lstm-cell", 5),
    ("gru-cell", 6),
    ("alignment:score=additive", 7),
    ("multi-head-attention", 8),
    ("encoder-block:positional=true", 9),
    ("find-the-mistake:of=attention", 10),
    ("softmax-scaling", 11),
    ("next-token", 12),
]


def _build(job):
    spec, seed = job
    numbers = "calculator" if "positional=true" in spec else "hand"
    doc = build_document([spec], seed=seed, options={"numbers": numbers})
    return render_document(doc, ["md", "json", "html"])


@pytest.mark.slow
def test_threads_build_the_same_bytes_as_one_thread():
    sequential = [_build(job) for job in JOBS]
    stop = threading.Event()

    def churn():  # someone else's code playing with mpmath's global precision meanwhile
        while not stop.is_set():
            with mpmath.workprec(20):
                mpmath.iv.prec = 30
                mpmath.exp(mpmath.mpf(1))

    churner = threading.Thread(target=churn)
    churner.start()
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            parallel = list(pool.map(_build, JOBS * 2))
    finally:
        stop.set()
        churner.join()
        mpmath.iv.prec = 53
    assert parallel == sequential * 2


def test_interval_contexts_are_per_thread_and_fixed():
    """The interval context at a precision is made once per thread and never
    re-set: another thread's context is another object."""
    from worksheet.exact.mp_eval import iv_context

    here = iv_context(128)
    assert iv_context(128) is here and here.prec == 128
    there = []
    t = threading.Thread(target=lambda: there.append(iv_context(128)))
    t.start()
    t.join()
    assert there[0] is not here and there[0].prec == 128
    assert mpmath.iv is not here


def test_to_sympy_without_sympy_is_one_clear_error(monkeypatch):
    """sympy is an optional extra: without it, to_sympy() says what to install."""
    import sys
    from fractions import Fraction

    from worksheet.exact import to_sympy
    from worksheet.policy.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "sympy", None)  # import sympy now fails
    with pytest.raises(MissingExtraError, match="pip install sympy"):
        to_sympy(Fraction(1, 5))
    from worksheet.build import build_document

    with pytest.raises(MissingExtraError):
        build_document(["attention"]).problems[0].to_sympy()
