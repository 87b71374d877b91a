"""The report model: per entry, step, problem and file, as text for people
(:meth:`Report.text`) or JSON for tools (:meth:`Report.to_dict`)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ..kinds import mistakes
from ..policy.errors import printable

STATUSES = ("correct", "carried-forward", "incorrect", "missing", "by-person")
SYMBOLS = {"correct": "✓", "carried-forward": "↪", "incorrect": "✗", "missing": "–", "by-person": "✎"}
BY_PERSON = "marked by a person (a written answer; the key has a model answer)"


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
        return {"row": self.row, "col": self.col, "given": self.given, "expected": self.expected,
                "expected_value": v if v is not None and math.isfinite(v) else None}


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
    out_of: int = 1

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
            return BY_PERSON
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
            parts.append(f"Your matrix is {self.given_shape[0]} x {self.given_shape[1]}; "
                         f"the key's is {self.expected_shape[0]} x {self.expected_shape[1]}.")
        if self.cells:
            c = self.cells[0]
            whose = " (from your earlier answers)" if self.against == "own" else ""
            parts.append(f"Row {c.row}, column {c.col}: expected {c.expected}{whose}, given {c.given}.")
        return " ".join(parts)

    def to_dict(self) -> dict:
        out = {"name": self.name, "status": self.status, "mistake": self.mistake,
               "message": self.message,
               "wrong_cells": [c.to_dict() for c in self.cells], "wrong_count": self.wrong_count,
               "marks": self.marks, "out_of": self.out_of}
        if self.status == "incorrect":
            out["against"] = "key" if self.against == "key" else "carried-forward"
        if self.status == "carried-forward":
            out["carried_from"] = list(self.carried_from)
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

    @property
    def marks(self) -> int:
        return sum(s.marks for s in self.steps)

    @property
    def out_of(self) -> int:
        return sum(s.out_of for s in self.steps)

    def to_dict(self) -> dict:
        return {"problem": self.number, "kind": self.kind,
                "carried_forward_available": self.carried_forward,
                "steps": [s.to_dict() for s in self.steps],
                "marks": self.marks, "out_of": self.out_of}


@dataclass
class Report:
    """The marks of one answer file."""

    key: str
    answers: str
    problems: list[ProblemResult]
    student: str | None = None
    variant: str | None = None

    @property
    def marks(self) -> int:
        return sum(p.marks for p in self.problems)

    @property
    def out_of(self) -> int:
        return sum(p.out_of for p in self.problems)

    @property
    def ok(self) -> bool:
        """Every step correct or carried forward."""
        return all(s.marks == s.out_of for p in self.problems for s in p.steps)

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
        return {"key": self.key, "answers": self.answers, "student": self.student,
                "variant": self.variant or None,
                "problems": [p.to_dict() for p in self.problems],
                "marks": self.marks, "out_of": self.out_of, "practice_focus": self.focus()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def text(self) -> str:
        who = f" ({self.student})" if self.student else ""
        lines = [f"Marking {self.answers}{who} against {self.key}"]
        many = len(self.problems) > 1
        for p in self.problems:
            lines.append(f"Problem {p.number}: {p.kind}")
            if not p.carried_forward:
                lines.append("  (no carried-forward marks for this kind yet: steps are marked "
                             "against the key only)")
            width = max(len(s.name) for s in p.steps)
            for s in p.steps:
                lines.append(f"  {SYMBOLS[s.status]} {s.name:<{width}}  {s.message}")
            if many:
                lines.append(f"  marks: {p.marks}/{p.out_of}")
        if self.focus():
            lines.append(f"Practise: worksheet practice --focus {','.join(self.focus())}")
        lines.append(f"Total: {self.marks}/{self.out_of}")
        return "\n".join(map(printable, lines)) + "\n"  # names from files cannot drive the terminal
