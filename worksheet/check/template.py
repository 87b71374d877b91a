"""Blank answer files for a key (``worksheet template KEY``): one per variant,
holding every cell a student fills in, in the formats ``worksheet check`` reads.

TOML (one table per problem, a matrix of ``""`` per step)::

    variant = "v01"
    fingerprint = "3f2a9c0b1d4e"
    student = ""

    [1]  # Scaled dot-product attention (14 points)
    scores = [["", ""], ["", ""]]

CSV (one line per cell; the value after the last comma)::

    problem,step,row,col,value
    ,variant,,,v01
    ,fingerprint,,,3f2a9c0b1d4e
    ,student,,,
    1,scores,1,1,

``fingerprint`` is a short hash of the variant's problems (the key's): ``worksheet
check`` refuses the file against another key or variant, naming what it was
made for.  A cell left blank is not an answer: a step left wholly blank is "missing".
Every text taken from the key (titles, step names, labels) is written as one
printable line: a key cannot add lines to an answer file.
A written step (words) is a comment: it is answered on paper and marked by hand.
Steps the key holds but the sheet does not ask (the corrected steps of
find-the-mistake, whose names would give the wrong step away) are not listed;
a comment says how to add them.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..solution.points import points_text
from .key import Key, KeyProblem, read_key

FORMATS = ("toml", "csv")

_HOW = (
    "an integer, a decimal (4 places), a fraction such as 3/4, an exact form such as 1/(1+e^-2), "
    "or -inf where a mask puts minus infinity"
)


def template_files(key: Path | str | Key, fmt: str = "toml", *, name: str | None = None) -> dict[str, str]:
    """``{file name: text}``: one blank answer file per variant of the key
    (``NAME-answers-v01.toml``, ...; ``NAME-answers.toml`` for a key without variants)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown template format {fmt!r}")
    k = key if isinstance(key, Key) else read_key(key)
    base = name or Path(k.path).stem
    out = {}
    for vid in k.variants:  # ids checked by read_key: letters, digits, - and _
        problems = k.problems(vid) if vid else k.problems()
        suffix = f"-{vid}" if vid else ""
        text = (_toml if fmt == "toml" else _csv)(
            _line(Path(k.path).name), vid, problems, k.variants[vid], k.fingerprint(vid)
        )
        file = f"{base}-answers{suffix}.{fmt}"
        if Path(file).name != file:  # pragma: no cover - the ids are checked
            raise ValueError(f"not a file name: {file!r}")
        out[file] = text
    return out


def _line(text: str) -> str:
    """Text from the key for one line of a comment: printable, no line breaks."""
    return "".join(c if c.isprintable() else "?" for c in str(text))[:200]


def _about(p: KeyProblem) -> str:
    title = _line(p.title or p.kind)
    if p.points is None:
        return title
    return f"{title} ({points_text(p.points)} point{'s' * (p.points != 1)})"


def _hidden(raw_steps: list) -> set[str]:
    return {s["name"] for s in raw_steps if isinstance(s, dict) and s.get("on_sheet") is False}


def _steps(k_raw: list, p: KeyProblem):
    """(step, kind of line) of a problem: "grid", "words", or "hidden" (key only)."""
    raw_steps = k_raw[p.number - 1].get("steps", [])
    hidden = _hidden(raw_steps)
    for s in p.steps:
        if s.name in hidden:
            yield s, "hidden"
        elif s.written:
            yield s, "words"
        else:
            yield s, "grid"


def _choices(k_raw: list, p: KeyProblem, name: str) -> list[str] | None:
    """The labels a label step may take: the column labels of the first quantity that lists
    the key's label (next-token's vocabulary, as the Moodle drop-down does); [] for a label
    step with no such list (find-the-mistake's step and mistake: named on the sheet); None
    for a step of numbers."""
    raw = k_raw[p.number - 1]
    step = next((s for s in raw.get("steps", []) if s.get("name") == name), {})
    exact = step.get("exact") or [[None]]
    if not p.step(name).labels:
        return None
    label = exact[0][0]
    for q in [*(raw.get("inputs") or {}).values(), *raw.get("steps", [])]:
        cols = q.get("cols") if isinstance(q, dict) else None
        if isinstance(cols, list) and label in cols:
            return [str(c) for c in cols]
    return []


def _toml_key(name: str) -> str:
    return name if all(c.isalnum() or c in "_-" for c in name) else json.dumps(name)


def _toml(key_name: str, vid: str, problems: list[KeyProblem], k_raw: list, fingerprint: str) -> str:
    lines = [
        f"# Answers to {key_name}" + (f", variant {vid}" if vid else "") + ".",
        f'# Replace every "" by your answer: {_HOW}.',
        "# Leave a step blank if you did not do it. A matrix is a list of rows.",
        f"# Marked with: worksheet check {key_name} THIS_FILE",
        "",
    ]
    if vid:
        lines.append(f"variant = {json.dumps(vid)}")
    lines.append(f"fingerprint = {json.dumps(fingerprint)}  # binds this file to its key: leave it")
    lines += ['student = ""', '# decimal = "comma"  # uncomment to write a decimal comma: "0,5" for a half', ""]
    for p in problems:
        lines.append(f"[{p.number}]  # {_about(p)}")
        hidden = []
        for s, what in _steps(k_raw, p):
            if what == "hidden":
                hidden.append(s.name)
            elif what == "words":
                lines.append(f"# {_line(s.name)}: answered in words on the sheet (marked by hand)")
            else:
                choices = _choices(k_raw, p, s.name)
                if choices is not None:
                    lines.append(
                        f"# {_line(s.name)}: "
                        + (f"one of {_line(', '.join(choices))}" if choices else "a name, as the sheet lists them")
                    )
                rows, cols = s.shape
                lines.append(
                    f"{_toml_key(s.name)} = [" + ", ".join(["[" + ", ".join(['""'] * cols) + "]"] * rows) + "]"
                )
        if hidden:
            lines.append("# the corrected steps, from the wrong one on: add each as  name = [[...]]")
        lines.append("")
    return "\n".join(lines)


def _csv(key_name: str, vid: str, problems: list[KeyProblem], k_raw: list, fingerprint: str) -> str:
    buf = io.StringIO()
    buf.write(
        f"# Answers to {key_name}"
        + (f", variant {vid}" if vid else "")
        + ". Write each answer after the last comma of its line:\n"
    )
    buf.write(f"# {_HOW}. Keep the other columns as they are; leave a line blank if you did not do it.\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["problem", "step", "row", "col", "value"])
    if vid:
        w.writerow(["", "variant", "", "", vid])
    w.writerow(["", "fingerprint", "", "", fingerprint])
    w.writerow(["", "student", "", "", ""])
    for p in problems:
        buf.write(f"# problem {p.number}: {_about(p)}\n")
        hidden = False
        for s, what in _steps(k_raw, p):
            if what == "hidden":
                hidden = True
            elif what == "words":
                buf.write(f"# {p.number} {_line(s.name)}: answered in words on the sheet (marked by hand)\n")
            else:
                choices = _choices(k_raw, p, s.name)
                if choices is not None:
                    buf.write(
                        f"# {p.number} {_line(s.name)}: "
                        + (f"one of {_line(' '.join(choices))}" if choices else "a name, as the sheet lists them")
                        + "\n"
                    )
                rows, cols = s.shape
                for i in range(1, rows + 1):
                    for j in range(1, cols + 1):
                        w.writerow([p.number, s.name, i, j, ""])
        if hidden:
            buf.write(f"# problem {p.number}: add the corrected steps, from the wrong one on, one line per entry\n")
    return buf.getvalue()
