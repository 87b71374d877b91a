"""Another machine, simulated (tests/test_same_bytes.py): with this folder first on
PYTHONPATH, Python imports this module at start-up, and from then on the
transcendental functions of ``math`` and numpy answer one bit up (the next double
towards +inf), as another CPU, libm or numpy build may.  Results every libm gets
exactly (an integral, infinite or nan result, an argument 0) are left alone.  The
number of changed results is appended to the file named by WS_NUDGE_LOG at exit,
so a test can see that the nudge was active."""

import atexit
import math
import os

_count = [0]
_NAMES = ("exp", "expm1", "log1p", "tanh", "sin", "cos")


def _up(v):
    """The next double up, where a libm could differ; else ``v``."""
    if type(v) is float and math.isfinite(v) and v != round(v):
        _count[0] += 1
        return math.nextafter(v, math.inf)
    return v


def _nudge_math(name):
    f = getattr(math, name)

    def g(x, *rest):
        r = f(x, *rest)
        return r if x == 0 else _up(r)

    g.__name__ = name
    setattr(math, name, g)


for _name in _NAMES:
    _nudge_math(_name)

try:
    import numpy as _np
except ImportError:  # pragma: no cover - numpy is a dependency
    _np = None


def _nudge_numpy(name):
    f = getattr(_np, name)

    def g(*args, **kwargs):
        r = f(*args, **kwargs)
        if "out" in kwargs or "where" in kwargs:
            return r
        if isinstance(r, _np.ndarray) and r.dtype == _np.float64:
            m = _np.isfinite(r) & (r != _np.round(r))
            try:
                m &= _np.broadcast_to(_np.asarray(args[0]) != 0, r.shape)
            except (ValueError, IndexError):
                pass
            if m.any():
                _count[0] += int(m.sum())
                r[m] = _np.nextafter(r[m], _np.inf)
        elif isinstance(r, _np.float64) and args and _np.all(_np.asarray(args[0]) != 0):
            nudged = _up(float(r))
            r = _np.float64(nudged)
        return r

    g.__name__ = name
    setattr(_np, name, g)


if _np is not None:
    for _name in _NAMES + ("power",):
        _nudge_numpy(_name)


@atexit.register
def _report():
    path = os.environ.get("WS_NUDGE_LOG")
    if path and _count[0]:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{_count[0]}\n")
