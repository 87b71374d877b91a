"""What the practice pages say to a student, in a page's words: the verdicts,
a step's progress, the typing hint of each kind, the home page's
descriptions (``templates/practice/kinds.toml``), and the library's messages
reworded for a page (no command-line flag, no command).

Nothing here formats HTML: the templates and :mod:`.pages` do, from these
texts (prose with ``$...$`` maths where there is maths).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..kinds import mistakes
from ..policy import pencil

VERDICT_WORDS = {  # verdict -> (symbol, words); the checker's names (docs/reference.md: the verdicts)
    "right": ("\u2713", "right"),
    "carried": ("\u21aa", "carried forward"),  # right for the student's own earlier cells
    "mistake": ("\u2717", "a named mistake"),
    "wrong": ("\u2717", "wrong"),
    "unreadable": ("?", "can\u2019t read this"),
}


# ---------------------------------------------------------------- the library's messages, for a page
_REWORDS = (
    (re.compile(r"\(or use --numbers calculator\)"), "(or choose calculator numbers)"),
    (re.compile(r"(?:use )?--numbers calculator"), "choose calculator numbers"),
    (re.compile(r"use --force to overwrite"), "choose another name"),
    (re.compile(r";? ?see 'worksheet list[^']*'"), "; see the list of problems on the first page"),
    (re.compile(r"'worksheet (?:build|solve)[^']*'"), "this site"),
    (re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)"), r"\1"),  # --seq-len: the setting seq-len of the page's form
)


def for_page(message: str) -> str:
    """A library message with the command line taken out: ``--seq-len must be
    between 1 and 12`` -> ``seq-len must be between 1 and 12``; ``use
    --numbers calculator`` -> ``choose calculator numbers``."""
    for pattern, words in _REWORDS:
        message = pattern.sub(words, message)
    return message


# ---------------------------------------------------------------- progress of a step
def progress_text(sp: dict) -> str:
    """A step's progress in words: ``4 of 9 cells right so far``, and the
    checker's verdict on the step once every cell is filled."""
    cells = sp["cells"]
    status = sp.get("status")
    if status == "correct":
        return f"Step done: all {cells} cells right."
    if status == "carried-forward":
        return f"Step done: right for your own earlier answers (error carried forward), {cells} cells."
    text = f"{sp['good']} of {cells} cells right so far"
    if status == "unreadable":
        return f"{text}; some entries can\u2019t be read (the cells marked ?)."
    if status == "incorrect":
        code = sp.get("mistake")
        if code == mistakes.SLIP:
            return f"{text}: exactly one entry is wrong, an arithmetic slip."
        return f"{text}: this step is not right yet" + (" (the named mistake below)." if code else ".")
    return text + "."


def mistake_words(code: str) -> str:
    """A named mistake in words with typeset maths (prose with ``$...$``)."""
    m = mistakes.CATALOGUE.get(code)
    return m.typeset if m else ""


# ---------------------------------------------------------------- each kind, for a student
@dataclass(frozen=True)
class KindWords:
    about: str = ""  # the home page's description (prose with $...$)
    typed: tuple[str, ...] = ("0.8808", "-2", "3/4")  # entries as typed
    gates: bool = False  # has logistic-sigmoid gates


def read_kind_words(folder: Path) -> dict[str, KindWords]:
    """``kinds.toml`` of a practice templates folder: kind -> its words."""
    import tomllib

    path = Path(folder) / "kinds.toml"
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for kind, table in data.items():
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [{kind}] must be a table")
        typed = table.get("typed", KindWords.typed)
        if not isinstance(typed, list) or not all(isinstance(x, str) for x in typed):
            raise ValueError(f"{path}: [{kind}] typed must be a list of entries as text")
        out[kind] = KindWords(str(table.get("about", "")), tuple(typed), bool(table.get("gates", False)))
    return out


@dataclass(frozen=True)
class TypingHint:
    """How to type this problem's entries (the page's typing hint)."""

    typed: tuple[str, ...]  # examples of entries
    masked: bool  # some entry is -infinity (a causal mask)
    gates: bool  # σ appears (gated cells)
    labels: bool  # some step's answer is a word picked from a list
    rule: str  # the sheet's rounding rule (prose with $...$)


def typing_hint(words: KindWords, problem, numbers: str) -> TypingHint:
    """The typing hint of one problem: its kind's examples, ``-inf`` only
    where a step holds a masked entry, σ only where the kind has gates."""
    import numpy as np

    steps = problem.printed_steps(False)
    masked = any(s.value.dtype.kind == "f" and bool(np.isneginf(s.value).any()) for s in steps if not s.is_written)
    labels = any(s.choices for s in steps)
    from ..solution.document import table_function

    # the page's rule names exactly the tables it prints (an LSTM page: σ and tanh)
    functions = dict.fromkeys(table_function(arg) for aid in problem.aids for arg, _ in aid.entries)
    rule = pencil.line_for(numbers, tuple(f for f in functions if f), where="page")
    return TypingHint(words.typed, masked, words.gates, labels, rule)
