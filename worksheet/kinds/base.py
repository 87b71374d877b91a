"""What every kind shares: the kind contract (:class:`KindModule`), the
parameter base class, option/field coercion, token labels, the helpers of
``solve`` and ``reference``, and the random helpers for hand-friendly numbers.

The kind contract
-----------------

A kind is one module of :mod:`worksheet.kinds` that satisfies
:class:`KindModule` (``tests/test_kind_contract.py`` checks every registered
kind against it, signatures included):

* ``TITLE: str`` -- the heading on a sheet;
* ``INPUTS: tuple[str, ...]`` -- the input matrix names it reads (docs/reference.md);
* ``CONVENTIONS: tuple[Convention, ...]`` -- the conventions its sheet states,
  in order, texts and all (:mod:`.shared_conventions` holds those several
  kinds state; one only this kind states is defined in its module);
* ``Params`` -- a frozen dataclass subclass of :class:`Params`, its fields the
  kind's options (a comment per default), checked in ``validate``; two class
  attributes say what the kind is: ``carries`` (its ``solve`` takes
  ``carry=``) and ``conventions_if`` (a convention stated only when a
  parameter is true, such as the mask of a causal problem);
* ``generate(rng, params) -> dict[str, Matrix]`` -- exact inputs drawn from the
  seeded ``numpy.random.Generator`` only (same seed, same numbers);
* ``reference(inputs, params, *, given=None) -> dict[str, np.ndarray]`` -- the
  independent float64 computation of every step from float inputs.  ``params``
  is the kind's ``Params``; ``worksheet check`` rebuilds it from a key's JSON
  params with ``Params.from_options(params, checked=False)``, so every value
  the reference reads must be a field (the sizes ``solve`` records in its
  params are, or follow from the inputs).  ``given`` maps step names to values
  that replace the computed ones, every later step being computed from them:
  that is how ``check`` marks a step "carried forward" (use :func:`given_or`);
* ``solve(inputs, params, *, seed=None) -> Problem`` -- the worked solution,
  every exact step checked against ``reference``.  Kinds used as parts of the
  block kinds take more keyword-only arguments after ``seed`` (``carry=`` a
  :class:`worksheet.steps.scaled_dot_product.Carry`, so that long exact values are carried
  rounded; multi-head attention also ``memory_tokens=`` and ``exp_table=``);
  called without them a kind solves on its own.  :func:`require_inputs` and
  :func:`solved_params` are the common first lines.

A block built from other kinds also declares ``PARTS``: step prefix
(``attn.``) -> (the kind that part is, its inputs by their names in the
block); ``worksheet check`` diagnoses a part's steps with its kind's rules.
A kind that passes its settings on to another kind (find-the-mistake: the
kind its worked solution is of) also declares the three hooks of
:class:`PassesOn`; every other kind has their defaults (its own settings,
conventions and mistakes).  The registry reads all of this once into a
:class:`worksheet.kinds.Kind` record (``kinds.kind(name)``), which callers
use; none looks for a member with ``hasattr``.

Hand mode (``numbers="hand"``, the default) must be doable with pencil and the
printed tables alone: small integers, an integer ``sqrt(d_k)``, short e^x
tables.  Its draws must still vary: ``worksheet build --variants`` asks for up
to 30 distinct problems from one seed, so the default hand-mode parameters must
offer at least 30 distinct draws (``tests/test_variants.py`` enforces it).
Bounded retries (:func:`retry`) end in a :class:`GenerationError` naming the
way out, never in a hang.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

import numpy as np

from ..policy.errors import GenerationError, InputError, ParamError, WorksheetError
from ..exact import rational
from ..solution.problem import Matrix, Problem, to_array
from ..steps import precise
from ..steps.float_check import given_value
from ..policy.safetext import check_labels
from .param_types import declared

NUMBER_MODES = ("hand", "calculator")
MAX_TRIES = 2000  # bounded retries for hand-friendly numbers

SENTENCES = {
    # default token labels: a lecture sentence with at least n words
    2: ["Thinking", "Machines"],
    3: ["Je", "suis", "étudiant"],
    5: ["You", "know", "nothing", "Jon", "Snow"],
    11: "The animal didn't cross the street because it was too tired".split(),
}


def default_tokens(n: int) -> tuple[str, ...]:
    """Token labels for n rows: a lecture sentence when one has n words."""
    if n in SENTENCES:
        return tuple(SENTENCES[n])
    if n < 11:
        return tuple(SENTENCES[11][:n])
    return tuple(f"t{i + 1}" for i in range(n))


def row_labels(labels, n: int, what: str = "rows", field: str = "tokens") -> tuple[str, ...]:
    """The labels given for n rows (checked), or the default sentence."""
    if labels is not None and len(labels) != n:
        raise InputError(f"{len(labels)} labels for {n} {what}", field=field)
    return check_labels(labels, field=field) if labels else default_tokens(n)


@dataclass(frozen=True)
class Params:
    """Base of every kind's parameters.

    Subclasses add fields with a comment per default and check them in
    ``validate``; a bad value raises :class:`ParamError` with a sentence a
    user understands.
    """

    numbers: str = "hand"  # hand: small integers, integer sqrt(d_k), e^x table; calculator: decimals

    # What the kind declares about itself (class attributes, not settings: no
    # annotation, so they are not dataclass fields):
    # solve takes carry= (a worksheet.steps Carry): the exact forms of a user's
    # long numbers are carried rounded (worksheet solve passes one)
    carries = False
    # a key of the module's CONVENTIONS -> the parameter that must be true for a
    # sheet to state it (the mask for a causal problem); every other key is stated
    conventions_if = {}  # not changed: shared by every kind that states all its conventions

    def __post_init__(self):
        if self.numbers not in NUMBER_MODES:
            raise ParamError(f"--numbers must be one of {', '.join(NUMBER_MODES)}, not '{self.numbers}'")
        for name, d in declared(type(self)).items():  # labels: printable, bounded, no $
            d.type.check(getattr(self, name), name)
        self.validate()

    def validate(self) -> None:
        """Check field values; override in subclasses."""

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_options(cls, options: dict[str, Any], *, source: str | None = None, checked: bool = True):
        """Build from CLI options / file fields, ignoring the ones not ours.

        ``None`` means "not given" (keep the default).  Values from files are
        converted to the field's declared type (:mod:`.param_types`) with
        errors naming the field.

        ``checked=False`` is for the params a key recorded (``worksheet
        check`` recomputing with ``reference``): no ``validate``, since a
        problem solved from given inputs may exceed the generation limits,
        and a value that does not coerce is kept as it is.
        """
        kwargs = {}
        for name, d in declared(cls).items():
            if options.get(name) is not None:
                try:
                    kwargs[name] = d.type.convert(options[name], dict(file=source, field=name))
                except InputError:
                    if checked:
                        raise
                    kwargs[name] = options[name]
        if checked:
            return cls(**kwargs)
        obj = object.__new__(cls)  # the dataclass's fields, without __post_init__'s checks
        for f in fields(cls):
            default = f.default_factory() if f.default is dataclasses.MISSING else f.default
            object.__setattr__(obj, f.name, kwargs.get(f.name, default))
        return obj

    def to_json(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if not all(_plain(v) for v in values.values()):  # a nested structure: copied, as asdict does
            values = dataclasses.asdict(self)
        return {k: jsonable(v) for k, v in values.items()}

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


@runtime_checkable
class KindModule(Protocol):
    """What a kind module offers (see the module docstring); ``Params`` is a
    subclass of :class:`Params`."""

    TITLE: str
    INPUTS: tuple[str, ...]
    CONVENTIONS: tuple  # of shared_conventions.Convention: what its sheet states, in order
    Params: type[Params]

    def generate(self, rng: np.random.Generator, params: Params) -> dict[str, Matrix]: ...

    def reference(
        self, inputs: dict[str, np.ndarray], params: Params, *, given: dict | None = None
    ) -> dict[str, np.ndarray]: ...

    def solve(self, inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem: ...


@runtime_checkable
class PassesOn(Protocol):
    """The hooks of a kind that passes its settings on (all three or none;
    the defaults, in :class:`worksheet.kinds.Kind`, are the kind's own)."""

    def settings_of(self, options: dict) -> list[str]:
        """The settings a problem takes (default: the ``Params`` fields)."""

    def conventions_of(self, params: dict) -> tuple[str, dict]:
        """The kind whose conventions the sheet states, and its params (default: its own)."""

    def mistakes_of(self, params: dict, inputs: dict) -> tuple[str, dict, dict]:
        """The kind whose mistake rules explain the steps, its params, and
        aliases of the values they read (default: its own, no aliases)."""


# ---------------------------------------------------------------- solve and reference


# ``given[name]`` when a step is given to ``reference`` (a student's answer,
# carried forward), else the computation: one helper for every kind and block
given_or = given_value


Recompute = Callable[[dict], "dict | None"]


def recomputer(kind_name: str, params: dict, inputs: dict[str, np.ndarray]) -> Recompute | None:
    """``given -> steps`` through the kind's own ``reference(inputs, params, given=...)``
    (the kind contract, :class:`KindModule`); what ``worksheet check``
    compares carried-forward answers with.

    ``params`` are the key's JSON params, read with
    ``Params.from_options(params, checked=False)`` (the sizes a key records
    may exceed the generation limits).  None when the kind is unknown or
    its params cannot be read: such keys get no carried-forward marks.
    """
    from . import get

    try:
        module = get(kind_name)
        kind_params = module.Params.from_options(params, checked=False)
    except WorksheetError:
        return None
    fn = module.reference

    def run(given: dict) -> dict | None:
        try:
            with np.errstate(all="ignore"):
                out = fn(dict(inputs), kind_params, given=dict(given))
        except Exception:  # a student's odd shapes or values: simply no recomputation
            return None
        try:
            # float64 (at high precision, see precise_reference: the mpf arrays as they are)
            return {
                k: np.asarray(v, dtype=object if precise.is_high(np.asarray(v)) else np.float64) for k, v in out.items()
            }
        except (TypeError, ValueError):
            return None

    return run


def precise_reference(
    kind_name: str, params, inputs: Mapping[str, Any], given: Mapping | None = None, *, floats: bool = False
) -> dict[str, np.ndarray]:
    """A kind's ``reference`` at high precision (:mod:`worksheet.steps.precise`): ``inputs``
    exact matrices (or arrays), ``given`` step values, ``params`` Params or JSON params.
    The steps are object arrays of mpf, the same digits on every machine; ``floats=True``:
    their correctly rounded float64 (None where mpmath divides by zero: numpy's nan)."""
    from . import get

    module = get(kind_name)
    if not isinstance(params, module.Params):
        params = module.Params.from_options(dict(params), checked=False)

    def mp(v):
        return precise.to_mp(v) if isinstance(v, (tuple, list)) else precise.as_mp(v)

    with precise.high_precision():
        try:
            out = module.reference(
                {k: mp(v) for k, v in inputs.items()}, params, given={k: mp(v) for k, v in (given or {}).items()}
            )
        except ZeroDivisionError:
            if floats:
                return None
            raise
    return {k: precise.to_float64(v) for k, v in out.items()} if floats else out


def carried_step(carry, kind_reference, inputs: Mapping[str, Any], params, name: str, ref: Mapping, **earlier):
    """The float value of the step ``name`` of a kind that carries (``carry=``):
    ``ref[name]`` (the independent chain) until ``carry`` has rounded
    something, then the kind's own ``reference(inputs, params, given=earlier)``
    of it: the step recomputed in float64 from the carried, rounded values of
    the ``earlier`` steps it follows from (exact matrices), so its arithmetic is
    checked with no third copy of its formula.  ``inputs``: float arrays."""
    if carry is None or not carry.rounding:
        return ref[name]
    return kind_reference(dict(inputs), params, given={k: to_array(v) for k, v in earlier.items()})[name]


def require_inputs(inputs: Mapping[str, Any], names, why: str | Mapping[str, str] | None = None) -> None:
    """An :class:`InputError` ``missing matrix 'NAME' (WHY)`` for the first of
    ``names`` not in ``inputs``; ``why`` is one hint for all, or one per name."""
    for name in names:
        if name not in inputs:
            hint = why.get(name) if isinstance(why, Mapping) else why
            raise InputError(f"missing matrix '{name}'" + (f" ({hint})" if hint else ""), field=name)


def np_softmax_all(z: np.ndarray) -> np.ndarray:
    """Float64 softmax over every entry of ``z`` (one row of logits or scores)."""
    e = precise.exp(z - z.max())
    return e / e.sum()


def solved_params(params: Params, **solved) -> dict[str, Any]:
    """The params a problem records: the kind's options, then the sizes (and
    labels, defaults filled in) actually solved, which given inputs decide
    (generation limits do not apply to them); tuples become lists."""
    return {**params.to_json(), **{k: jsonable(v) for k, v in solved.items()}}


class KeyValueWidths:
    """d_k and d_v of the attention kinds (dataclass fields ``d_k``, ``d_v``;
    None: d_k = 4 when generating, d_v = d_k)."""

    @property
    def key_width(self) -> int:
        return 4 if self.d_k is None else self.d_k

    @property
    def value_width(self) -> int:
        return self.key_width if self.d_v is None else self.d_v

    def validate_widths(self) -> None:
        positive("--d-k", self.key_width, 64)
        positive("--d-v", self.value_width, 64)
        require_square_d_k(self, self.key_width)


_PLAIN = (int, str, float, bool, Fraction, type(None))


def _plain(v) -> bool:
    """A value that ``jsonable`` copies or keeps as it is (numbers, words, tuples of them):
    no deep copy needed first (``dataclasses.asdict`` costs what a small kind's solve does)."""
    return type(v) in _PLAIN or (type(v) is tuple and all(_plain(x) for x in v))


def jsonable(v):
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, tuple):
        return [jsonable(x) for x in v]
    return v


def is_square(n: int) -> bool:
    return n >= 0 and math.isqrt(n) ** 2 == n


def require_square_d_k(params, d_k: int, name: str = "d_k") -> None:
    if params.numbers == "hand" and not is_square(d_k):
        raise ParamError(
            f"{name} = {d_k} is not a perfect square, so sqrt({name}) is not an integer: "
            f"hand mode needs one of 1, 4, 9, 16, ... (or use --numbers calculator)"
        )


def positive(name: str, value: int, upper: int | None = None) -> None:
    if value < 1 or (upper is not None and value > upper):
        rng = f"between 1 and {upper}" if upper else "at least 1"
        raise ParamError(f"{name} must be {rng}, not {value}")


# ---------------------------------------------------------------- random numbers


def int_matrix(
    rng: np.random.Generator, n: int, m: int, values: tuple[int, ...], p: tuple[float, ...] | None = None
) -> Matrix:
    """An n x m matrix of integers drawn from ``values`` (with probabilities ``p``).

    The same draws as ``rng.choice(values, size=(n, m), p=p)`` (tested), a
    third of its time: choice checks ``p`` on every call, and hand mode draws
    and redraws many small matrices.
    """
    if p is None:
        a = rng.choice(np.array(values), size=(n, m))
    else:
        a = np.asarray(values)[_cdf(p).searchsorted(rng.random((n, m)), side="right")]
    return tuple(tuple(rational(x) for x in row) for row in a.tolist())  # small ints: shared values


@lru_cache(maxsize=64)
def _cdf(p: tuple[float, ...]) -> np.ndarray:
    """The normalised cumulative sums numpy's choice draws against."""
    cdf = np.cumsum(np.asarray(p, dtype=np.float64))
    cdf /= cdf[-1]
    return cdf


def norm_vectors(rng: np.random.Generator, count: int, d: int, kind: str) -> Matrix:
    """``count`` rows of width d with an integer length (sum of squares a
    perfect square), not zero, not a multiple of a unit vector (d > 1): the
    norms of a cosine similarity stay exact integers."""

    def make():
        if d == 2:  # (3, 4) and (4, 3) with signs: the only pairs with an integer length
            return int_matrix(rng, 1, d, (-4, -3, 3, 4))
        return int_matrix(rng, 1, d, (-1, 0, 1, 2), (0.2, 0.3, 0.35, 0.15))

    def ok(v):
        sq = sum(int(x) ** 2 for x in v[0])
        spread_out = d == 1 or sum(x != 0 for x in v[0]) >= 2  # not just a multiple of a unit vector
        return sq > 0 and is_square(sq) and spread_out

    return tuple(retry(kind, make, ok, f"vectors of width {d} with an integer length")[0] for _ in range(count))


def decimal_matrix(rng: np.random.Generator, n: int, m: int, low: int = -10, high: int = 10, scale: int = 10) -> Matrix:
    """One-decimal entries k/scale with k in [low, high] (calculator mode)."""
    a = rng.integers(low, high + 1, size=(n, m))
    return tuple(tuple(Fraction(int(x), scale) for x in row) for row in a)


def retry(kind: str, make: Callable[[], Any], ok: Callable[[Any], bool], why: str, tries: int = MAX_TRIES):
    """Draw with ``make`` until ``ok``; a bounded number of tries, then a clear error."""
    for _ in range(tries):
        candidate = make()
        if ok(candidate):
            return candidate
    raise GenerationError(
        f"{kind}: no hand-friendly numbers found in {tries} tries ({why}); try smaller sizes or --numbers calculator"
    )
