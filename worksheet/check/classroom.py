"""A class folder: every answer file in it marked against one key, and the
class summary CSV."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..policy.errors import InputError, OutputError, WorksheetError, printable
from ..policy.files import write_all
from .key import read_key
from .marking import check_answers
from ..solution.points import points_number, points_text
from .report import Report, unit
from .tolerance import Tolerance

FOLDER_SUFFIXES = (".toml", ".json", ".csv")


@dataclass
class FileResult:
    file: str
    report: Report | None = None
    error: str | None = None


@dataclass
class ClassReport:
    key: str
    folder: str
    files: list[FileResult]
    summary: str | None = None  # where the summary CSV was written

    @property
    def exit_code(self) -> int:
        """0 when every file could be marked (marks lost are the summary's news, not an
        error), 1 when some file could not be (its row says why)."""
        return 0 if all(f.report is not None for f in self.files) else 1

    def columns(self) -> list[tuple[int, str]]:
        """(problem number, header) of each problem: ``1 Scaled dot-product attention (of 14)``."""
        cols: dict[int, str] = {}
        for f in self.files:
            if f.report is None:
                continue
            for p in f.report.problems:
                cols.setdefault(p.number, f"{p.number} {p.title or p.kind} (of {points_text(p.maximum)})")
        return sorted(cols.items())

    def maximum(self):
        """The most a file can get (marked here and by hand), from the first marked file."""
        return next((f.report.out_of + f.report.by_hand for f in self.files if f.report is not None), 0)

    def summary_csv(self) -> str:
        """file, student, variant, status, points (or marks) per problem, the total (the
        maximum in each header), what is left to mark by hand, what lost marks, mistakes, error.

        Numbers are written as numbers; every text cell (file and student names,
        mistakes, errors) is written so that no spreadsheet runs it as a formula
        (:mod:`worksheet.policy.csv_cells`)."""
        from ..policy.csv_cells import csv_text

        cols = self.columns()
        pointed = any(f.report.pointed for f in self.files if f.report is not None)
        rows = [
            [
                "file",
                "student",
                "variant",
                "status",
                *(h for _, h in cols),
                f"total (of {points_text(self.maximum())})",
                "to mark by hand",
                "lost",
                "mistakes",
                "error",
            ]
        ]
        for f in self.files:
            r = f.report
            if r is None:
                rows.append([f.file, "", "", "error", *([""] * len(cols)), "", "", "", "", f.error or ""])
                continue
            marks = {p.number: points_number(p.marks) for p in r.problems}
            hand = "; ".join(
                f"problem {p.number}: {s.name} ({unit(s.by_hand, pointed)})"
                for p in r.problems
                for s in p.steps
                if s.status == "by-person"
            )
            lost = "; ".join(f"problem {p.number}: {', '.join(p.gaps())}" for p in r.problems if p.gaps())
            found = "; ".join(f"problem {p}: {s}: {c}" for p, s, c in r.mistakes())
            status = "correct" if r.ok else "marked"
            rows.append(
                [
                    f.file,
                    r.student or "",
                    r.variant or "",
                    status,
                    *(marks.get(n, "") for n, _ in cols),
                    points_number(r.marks),
                    hand,
                    lost,
                    found,
                    "; ".join(f"not read: {u}" for u in r.unread),
                ]
            )
        return csv_text(rows)

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "folder": self.folder,
            "summary": self.summary,
            "files": [
                {"file": f.file, "error": f.error, "report": f.report.to_dict() if f.report else None}
                for f in self.files
            ],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def text(self) -> str:
        width = max((len(f.file) for f in self.files), default=4)
        lines = [
            f"Marking {len(self.files)} answer file{'s' * (len(self.files) != 1)} in {self.folder} against {self.key}"
        ]
        for f in self.files:
            if f.report is None:
                lines.append(f"  {f.file:<{width}}  error: {f.error}")
                continue
            r = f.report
            bad = [f"{p.name()}: {', '.join(p.gaps())}" for p in r.problems if p.gaps()]
            hand = f" ({unit(r.by_hand, r.pointed)} to mark by hand)" if r.by_hand and r.pointed else ""
            bad += [f"not read: {u}" for u in r.unread]
            lines.append(
                f"  {f.file:<{width}}  {points_text(r.marks)}/{points_text(r.out_of)}{hand}"
                + (f"  {'; '.join(bad)}" if bad else "")
            )
        if self.summary:
            lines.append(f"wrote {self.summary}")
        return "\n".join(map(printable, lines)) + "\n"  # names from files cannot drive the terminal


def answer_files(folder: Path | str, *, skip: Sequence[Path] = ()) -> list[Path]:
    """The answer files of a folder: *.toml, *.json, *.csv, not hidden, by name."""
    folder = Path(folder)
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(f"cannot read the folder ({exc.strerror or exc})", file=str(folder)) from None
    skipped = {p.resolve() for p in skip}
    return [
        p
        for p in entries
        if p.is_file()
        and not p.name.startswith(".")
        and p.suffix.lower() in FOLDER_SUFFIXES
        and p.resolve() not in skipped
    ]


def check_folder(
    key: Path | str,
    folder: Path | str,
    *,
    summary: Path | str | None = None,
    force: bool = False,
    write: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
) -> ClassReport:
    """Mark every answer file in ``folder``; write the class summary CSV.

    ``summary`` defaults to ``folder/summary.csv`` (never read as an answer
    file); an existing summary is kept unless ``force``.  A file that cannot
    be read is reported with its error and the others are still marked.
    """
    tol = Tolerance(rtol, atol)
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder", file=str(folder))
    summary_path = Path(summary) if summary is not None else folder / "summary.csv"
    if write and summary_path.exists() and not force:
        raise OutputError(f"{summary_path} already exists; use --force to overwrite")
    k = read_key(key)
    files = answer_files(folder, skip=[Path(key), summary_path])
    if not files:
        raise InputError("no answer files (*.toml, *.json, *.csv) in the folder", file=str(folder))
    results = []
    for path in files:
        try:
            results.append(FileResult(path.name, report=check_answers(k, path, tolerance=tol)))
        except WorksheetError as exc:
            results.append(FileResult(path.name, error=str(exc)))
        except Exception as exc:  # one odd file must not stop a class's marking
            results.append(FileResult(path.name, error=f"could not be marked ({type(exc).__name__})"))
    report = ClassReport(k.path, str(folder), results)
    if write:
        write_all({summary_path: report.summary_csv()}, force=True)
        report.summary = str(summary_path)
    return report
