"""Comparing an output with its golden copy (tests/golden/...).

What is exact is compared exactly, what is a float with a tolerance (rel
1e-12): the files are byte-identical on every machine (every decimal is
rounded from the exact value), but a golden test must not depend on that.

* JSON: the same structure, keys and strings (every ``exact`` string) and
  integers; every float within rel 1e-12 (``null`` stays ``null``).
* Moodle XML: the text outside the numbers of the ``NUMERICAL`` answer fields
  exactly; those numbers (answer and tolerance) within rel 1e-12.
* Anything else (md, tex, html): the text exactly.

``WORKSHEET_UPDATE_GOLDEN=1`` writes the golden copies instead (read the diff).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

UPDATE = os.environ.get("WORKSHEET_UPDATE_GOLDEN") == "1"
REL = 1e-12

# the answers and tolerances of a Cloze NUMERICAL field: {w:NUMERICAL:=v:t~=v:t}
_NUMERICAL = re.compile(r"\{\d+:(?:NUMERICAL|NM):[^}]*\}")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def check(path: Path, text: str) -> None:
    """``text`` equals the golden file ``path`` as this module says (or is written to it)."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with WORKSHEET_UPDATE_GOLDEN=1"
    want = path.read_text(encoding="utf-8")
    where = f"{path.parent.name}/{path.name} differs from its golden file (WORKSHEET_UPDATE_GOLDEN=1 regenerates)"
    if path.suffix == ".json":
        same_json(json.loads(text), json.loads(want), where)
    elif path.name.endswith("moodle.xml"):
        same_moodle(text, want, where)
    else:
        assert text == want, where


def same_json(got, want, where: str, at: str = "$") -> None:
    """Equal JSON values: strings, ints, keys, structure exactly; floats within rel 1e-12."""
    if isinstance(want, float) or isinstance(got, float):
        assert (
            isinstance(got, (int, float))
            and isinstance(want, (int, float))
            and not isinstance(got, bool)
            and not isinstance(want, bool)
        ), f"{where}: {at}: {got!r} != {want!r}"
        assert math.isclose(got, want, rel_tol=REL, abs_tol=0.0), f"{where}: {at}: {got!r} != {want!r}"
        return
    assert type(got) is type(want), f"{where}: {at}: {got!r} != {want!r}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{where}: {at}: keys {list(got)} != {list(want)}"
        for k in want:
            same_json(got[k], want[k], where, f"{at}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), f"{where}: {at}: {len(got)} items != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same_json(g, w, where, f"{at}[{i}]")
    else:
        assert got == want, f"{where}: {at}: {got!r} != {want!r}"


def _split(text: str) -> tuple[list[str], list[float]]:
    """The text with every number of a NUMERICAL field cut out, and those numbers."""
    parts, numbers, last = [], [], 0
    for field in _NUMERICAL.finditer(text):
        body_start = text.index(":", text.index(":", field.start()) + 1) + 1  # after "{w:NUMERICAL:"
        for m in _NUMBER.finditer(text, body_start, field.end()):
            parts.append(text[last : m.start()])
            numbers.append(float(m.group()))
            last = m.end()
    parts.append(text[last:])
    return parts, numbers


def same_moodle(got: str, want: str, where: str) -> None:
    """Equal Moodle XML: the text exactly, the NUMERICAL answers within rel 1e-12."""
    g_parts, g_nums = _split(got)
    w_parts, w_nums = _split(want)
    assert g_parts == w_parts, where
    for g, w in zip(g_nums, w_nums):
        assert math.isclose(g, w, rel_tol=REL, abs_tol=0.0), f"{where}: answer {g!r} != {w!r}"
