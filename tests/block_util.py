"""Helpers shared by the block kinds' tests (encoder-block, decoder-block)."""

from __future__ import annotations

import numpy as np


def generator(kind):
    """``generated(seed, **params)``: the block kind's generated matrices, its solved
    problem and its parameters."""

    def generated(seed, **kw):
        params = kind.Params(**kw)
        m = kind.generate(np.random.default_rng(seed), params)
        return m, kind.solve(m, params), params

    return generated


def check_step_names(p, prefixes: list[str], last: str) -> list[str]:
    """The steps come part by part in the order of ``prefixes``, every part there; the
    last step is ``output`` (the last part's ``last + "output"`` is not asked for
    again) and no name is used twice.  Returns the step names."""
    names = [s.name for s in p.steps]
    seen = [n.split(".")[0] + "." for n in names[:-1]]
    assert seen == sorted(seen, key=prefixes.index) and set(seen) == set(prefixes)
    assert names[-1] == "output" and last + "output" not in names
    assert len(set(names)) == len(names), "the output is asked for once"
    return names
