"""The stable JSON export (docs/reference.md): problems with their full key.

Every quantity is a 2-D list; ``exact`` holds sympy-syntax strings
(``"1/(1 + exp(-2))"``, ``"-oo"``), ``value`` floats (``null`` for -inf).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

from ..policy.errors import WorksheetError
from ..solution.document import Document
from ..solution.maths import as_latex
from ..exact import to_float, to_str
from ..solution.problem import Problem, Quantity, Step
from .artefacts import Artefact, Format


def _exact(m) -> list:
    return [[x if isinstance(x, str) else to_str(x) for x in row] for row in m]


def _value(q: Quantity) -> list:
    """The float64 nearest each exact entry (correctly rounded: the same on every
    machine), never numpy's cross-check ``q.value``; ``null`` for -oo.  A label
    entry (next-token's prediction) keeps its value, the label's index."""
    return [
        [_label_value(q, i, j) if isinstance(x, str) else _nearest(x) for j, x in enumerate(row)]
        for i, row in enumerate(q.exact)
    ]


def _nearest(x):
    if type(x) is Fraction:  # the common case: int / int is correctly rounded
        try:
            return x._numerator / x._denominator
        except OverflowError:
            return None
    v = to_float(x)
    return None if v in _INF or v != v else v


_INF = (math.inf, -math.inf)


def _label_value(q: Quantity, i: int, j: int):
    v = float(q.value[i, j])
    return None if math.isinf(v) or math.isnan(v) else v


def quantity(q: Quantity) -> dict:
    out = {"exact": _exact(q.exact), "value": _value(q)}
    if q.rows:
        out["rows"] = list(q.rows)
    if q.cols:
        out["cols"] = list(q.cols)
    return out


def unrounded(p: Problem) -> dict:
    """The unrounded chain of a problem with steps carried rounded: the kind's
    reference on the exact inputs at high precision (mpmath, no libm: the same on
    every machine), each entry's float64 correctly rounded from it.  {} when the
    problem carries nothing rounded (or the reference cannot run on it)."""
    if not any(s.rounded for s in p.steps):
        return {}
    from ..kinds.base import precise_reference
    from ..steps.precise import to_float64

    inputs = {k: q.exact for k, q in p.inputs.items() if not any(isinstance(x, str) for row in q.exact for x in row)}
    try:
        out = precise_reference(p.kind, p.params, inputs)
    except (ArithmeticError, ValueError, KeyError, TypeError, IndexError, WorksheetError):
        return {}
    return {s.name: to_float64(out[s.name]) for s in p.steps if s.rounded and s.name in out}


def _floats(arr, like: Quantity) -> list | None:
    """An array as the JSON's ``value`` rows (``null`` for an infinity), if it has ``like``'s shape."""
    if arr.shape != like.value.shape:
        return None
    return [[None if math.isinf(v) or math.isnan(v) else v for v in row] for row in arr.tolist()]


def step_mistakes(p: Problem) -> dict:
    """Step name -> its named mistakes (values at 60 digits, correctly rounded to float64,
    and the codes its entries tell apart): :func:`worksheet.kinds.mistake_values.of_problem`,
    the one source of the key's ``"mistakes"`` and of Moodle's 0% answers."""
    from ..kinds.mistake_values import of_problem

    return of_problem(p)


def add_mistakes(steps: list[dict], found: dict) -> None:
    """Each step's ``"mistakes"`` (code -> the value the mistake gives, in the step's
    shape, ``null`` for -oo) and ``"diagnosable"`` (the codes its entries tell apart)."""
    for s in steps:
        got = found.get(s["name"])
        if got is not None:
            s["mistakes"] = {
                c: [[None if math.isinf(v) else v for v in row] for row in a.tolist()] for c, a in got.values.items()
            }
            s["diagnosable"] = list(got.diagnosable)


def step(s: Step, unrounded: dict | None = None) -> dict:
    """A step; a step carried rounded (``"rounded": true``) has as ``value`` the
    unrounded computation (docs/reference.md), its ``exact`` the carried value."""
    out = {"name": s.name, "title": s.title, "formula": as_latex(s.formula), **quantity(s)}
    if s.rounded and unrounded and s.name in unrounded:
        out["value"] = _floats(unrounded[s.name], s) or out["value"]
    if s.work:
        out["work"] = [as_latex(w) for w in s.work]
    if s.rounded:
        out["rounded"] = True
    if s.written:
        out["written"] = s.written
    if not s.on_sheet:
        out["on_sheet"] = False  # on the key only: the sheet (and a Moodle question) does not ask it
    return out


def problem(p: Problem) -> dict:
    chain = unrounded(p)
    out = {
        "kind": p.kind,
        "seed": p.seed,
        "params": p.params,
        "inputs": {name: quantity(q) for name, q in p.inputs.items()},
        "steps": [step(s, chain) for s in p.steps],
    }
    add_mistakes(out["steps"], step_mistakes(p))
    for s in out["steps"]:  # a spec's own points and weights of steps (worksheet.solution.points)
        if s["name"] in p.step_points:
            s["points"] = p.step_points[s["name"]]
        if s["name"] in p.step_weights:
            s["weight"] = p.step_weights[s["name"]]
    out.update(p.record)
    if p.points is not None:
        out["points"] = p.points
    return out


def fingerprint(problems: list) -> str:
    """A short hash of problems (their JSON objects): kind, params, inputs and each
    step's name and exact entries, so fields added to the JSON later leave it
    alone.  SHA-256 of canonical JSON: the same on every machine.  ``worksheet
    template`` writes it into answer files; ``check`` refuses one made for other
    problems (:mod:`worksheet.check.key`)."""
    import hashlib
    import json

    core = [
        [
            p.get("kind"),
            p.get("params"),
            {n: q.get("exact") for n, q in (p.get("inputs") or {}).items() if isinstance(q, dict)},
            [[s.get("name"), s.get("exact", s.get("written"))] for s in p.get("steps") or [] if isinstance(s, dict)],
        ]
        for p in problems
        if isinstance(p, dict)
    ]
    text = json.dumps(core, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def document(doc: Document) -> dict:
    problems = [problem(p) for p in doc.problems]
    return {
        "title": doc.title,
        "seed": doc.seed,
        "numbers": doc.numbers,
        "fingerprint": fingerprint(problems),
        "problems": problems,
    }


def variant_text(doc: Document) -> "Raw":
    """One variant's entry of the combined JSON (see :func:`variants_text`),
    already encoded, so variants can be encoded in parallel and joined."""
    out: list[str] = []
    problems = [problem(p) for p in doc.problems]
    entry = {"id": doc.variant, "seed": doc.seed, "fingerprint": fingerprint(problems), "problems": problems}
    _encode(entry, _VARIANT_NL, out)
    return Raw("".join(out))


def variants_text(first: Document, parts) -> str:
    """The JSON of an exam's variants: title, number mode, the fingerprint of them
    all (a hash of each variant's, in order) and each variant (``parts``, from
    :func:`variant_text`) with its id, seed, fingerprint and problems."""
    import hashlib
    import re

    prints = [m.group(1) for m in (re.search(r'"fingerprint": "([0-9a-f]+)"', p) for p in parts) if m]
    whole = hashlib.sha256(" ".join(prints).encode()).hexdigest()[:12]
    return dumps({"title": first.title, "numbers": first.numbers, "fingerprint": whole, "variants": list(parts)})


_VARIANT_NL = "\n  "  # the items of "variants", two levels down


class Raw(str):
    """JSON text encoded already, at the level where it is put."""


def dumps(obj) -> str:
    """``json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False)`` and a
    newline, byte for byte, about three times faster (see :func:`_encode`)."""
    out: list[str] = []
    _encode(obj, "\n", out)
    out.append("\n")
    return "".join(out)


_str = json.encoder.encode_basestring  # the C escaper json.dumps uses with ensure_ascii=False
_float = float.__repr__
_int = int.__repr__


def _scalar(o) -> str:
    if type(o) is Raw:
        return str.__str__(o)
    if isinstance(o, str):
        return _str(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return _int(o)
    if isinstance(o, float):
        if o != o or o in (math.inf, -math.inf):
            raise ValueError(f"Out of range float values are not JSON compliant: {o!r}")
        return _float(o)
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _finite(o: float) -> str:
    if o != o or o in (math.inf, -math.inf):
        raise ValueError(f"Out of range float values are not JSON compliant: {o!r}")
    return _float(o)


# exact types only (bool before int; subclasses such as numpy floats take _scalar)
_LEAF = {
    str: _str,
    Raw: str.__str__,
    float: _finite,
    int: _int,
    bool: lambda o: "true" if o else "false",
    type(None): lambda o: "null",
}


def _encode(o, nl: str, out: list) -> None:
    """Append the JSON of ``o``; ``nl`` is the newline plus indent of its level."""
    inner = nl + " "
    if isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        out.append("{")
        sep = inner
        for k, v in o.items():
            if not isinstance(k, str):
                k = _key(k)
            out.append(sep + _str(k) + ": ")
            _encode(v, inner, out)
            sep = "," + inner
        out.append(nl + "}")
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        try:  # a row of numbers or strings: the common case, in one join
            out.append("[" + inner + ("," + inner).join([_LEAF[type(x)](x) for x in o]) + nl + "]")
            return
        except KeyError:
            pass
        if all(type(row) is list for row in o):  # a matrix: rows of leaves, in one join
            deeper = inner + " "
            try:
                rows = [
                    "[" + deeper + ("," + deeper).join([_LEAF[type(x)](x) for x in row]) + inner + "]" if row else "[]"
                    for row in o
                ]
            except KeyError:
                pass
            else:
                out.append("[" + inner + ("," + inner).join(rows) + nl + "]")
                return
        if not any(isinstance(x, (dict, list, tuple)) for x in o):
            out.append("[" + inner + ("," + inner).join(map(_scalar, o)) + nl + "]")
            return
        out.append("[")
        sep = inner
        for v in o:
            out.append(sep)
            _encode(v, inner, out)
            sep = "," + inner
        out.append(nl + "]")
    else:
        out.append(_scalar(o))


def _key(k) -> str:
    """Non-string dict keys as json.dumps writes them."""
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return _int(k)
    if isinstance(k, float):
        return _float(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


class JsonRenderer(Format):
    """The key is the only JSON file; an exam's variants are its ``variants``."""

    name = "json"
    ext = "json"

    def artefacts(self) -> tuple[Artefact, ...]:
        return (Artefact("key", ".json"),)

    def part(self, doc, index, count, role, *, variants=True, bank="worksheet"):
        """A variant's entry of ``variants``, or the whole JSON of a lone document."""
        return variant_text(doc) if variants else dumps(document(doc))

    def join(self, outlines, parts, role, *, variants=True) -> str:
        return variants_text(outlines[0], parts) if variants else parts[0]

    def __init__(self, templates=None):
        pass

    def render(self, doc: Document, *, key: bool = True) -> str:
        return dumps(document(doc))
