"""The stable JSON export (BRIEF.md): problems with their full key.

Every quantity is a 2-D list; ``exact`` holds sympy-syntax strings
(``"1/(1 + exp(-2))"``, ``"-oo"``), ``value`` floats (``null`` for -inf).
"""

from __future__ import annotations

import json
import math

from ..document import Document
from ..exact import to_str
from ..model import Problem, Quantity, Step


def _exact(m) -> list:
    return [[x if isinstance(x, str) else to_str(x) for x in row] for row in m]


def _value(v) -> list:
    return [[None if math.isinf(x) or math.isnan(x) else float(x) for x in row] for row in v.tolist()]


def quantity(q: Quantity) -> dict:
    out = {"exact": _exact(q.exact), "value": _value(q.value)}
    if q.rows:
        out["rows"] = list(q.rows)
    if q.cols:
        out["cols"] = list(q.cols)
    return out


def step(s: Step) -> dict:
    out = {"name": s.name, "title": s.title, "formula": s.formula, **quantity(s)}
    if s.work:
        out["work"] = list(s.work)
    if s.rounded:
        out["rounded"] = True
    return out


def problem(p: Problem) -> dict:
    out = {"kind": p.kind, "seed": p.seed, "params": p.params,
           "inputs": {name: quantity(q) for name, q in p.inputs.items()},
           "steps": [step(s) for s in p.steps]}
    if p.points is not None:
        out["points"] = p.points
    return out


def document(doc: Document) -> dict:
    return {"title": doc.title, "seed": doc.seed, "numbers": doc.numbers,
            "problems": [problem(p) for p in doc.problems]}


def dumps(obj) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


class JsonRenderer:
    """Same interface as the template renderers; the key is the only JSON file."""

    name = "json"
    ext = "json"
    has_sheet = False

    def __init__(self, templates=None):
        pass

    def render(self, doc: Document, *, key: bool = True) -> str:
        return dumps(document(doc))
