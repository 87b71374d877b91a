"""Find the mistake: a worked solution of another kind with one planted mistake.

The sheet shows a full worked solution of a problem of kind ``of`` (default
``attention``) in which exactly one mistake from the catalogue that ``worksheet
check`` recognises (:mod:`worksheet.kinds.mistakes`) was made.  Everything after the
mistake follows from it consistently, as the flawed solution would: each later
step is recomputed from the wrong values by the kind's own
``reference(..., given=...)``.  The student says which step is wrong and what
the mistake is, and gives the corrected values from that step on.

Steps:

* ``step`` — the name of the first wrong step (a label; its value is the
  step's 0-based index in the worked solution, its ``choices`` those names);
* ``mistake`` — the mistake's code (a label; its value is the code's 0-based
  index among the codes of ``of``, listed on the sheet and in ``choices``);
* ``corrections`` — writing space on the sheet (a written step);
* the corrected steps of ``of`` from the wrong one on, with the names and
  values that kind gives them.  They are on the key and in the JSON (so
  ``check`` marks them as for ``of``, with carried-forward marks), but not
  printed as grids on the student sheet, whose grid titles would give the
  wrong step away (``Step.on_sheet``).

The JSON of the problem records ``"mistake"`` (the code) and ``"step"`` (the
name) beside its steps (``Problem.record``).

How a mistake is planted: the steps of ``of`` are walked in order; where the
mistake's rule applies (and changes the value), the wrong value is taken;
every other step is recomputed from the values so far.  So a mistake that
spans several steps (the mean, variance and normalisation of
``normalized-across-tokens``; Q, K and V of ``cross-sources-swapped``) is made
in each of them, and the first is the step to name.  ``arithmetic-slip``
changes one entry of one step by 1 (integer steps) or by 0.1.

Which mistake: ``mistake = CODE`` asks for one (an error when it cannot be
made on this problem); by default one is drawn from those that can, by a
stable hash of the problem's exact inputs, so variants (other numbers) draw
other mistakes and a build is reproducible whatever ``PYTHONHASHSEED`` is.
The worked solution shows each step to 4 decimals (exact where it is an
integer or a short decimal); the corrected steps on the key are exact.

The flawed chain is computed at high precision (:mod:`.flawed`: mpmath
at 60 digits, no libm), so its shown decimals are the same on every machine.
It carries what the right solution carries: a step the kind carries rounded
(the encoder and decoder blocks, the recurrent cells by hand) goes on with its
shown places, so each later shown step follows from the printed ones, and the
steps before the mistake show exactly what the key shows (so a student who
corrects the solution from the printed steps before the mistake gets the
key's values).

Kinds with rule-based mistakes can be used (``worksheet list``: attention,
self-attention-basic, softmax-scaling, multi-head-attention,
positional-encoding, layer-norm, feed-forward, cross-attention, alignment
with ``score=scaled-dot``, the encoder and decoder blocks, the LSTM and GRU
cells, and any kind that registers rules).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields, replace
from fractions import Fraction

import numpy as np

from .. import kinds as registry
from . import flawed, mistakes
from ..policy.errors import ParamError
from ..exact import NegInf, to_float, to_str
from ..steps.layer_steps import round_matrix
from ..solution.maths import Maths, Node, Row, as_latex, as_tree
from ..solution.maths import build as m
from ..solution.maths.build import line
from ..solution.problem import Matrix, Problem, Step, code
from ..solution.step_ref import StepRef
from . import base

TITLE = "Find the mistake"
CONVENTIONS = ()  # those of ``of``: see conventions_of
INPUTS: tuple[str, ...] = ()  # those of ``of``
EXCLUDED = ("find-the-mistake",)
SLIP_PLACES = flawed.SHOWN_PLACES  # decimals of the shown worked solution
ASKED_ENTRIES = 30  # the corrections asked: whole steps, at most about this many numbers (a page's lines)
SOLUTION_HEADING = "The student's solution"
SHOWN = "shown."  # the input of the shown (flawed) step NAME is shown.NAME: an input, not a step


@dataclass(frozen=True)
class Params(base.Params):
    of: str = "attention"  # the kind whose worked solution holds the mistake
    mistake: str | None = None  # a mistake code (worksheet.kinds.mistakes.CATALOGUE); None: drawn
    # Settings passed on to ``of`` when it has them (None: that kind's default):
    seq_len: int | None = None  # number of tokens
    d_model: int | None = None  # embedding width
    d_k: int | None = None  # query/key width
    d_v: int | None = None  # value width
    d_ff: int | None = None  # hidden width of a feed-forward network
    heads: int | None = None  # number of heads
    causal: bool | None = None  # causal mask
    eps: Fraction | None = None  # layer-norm epsilon
    residual: bool | None = None  # layer norm of x + Sublayer(x)
    score: str | None = None  # alignment score function
    d_a: int | None = None  # additive-score width
    dec_len: int | None = None  # decoder tokens (cross-attention)
    enc_len: int | None = None  # encoder tokens (cross-attention)
    base: int | None = None  # positional-encoding base
    positions: tuple[int, ...] | None = None  # positional-encoding positions
    tokens: tuple[str, ...] | None = None  # row labels

    def validate(self):
        if self.of in EXCLUDED:
            raise ParamError(f"find-the-mistake cannot use of={self.of}; use one of {', '.join(usable())}")
        registry.get(self.of)  # an unknown kind: one line with a suggestion
        if self.of not in usable():
            raise ParamError(f"{self.of} has no named mistakes to plant; use one of {', '.join(usable())}")
        if self.mistake is not None:
            codes = mistakes.codes_for(self.of)
            if self.mistake not in codes:
                raise ParamError(f"mistake '{self.mistake}' is not one for {self.of}; choose from {', '.join(codes)}")

    @classmethod
    def from_options(cls, options: dict, *, source: str | None = None, checked: bool = True):
        """As :meth:`base.Params.from_options`; a key's params (``worksheet
        check``) also hold the ``of`` problem's params as solved, under
        ``"options"``: they are kept (not a field) for :meth:`kind_options`."""
        params = super().from_options(options, source=source, checked=checked)
        solved = options.get("options")
        if isinstance(solved, dict):
            object.__setattr__(params, "_solved", dict(solved))
        return params

    def kind_options(self) -> dict:
        """The options of ``of``: as a key recorded them (see :meth:`from_options`),
        else the settings it has (None: its default) and ``numbers``."""
        solved = getattr(self, "_solved", None)
        if solved is not None:
            return dict(solved)
        own = set(registry.get(self.of).Params.field_names())
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name in own and f.name not in ("of", "mistake") and getattr(self, f.name) is not None
        }

    def kind_params(self):
        """The Params of ``of``: the settings it has, the rest its defaults."""
        return registry.get(self.of).Params(**self.kind_options())


def usable() -> list[str]:
    """The kinds with at least one rule-based mistake (not only the slip)."""
    return [k for k in registry.names() if k not in EXCLUDED and len(mistakes.codes_for(k)) > 1]


def generate(rng: np.random.Generator, params: Params) -> dict[str, Matrix]:
    """The inputs of a problem of ``of`` (the mistake is drawn in solve)."""
    return registry.get(params.of).generate(rng, params.kind_params())


# ---------------------------------------------------------------- planting
# The flawed chain is computed at high precision in :mod:`.flawed`.
Planted = flawed.Planted


def reference(
    inputs: dict[str, np.ndarray], params: Params, *, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """The float64 steps of ``params.of`` (its own ``reference``), from ``given`` on,
    with the ``of`` problem's options (:meth:`Params.kind_options`: on a key,
    the JSON params of the ``of`` problem, kept under ``"options"`` in this
    problem's params), so ``check`` can recompute later steps from a
    student's own answers exactly as for ``of``."""
    return of_reference(inputs, params.of, params.kind_options(), given)


def of_reference(
    inputs: dict[str, np.ndarray], of: str, options: dict, given: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """``of``'s reference with its params ``options`` (JSON or typed values),
    through ``check``'s recomputation (ValueError when it cannot follow ``given``)."""
    run = base.recomputer(of, options, inputs)
    if run is None:
        raise ValueError(f"{of} has no recomputation")
    out = run(dict(given or {}))
    if out is None:
        raise ValueError("the given values do not fit the problem")
    return out


def settings_of(options: dict) -> list[str]:
    """The settings a find-the-mistake problem takes: those of the kind its
    worked solution is of (``of``), so ``--heads`` applies where ``of`` takes it.
    (A kind with ``settings_of`` passes settings on; the build checks them here.)"""
    from .. import kinds as registry

    of = str(options.get("of", Params.of))
    return registry.get(of).Params.field_names() if of in registry.KINDS else Params.field_names()


def conventions_of(params: dict) -> tuple[str, dict]:
    """The sheet states the conventions of the kind the worked solution is of."""
    return params.get("of", "attention"), params.get("options", {})


def mistakes_of(params: dict, inputs: dict) -> tuple[str, dict, dict]:
    """``check`` diagnoses the corrected steps with the rules of ``of``; the
    steps before the mistake are read from the shown solution (right there)."""
    before = {}
    for name in inputs:
        if name.startswith(SHOWN):
            step = name.removeprefix(SHOWN)
            if step == params.get("step"):
                break
            before[step] = name
    return params.get("of", "attention"), params.get("options", {}), before


def candidates(problem: Problem) -> list[Planted]:
    """Every (mistake, first step) that changes this worked solution, each with
    its consistent flawed chain (:func:`.flawed.candidates`, from the exact inputs)."""
    return flawed.candidates(problem)


def _draw(options: list[Planted], inputs: dict[str, Matrix]) -> Planted:
    """One of the possible mistakes, by a stable hash of the exact inputs."""
    text = "|".join(f"{name}={[[to_str(x) for x in row] for row in m]}" for name, m in sorted(inputs.items()))
    h = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return options[h % len(options)]


# ---------------------------------------------------------------- the problem
def shown(value: np.ndarray) -> Matrix:
    """A flawed step as printed: 4 decimals, rounded half away from zero exactly
    from the high-precision flawed chain (:mod:`.flawed`; the same on every
    machine); -oo stays -oo."""
    return flawed.shown(value)


# long: the sheet's steps in order, each with its worked lines (split when worked lines become data, issue 26)
def solve(inputs: dict[str, Matrix], params: Params, *, seed: int | None = None) -> Problem:
    module = registry.get(params.of)
    right = module.solve(inputs, params.kind_params(), seed=seed)
    plantable = candidates(right)
    options = plantable
    if params.mistake is not None:
        options = [o for o in options if o.code == params.mistake]
        if not options:
            can = [c for c in mistakes.codes_for(params.of) if c in {o.code for o in plantable}]
            raise ParamError(
                f"mistake '{params.mistake}' cannot be made on this {params.of} problem "
                f"(it would change nothing, or later steps could not follow from it); "
                f"choose one of {', '.join(can) or 'none'}, or let it be drawn"
            )
    if not options:
        raise ParamError(f"no mistake can be planted in this {params.of} problem")
    planted = _draw(options, inputs)
    # on offer: only the mistakes that can be planted in this problem (a code that would change
    # nothing, or that later steps cannot follow, such as concat-wrong-axis, is not listed)
    offered = [c for c in mistakes.codes_for(params.of) if c in {o.code for o in plantable}]
    order = [s.name for s in right.steps if not s.is_written]
    at = order.index(planted.step)
    mistake = mistakes.CATALOGUE[planted.code]
    asked = asked_steps([s for s in right.steps if not s.is_written], at)
    blocks = any(StepRef.parse(name).part for name in order)

    p = Problem(
        "find-the-mistake",
        f"{TITLE}: {right.title}",
        {
            "of": params.of,
            "mistake": planted.code,
            "step": planted.step,
            "numbers": params.numbers,
            "options": right.params,
        },
        seed=seed,
        intro=(
            f"A student's worked solution of the problem below has exactly one mistake. "
            f"{right.intro} Find the first wrong step (its number, name or symbol), name the "
            f"mistake (one of: {', '.join(map(code, offered))}), and give the "
            f"correct values {ASKED_WORDS[blocks]}."
        ),
    )
    p.record = {
        "mistake": planted.code,
        "step": planted.step,
        "offered": offered,
        "step_symbols": {s.name: plain_symbol(s.symbol) for s in right.steps if not s.is_written},
    }
    # a kind whose tables would single out the right values of a flawed step gives a
    # sheet of this kind its own tables (the same whatever the mistake)
    p.aids = registry.kind(params.of).find_the_mistake_aids(right)
    for name, q in right.inputs.items():
        p.inputs[name] = q
    first_shown = True
    for s in right.steps:
        if s.is_written:
            continue
        k = order.index(s.name)  # the student's solution numbers its steps (1), (2), ... as the key does
        value = planted.values[s.name]
        same = value.shape == s.value.shape
        # before the wrong step the student is right: the key's value rounded (a step carried
        # rounded is the key's carried value); from it on the flawed chain rounded (see shown)
        right_so_far = k < at and not any(isinstance(x, str) for row in s.exact for x in row)
        q = p.add_input(
            SHOWN + s.name,
            round_matrix(s.exact, SLIP_PLACES) if right_so_far else shown(value),
            rows=s.rows if same else None,
            cols=s.cols if same else None,
            latex_name=line(m.text(f"({k + 1})"), m.word_space(), as_tree(s.symbol)),
        )
        if not q.integral:  # 4 places, trailing zeros kept, as the correct solution prints them
            p.inputs[q.name] = q = replace(q, given_places=SLIP_PLACES)
        if first_shown:  # the student's solution starts under a heading of its own, after the givens
            p.inputs[q.name] = replace(q, heading=SOLUTION_HEADING)
            first_shown = False
    codes = offered
    # the questions are a., b., c.: the numbers (1), (2), ... are the student's solution's steps
    p.add_step(
        "step",
        ((planted.step,),),
        np.array([[float(at)]]),
        title="The first wrong step",
        formula=line(m.text("number, name or symbol of the step")),
        work=(
            line(m.text(f"step ({at + 1}), {planted.step}, "), as_tree(right.step(planted.step).symbol)),
            *_wrong_entry(right.step(planted.step), planted.values[planted.step]),
        ),
        choices=order,
    )
    p.add_step(
        "mistake",
        ((planted.code,),),
        np.array([[float(codes.index(planted.code))]]),
        title="The mistake",
        formula=line(m.text("code of the mistake")),
        work=(line(m.text(planted.code)),),
        note=mistake.typeset,
        choices=codes,
    )
    p.add_written(
        "corrections",
        title="The corrected steps",
        answer=m.prose(
            f"The mistake is in step ({at + 1}) ({planted.step}): ",
            mistake.typeset,
            f" The correct values of steps {_span(asked, order)} are below.",
        ),
        lines=CORRECTION_LINES,
    )
    for k, label in enumerate("abc"):
        p.steps[k] = replace(p.steps[k], number=f"{label}.")
    for s in asked:
        p.steps.append(replace(_key_only(s), number=f"({order.index(s.name) + 1})"))
    p.step_weights = fixed_shares([s.name for s in asked])
    p.notes.append(m.prose(f"The first wrong step is ({at + 1}), {planted.step}: ", mistake.typeset))
    return p


def fixed_shares(corrected: list[str]) -> dict[str, int]:
    """The weights of the steps in the split of a section's points: the same parts
    whatever step holds the mistake -- naming the step 1/5, naming the mistake 1/5,
    the corrections 3/5 (the written ones 1/5, marked by hand; the corrected values
    2/5, shared by however many steps follow the mistake).  Integers, so the JSON
    key's weights are exact; a spec's own ``step_points``/``step_weights`` replace them."""
    m = len(corrected)
    return {"step": m, "mistake": m, "corrections": m, **{name: 2 for name in corrected}}


ASKED_WORDS = {
    False: f"of the wrong step and the steps after it (whole steps, at most {ASKED_ENTRIES} numbers)",
    True: (
        f"of the wrong step and the steps after it to the end of its sublayer (attention, Add & Norm "
        f"or feed-forward; whole steps, at most {ASKED_ENTRIES} numbers)"
    ),
}
CORRECTION_LINES = 6  # ruled lines for the corrections: at most 30 numbers


def asked_steps(steps: list[Step], at: int) -> list[Step]:
    """The corrected steps asked for: the wrong step ``steps[at]``, then those after it in its
    sublayer, while all of them hold at most :data:`ASKED_ENTRIES` numbers (the wrong step
    always).  Redoing a decoder block from step (11) would be some 200 numbers: no page has them."""
    out, total = [steps[at]], steps[at].value.size
    for s in steps[at + 1 :]:
        if StepRef.parse(s.name).part != StepRef.parse(steps[at].name).part or total + s.value.size > ASKED_ENTRIES:
            break
        out.append(s)
        total += s.value.size
    return out


def _span(asked: list[Step], order: list[str]) -> str:
    """``(4) to (6)``, or ``(4)`` for one step."""
    a, b = order.index(asked[0].name) + 1, order.index(asked[-1].name) + 1
    return f"({a})" if a == b else f"({a}) to ({b})"


def plain_symbol(latex: Maths) -> str:
    """A step's symbol as ``check`` compares it (:func:`worksheet.solution.number_format.label_key`):
    ``\\mathrm{head}_{1}`` -> ``head1``, ``S'_{1}`` -> ``s'1``, ``Z`` -> ``z``."""
    from ..solution.number_format import label_key

    return label_key(as_latex(latex))


def _wrong_entry(right: Step, wrong: np.ndarray) -> tuple[Node, ...]:
    """The key's line naming the first wrong entry of the flawed step (row, column,
    what the solution shows, what is right); nothing when the shapes differ."""
    from ..solution.number_format import decimal

    r = np.array([[-np.inf if isinstance(x, NegInf) else to_float(x) for x in row] for row in right.exact])
    if wrong.shape != r.shape:
        return (
            line(
                m.text("The step has shape "),
                wrong.shape[0],
                "×",
                wrong.shape[1],
                m.text("; it should be "),
                r.shape[0],
                "×",
                r.shape[1],
            ),
        )
    shown_w = shown(wrong)
    for i in range(r.shape[0]):
        for j in range(r.shape[1]):
            a, b = shown_w[i][j], right.exact[i][j]
            fa = float(a) if not isinstance(a, str) else None
            if fa is None or (np.isinf(r[i, j]) and np.isinf(fa)):
                continue
            if abs(fa - r[i, j]) > 5e-5:

                def show(x) -> Node:  # a group of its own: after words it is signed, "is -0.7881", not "is - 0.7881"
                    if isinstance(x, NegInf):  # a masked score: -oo
                        return line("-", m.sym("∞"))
                    return m.number(decimal(x, SLIP_PLACES) if not float(x).is_integer() else str(int(float(x))))

                # b: from the exact value; and, where the sheet's tables and rounding give
                # another last digit, the chain's value too (the key's table of decimals shows it)
                c = right.chain[i][j] if right.chain is not None else None
                also = (
                    (m.text(" ("), show(c), m.text(" with the sheet's tables and rounding)"))
                    if c is not None and not isinstance(c, (str, NegInf)) and show(c) != show(b)
                    else ()
                )
                # a Row of its own items, not line(): line() would splice a signed number into the words
                return (
                    Row(
                        (
                            m.text(f"First wrong entry: row {i + 1}, column {j + 1}: the solution shows "),
                            show(a),
                            m.text(", the right value is "),
                            show(b),
                            *also,
                        )
                    ),
                )
    return ()


def _key_only(s: Step) -> Step:
    return replace(s, on_sheet=False)
