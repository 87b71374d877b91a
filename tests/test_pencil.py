"""The student with a pencil: every kind's hand-mode sheet, done the way it says.

For each kind and many seeds, a simulated student uses only what the sheet
prints -- the given matrices and the tables of e^x, σ, tanh, √, sin, cos at
their printed 4 places -- and the rounding chain every sheet states
(:mod:`worksheet.policy.pencil`): exact where a result is exact, every other result
rounded once to 4 places and carried on rounded.  Each step is worked out by
the kind's own ``reference`` (what ``check`` recomputes with), fed the
student's own rounded earlier answers, with every function value replaced
by the sheet's table entry; a value the tables do not print is a failure.
Then ``worksheet check`` must give full marks to every step.

The same sheets' worked lines must be true as printed: evaluating a line's
printed terms (with the sheet's table values) gives its printed result
(:func:`pencil_util.check_line`, our own reader of our printed form; never
sympy).  And no answer a step asks for is printed on the student's sheet.
"""

from __future__ import annotations

import json
import os
import re
import types
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pencil_util as pu
from built_util import document, rendered
from worksheet import kinds
from worksheet.build import build_document, render_document
from worksheet.check import check_answers
from worksheet.check.key import read_key
from worksheet.check.recompute import recomputer
from worksheet.policy.pencil import HAND_LINE, round_places
from worksheet.kinds import layer_norm
from worksheet.kinds.chain import Chain

SEEDS = range(int(os.environ.get("WORKSHEET_PENCIL_SEEDS", "20")))
KINDS = kinds.names() + [
    "alignment:score=location",
    "alignment:score=additive",
    "alignment:score=cosine",
    "alignment:score=general",
    "attention:causal=true",
    "lstm-cell:steps=3",
    "gru-cell:steps=3",
    "find-the-mistake:of=lstm-cell",
    "find-the-mistake:of=gru-cell",
    "find-the-mistake:of=multi-head-attention",
    "find-the-mistake:of=encoder-block",
    "find-the-mistake:of=decoder-block",
    "find-the-mistake:of=positional-encoding",
    "next-token:temperature=1/2",
]


# ---------------------------------------------------------------- the student
class TableNumpy(types.SimpleNamespace):
    """numpy, but e^x, tanh, √, sin and cos come from the sheet's tables."""

    def __init__(self, tables: pu.Tables, missing: list):
        super().__init__()
        self._tables, self._missing = tables, missing
        self._strict = False  # a value the tables lack: NaN (to see which step needs it)

    def __getattr__(self, name):
        return getattr(np, name)

    def _read(self, func, x):
        arr = np.asarray(x, dtype=np.float64)
        out = np.empty_like(arr)
        for idx, v in np.ndenumerate(arr):
            if not np.isfinite(v):
                out[idx] = pu.float_value(func, v) if func != "exp" else (0.0 if v < 0 else np.inf)
                continue
            try:
                out[idx] = self._tables.lookup_float(func, float(v))
            except pu.NotOnSheet:
                self._missing.append(f"{func}({v:.6g})")
                out[idx] = np.nan if self._strict else round(pu.float_value(func, float(v)), 4)
        return out if arr.ndim else float(out)

    def exp(self, x):
        return self._read("exp", x)

    def tanh(self, x):
        return self._read("tanh", x)

    def sqrt(self, x):
        return self._read("sqrt", x)

    def sin(self, x):
        return self._read("sin", x)

    def cos(self, x):
        return self._read("cos", x)


def written(v: float, places: int = 4) -> str:
    """How the student writes an entry: -inf, an integer, else ``places`` places (4, or
    what the sheet says a state is carried with)."""
    if v == -np.inf:
        return "-inf"
    if abs(v - round(v)) < 1e-9:
        return str(int(round(v)))
    return format(float(round_places(Fraction(v).limit_denominator(10**9), places)), f".{places}f")


def _kind_modules():
    import importlib
    import pkgutil

    import worksheet.kinds as pkg

    mods = [importlib.import_module(f"worksheet.steps.{m}") for m in ("float_check", "precise")]
    for info in pkgutil.iter_modules(pkg.__path__):
        mods.append(importlib.import_module(f"worksheet.kinds.{info.name}"))
    return [m for m in mods if hasattr(m, "np")]


def simulate(problem, key_problem, monkeypatch) -> tuple[dict, list[str]]:
    """The student's answers (step -> rows of strings) and the table values they lacked."""
    tables = pu.Tables.of(problem)
    missing: list[str] = []
    proxy = TableNumpy(tables, missing)
    with monkeypatch.context() as m:
        for mod in _kind_modules():
            m.setattr(mod, "np", proxy)
        from worksheet.kinds import recurrent

        def table_sigmoid(a):
            return proxy._read("sigma", a)

        m.setattr(recurrent, "np_sigmoid", table_sigmoid)
        sigma = recurrent.Act(recurrent.sigmoid, table_sigmoid, "sigma")
        m.setattr(recurrent, "SIGMA", sigma)
        from worksheet.kinds import lstm_cell

        m.setattr(
            lstm_cell,
            "GATES",
            tuple((g, sigma if act.name == "sigma" else act, title) for g, act, title in lstm_cell.GATES),
        )
        run = recomputer(key_problem.kind, key_problem.params, key_problem.inputs)
        answers, given = {}, {}
        if key_problem.kind == "find-the-mistake":  # the right steps before the mistake: as printed
            for name, value in key_problem.inputs.items():
                if name == f"shown.{key_problem.params['step']}":
                    break
                if name.startswith("shown."):
                    given[name[len("shown.") :]] = value
        for ks in key_problem.steps:
            if ks.written:
                continue
            if ks.labels:  # a choice (a token, a step's name, a mistake's code): the key's
                answers[ks.name] = [[e.label for e in row] for row in ks.cells]
                given[ks.name] = ks.value
                continue
            before = len(missing)
            out = run(dict(given))
            assert out is not None and ks.name in out, f"no recomputation of {ks.name}"
            if len(missing) > before:  # the run computed later steps too: does this one need them?
                del missing[before:]
                proxy._strict = True
                strict = run(dict(given))
                proxy._strict = False
                if not np.isnan(strict[ks.name]).any():
                    del missing[before:]  # only steps not yet answered needed them
            step = problem.step(ks.name) if ks.name in {s.name for s in problem.steps} else None
            places = step.places if step is not None and step.rounded else 4  # "carry c rounded to 2 decimals"
            rows = [[written(float(v), places) for v in row] for row in out[ks.name]]
            answers[ks.name] = rows
            given[ks.name] = np.array([[float(x) for x in row] for row in rows])
    return answers, missing


def _file(kind: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", kind)


def build(kind: str, seed: int, tmp_path):
    """The sheet of ``kind`` at ``seed`` (built once per process: :mod:`built_util`), its
    JSON key and Markdown, and the key written to ``tmp_path``."""
    doc = document(kind, seed)
    name = f"{_file(kind)}-{seed}"
    files = rendered(kind, seed, ("json", "md"), name)
    key_path = tmp_path / f"{name}.json"
    key_path.write_text(files[f"{name}.json"], encoding="utf-8")
    return doc, files, key_path


@pytest.mark.parametrize("kind", KINDS, scope="module")
def test_a_student_following_the_sheet_gets_full_marks(kind, tmp_path, monkeypatch):
    failures = []
    for seed in SEEDS:
        doc, files, key_path = build(kind, seed, tmp_path)
        p = doc.problems[0]
        kp = read_key(key_path).problems()[0]
        answers, missing = simulate(p, kp, monkeypatch)
        if missing:
            failures.append(f"seed {seed}: needs values the sheet does not print: {sorted(set(missing))[:6]}")
        ans_path = tmp_path / f"{_file(kind)}-{seed}-answers.json"
        ans_path.write_text(json.dumps(answers), encoding="utf-8")
        report = check_answers(key_path, ans_path)
        for step in report.problems[0].steps:
            if step.status not in ("correct", "by-person"):
                failures.append(f"seed {seed}: {step.name} {step.status}: {step.message}"[:300])
    assert not failures, "\n".join(failures[:25])


CALCULATOR_SEEDS = range(int(os.environ.get("WORKSHEET_PENCIL_CALCULATOR_SEEDS", "6")))


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
@pytest.mark.parametrize("kind", KINDS, scope="module")
def test_every_worked_line_is_true_as_printed(kind, numbers):
    """Hand keys (function values from the sheet's tables) and calculator keys (no
    tables: a function's value to 30 digits): a line's printed terms give its printed
    result, and a line that names a function (e^{-1}/(1 + e^{-1})) rounds to what
    follows it by its true value too (so 0.3679/1.3679 ~ 0.2690 writes the numbers)."""
    failures, checked = [], 0
    for seed in SEEDS if numbers == "hand" else CALCULATOR_SEEDS:
        p = document(kind, seed, numbers).problems[0]
        tables = pu.Tables.of(p)
        for s in p.steps:
            for line in s.work:
                n, bad = pu.check_line(str(line), tables)
                checked += n
                failures += [f"seed {seed}, {s.name}: {b}" for b in bad]
    assert not failures, "\n".join(failures[:25])
    assert checked > 0 or kind in ("find-the-mistake",), "no worked line could be read"


def _sheet_text(files: dict, kind: str, seed: int) -> str:
    return files[f"{_file(kind)}-{seed}.md"]


@pytest.mark.parametrize("kind", KINDS, scope="module")
def test_no_answer_is_printed_on_the_student_sheet(kind, tmp_path):
    """Every asked entry that is not a whole number (4 places) is absent from the
    sheet's words and given matrices (the tables are checked by the student above:
    what they print must serve the computation)."""
    failures = []
    for seed in SEEDS:
        doc, files, _ = build(kind, seed, tmp_path)
        p = doc.problems[0]
        sheet = _sheet_text(files, kind, seed)
        # the words and given matrices before the first answer grid, without the tables
        # (a table's values are meant to be read: a gate is the sigma the table gives)
        text = "\n".join(line for line in sheet.split("### 1.")[0].splitlines() if not _table_line(line))
        given = {f"{float(x):.4f}" for q in p.inputs.values() for row in q.exact for x in row if not isinstance(x, str)}
        for s in p.printed_steps(key=False):
            if s.is_written:
                continue
            for row in s.exact:
                for x in row:
                    if isinstance(x, str):
                        continue
                    v = float(x) if not hasattr(x, "is_neg_inf") else None
                    try:
                        v = float(x)
                    except (TypeError, ValueError, OverflowError):
                        continue
                    if not np.isfinite(v) or abs(v - round(v)) < 5e-5:  # 0.0000, 1.0000: no news
                        continue
                    shown = f"{v:.4f}"
                    if shown in given:
                        continue  # an answer equal to a given number is not given away
                    if re.search(rf"(?<![\d.]){re.escape(shown)}(?!\d)", text):
                        failures.append(f"seed {seed}: {s.name} = {shown} is printed on the sheet")
    assert not failures, "\n".join(failures[:25])


def _table_line(line: str) -> bool:
    """A line of a printed table (a list of values, or a row of a standard grid)."""
    return line.startswith("Values of") or line.startswith("|")


def _answers(p) -> set[str]:
    """Every entry a step asks for that is not a whole number, to 4 places."""
    out = set()
    for s in p.printed_steps(key=False):
        if s.is_written:
            continue
        for row in s.exact:
            for x in row:
                try:
                    v = float(x)
                except (TypeError, ValueError, OverflowError):
                    continue
                if np.isfinite(v) and abs(v - round(v)) >= 5e-5:
                    out.add(f"{v:.4f}")
    return out


# softmax-scaling: its exponents are differences of the scores it gives, so its table
# cannot hide them, and its raw-score softmax is nearly one-hot (alpha = e^{-8}/(1 + e^{-8})
# is e^{-8} to 4 places: reading the table is the step).
GIVEN_EXPONENTS = {"softmax-scaling"}
# positional-encoding: its table of sin and cos is the same for every variant (the angles
# depend only on d_model and the positions), so it tells one student nothing another
# does not know; its arguments are the angles step's answers, as any table of sin at
# those angles must show them.  A find-the-mistake sheet adds the angles of
# pe-index-not-halved, so that it does not single out the right ones the corrections
# ask for (test_kind_find_the_mistake).


@pytest.mark.parametrize("kind", KINDS, scope="module")
def test_no_table_gives_an_answer_away(kind):
    """A table is standard (the same in every variant: an answer on it is a value of
    the kind's table, not of this problem), or none of its arguments and values is an
    answer of the problem (4 places)."""
    seeds = list(SEEDS)
    docs = [document(kind, seed) for seed in seeds]
    tables: dict[str, set] = {}
    for d in docs:
        for aid in d.problems[0].aids:
            tables.setdefault(aid.title, set()).add(aid.entries)
    standard = {t for t, versions in tables.items() if len(versions) == 1}
    if kind in GIVEN_EXPONENTS:
        return
    failures = []
    for seed, d in zip(seeds, docs):
        p = d.problems[0]
        answers = _answers(p)
        sheet_tables = pu.Tables.of(p)
        for aid in p.aids:
            if aid.title in standard:
                continue
            for arg, val in aid.entries:
                func, x = pu.call(arg, sheet_tables)
                for shown, what in ((f"{float(x):.4f}", "argument"), (f"{float(pu.value(val)):.4f}", "value")):
                    if shown in answers:
                        failures.append(f"seed {seed}: {arg} ({what} {shown}) is an answer")
    assert not failures, "\n".join(failures[:25])


STANDARD_TABLES = [
    "lstm-cell:steps=3",
    "gru-cell:steps=2",
    "attention",
    "multi-head-attention",
    "cross-attention",
    "self-attention-basic",
    "alignment:score=additive",
    "alignment:score=cosine",
    "next-token",
    "encoder-block",
    "decoder-block",
]


@pytest.mark.parametrize("kind", STANDARD_TABLES, scope="module")
def test_a_standard_table_is_the_same_for_every_variant(kind):
    """The tables of σ and tanh (recurrent cells), of e^x (attention, alignment, next token)
    and the blocks' (e^x, e^{-x} and √x) do not depend on the seed."""
    versions = {tuple((a.title, a.entries) for a in document(kind, s).problems[0].aids) for s in SEEDS}
    assert len(versions) == 1, kind


def test_hand_numbers_are_the_default():
    """The tests above read the default sheet as the hand sheet (built once, :mod:`built_util`):
    asking for hand numbers gives the same files."""
    for kind in ("attention", "lstm-cell", "find-the-mistake:of=encoder-block"):
        for seed in (0, 7):
            default = render_document(build_document([kind], seed=seed), ["json", "md"], name="n")
            hand = render_document(
                build_document([kind], seed=seed, options={"numbers": "hand"}), ["json", "md"], name="n"
            )
            assert default == hand, (kind, seed)


def test_every_hand_sheet_prints_the_rounding_chain_and_its_tolerance():
    doc = build_document(["attention", "lstm-cell"], seed=1)
    for fmt in ("md", "tex", "html"):
        files = render_document(doc, [fmt], name="t")
        sheet = next(v for k, v in files.items() if "key" not in k)
        assert "within 0.001 of the key" in sheet, fmt
    assert "0.001" in HAND_LINE


def test_the_line_reader_reads_our_printed_arithmetic():
    t = pu.Tables({"exp": {Fraction(-1): Fraction("0.3679")}})
    assert pu.value(r"0.2119 \cdot (-1) + 0.2119 \cdot 0 + 0.5761 \cdot (-1)") == Fraction("-0.7880")
    assert pu.value(r"\frac{e^{-1}}{1 + 2 e^{-1}}", t) == Fraction("0.3679") / Fraction("1.7358")
    n, bad = pu.check_line(r"z_{11} \approx 0.2119 \cdot (-1) + 0.5761 \cdot (-1) \approx -0.7881", t)
    assert n == 1 and bad
    n, bad = pu.check_line(r"z_{11} \approx 0.2119 \cdot (-1) + 0.5761 \cdot (-1) \approx -0.7880", t)
    assert n == 1 and not bad
    # the table's 0.3679 gives 0.2690, but e^{-1}/(1 + e^{-1}) is 0.26894: the line must write the numbers
    n, bad = pu.check_line(r"\alpha_{1} = \frac{e^{-1}}{1 + e^{-1}} \approx 0.2690", t)
    assert n == 1 and bad and "exact value" in bad[0]
    n, bad = pu.check_line(r"\alpha_{1} = \frac{e^{-1}}{1 + e^{-1}} \approx \frac{0.3679}{1.3679} \approx 0.2690", t)
    assert n == 1 and not bad
    # a calculator line: the factors printed are what the result is computed from
    assert pu.check_line(r"h \approx 0.6130 \cdot (-0.7842) \approx -0.4808", pu.Tables())[1]
    assert not pu.check_line(r"h \approx 0.61304 \cdot (-0.78425) \approx -0.4808", pu.Tables())[1]
    with pytest.raises(pu.NotOnSheet):
        pu.value("e^{-2}", t)
    with pytest.raises(pu.Unreadable):
        pu.value(r"\alpha_{11}", t)


def test_multi_head_outputs_that_are_integers_print_as_integers():
    """concat W^O summed over heads: heads sharing a denominator make one ratio, so
    an entry equal to -2 is the integer -2, not a sum of two exp quotients."""
    from worksheet.exact import to_str

    p = build_document(["multi-head-attention"], seed=3).problems[0]
    out = p.step("output")
    assert [to_str(x) for x in out.exact[0]][:2] == ["-2", "-2"]
    for seed in SEEDS:
        for row in build_document(["multi-head-attention"], seed=seed).problems[0].step("output").exact:
            for x in row:
                v = float(x)
                if abs(v - round(v)) < 1e-12:
                    assert to_str(x) == str(round(v)), (seed, to_str(x))


@pytest.mark.parametrize("kind", ["encoder-block", "decoder-block"], scope="module")
def test_a_hand_block_reads_only_standard_tables(kind):
    """By hand a block reads √ of its carried variances and (the decoder) e^{-x} of its
    carried scores on standard grids; its one other table is e^x at the steps of 1/2
    (the first softmax's exact scores).  No table lists a value the student computes."""
    for seed in SEEDS:
        p = document(kind, seed).problems[0]
        assert [a.title for a in p.aids if not a.grid] == [r"Values of $e^x$ you may need"], (kind, seed)
        assert {a.title.split(" for ")[0] for a in p.aids if a.grid} >= {
            r"Values of $\sqrt{x}$ below 10",
            r"Values of $\sqrt{x}$ from 10 on",
        }


def test_a_table_of_computed_arguments_hides_them_among_distractors():
    """Where a chain carries more than 4 places (a file's tiny variance drifts too far on
    4), it reads no standard table: its table of √ lists each carried σ² + ε beside a
    distractor 0.1 to 0.3 away, so the table does not give the answer away."""
    params = layer_norm.Params()
    m = layer_norm.generate(np.random.default_rng(3), params)
    m["S"] = ((Fraction("0.1234"), 0, 1, 0), (1, Fraction("-0.5678"), 1, 0))  # carried, 4 places
    carry = Chain(places=6)
    carry.rounding = True
    p = layer_norm.solve(
        {k: tuple(tuple(Fraction(x) for x in r) for r in v) for k, v in m.items()}, params, carry=carry
    )
    (aid,) = p.aids
    assert not aid.grid
    xs = [pu.call(a)[1] for a, _ in aid.entries]
    variances = {Fraction(r[0]) for r in p.step("variance").exact}
    assert variances <= set(xs) and len(xs) == 2 * len(variances)
    for x in xs:
        assert any(Fraction(1, 10) <= abs(x - y) <= Fraction(3, 10) for y in xs), x


def test_calculator_sheets_lead_with_decimals_and_say_nothing_of_doing_it_by_hand():
    doc = build_document(["attention", "lstm-cell"], seed=1, options={"numbers": "calculator"})
    for fmt in ("md", "tex", "html"):
        files = render_document(doc, [fmt], name="c")
        sheet = next(v for k, v in files.items() if "key" not in k)
        key = next(v for k, v in files.items() if "key" in k)
        for text in (sheet, key):
            assert "by hand" not in text.lower() and "you may need" not in text, fmt
        assert "With a calculator" in sheet and "within 0.001 of the key" in sheet
        if fmt == "md":  # a step with both: its decimals come first
            part = key.split("(`weights`)")[1].split("### ")[0]
            if "Exact:" in part:
                assert part.index("To 4 decimals") < part.index("Exact:")


def test_a_key_says_where_its_decimals_come_from_when_the_chain_differs():
    doc = build_document(["attention"], seed=1)
    key = render_document(doc, ["md"], name="k")["k-key.md"]
    assert "To 4 decimals, as the sheet's tables and rounding give them:" in key
    assert "-0.7880" in key  # z_11 from the rounded weights, as a student gets it (exactly -0.78806...)


def test_the_simulated_student_notices_a_value_the_sheet_does_not_print(tmp_path, monkeypatch):
    """Without the sheet's e^x table the student cannot do the softmax: the simulator says so."""
    _, _, key_path = build("attention", 1, tmp_path)
    p = build_document(["attention"], seed=1).problems[0]  # its own: the shared sheet is not changed
    p.aids = []
    _, missing = simulate(p, read_key(key_path).problems()[0], monkeypatch)
    assert any(m.startswith("exp(") for m in missing)


FLAWED = [k for k in KINDS if k.startswith("find-the-mistake")] + [
    "find-the-mistake",
    "find-the-mistake:of=positional-encoding",
    "find-the-mistake:of=layer-norm",
    "find-the-mistake:of=cross-attention",
    "find-the-mistake:of=feed-forward",
    "find-the-mistake:of=softmax-scaling",
]


def _close(a: np.ndarray, b: np.ndarray, atol: float = 2e-3) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-3, atol=atol))


# a recurrent cell's hand state is carried to 2 decimals (docs/tables.md): a shown c or h
# follows from the shown steps before it within half its last place
STATE_ATOL = {"lstm-cell": 6e-3, "gru-cell": 6e-3}


@pytest.mark.parametrize("kind", FLAWED, scope="module")
def test_a_flawed_chain_follows_from_its_own_printed_steps(kind):
    """After the planted mistake, each printed step of the student's solution is
    what its printed earlier steps give: ``of``'s own recomputation from them, or
    the planted mistake made again on them (a mistake spanning several steps, such
    as Q, K and V of cross-sources-swapped).  And the midterm's case: a PE printed
    after wrong angles is the sine and cosine of the printed angles."""
    from worksheet.kinds import mistakes
    from worksheet.kinds.find_the_mistake import of_reference

    failures = []
    for seed in SEEDS[:8]:
        p = document(kind, seed).problems[0]
        of, options, code = p.params["of"], p.params["options"], p.params["mistake"]
        shown = {n[len("shown.") :]: q.value for n, q in p.inputs.items() if n.startswith("shown.")}
        inputs = {n: q.value for n, q in p.inputs.items() if not n.startswith("shown.")}
        names = [n for n in shown if not any(isinstance(x, str) for row in p.inputs[f"shown.{n}"].exact for x in row)]
        at = names.index(p.params["step"])
        for k in range(at + 1, len(names)):
            given = {n: shown[n] for n in names[:k]}
            try:
                follows = _close(
                    of_reference(inputs, of, options, given)[names[k]], shown[names[k]], STATE_ATOL.get(of, 2e-3)
                )
            except (ValueError, KeyError, IndexError):
                follows = False
            if not follows:
                data = {**inputs, **given}
                for c, rule, ctx in mistakes.rules(of, names[k]):
                    if c != code:
                        continue
                    try:
                        again = rule(mistakes.Values(data, **ctx), options)
                    except (ValueError, KeyError, IndexError, TypeError):
                        continue
                    follows = follows or (
                        again is not None
                        and _close(np.asarray(again, float), shown[names[k]], STATE_ATOL.get(of, 2e-3))
                    )
            if not follows:
                failures.append(f"seed {seed}: {code} at {p.params['step']}: ({k + 1}) {names[k]} does not follow")
            if of == "positional-encoding" and names[k] == "PE":
                A = shown["angles"]
                assert np.allclose(shown["PE"][:, 0::2], np.sin(A), atol=2e-4), (seed, code)
                assert np.allclose(shown["PE"][:, 1::2], np.cos(A[:, : shown["PE"].shape[1] // 2]), atol=2e-4)
    assert not failures, "\n".join(failures[:25])


PRINTABLE_BLOCKS = ["find-the-mistake:of=encoder-block", "find-the-mistake:of=decoder-block"]


@pytest.mark.parametrize("kind", PRINTABLE_BLOCKS, scope="module")
def test_no_planted_mistake_in_a_block_leaves_nan_or_inf(kind):
    """test_kind_find_the_mistake's sweep of printable sheets (seeds 1 to 25), for the
    blocks here, where their sheets are built for the student anyway."""
    from test_kind_find_the_mistake import assert_printable

    for seed in range(1, 26):
        assert_printable(document(kind, seed).problems[0], seed)


def test_the_two_head_decoder_of_issue_29_prints_every_e_x_its_key_reads(tmp_path, monkeypatch):
    """decoder-block --heads 2 --seq-len 3 --variants 8 --seed 11: the key used e^{-1.7279}
    and e^{-0.9589}, which no table held (the cross-attention's table was left off)."""
    from worksheet.build import build_variants

    docs = build_variants(["decoder-block"], 8, seed=11, options={"heads": 2, "seq_len": 3})
    for i, doc in enumerate(docs):
        files = render_document(doc, ["json"], name=f"d{i}")
        key_path = tmp_path / f"d{i}.json"
        key_path.write_text(files[f"d{i}.json"], encoding="utf-8")
        kp = read_key(key_path).problems(doc.variant)[0] if doc.variant else read_key(key_path).problems()[0]
        _, missing = simulate(doc.problems[0], kp, monkeypatch)
        assert not missing, (doc.variant, sorted(set(missing))[:6])


def _rounded_by_the_book(x, places: int) -> Fraction:
    """Half away from zero, as by hand, in Fraction arithmetic: what round_places computes in integers."""
    n = Fraction(x) * 10**places
    whole = int(n)
    if abs(n - whole) * 2 >= 1:
        whole += 1 if n > 0 else -1
    return Fraction(whole, 10**places)


@settings(max_examples=300, deadline=None)
@given(
    st.fractions()
    | st.integers(-(10**6), 10**6)
    | st.builds(lambda a, b: Fraction(a, 2 * 10**b), st.integers(-(10**9), 10**9), st.integers(0, 6)),
    st.integers(0, 6),
)
def test_round_places_is_half_away_from_zero(x, places):
    """round_places (in integers, for speed) gives what rounding halves away from zero does,
    exactly halfway cases (x.xxxx5) included, for Fractions and ints of either sign."""
    got = round_places(x, places)
    assert got == _rounded_by_the_book(x, places) and type(got) is Fraction
