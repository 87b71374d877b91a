"""The one worked-solution model every renderer, the JSON export and the
checker read: a :class:`Problem` is an ordered list of :class:`Step` s over
named input :class:`Quantity` s.

A matrix is a tuple of rows of exact values (see :mod:`worksheet.exact`); a
vector is a 1 x n matrix and a scalar a 1 x 1 matrix.  Each step keeps its
exact value and the float64 value of an independent numpy computation; the
two are compared when the step is added (:meth:`Problem.add_step`), so a key
that reaches a renderer has been verified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from ..policy.errors import VerificationError
from ..exact import NegInf, to_float
from . import notebook
from .maths.nodes import CODE_CLOSE, CODE_OPEN, Prose  # noqa: F401 (CODE_OPEN, CODE_CLOSE: names of this module too)
from .maths.reading import as_prose

Matrix = tuple  # tuple[tuple[Exact, ...], ...]

EXACT_SHOWN_CHARS = 32  # calculator mode: an exact form is printed only while its LaTeX is this short

RTOL = 1e-9
ATOL = 1e-12


def matrix(rows: Sequence[Sequence]) -> Matrix:
    """Freeze nested sequences into a tuple-of-tuples matrix (ints -> Fraction)."""
    return tuple(
        tuple(Fraction(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in row) for row in rows
    )


def shape(m: Matrix) -> tuple[int, int]:
    return (len(m), len(m[0]) if m else 0)


def to_array(m: Matrix) -> np.ndarray:
    """Float64 array of an exact matrix (-oo -> -inf)."""
    return np.array([[to_float(x) for x in row] for row in m], dtype=np.float64)


class _once:
    """A property computed on first use and kept in the instance dict (which
    a frozen dataclass has); functools.cached_property takes a lock per
    first use on Python 3.11, which costs more than most of these."""

    def __init__(self, f):
        self.f, self.name, self.__doc__ = f, f.__name__, f.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.f(obj)
        return value


@dataclass(frozen=True)
class Quantity:
    """A named matrix given to the student: exact entries, float values, labels."""

    name: str
    exact: Matrix
    value: np.ndarray
    rows: tuple[str, ...] | None = None  # row labels (tokens), or None
    cols: tuple[str, ...] | None = None  # column labels, or None
    latex_name: str | None = None  # e.g. W^Q for W_Q
    given_places: int | None = None  # print every entry with this many places (a shown worked step)
    heading: str = ""  # words set as a heading before this given (the student's solution of find-the-mistake)

    @property
    def shape(self) -> tuple[int, int]:
        return shape(self.exact)

    # computed once (the templates ask for each several times); see _once
    @_once
    def integral(self) -> bool:
        """Every entry an integer (decimals would add nothing)."""
        return all(isinstance(x, Fraction) and x.denominator == 1 for row in self.exact for x in row)

    @_once
    def show_decimals(self) -> bool:
        """A decimal table adds something: not all integers, not labels, not a step
        carried rounded (its one table already is the decimals)."""
        return (
            not getattr(self, "rounded", False)
            and not self.integral
            and not any(isinstance(x, str) for row in self.exact for x in row)
        )

    @_once
    def symbol(self) -> str:
        """LaTeX symbol of the quantity."""
        return self.latex_name or latex_symbol(self.name)

    def to_sympy(self):
        """This matrix as a ``sympy.Matrix`` of the same exact values (``-oo`` for a
        masked entry, a token label as a ``sympy.Symbol``); imports sympy (the
        optional extra: without it, ``MissingExtraError``)."""
        from ..exact import to_sympy

        to_sympy(0)  # the one place that says sympy is missing
        import sympy

        n, m = self.shape
        return sympy.Matrix(
            n, m, [sympy.Symbol(x) if isinstance(x, str) else to_sympy(x) for row in self.exact for x in row]
        )


@dataclass(frozen=True)
class Step(Quantity):
    """One named step of a worked solution.

    ``formula`` is LaTeX (``S = Q K^\\top``) or its tree; ``work`` holds lines of
    arithmetic for representative entries; ``note`` is words for the key (a
    remark such as "the scores are symmetric").  ``title``, ``note`` and
    ``written`` are :class:`~worksheet.solution.maths.nodes.Prose` (a string given
    is read once, see :func:`~worksheet.solution.maths.as_prose`).
    """

    title: Prose = Prose()
    formula: str = ""
    work: tuple[str, ...] = ()
    note: Prose = Prose()
    rounded: bool = False  # exact holds values rounded to 4 places (long chains)
    places: int = 4  # decimal places shown on the key
    written: Prose = Prose()  # a step that asks for words: the model answer (prose, inline $maths$)
    lines: int = 0  # ruled writing lines on the student sheet for a written step
    exact_shown: bool = True  # the key prints the exact matrix; False: decimals only (see shows_exact)
    on_sheet: bool = True  # False: on the key and in the JSON only (its grid would give an answer away)
    choices: tuple[str, ...] | None = None  # a label step's options; its value is the label's index in them
    chain: tuple | None = None  # hand mode: the 4-place values the rounding chain gives (worksheet.policy.pencil)
    number: str = ""  # its heading's number ("(11)", "a."), where not its place in the problem ("4.")
    decimals: bool = False  # a calculator sheet's step: exact values that are decimals print so (14.4, not 72/5)

    def __post_init__(self):
        for name in ("title", "note", "written"):  # words (a kind's literal text) are read once
            value = getattr(self, name)
            if type(value) is not Prose:
                object.__setattr__(self, name, as_prose(value))

    @property
    def decimals_caption(self) -> str:
        """The words above a key's table of decimals (no colon)."""
        if self.rounded:
            return f"Full precision (no rounding along the way), to {self.places} decimals"
        if self.chain is not None:
            return f"To {self.places} decimals, as the sheet's tables and rounding give them"
        return f"To {self.places} decimals"

    @property
    def is_written(self) -> bool:
        """A step answered in words (no matrix): ``check`` leaves it to a person."""
        return bool(self.written)


@dataclass(frozen=True)
class Aid:
    """A table printed on the sheet to help by hand, e.g. values of e^x.

    ``entries`` holds (LaTeX of the argument, LaTeX of the value) pairs.  A standard
    table on a fine grid (σ and tanh at every 0.01) also has ``grid``: its rows as printed,
    like an exam's table of the normal distribution (row: x to one decimal; column: the
    second decimal), plain decimals only.
    """

    title: Prose  # prose (a string given is read once)
    entries: tuple[tuple[str, str], ...]
    values: tuple = ()  # the exact arguments, so later steps can extend the table
    grid: tuple[tuple[str, ...], ...] = ()  # laid out as a table (first row: the column heads), else a list

    def __post_init__(self):
        object.__setattr__(self, "title", as_prose(self.title))
        object.__setattr__(self, "_name", as_prose(str.split(self.title, " for ")[0]))

    @property
    def name(self) -> Prose:
        """The title up to its first " for " (``Values of e^x``): what a page that
        prints the table elsewhere calls it ("... : on the tables page")."""
        return self._name


class ProseList(list):
    """A list of prose (a problem's notes): a string put in is read once
    (:func:`~worksheet.solution.maths.as_prose`), so a kind may append words."""

    __slots__ = ()

    def __init__(self, items=()):
        super().__init__(as_prose(x) for x in items)

    def append(self, x) -> None:
        super().append(as_prose(x))

    def extend(self, xs) -> None:
        super().extend(as_prose(x) for x in xs)

    def insert(self, k, x) -> None:
        super().insert(k, as_prose(x))

    def __setitem__(self, k, x) -> None:
        super().__setitem__(k, [as_prose(v) for v in x] if isinstance(k, slice) else as_prose(x))

    def __iadd__(self, xs):
        self.extend(xs)
        return self


_PROSE = {"title": as_prose, "intro": as_prose, "notes": ProseList}


@dataclass
class Problem:
    """A worked problem: inputs, ordered steps, and the words around them.
    ``title``, ``intro`` and each of ``notes`` are
    :class:`~worksheet.solution.maths.nodes.Prose` (strings set are read once)."""

    def __setattr__(self, name, value):
        make = _PROSE.get(name)
        object.__setattr__(self, name, value if make is None or type(value) is Prose else make(value))

    kind: str
    title: Prose
    params: dict[str, Any]
    seed: int | None = None
    intro: Prose = Prose()  # what the student is asked to do (words)
    inputs: dict[str, Quantity] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    aids: list[Aid] = field(default_factory=list)
    notes: list[Prose] = field(default_factory=ProseList)  # key-only remarks
    points: Any = None  # set by exam specs
    step_points: dict[str, Any] = field(
        default_factory=dict
    )  # a spec's own points of steps (worksheet.solution.points)
    step_weights: dict[str, Any] = field(default_factory=dict)  # a spec's weights of steps in the split
    record: dict[str, Any] = field(default_factory=dict)  # key facts the JSON records beside the steps
    # step name -> its named mistakes, kept once worksheet.kinds.mistake_values has computed them
    named_mistakes: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def add_input(self, name: str, exact: Matrix, rows=None, cols=None, latex_name: str | None = None) -> Quantity:
        q = Quantity(name, exact, to_array(exact), _labels(rows), _labels(cols), latex_name)
        self.inputs[name] = q
        return q

    def add_step(
        self,
        name: str,
        exact: Matrix,
        value: np.ndarray,
        *,
        title: str | Prose,
        formula: str,
        work: Sequence[str] = (),
        note: str | Prose = "",
        rows=None,
        cols=None,
        latex_name: str | None = None,
        rounded: bool = False,
        places: int = 4,
        choices: Sequence[str] | None = None,
        drift: float = 5e-3,  # how far a rounded step may lie from the unrounded chain
        rtol: float = 5e-3,  # and how far relatively
    ) -> Step:
        """Add a step after checking its exact value against ``value``."""
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 1:
            value = value.reshape(1, -1)
        verify(f"{self.kind}.{name}", exact, value, rounded=rounded, drift=drift, rtol=rtol)
        step = Step(
            name,
            exact,
            value,
            _labels(rows),
            _labels(cols),
            latex_name,
            title=title,
            formula=formula,
            work=tuple(work),
            note=note,
            rounded=rounded,
            places=places,
            exact_shown=shows_exact(exact, self.params.get("numbers", "hand")),
            choices=None if choices is None else tuple(choices),
            decimals=self.params.get("numbers") == "calculator",
        )
        self.steps.append(step)
        return step

    def add_written(self, name: str, *, title: str | Prose, answer: str | Prose, lines: int = 5) -> Step:
        """Add a step that asks for words ("which would you use, and why?").

        ``title`` is the question, ``answer`` the model answer printed on the
        key (both prose with inline ``$maths$``); the sheet gets ``lines``
        ruled lines.  Its matrix is empty (0 x 0): nothing to compute.
        """
        if not answer:
            raise ValueError(f"{self.kind}.{name}: a written step needs a model answer")
        step = Step(name, (), np.zeros((0, 0)), title=title, written=answer, lines=lines)
        self.steps.append(step)
        return step

    def points_of_steps(self) -> dict[str, Any]:
        """Each step's share of the problem's points (Fractions; see
        :func:`worksheet.solution.points.split_points`), or {} when it has no points."""
        if self.points is None:
            return {}
        from .points import split_points

        return split_points(
            self.points, [(s.name, self.step_weights.get(s.name), self.step_points.get(s.name)) for s in self.steps]
        )

    def printed_steps(self, key: bool) -> list[Step]:
        """The steps a key prints (all) or a student sheet asks for: a sheet
        leaves out the steps that are on the key only (``Step.on_sheet``)."""
        return self.steps if key else [s for s in self.steps if s.on_sheet]

    def step(self, name: str) -> Step:
        """The step called ``name``; an unknown name is an UnknownStepError (a
        ValueError and LookupError, not a KeyError) listing the steps."""
        if not isinstance(name, str):
            from ..policy.errors import ArgumentError
            from ..policy.integer_text import shown

            raise ArgumentError(f"name must be a step name (text), not {shown(name, 40)} ({type(name).__name__})")
        for s in self.steps:
            if s.name == name:
                return s
        from ..policy.errors import UnknownStepError
        from ..policy.integer_text import shown

        steps = ", ".join(s.name for s in self.steps)
        raise UnknownStepError(f"name {shown(name)} is not a step of {self.kind}; its steps are {steps}")

    def __getitem__(self, name: str) -> Quantity:
        """An input or a step by name (an unknown name: see :meth:`step`)."""
        if isinstance(name, str) and name in self.inputs:
            return self.inputs[name]
        try:
            return self.step(name)
        except LookupError:
            from ..policy.errors import UnknownStepError
            from ..policy.integer_text import shown

            names = ", ".join([*self.inputs, *(s.name for s in self.steps)])
            raise UnknownStepError(
                f"name {shown(name)} is neither an input nor a step of {self.kind}; it has {names}"
            ) from None

    # -- for notebooks and library users (see worksheet.api) ------------------
    def to_numpy(self) -> dict[str, np.ndarray]:
        """The inputs, then each computed step, as float64 arrays by name (copies; -inf
        where masked; written steps have no matrix)."""
        return {
            **{n: q.value.copy() for n, q in self.inputs.items()},
            **{s.name: s.value.copy() for s in self.steps if not s.is_written},
        }

    def to_sympy(self) -> dict:
        """The inputs, then each computed step, as a ``sympy.Matrix`` by name (the exact
        values; written steps have none).  Imports sympy."""
        return {
            **{n: q.to_sympy() for n, q in self.inputs.items()},
            **{s.name: s.to_sympy() for s in self.steps if not s.is_written},
        }

    def arrays(self) -> dict[str, np.ndarray]:
        """The same as :meth:`to_numpy` (its earlier name)."""
        return self.to_numpy()

    def _repr_html_(self) -> str:
        """Jupyter: the worked example, through the HTML renderer (see :mod:`.notebook`)."""
        return notebook.show(self, "html")

    def _repr_markdown_(self) -> str:
        """Jupyter: the worked example, through the Markdown renderer (see :mod:`.notebook`)."""
        return notebook.show(self, "md")


def shows_exact(exact: Matrix, numbers: str) -> bool:
    """Whether a key prints a step's exact matrix beside its decimals.

    Hand mode: always (the exact forms are what the pencil gives).  Calculator
    mode: decimals lead, and the exact matrix is printed only when every entry's
    LaTeX has at most :data:`EXACT_SHOWN_CHARS` characters (``\\frac{1}{1 + e^{-2}}``
    is; ``\\frac{e^{- \\frac{1749}{20000}}}{1 + ...}`` is not).
    """
    if numbers != "calculator":
        return True
    from ..exact import to_latex

    return all(isinstance(x, str) or len(to_latex(x)) <= EXACT_SHOWN_CHARS for row in exact for x in row)


class MathLabel(str):
    """A row or column label that is maths, not text (positional encoding's
    pair index ``i = 0``).  Its characters are LaTeX that reads as plain text
    too, so JSON, CSV and answer files carry it as it is; the tex, html,
    Markdown and Moodle pages set it as maths, where a user's label (a token)
    is always text.  Only a kind makes one: user input is never a MathLabel."""

    __slots__ = ()


# a word of code in prose (an intro, a note): between two private-use characters, which no
# user text may hold (worksheet.policy.safetext refuses characters that are not printable),
# so only a kind marks code, and no label, title or prompt ever becomes code; read into a
# Code part of the Prose (worksheet.solution.maths.nodes.Code)


def code(word: str) -> str:
    """``word`` (a mistake code such as ``no-scaling``) marked as code in
    prose's text: typewriter in tex, ``<code>`` in html and Moodle, backticks in
    Markdown (a :class:`~worksheet.solution.maths.nodes.Code` part once read)."""
    return CODE_OPEN + word + CODE_CLOSE


def _labels(labels):
    return None if labels is None else tuple(x if isinstance(x, str) else str(x) for x in labels)


def verify(
    where: str, exact: Matrix, value: np.ndarray, *, rounded: bool = False, drift: float = 5e-3, rtol: float = 5e-3
) -> None:
    """Raise :class:`VerificationError` unless exact and float agree entrywise
    (a ``rounded`` chain: within ``drift``, 5e-3 unless its kind carries fewer places, and
    relatively within ``rtol``, 5e-3 unless it reads a table at rounded arguments)."""
    if shape(exact) != value.shape:
        raise VerificationError(f"{where}: exact shape {shape(exact)} != float shape {value.shape}")
    rtol, atol = (max(5e-3, rtol), drift) if rounded else (RTOL, ATOL)
    for i, (row, vrow) in enumerate(zip(exact, value.tolist())):
        for j, (x, v) in enumerate(zip(row, vrow)):
            if isinstance(x, str):  # a label (next-token prediction): checked by its kind
                continue
            if isinstance(x, NegInf):
                ok = v == -math.inf
            else:
                e = to_float(x)
                ok = math.isclose(e, v, rel_tol=rtol, abs_tol=atol)
            if not ok:
                raise VerificationError(f"{where}[{i + 1},{j + 1}]: exact {x} != float {v!r}")


_GREEK_SUPER = {"W_Q": "W^Q", "W_K": "W^K", "W_V": "W^V", "W_O": "W^O"}


def latex_symbol(name: str) -> str:
    """LaTeX symbol for an input/step name: W_Q -> W^Q, gamma_1 -> \\gamma_1."""
    if name in _GREEK_SUPER:
        return _GREEK_SUPER[name]
    base, _, sub = name.partition("_")
    if base in ("gamma", "beta", "alpha"):
        base = "\\" + base
    if len(base) > 1 and not base.startswith("\\"):
        base = rf"\mathrm{{{base}}}"
    return f"{base}_{{{sub}}}" if sub else base
