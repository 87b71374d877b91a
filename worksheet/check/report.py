"""The report model: per entry, step, problem and file, as text for people
(:meth:`Report.text`) or JSON for tools (:meth:`Report.to_dict`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ..kinds import mistakes
from ..policy.errors import printable
from ..solution.points import points_number, points_text

STATUSES = ("correct", "carried-forward", "incorrect", "unreadable", "missing", "by-person")
SYMBOLS = {
    "correct": "✓",
    "carried-forward": "↪",
    "incorrect": "✗",
    "unreadable": "?",
    "missing": "–",
    "by-person": "✎",
}
UNREAD_SHOWN = 20  # entries that could not be read, listed in a step's line (the JSON lists them all)
BY_PERSON = "marked by a person (a written answer; the key has a model answer)"


def unit(x, pointed: bool) -> str:
    """``2 points``, ``1 point``, ``1 mark``: marks when the key has no points (one per step)."""
    word = "point" if pointed else "mark"
    return f"{points_text(x)} {word}{'' if x == 1 else 's'}"


def step_ranges(numbers: list[int]) -> str:
    """``4–7, 9``: 1-based step numbers grouped into runs."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


@dataclass
class Cell:
    """A wrong entry, 1-based."""

    row: int
    col: int
    given: str
    expected: str
    expected_value: float | None

    def to_dict(self) -> dict:
        v = self.expected_value
        return {
            "row": self.row,
            "col": self.col,
            "given": self.given,
            "expected": self.expected,
            "expected_value": v if v is not None and math.isfinite(v) else None,
        }


@dataclass
class Unread:
    """An entry that could not be read, 1-based: never counted as wrong, never a
    source of carried credit; the other entries of its step are still marked."""

    row: int
    col: int
    given: str  # the entry as it was read (printable, cut short)
    reason: str  # why, in words a student understands

    @property
    def message(self) -> str:
        return f"row {self.row}, column {self.col}: {self.reason} (read as {self.given!r})"

    def to_dict(self) -> dict:
        return {"row": self.row, "col": self.col, "read_as": self.given, "reason": self.reason}


@dataclass
class StepResult:
    name: str
    status: str
    mistake: str | None = None
    cells: list[Cell] = field(default_factory=list)  # the first few wrong entries
    wrong_count: int = 0
    against: str = "key"  # "key", or "own": the values carried forward from the student's answers
    carried_from: list[str] = field(default_factory=list)
    given_shape: tuple[int, int] | None = None  # when it differs from the key's
    expected_shape: tuple[int, int] | None = None
    title: str = ""
    out_of: int = 1  # the points (a Fraction) or marks checking can give
    by_hand: int = 0  # a written step's points, for a person to give
    unreadable: str = ""  # the answer could not be read: why, with its line
    unread_cells: list[Unread] = field(default_factory=list)  # entries that could not be read
    refused: str = ""  # carried credit refused: "follows from your Q, but Q is all zeros: no credit"

    @property
    def marks(self) -> int:
        return self.out_of if self.status in ("correct", "carried-forward") else 0

    @property
    def message(self) -> str:
        """One line for people (without the step name)."""
        if self.status == "correct":
            return "correct"
        if self.status == "missing":
            return "missing"
        if self.status == "by-person":
            return f"to mark by hand: {BY_PERSON}"
        if self.unread_cells:
            shown = "; ".join(u.message for u in self.unread_cells[:UNREAD_SHOWN])
            more = len(self.unread_cells) - UNREAD_SHOWN
            parts = [f"could not be read: {self.unreadable}{shown}" + (f"; and {more} more" if more > 0 else "")]
            if self.cells:
                parts.append(
                    f"of the entries read, {self.wrong_count} {'is' if self.wrong_count == 1 else 'are'} wrong"
                )
            else:
                parts.append("every entry read is right")
            return "; ".join(parts) + "."
        if self.unreadable:
            return f"could not be read: {self.unreadable}"
        if self.refused:
            return f"incorrect: {self.refused}."
        if self.status == "carried-forward":
            if self.carried_from:
                return f"carried forward: follows from your own {', '.join(self.carried_from)}"
            return "carried forward: follows from your own (rounded) earlier answers"
        parts = []
        if self.mistake:
            parts.append(mistakes.CATALOGUE[self.mistake].sentence)
        elif self.wrong_count and self.expected_shape:
            total = self.expected_shape[0] * self.expected_shape[1]
            parts.append(f"incorrect: {self.wrong_count} of {total} entries are wrong.")
        else:
            parts.append("incorrect.")
        if self.given_shape:
            parts.append(
                f"Your matrix is {self.given_shape[0]} x {self.given_shape[1]}; "
                f"the key's is {self.expected_shape[0]} x {self.expected_shape[1]}."
            )
        if self.cells:
            c = self.cells[0]
            whose = " (from your earlier answers)" if self.against == "own" else ""
            parts.append(f"Row {c.row}, column {c.col}: expected {c.expected}{whose}, given {c.given}.")
        return " ".join(parts)

    def to_dict(self) -> dict:
        out = {
            "name": self.name,
            "status": self.status,
            "mistake": self.mistake,
            "message": self.message,
            "wrong_cells": [c.to_dict() for c in self.cells],
            "wrong_count": self.wrong_count,
            "marks": points_number(self.marks),
            "out_of": points_number(self.out_of),
        }
        if self.status == "by-person":
            out["to_mark_by_hand"] = points_number(self.by_hand)
        if self.status == "incorrect":
            out["against"] = "key" if self.against == "key" else "carried-forward"
        if self.status == "carried-forward":
            out["carried_from"] = list(self.carried_from)
        if self.unreadable or self.unread_cells:
            out["unreadable"] = self.unreadable + "; ".join(u.message for u in self.unread_cells)
        if self.unread_cells:
            out["unreadable_cells"] = [u.to_dict() for u in self.unread_cells]
        if self.refused:
            out["refused"] = self.refused
        if self.given_shape:
            out["given_shape"] = list(self.given_shape)
            out["expected_shape"] = list(self.expected_shape)
        return out


@dataclass
class ProblemResult:
    number: int
    kind: str
    steps: list[StepResult]
    carried_forward: bool  # the kind supports carried-forward marks
    title: str = ""  # the kind's title, plain text
    pointed: bool = False  # marks are the spec's points (else one mark per step)

    @property
    def marks(self) -> int:
        return sum((s.marks for s in self.steps), 0)

    @property
    def out_of(self) -> int:
        return sum((s.out_of for s in self.steps), 0)

    @property
    def by_hand(self) -> int:
        """Points of the written steps, for a person to give."""
        return sum((s.by_hand for s in self.steps), 0)

    @property
    def maximum(self) -> int:
        """Every point of the problem: marked here and by hand."""
        return self.out_of + self.by_hand

    def name(self) -> str:
        """``problem 2 (Scaled dot-product attention)``."""
        return f"problem {self.number} ({self.title or self.kind})"

    def gaps(self) -> list[str]:
        """What lost marks, grouped: ``steps 4–7 missing``, ``scaled incorrect (no-scaling)``."""
        out = []
        missing = [k for k, s in enumerate(self.steps, start=1) if s.status == "missing"]
        if missing:
            out.append(f"step{'s' * (len(missing) > 1)} {step_ranges(missing)} missing")
        for k, s in enumerate(self.steps, start=1):
            if s.status == "unreadable":
                out.append(f"step {k} {s.name} could not be read")
            if s.status == "incorrect":
                out.append(f"step {k} {s.name} incorrect" + (f" ({s.mistake})" if s.mistake else ""))
        return out

    def to_dict(self) -> dict:
        out = {
            "problem": self.number,
            "kind": self.kind,
            "title": self.title,
            "carried_forward_available": self.carried_forward,
            "steps": [s.to_dict() for s in self.steps],
            "marks": points_number(self.marks),
            "out_of": points_number(self.out_of),
        }
        if self.by_hand:
            out["to_mark_by_hand"] = points_number(self.by_hand)
        return out


@dataclass
class Report:
    """The marks of one answer file."""

    key: str
    answers: str
    problems: list[ProblemResult]
    student: str | None = None
    variant: str | None = None
    unread: list[str] = field(default_factory=list)  # lines of the file that belong to no step

    @property
    def marks(self) -> int:
        return sum((p.marks for p in self.problems), 0)

    @property
    def out_of(self) -> int:
        return sum((p.out_of for p in self.problems), 0)

    @property
    def by_hand(self) -> int:
        return sum((p.by_hand for p in self.problems), 0)

    @property
    def pointed(self) -> bool:
        return any(p.pointed for p in self.problems)

    @property
    def ok(self) -> bool:
        """Every step correct or carried forward, and every line of the file read."""
        return not self.unread and all(s.marks == s.out_of for p in self.problems for s in p.steps)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def mistakes(self) -> list[tuple[int, str, str]]:
        """(problem, step, code) of every diagnosed mistake."""
        return [(p.number, s.name, s.mistake) for p in self.problems for s in p.steps if s.mistake]

    def focus(self) -> list[str]:
        """The named mistakes to practise (``worksheet practice --focus``), in
        first-seen order; an arithmetic slip is no topic to practise."""
        out: list[str] = []
        for _, _, code in self.mistakes():
            if code != mistakes.SLIP and code not in out:
                out.append(code)
        return out

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "answers": self.answers,
            "student": self.student,
            "variant": self.variant or None,
            "problems": [p.to_dict() for p in self.problems],
            "marks": points_number(self.marks),
            "out_of": points_number(self.out_of),
            "to_mark_by_hand": points_number(self.by_hand),
            "units": "points" if self.pointed else "marks",
            "unread": list(self.unread),
            "practice_focus": self.focus(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def text(self) -> str:
        who = f" ({self.student})" if self.student else ""
        lines = [f"Marking {self.answers}{who} against {self.key}"]
        many = len(self.problems) > 1
        pointed = self.pointed
        for p in self.problems:
            lines.append(f"Problem {p.number}: {p.kind}" + (f" ({p.title})" if p.title and pointed else ""))
            if not p.carried_forward and any(s.status != "by-person" for s in p.steps):
                lines.append("  (no carried-forward marks for this kind yet: steps are marked against the key only)")
            width = max(len(s.name) for s in p.steps)
            for s in p.steps:
                message = s.message
                if s.status == "by-person":
                    message = f"to mark by hand ({unit(s.by_hand, pointed)}): {BY_PERSON}"
                elif pointed:
                    message = f"{message} [{points_text(s.marks)}/{points_text(s.out_of)}]"
                lines.append(f"  {SYMBOLS[s.status]} {s.name:<{width}}  {message}")
            if many or pointed:
                lines.append(
                    f"  {'points' if pointed else 'marks'}: {points_text(p.marks)}/{points_text(p.out_of)}"
                    + (f", {unit(p.by_hand, pointed)} to mark by hand" if p.by_hand and pointed else "")
                )
        if self.unread:
            lines.append("Not marked (these lines could not be read; the rest of the file was marked):")
            lines += [f"  {u}" for u in self.unread]
        if self.focus():
            lines.append(f"Practise: worksheet practice --focus {','.join(self.focus())}")
        total = f"Total: {points_text(self.marks)}/{points_text(self.out_of)}"
        if pointed:
            total += " points" + (
                f", and {unit(self.by_hand, True)} to mark by hand (of {points_text(self.out_of + self.by_hand)})"
                if self.by_hand
                else ""
            )
        lines.append(total)
        return "\n".join(map(printable, lines)) + "\n"  # names from files cannot drive the terminal
