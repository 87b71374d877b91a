"""What the practice pages serve, without any web: the problems (the same as
``worksheet build`` makes), the scope a lecturer's spec allows, a student's
own numbers, cell verdicts and the problems that exercise a mistake.

Everything needed to re-create a problem is in the request: a kind, its
settings (the ``KIND:key=value`` settings of the CLI), a seed and the
numbers mode; or a kind and the text of the student's own numbers.  Problems
are remembered (an LRU of recent ones) only to save work.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Mapping

from .. import kinds
from ..kinds import mistakes
from ..kinds.param_types import WHOLE, declared
from ..build import build_document, check_seed, solve_table
from ..solution.document import Document
from ..policy.errors import InputError, ParamError, WorksheetError
from ..policy.limits import MAX_SEED
from ..solution.problem import Problem
from ..build.spec import ProblemSpec, load_spec

NUMBERS = ("hand", "calculator")
MAX_SETTINGS = 12  # settings in one request
MAX_SETTING_CHARS = 200  # characters of one setting's value
OWN_LABEL = "your numbers"
_KEY = re.compile(r"[a-z][a-z0-9_-]{0,39}")


class RequestError(WorksheetError):
    """A request the pages cannot serve (a bad setting, a kind outside the scope, ...):
    its message is shown to the student, escaped."""


@dataclass(frozen=True)
class Ask:
    """A problem, as a request names it: ``table`` (own numbers) or ``seed`` + ``settings``."""

    kind: str
    settings: tuple[tuple[str, Any], ...] = ()  # sorted (name, value), names with _
    seed: int = 1
    numbers: str = "hand"
    table: str | None = None  # the text of the student's own numbers (TOML or JSON)
    words: tuple[str, str, str, int] | None = None  # a spec section's prompt, question, answer, lines

    def query(self) -> str:
        """The page's query string: ``seed=3&numbers=hand&causal=true``."""
        from urllib.parse import urlencode

        return urlencode(
            [
                ("seed", self.seed),
                ("numbers", self.numbers),
                *((k.replace("_", "-"), setting_text(v)) for k, v in self.settings),
            ]
        )

    def fields(self) -> dict:
        """The JSON of ``POST /check`` and ``/reveal`` that names this problem."""
        if self.table is not None:
            return {"kind": self.kind, "table": self.table}
        return {
            "kind": self.kind,
            "settings": {k: v for k, v in self.settings},
            "seed": self.seed,
            "numbers": self.numbers,
        }


def setting_text(v: Any) -> str:
    """A setting's value as a query or ``KIND:key=value`` writes it."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


@dataclass
class Scope:
    """The kinds and settings served: every kind with any settings, or only the
    sections of a lecturer's spec (``--spec``); and the mistakes to practise
    (``--focus``)."""

    sections: list[tuple[str, dict]] | None = None  # (kind, settings incl. numbers); None: everything
    words: list[tuple[str, str, str, int]] = field(default_factory=list)  # each section's prompt, question, ...
    title: str = ""
    focus: tuple[str, ...] = ()
    _exercises: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_spec(cls, path, focus=()) -> "Scope":
        spec = load_spec(path)
        sections = [(s.kind, {"numbers": spec.numbers, **{k: v for k, v in s.params.items()}}) for s in spec.sections]
        words = [(s.prompt, s.question, s.answer, s.lines) for s in spec.sections]
        return cls(sections, words, spec.title or "", tuple(focus))

    def kinds(self) -> list[tuple[str, str, dict]]:
        """(kind, summary, settings) for the home page, in order."""
        if self.sections is None:
            return [(k, summary, {}) for k, (_, summary) in kinds.KINDS.items()]
        return [(k, kinds.KINDS[k][1], s) for k, s in self.sections]

    def scoped(self, ask: Ask) -> Ask | None:
        """The problem as this scope serves it (a spec section's prompt and
        written question added), or None when it is outside the scope."""
        if self.sections is None:
            return ask
        settings = {**dict(ask.settings), "numbers": ask.numbers}
        if ask.table is not None:
            return ask if any(k == ask.kind for k, _ in self.sections) else None
        for (k, s), words in zip(self.sections, self.words):
            if k == ask.kind and _same(settings, s):
                return replace(ask, words=words if any(words[:3]) else None)
        return None

    def choices(self) -> list[tuple[str, dict]]:
        """(kind, settings) that problems may be drawn from (mistake practice)."""
        if self.sections is not None:
            return list(self.sections)
        out = []
        for k in kinds.names():
            fields_ = kinds.get(k).Params.field_names()
            out.append((k, {}))
            if "causal" in fields_:
                out.append((k, {"causal": True}))
            if "d_model" in fields_ and "d_k" in fields_:  # d_model unlike d_k: sqrt(d_model) is a mistake
                out.append((k, {"d_model": 6}))
        return out

    def exercising(self, code: str) -> list[tuple[str, dict]]:
        """The (kind, settings) in scope whose problems can show mistake ``code``
        (a rule for it gives a value unlike the key's, on the problem of seed 1)."""
        if code not in self._exercises:
            found = []
            for kind, settings in self.choices():
                if code in _codes_shown(kind, tuple(sorted(settings.items(), key=lambda kv: kv[0]))):
                    found.append((kind, settings))
            self._exercises[code] = found
        return self._exercises[code]


def _same(a: dict, b: dict) -> bool:
    norm = lambda d: {k.replace("-", "_"): setting_text(v) for k, v in d.items() if k != "numbers"}  # noqa: E731
    return norm(a) == norm(b) and setting_text(a.get("numbers", "hand")) == setting_text(b.get("numbers", "hand"))


@lru_cache(maxsize=64)
def _codes_shown(kind: str, settings: tuple) -> frozenset:
    from ..check.by_cell import shown_mistakes

    d = dict(settings)
    numbers = str(d.pop("numbers", "hand"))
    try:
        p = problem(Ask(kind, tuple(sorted(d.items())), 1, numbers))
    except WorksheetError:
        return frozenset()
    return frozenset(shown_mistakes(problem_json(p)))


def check_focus(codes: str | tuple | list | None) -> tuple[str, ...]:
    """Mistake codes (a comma list), each one ``check`` names (not the slip, which is no practice topic)."""
    if not codes:
        return ()
    items = codes.split(",") if isinstance(codes, str) else list(codes)
    out = []
    for c in (str(x).strip() for x in items):
        if not c:
            continue
        if c not in mistakes.CATALOGUE or c in mistakes.WITHOUT_RULE:
            import difflib

            close = difflib.get_close_matches(c, [m for m in mistakes.CATALOGUE if m not in mistakes.WITHOUT_RULE], n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise RequestError(f"unknown mistake code {c[:40]!r}{hint}")
        if c not in out:
            out.append(c)
    return tuple(out)


def ask_from(kind: str, params: Mapping[str, Any]) -> Ask:
    """A problem from query or JSON fields: ``seed``, ``numbers`` and the kind's settings."""
    try:
        module = kinds.get(kind)
    except WorksheetError as exc:
        raise RequestError(str(exc)) from None
    seed = seed_of(params.get("seed", 1))
    numbers = str(params.get("numbers", "hand"))
    if numbers not in NUMBERS:
        raise RequestError(f"numbers must be one of {', '.join(NUMBERS)}, not {numbers[:40]!r}")
    settings = params.get("settings")
    if settings is None:  # a query: every other key is a setting
        settings = {k: v for k, v in params.items() if k not in ("seed", "numbers")}
    if not isinstance(settings, Mapping) or len(settings) > MAX_SETTINGS:
        raise RequestError(f"settings must be at most {MAX_SETTINGS} key=value pairs")
    if "numbers" in settings:  # as in KIND:numbers=calculator
        settings = dict(settings)
        numbers = str(settings.pop("numbers"))
        if numbers not in NUMBERS:
            raise RequestError(f"numbers must be one of {', '.join(NUMBERS)}, not {numbers[:40]!r}")
    names = module.Params.field_names()
    whole = {name for name, d in declared(module.Params).items() if d.type is WHOLE}
    parts, numbers_of = [], {}
    for k, v in settings.items():
        key = str(k)
        if not _KEY.fullmatch(key):
            raise RequestError("a setting's name is letters, digits, - and _")
        value = setting_text(v) if isinstance(v, (bool, int, str)) else None
        if value is None or len(value) > MAX_SETTING_CHARS or any(c in value for c in ",=") or not value.isprintable():
            raise RequestError(f"the setting {key} must be a short value without ',' or '='")
        if key.replace("-", "_") not in names or key.replace("-", "_") == "numbers":
            known = ", ".join(n.replace("_", "-") for n in names if n != "numbers")
            raise RequestError(f"{kind} has no setting {key!r}; it has {known}")
        if key.replace("-", "_") in whole and _WHOLE.fullmatch(value):
            numbers_of[key.replace("-", "_")] = int(value)  # any length: the kind's own range says what is allowed
        else:
            parts.append(f"{key}={value}")
    spec = ProblemSpec.parse(f"{kind}:{','.join(parts)}")
    return Ask(kind, tuple(sorted({**spec.options, **numbers_of}.items())), seed, numbers)


_WHOLE = re.compile(r"[+-]?[0-9]{1,40}")


def seed_of(value: Any) -> int:
    """A request's seed, by the CLI's rule: a whole number from 0 to MAX_SEED
    (``1.5``, ``1e3``, ``1_000`` and ``true`` are not)."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,20}", value.strip()):
        value = int(value.strip())
    try:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError("")
        return check_seed(value)
    except ParamError:
        from ..policy.integer_text import shown

        raise RequestError(f"the seed must be a whole number from 0 to {MAX_SEED}, not {shown(value)}") from None


CACHED_TABLE_CHARS = 4096  # own numbers up to this long are remembered (the cache stays small)


def problem(ask: Ask) -> Problem:
    """The problem a request names (the same as ``worksheet build KIND:settings --seed N``)."""
    return document(ask).problems[0]


def document(ask: Ask) -> Document:
    """The document of one problem; a request that cannot be served raises RequestError.

    Problems are made at most GENERATING at a time (the rest wait), and the
    outcome is remembered, a failure too: the largest hand-mode sizes can
    take the CLI many seconds to find no hand-friendly numbers, and a class
    server must keep answering while it does, and must not do it twice."""
    if ask.table is not None and len(ask.table) > CACHED_TABLE_CHARS:
        doc, error = _outcome(ask)
    else:
        doc, error = _remembered(ask)
    if doc is None:
        raise RequestError(error)
    return doc


GENERATING = 2  # problems made at once (the cores of a small machine); cached ones are not waited for
_generating = threading.BoundedSemaphore(GENERATING)


@lru_cache(maxsize=256)
def _remembered(ask: Ask) -> tuple[Document | None, str]:
    return _outcome(ask)


def _outcome(ask: Ask) -> tuple[Document | None, str]:
    with _generating:
        try:
            return _make_document(ask), ""
        except RequestError as exc:
            return None, str(exc)


def _make_document(ask: Ask) -> Document:
    try:
        if ask.table is not None:
            from ..parse.input_tables import parse_table

            p = solve_table(ask.kind, parse_table(ask.table, label=OWN_LABEL), label=OWN_LABEL)
            return Document(f"Worked solution: {p.title}", [p], seed=None, numbers="own")
        prompt, question, answer, lines = ask.words or ("", "", "", 5)
        spec = ProblemSpec(ask.kind, dict(ask.settings), prompt=prompt, question=question, answer=answer, lines=lines)
        return build_document([spec], seed=ask.seed, options={"numbers": ask.numbers})
    except WorksheetError as exc:
        message = str(exc)
        for name, _ in ask.settings:  # d_model: ... -> d-model: ..., as the page's settings are named
            if message.startswith(f"{name}:"):
                message = name.replace("_", "-") + message[len(name) :]
        raise RequestError(message) from None


def _key(ask: Ask):
    """The problem's key as check reads it, every expected entry parsed (kept for recent problems)."""
    if ask.table is not None and len(ask.table) > CACHED_TABLE_CHARS:
        return _read_key(ask)
    return _cached_key(ask)


@lru_cache(maxsize=256)
def _cached_key(ask: Ask):
    return _read_key(ask)


def _read_key(ask: Ask):
    from ..check import read_problem

    return read_problem(problem_json(problem(ask)))


def problem_json(p: Problem) -> dict:
    """The key of one problem as ``check`` reads it (written steps are left to a person)."""
    from ..render.json import problem as to_json

    raw = to_json(p)
    raw["steps"] = [s for s in raw["steps"] if "written" not in s]
    return raw


def own_ask(kind: str, table: str) -> Ask:
    """A problem of the student's own numbers (TOML or JSON text, as ``worksheet solve`` reads)."""
    try:
        kinds.get(kind)
    except WorksheetError as exc:
        raise RequestError(str(exc)) from None
    if not isinstance(table, str) or not table.strip():
        raise RequestError("paste your matrices (TOML or JSON) first")
    return Ask(kind, table=table)


# long: one check per way a cells object can be malformed, each with a message for the page
def cells_from(raw: Any) -> dict[str, dict[tuple[int, int], Any]]:  # noqa: C901
    """The ``cells`` of a request: step -> a list of rows (``null`` or ``""``
    where empty), step -> {"ROW,COL": entry} (1-based), or a list of
    ``{"step", "row", "col", "value"}`` (the shape of the verdicts)."""
    if raw is None:
        return {}
    if isinstance(raw, list):  # [{"step": ..., "row": ..., "col": ..., "value": ...}, ...]
        if len(raw) > 64 * 64 or not all(isinstance(c, Mapping) for c in raw):
            raise RequestError("cells must be a list of {step, row, col, value}")
        table: dict[str, dict[str, Any]] = {}
        for c in raw:
            r, col = c.get("row"), c.get("col")
            if not (isinstance(r, int) and isinstance(col, int)) or isinstance(r, bool) or isinstance(col, bool):
                raise RequestError("a cell's row and col are whole numbers (1-based)")
            table.setdefault(str(c.get("step")), {})[f"{r},{col}"] = c.get("value")
        raw = table
    if not isinstance(raw, Mapping) or len(raw) > 400:
        raise RequestError("cells must map step names to matrices")
    out: dict[str, dict[tuple[int, int], Any]] = {}
    for step, m in raw.items():
        got: dict[tuple[int, int], Any] = {}
        if isinstance(m, list):
            rows = m if all(isinstance(r, list) for r in m) else [m]
            if len(rows) > 64 or any(len(r) > 64 for r in rows):
                raise RequestError("a matrix of at most 64 x 64")
            for i, row in enumerate(rows, start=1):
                for j, x in enumerate(row, start=1):
                    if x is not None and x != "":
                        got[(i, j)] = x
        elif isinstance(m, Mapping):
            if len(m) > 64 * 64:
                raise RequestError("a matrix of at most 64 x 64")
            for rc, x in m.items():
                r, sep, c = str(rc).partition(",")
                if not (sep and r.strip().isdigit() and c.strip().isdigit() and len(rc) <= 9):
                    raise RequestError("a cell is \"ROW,COL\" (1-based)")
                if x is not None and x != "":
                    got[(int(r), int(c))] = x
        else:
            raise RequestError("cells must map step names to matrices")
        for x in got.values():
            if isinstance(x, bool) or not isinstance(x, (str, int)):
                raise RequestError("an entry is a number or text such as \"0.88\" or \"1/(1+e^-2)\"")
        out[str(step)] = got
    return out


def mark(ask: Ask, cells: Mapping[str, Mapping[tuple[int, int], Any]], decimal: str = "point") -> dict:
    """``POST /check``'s answer: the verdict of each cell given, each step's
    progress, and the sentence of each mistake named (``decimal``: "point" or
    "comma", the decimal separator of the entries)."""
    from ..check import mark_cells

    try:
        marks = mark_cells(_key(ask), cells, decimal=decimal)
    except InputError as exc:
        raise RequestError(str(exc)) from None
    out = marks.to_dict()
    for v in out["verdicts"]:  # an entry that cannot be read: its own verdict, whatever the checker calls it
        if v["verdict"] == "wrong" and v.get("message"):
            v["verdict"] = "unreadable"
    codes = {v.mistake for v in marks.verdicts if v.mistake} | {s.mistake for s in marks.steps if s.mistake}
    out["hints"] = {c: mistakes.CATALOGUE[c].sentence for c in sorted(codes) if c in mistakes.CATALOGUE}
    return out


def hint(code: str | None) -> str:
    m = mistakes.CATALOGUE.get(code or "")
    return m.sentence if m else ""


def named_by_step(marks: dict) -> dict[str, list[str]]:
    """The named mistakes of each step in ``mark``'s answer (cells and the step's
    own diagnosis; the arithmetic slip is said by the step's progress)."""
    out: dict[str, list[str]] = {}
    found = [(v["step"], v.get("mistake")) for v in marks["verdicts"]]
    found += [(sp["name"], sp.get("mistake")) for sp in marks["steps"]]
    for step, code in found:
        if code and code in mistakes.CATALOGUE and code != mistakes.SLIP:
            if code not in out.setdefault(step, []):
                out[step].append(code)
    return out
