"""Reading an answer key: the JSON of ``worksheet build`` or ``worksheet solve
--format json``, checked in order: its file size, its structure and the shapes
of its steps, and its exact strings only when a step is marked, from a work
budget per variant (past it, the step's float ``value`` is used)."""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from fractions import Fraction
from typing import Any

import numpy as np

from ..policy.errors import InputError
from ..exact import NegInf
from ..policy.limits import KEY_WORK, MAX_KEY_BYTES, MAX_KEY_ENTRIES, MAX_KEY_PROBLEMS, MAX_KEY_STEPS, MAX_POINTS
from ..solution.points import split_points
from ..parse import Budget, parse_exact
from .reading import MAX_LABEL, MAX_NAME, MAX_SIZE, _no_constant, _read_text, _show
from .tolerance import Expected, expected_float, mp_context, mp_value

ROUNDED_KEY = 5e-5 * (1 + 1e-9)  # half a unit in the 4th place: a "rounded" key step's own rounding


@dataclass
class KeyStep:
    name: str
    title: str
    value: np.ndarray  # float64, -inf for masked
    exact: list | None  # the key's exact strings (rows), read when first needed
    rounded: bool = False
    written: str = ""  # a step answered in words: the key's model answer (marked by a person)
    weight: Any = None  # the spec's weight of the step in the split of the problem's points
    points: Any = None  # the spec's own points of the step
    budget: Budget | None = field(default=None, repr=False)  # its variant's, shared by its steps
    aliases: dict = field(
        default_factory=dict
    )  # label -> other spellings (worksheet.solution.number_format.label_key), e.g. a symbol

    @property
    def shape(self) -> tuple[int, int]:
        return self.value.shape

    @property
    def cells(self) -> list[list[Expected]]:
        """The expected entries, parsed from the exact strings on first use."""
        if "_cells" not in self.__dict__:
            arr, exact = self.value, self.exact
            cells = [
                [
                    _key_cell(exact[i][j] if exact else None, float(arr[i, j]), self.rounded, self.budget)
                    for j in range(arr.shape[1])
                ]
                for i in range(arr.shape[0])
            ]
            if self.aliases:
                cells = [
                    [
                        dataclasses.replace(e, aliases=self.aliases[e.label]) if e.label in self.aliases else e
                        for e in row
                    ]
                    for row in cells
                ]
            self.__dict__["_cells"] = cells
        return self.__dict__["_cells"]

    @property
    def labels(self) -> bool:
        return any(e.label is not None for row in self.cells for e in row)


@dataclass
class KeyProblem:
    number: int  # 1-based, in sheet order
    kind: str
    params: dict
    inputs: dict[str, np.ndarray]
    steps: list[KeyStep]
    points: Any = None  # the problem's points (an exam spec's section), or None: one mark per step
    title: str = ""  # the kind's title, as plain text

    def step(self, name: str) -> KeyStep:
        return next(s for s in self.steps if s.name == name)

    def shares(self) -> dict[str, Fraction]:
        """Each step's points (see :func:`worksheet.solution.points.split_points`): its share of
        the problem's points, or 1 mark each when the key has no points."""
        if self.points is None:
            return {s.name: Fraction(1) for s in self.steps}
        return split_points(self.points, [(s.name, s.weight, s.points) for s in self.steps])


@dataclass
class Key:
    """An answer key: the problems of each variant (``""`` when there are no variants)."""

    path: str
    variants: dict[str, list[dict]]  # id -> raw problem dicts
    _parsed: dict = field(default_factory=dict, repr=False)
    fingerprints: dict[str, str] = field(default_factory=dict)  # id -> its problems' fingerprint

    def fingerprint(self, variant: str = "") -> str:
        """The fingerprint of a variant's problems (the key's own when it says; else computed,
        see :func:`worksheet.render.json.fingerprint`): what ``worksheet template`` writes."""
        if variant not in self.fingerprints:
            from ..render.json import fingerprint

            self.fingerprints[variant] = fingerprint(self.variants[variant])
        return self.fingerprints[variant]

    def bind(self, variant: str | None, fingerprint: str | None, file: str) -> None:
        """Refuse an answer file made for another key or variant (one naming a
        ``fingerprint``, as ``worksheet template`` writes); a hand-written file
        (no fingerprint) only has to name a variant the key has."""
        if fingerprint is None:
            return
        made_for = [v for v in self.variants if self.fingerprint(v) == fingerprint]
        named = f"variant {_show(variant)}" if variant else "no variant"
        if not made_for:
            ids = list(self.variants)
            mine = (
                self.fingerprint(variant if variant in self.variants else ids[0])
                if variant in ids or len(ids) == 1
                else None
            )
            raise InputError(
                f"made for another key (fingerprint {_show(fingerprint)}, {named}), not for this one"
                + (f" (fingerprint {mine!r})" if mine else "")
                + ": mark it with the key it was made for, or fill in a new 'worksheet template'",
                file=file,
                field="fingerprint",
            )
        vid = self.variant_id(variant) if variant in self.variants or len(self.variants) == 1 else None
        if vid not in made_for:
            raise InputError(
                f"made for variant {_show(made_for[0])} of this key, but it names {named}: "
                f"mark it as variant {_show(made_for[0])} (variant = {_show(made_for[0])})",
                file=file,
                field="variant",
            )

    def problems(self, variant: str | None = None) -> list[KeyProblem]:
        """The problems of a variant: structure and shapes checked, exact strings not
        yet read (each variant's are read from a work budget of its own, once, so a
        class folder is marked the same whatever the order of its files)."""
        vid = self.variant_id(variant)
        if vid not in self._parsed:
            raws = self.variants[vid]
            _check_key_size(raws, self.path)
            budget = Budget(*KEY_WORK)
            self._parsed[vid] = [_key_problem(raw, i + 1, self.path, vid, budget) for i, raw in enumerate(raws)]
        return self._parsed[vid]

    def variant_id(self, variant: str | None) -> str:
        ids = list(self.variants)
        if variant is None:
            if len(ids) == 1:
                return ids[0]
            raise InputError(
                f"the key has {len(ids)} variants ({', '.join(map(_show, ids[:8]))}"
                f"{', ...' if len(ids) > 8 else ''}); say which with variant = \"...\" "
                "in the answers",
                field="variant",
            )
        if variant in self.variants:
            return variant
        if ids == [""]:
            return ""  # a key without variants: the answers' variant field is only a note
        close_ = difflib.get_close_matches(variant, ids, n=1)
        hint = f"; did you mean {_show(close_[0])}?" if close_ else ""
        raise InputError(f"the key has no variant {_show(variant)}{hint}", field="variant")


def read_key(path: Path | str) -> Key:
    """Read an answer key (JSON from ``build`` or ``solve --format json``)."""
    path = Path(path)
    label = str(path)
    text = _read_text(path, label, MAX_KEY_BYTES)
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not a JSON answer key (line {exc.lineno}, column {exc.colno}: {exc.msg})", file=label
        ) from None
    except (ValueError, RecursionError) as exc:
        from ..policy.integer_text import is_digit_limit_error, long_number_error

        if is_digit_limit_error(exc):
            raise long_number_error(text, file=label) from None
        raise InputError(f"not a JSON answer key ({str(exc)[:120]})", file=label) from None
    if not isinstance(data, dict):
        raise InputError("not an answer key: expected a JSON object with \"problems\"", file=label)
    if "variants" in data:
        if not isinstance(data["variants"], list) or not data["variants"]:
            raise InputError("\"variants\" must be a non-empty list", file=label)
        variants, prints = {}, {}
        if len(data["variants"]) > MAX_KEY_VARIANTS:
            raise InputError(f"more than {MAX_KEY_VARIANTS} variants", file=label)
        for k, v in enumerate(data["variants"], start=1):
            if not isinstance(v, dict) or not isinstance(v.get("problems"), list):
                raise InputError(f"variant {k} has no list of \"problems\"", file=label)
            vid = _variant_id(v.get("id", k), k, label)
            if vid in variants:
                raise InputError(f"variant {k}: the id {_show(vid)} is used twice", file=label)
            variants[vid] = v["problems"]
            if _FINGERPRINT.fullmatch(str(v.get("fingerprint", ""))):
                prints[vid] = v["fingerprint"]
    elif isinstance(data.get("problems"), list):
        variants = {"": data["problems"]}
        prints = {"": data["fingerprint"]} if _FINGERPRINT.fullmatch(str(data.get("fingerprint", ""))) else {}
    elif "steps" in data and "kind" in data:
        variants, prints = {"": [data]}, {}
    else:
        raise InputError(
            "not an answer key: expected \"problems\" (the JSON written by "
            "'worksheet build' or 'worksheet solve --format json')",
            file=label,
        )
    if any(not probs for probs in variants.values()):
        raise InputError("the key has no problems", file=label)
    return Key(label, variants, fingerprints=prints)


MAX_KEY_VARIANTS = 2000  # as many as 'worksheet build --variants' makes
_KIND = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}")
_FINGERPRINT = re.compile(r"[0-9a-f]{6,64}")
_VARIANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
_DEVICES = frozenset(["con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))])


def _variant_id(raw: Any, k: int, file: str) -> str:
    """A variant's id, checked: it names answer files (``NAME-answers-v01.toml``), so it is
    letters, digits, ``-`` and ``_`` only (at most 40), and no device name (``CON``)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise InputError(f"variant {k}: \"id\" must be a short text such as \"v01\", not {_show(raw)}", file=file)
    vid = str(raw)
    if not _VARIANT_ID.fullmatch(vid) or vid.lower() in _DEVICES:
        raise InputError(
            f"variant {k}: the id {_show(vid)} is not a plain name (letters, digits, - and _, "
            "at most 40, starting with a letter or digit, not a device name such as CON)",
            file=file,
        )
    return vid


def _key_matrix(q: Any, where: str, file: str) -> tuple[list, np.ndarray]:
    if not isinstance(q, dict) or not isinstance(q.get("value"), list) or not q["value"]:
        raise InputError(f"{where} has no \"value\" matrix", file=file)
    value = q["value"]
    exact = q.get("exact")
    try:
        arr = np.array([[-math.inf if x is None else float(x) for x in row] for row in value], dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer beyond float64
        raise InputError(f"{where}: \"value\" is not a matrix of numbers", file=file) from None
    if arr.ndim != 2:
        raise InputError(f"{where}: \"value\" is not a matrix", file=file)
    if not (
        isinstance(exact, list)
        and len(exact) == arr.shape[0]
        and all(isinstance(r, list) and len(r) == arr.shape[1] for r in exact)
    ):
        exact = None
    return exact, arr


def _check_key_size(raws: list, file: str) -> None:
    """Steps per problem and entries of a variant within the limits, counted
    on the raw JSON before any of it is converted."""
    if len(raws) > MAX_KEY_PROBLEMS:
        raise InputError(f"{len(raws)} problems in one variant, more than the limit of {MAX_KEY_PROBLEMS}", file=file)
    entries = 0
    for number, raw in enumerate(raws, start=1):
        steps = raw.get("steps") if isinstance(raw, dict) else None
        if not isinstance(steps, list):
            continue  # _key_problem names it
        if len(steps) > MAX_KEY_STEPS:
            raise InputError(
                f"problem {number} has {len(steps)} steps, more than the limit of {MAX_KEY_STEPS}", file=file
            )
        for q in [*steps, *((raw.get("inputs") or {}).values() if isinstance(raw.get("inputs"), dict) else ())]:
            value = q.get("value") if isinstance(q, dict) else None
            if not isinstance(value, list):
                continue
            if len(value) > MAX_SIZE or any(not isinstance(r, list) or len(r) > MAX_SIZE for r in value):
                name = q.get("name", "an input")
                raise InputError(
                    f"problem {number}, step {_show(name)}: a \"value\" matrix larger than "
                    f"{MAX_SIZE} x {MAX_SIZE} (or not a matrix)",
                    file=file,
                )
            entries += sum(len(r) for r in value)
            if entries > MAX_KEY_ENTRIES:
                raise InputError(f"more than {MAX_KEY_ENTRIES} entries in one variant", file=file)


def _key_cell(text: Any, x: float, rounded: bool, budget: Budget | None = None) -> Expected:
    """An expected entry from the key's exact string (our own output) and its float;
    the float alone where the string cannot be read (or the key's work budget is spent)."""
    if x == -math.inf:
        return Expected(None, False, "-oo")
    if rounded:
        # the exact string holds the value carried rounded along the chain (what the sheet
        # shows), the float the unrounded value (the JSON's, put in again by
        # marking._unrounded from the kind's reference): both are right, an exact
        # form within the key's own rounding of the float
        e = expected_float(x)
        alt = None
        if isinstance(text, str):
            try:
                alt = mp_value(parse_exact(text, budget))
            except ValueError:
                alt = None
        return dataclasses.replace(e, text=text if alt is not None else e.text, rounding=ROUNDED_KEY, alt=alt)
    if not isinstance(text, str):
        return expected_float(x)
    try:
        value = parse_exact(text, budget)
        if isinstance(value, NegInf):
            return Expected(None, True, "-oo")
        return Expected(mp_value(value), True, text)
    except ValueError:
        if not any(c in text for c in "()*/^") and len(text) <= MAX_LABEL:
            return Expected(mp_context().mpf(x), False, text, label=text)  # a token label; value: its index
        return expected_float(x)  # longer than the parser reads: use the float


def _step_aliases(raw: dict) -> dict:
    """find-the-mistake: each step name's symbol as printed (``"step_symbols"``), so
    that ``check`` accepts the symbol as well as the name and the number."""
    symbols = raw.get("step_symbols")
    if not isinstance(symbols, dict):
        return {}
    return {str(k): (str(v)[:MAX_LABEL],) for k, v in list(symbols.items())[:MAX_KEY_STEPS] if isinstance(v, str)}


def _key_problem(raw: Any, number: int, file: str, variant: str, budget: Budget | None = None) -> KeyProblem:
    where = f"problem {number}" + (f" of variant {variant}" if variant else "")
    if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str):
        raise InputError(f"{where} has no \"kind\"", file=file)
    if not _KIND.fullmatch(raw["kind"]):
        raise InputError(f"{where}: \"kind\" {_show(raw['kind'])} is not a kind's name", file=file)
    steps_raw = raw.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise InputError(f"{where} has no \"steps\"", file=file)
    params = raw.get("params") if isinstance(raw.get("params"), dict) else {}
    inputs = {}
    if not isinstance(raw.get("inputs", {}), dict):
        raise InputError(f"{where}: \"inputs\" must be an object of named matrices", file=file)
    for name, q in (raw.get("inputs") or {}).items():
        inputs[name] = _key_matrix(q, f"{where}, input {name}", file)[1]
    steps = []
    for s in steps_raw:
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            raise InputError(f"{where}: a step has no \"name\"", file=file)
        if not s["name"] or len(s["name"]) > MAX_NAME or not s["name"].isprintable():
            raise InputError(f"{where}: the step name {_show(s['name'])} is not a printable name", file=file)
        share = {k: _points(s.get(k), f"{where}, step {s['name']}, {k}", file) for k in ("weight", "points")}
        if share["weight"] == 0:
            raise InputError(f"{where}, step {s['name']}: \"weight\" must be above 0", file=file)
        if isinstance(s.get("written"), str) and s["written"]:  # words, no matrix: for a person
            steps.append(
                KeyStep(s["name"], str(s.get("title", "")), np.zeros((0, 0)), [], written=s["written"], **share)
            )
            continue
        exact, arr = _key_matrix(s, f"{where}, step {s['name']}", file)
        steps.append(
            KeyStep(
                s["name"],
                str(s.get("title", "")),
                arr,
                exact,
                bool(s.get("rounded")),
                budget=budget,
                aliases=_step_aliases(raw) if s["name"] == "step" else {},
                **share,
            )
        )
    kp = KeyProblem(
        number,
        raw["kind"],
        params,
        inputs,
        steps,
        _points(raw.get("points"), f"{where}, points", file),
        _kind_title(raw["kind"], raw.get("title")),
    )
    if kp.points is not None:
        try:
            kp.shares()
        except ValueError as exc:
            raise InputError(f"{where}: {exc}", file=file) from None
    return kp


def _points(x: Any, where: str, file: str) -> Fraction | None:
    """Points or a weight from the key: None, or a number from 0 to MAX_POINTS, exactly."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not (0 <= x <= MAX_POINTS):
        raise InputError(f"{where}: must be a number from 0 to {MAX_POINTS}, not {_show(x)}", file=file)
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


def _kind_title(kind: str, title: Any) -> str:
    """A problem's title as plain text: the key's, else its kind's (``$\\sqrt{d_k}$`` as sqrt(d_k))."""
    if kind == "question":  # a spec's section with only a question in words
        return "Question"
    if not isinstance(title, str) or not title:
        from .. import kinds

        try:
            title = kinds.get(kind).TITLE
        except Exception:  # a kind this version does not know
            return ""
    import re

    title = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", title)
    title = re.sub(r"\\([A-Za-z]+)", r"\1", title).replace("$", "")
    return title[:80]
