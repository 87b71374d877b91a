"""The representative entry a key works out is never a trivial one (issue 18
§3): no worked line of any kind, hand or calculator, over 20 seeds, comes out
0 (a 0 mean, a 0 product, a 0 row maximum, a 0 residual) or adds a 0 term
(an entry equal to an input), unless every candidate is so.  The recurrent
cells are not audited: their keys work out every unit of the default state
(d_h = 2; with d_h = 3 or 4 the first two)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from worksheet.build import build_document
from worksheet.exact import NegInf, sign, to_str
from worksheet.steps.line_choices import max_not_zero, sum_entry

CASES = [
    ("attention", {}),
    ("attention", {"causal": True}),
    ("multi-head-attention", {"causal": True}),
    ("self-attention-basic", {}),
    ("softmax-scaling", {}),
    ("multi-head-attention", {}),
    ("positional-encoding", {}),
    ("layer-norm", {}),
    ("feed-forward", {}),
    ("cross-attention", {}),
    ("alignment", {}),
    ("alignment", {"score": "general"}),
    ("alignment", {"score": "additive"}),
    ("encoder-block", {}),
    ("decoder-block", {}),
    ("next-token", {}),
]
SEEDS = range(1, 21)

ZERO_RESULT = re.compile(r"(?:=|\\approx)\s*(?:-?0(?:\.0+)?|-\\infty)\s*$")  # 0, or a masked entry
ZERO = r"\(?-?0(?:\.0+)?\)?"
ADDS_ZERO = re.compile(rf"(?:=|\\approx) (?:\S+ \+ {ZERO}|{ZERO} \+ \S+) (?:=|\\approx)")
IDENTITY = re.compile(rf"(?:=|\\approx) 1 \\cdot \S+ \+ {ZERO} (?:=|\\approx)")  # gamma = 1, beta = 0: y = x-hat
NUM = r"\(?-?\d+(?:\.\d+)?\)?"
RELU_CLIP = re.compile(r"\\max\(0, [^()]*\) = \\max\(0, -[\d.]+\) = 0$")
ROW_MAX = re.compile(r"^m(?:_\{\d+\})? = \\max_j ")


def _all_zero_sum(line: str) -> bool:
    """A sum of two or more products in the line (a whole side, or a bracketed
    group), every one with a factor 0."""
    plain = re.sub(r"\((-?[\d.]+)\)", r"\1", line)  # (-1) -> -1
    for seg in re.findall(r"\(([^()]*)\)", plain) + re.split(r"=|\\approx", plain):
        parts = [t.strip() for t in re.split(r" \+ ", seg.strip())]
        prods = [t for t in parts if re.fullmatch(NUM + r" \\cdot " + NUM, t)]
        if len(parts) > 1 and len(prods) == len(parts):
            if all(any(re.fullmatch(ZERO, f.strip()) for f in t.split(r"\cdot")) for t in prods):
                return True
    return False


def _softmax_rows_all_trivial(src) -> bool:
    """No row of the softmax's input has varied scores and a maximum other than 0."""
    for row in src:
        live = [x for x in row if not isinstance(x, NegInf)]
        if len(set(map(to_str, live))) > 1 and max_not_zero(live):
            return False
    return True


def _forced(p, k: int, line: str, step) -> bool:
    """The trivial line is the only kind the step has to offer."""
    if RELU_CLIP.search(line):  # ReLU shows a clipped entry on purpose, beside a positive one when there is one
        pre = p.steps[k - 1].exact
        has_pos = any(sign(x) > 0 for row in pre for x in row)
        return not has_pos or any(not RELU_CLIP.search(w) and "\\max(0," in w for w in map(str, step.work))
    if r"e^{-\infty} = 0" in line:  # the rule for masked entries, not an entry
        return True
    if ROW_MAX.match(line):
        return _softmax_rows_all_trivial(p.steps[k - 1].exact)
    return all(x == 0 for row in step.exact for x in row if not isinstance(x, NegInf))


def _audit(kind: str, options: dict, numbers: str) -> list[str]:
    bad = []
    for seed in SEEDS:
        for p in build_document([kind], seed=seed, options={**options, "numbers": numbers}).problems:
            for k, step in enumerate(p.steps):
                if kind == "softmax-scaling" and step.name == "softmax_raw":
                    continue  # the raw scores saturate the softmax: weights of 0.0000 are the lesson
                for line in map(str, step.work):
                    trivial = (
                        (ZERO_RESULT.search(line) and not _forced(p, k, line, step))
                        or ADDS_ZERO.search(line)
                        or _all_zero_sum(line)
                        or (IDENTITY.search(line) and step.exact != p.steps[k - 1].exact)  # unless y = x-hat throughout
                    )
                    if trivial:
                        bad.append(f"seed {seed} {step.name}: {line[:160]}")
    return bad


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
@pytest.mark.parametrize(
    "kind, options", CASES, ids=[f"{k}{'-' + '-'.join(map(str, o.values())) if o else ''}" for k, o in CASES]
)
def test_no_worked_entry_is_trivial(kind, options, numbers):
    assert _audit(kind, options, numbers) == []


def test_the_audit_sees_trivial_lines():
    """The detectors fire on the lines the old choices printed."""
    assert ZERO_RESULT.search(r"\mu_{1} = \frac{1}{4}\left((-2) + 2 + (-2) + 2\right) = 0")
    assert ZERO_RESULT.search(r"\mu_{1} = \frac{1}{4}\left(3.0000 + (-3.0000)\right) = 0.0000")
    assert ADDS_ZERO.search(r"r_{11} = x_{11} + f_{11} = (-1) + 0 = -1")
    assert ADDS_ZERO.search(r"r_{11} = x_{11} + o_{11} = 0 + 0.976 = 0.976")
    assert _all_zero_sum(r"a_{1,1} = (1 \cdot 0 + 0 \cdot 0) + 2 = 2")
    assert not _all_zero_sum(r"z_{12} = 1 \cdot 0 + 2 \cdot 1 = 2")
    assert RELU_CLIP.search(r"h_{23} = \max(0, h'_{23}) = \max(0, -1) = 0")
    assert ROW_MAX.match(r"m_{1} = \max_j s'_{1j} = 0")
    assert ZERO_RESULT.search(r"m_{12} = -\infty")
    assert IDENTITY.search(r"y_{11} = \gamma_{1} \hat{x}_{11} + \beta_{1} = 1 \cdot 0.8835 + 0 = 0.8835")


def test_sum_entry_avoids_zero_terms_and_results():
    A = ((0, 1, 2), (3, -1, 1))
    B = ((1, -1, -2), (1, 1, 1))
    C = tuple(tuple(a + b for a, b in zip(ra, rb)) for ra, rb in zip(A, B))
    assert sum_entry(A, B, C) == (1, 0)  # (0,0) has a 0 term, (0,1) and (0,2) sum to 0, (1,0) = 3 + 1
    assert sum_entry(((0, 0),), ((0, 0),), ((0, 0),)) == (0, 0)
    assert sum_entry(((0, 2),), ((3, 0),), ((3, 2),)) == (0, 0)  # every entry has a 0 term: a non-zero result


def test_max_not_zero():
    assert max_not_zero([-1, 2]) and max_not_zero([-1, -2]) and not max_not_zero([0, -3])


# -- the carried chain of the encoder and decoder blocks (issue 18 §3: the decoder
# key's cross-attention showed unrounded exact forms beside its carried table) ----

_DECIMAL = re.compile(r"(?<![\d.])(-?\d+\.(\d+))(?![\d.])")
_AUX = ("m_", "m =", r"\sum", r"\sqrt", r"\text")  # a row maximum, a sum of e^x, a square root: not step entries
# an argument read on a standard grid: e^{-2.41}, \sqrt{3.04}, \sqrt{24.8} (the table's 2 decimals; √ from 10 on: 1)
_READ = re.compile(r"(?:e\^\{|\\sqrt\{)(-?\d+\.\d{1,2})\}")


def _carried_lines(kind: str, seed: int):
    p = build_document([kind], seed=seed).problems[0]
    for s in p.steps:
        if s.rounded:
            yield s, s.chain if s.chain is not None else s.exact


@pytest.mark.parametrize("kind", ["decoder-block", "encoder-block"])
def test_carried_steps_show_what_the_chain_gives(kind):
    """In hand mode, a carried step's worked lines print its decimals with 4
    places (a carried -0.4060 keeps its zero), a longer exact value only on its
    way to the 4-place value that ends the line (``= -0.71885 \\approx -0.7189``),
    an argument read on a standard table with the table's places (``e^{-2.41}``,
    ``\\sqrt{3.04}``), and a line that works out an entry ends with the value its table shows."""
    from worksheet.solution.number_format import decimal

    bad = []
    for seed in SEEDS:
        for s, table in _carried_lines(kind, seed):
            shown = {decimal(x, 4) for row in table for x in row if not isinstance(x, NegInf)}
            for line in map(str, s.work):
                ends_rounded = re.search(r"\\approx -?\d+\.\d{4}\s*$", line)
                if re.search(
                    r"(?<!\\approx )(?<![\d.(])-?\d+\.0000(?!\d)", line
                ):  # an integer prints as one, not 3.0000
                    bad.append(f"{kind} seed {seed} {s.name}: an integer with decimals in {line[:150]}")
                read = {m.start(1) for m in _READ.finditer(line)}
                for m in _DECIMAL.finditer(line):
                    places = len(m.group(2))
                    if m.start(1) in read:
                        continue  # where the table is read: its grid's places
                    if places < 4 or (places > 4 and not ends_rounded):
                        bad.append(f"{kind} seed {seed} {s.name}: {m.group(1)} in {line[:150]}")
                last = _DECIMAL.findall(line)
                if last and not line.startswith(_AUX) and re.search(r"(?:=|\\approx) -?\d+\.\d{4}\s*$", line):
                    value = last[-1][0]
                    if decimal(Fraction(value), 4) not in shown:
                        bad.append(f"{kind} seed {seed} {s.name}: ends with {value}, not in its table: {line[:150]}")
    assert bad == []
