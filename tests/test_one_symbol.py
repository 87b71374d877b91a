"""Issue 18 §3: one symbol means one thing on a page.

Every step of one problem prints its own symbol (the encoder and decoder
blocks index each Add & Norm's R, mu, sigma^2, X-hat and Y by the sublayer),
in every kind, by hand and with a calculator, and in find-the-mistake of
every usable kind; ``check`` takes that symbol as the answer to "which step".
"""

from __future__ import annotations

import json
import re

import pytest

from worksheet.build import build_document, render_document
from worksheet.kinds import find_the_mistake as ftm
from worksheet.kinds import registry
from worksheet.solution.maths import read_latex
from worksheet.solution.number_format import label_key

KINDS = [k for k in registry.names() if k != "find-the-mistake"]
SHOWN = re.compile(r"^\\text\{\(\d+\)\}\\ ")  # find-the-mistake's "(11) " before a shown step's symbol


def _clashes(symbols: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Printed symbols (as ``check`` reads them: label_key) shared by more than one name."""
    seen: dict[str, list[str]] = {}
    for name, sym in symbols:
        seen.setdefault(label_key(sym), []).append(name)
    return {s: names for s, names in seen.items() if len(names) > 1}


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_step_of_a_problem_has_its_own_symbol(kind, numbers):
    for seed in (1, 2):
        p = build_document([kind], seed=seed, options={"numbers": numbers}).problems[0]
        steps = [(s.name, str(s.symbol)) for s in p.steps if not s.is_written]
        assert not _clashes(steps), (kind, numbers, seed, _clashes(steps))
        # nor does a step take the symbol of a given matrix
        assert not _clashes(steps + [(n, str(q.symbol)) for n, q in p.inputs.items()]), (kind, numbers, seed)


@pytest.mark.parametrize("of", ftm.usable())
def test_the_shown_list_of_find_the_mistake_has_one_symbol_per_step(of):
    p = build_document([f"find-the-mistake:of={of}"], seed=1).problems[0]
    shown = [(n, SHOWN.sub("", str(q.symbol))) for n, q in p.inputs.items() if n.startswith("shown.")]
    assert shown and all(not SHOWN.match(s) for _, s in shown)
    assert not _clashes(shown), (of, _clashes(shown))


@pytest.mark.parametrize("kind, norms", [("encoder-block", 2), ("decoder-block", 3)])
def test_each_add_and_norm_of_a_block_writes_its_own_index(kind, norms):
    """Add & Norm k: R_k, mu_k, sigma^2_k, hat X_k, Y_k as matrices; r^{[k]}, mu^{[k]}_i, ... as
    entries (square brackets: not a head's (h), not a token's index); only its own k and the
    k - 1 of the Y_{k-1} it adds to appear in its lines."""
    p = build_document([kind], seed=1).problems[0]
    last = "output"
    for k in range(1, norms + 1):
        steps = {s.name: s for s in p.steps if s.name.startswith(f"norm{k}.")}
        if k == norms:
            steps[f"norm{k}.output"] = p.step(last)
        want = {"residual": f"R_{k}", "mean": rf"\mu_{k}", "variance": rf"\sigma^2_{k}"}
        want |= {"normalized": rf"\hat{{X}}_{k}", "output": f"Y_{k}"}
        assert {n.split(".")[1]: read_latex(str(s.symbol)) for n, s in steps.items()} == {
            n: read_latex(v) for n, v in want.items()
        }
        for s in steps.values():
            text = " ".join(map(str, (s.formula, *s.work)))
            assert set(re.findall(r"\^\{\[(\d)\]\}", text)) <= {str(k), str(k - 1)}, (s.name, text)
            assert f"^{{[{k}]}}" in text, (s.name, text)
            # no bare per-token symbol left over from the layer-norm kind (x_{ij}: the block's own X)
            bare = r"\\mu_|\\sigma\^2|(?<![\\A-Za-z])[ry]_\{|\\hat\{x\}_|\\gamma_|\\beta_"
            assert not re.search(bare, text), (s.name, text)


def test_softmax_scaling_names_its_three_softmaxes_apart():
    p = build_document(["softmax-scaling"], seed=1).problems[0]
    marks = {"softmax_raw": "", "softmax_sqrt_dk": "'", "softmax_dk": "''"}
    for name, mark in marks.items():
        s = p.step(name)
        assert str(s.formula).startswith(rf"\alpha{mark} = ")
        found = [re.findall(r"(?:\\alpha|(?<![A-Za-z\\])[zm])('*)", line) for line in map(str, s.work)]
        assert sum(map(len, found)) >= 10, (name, s.work)  # z, m, the alphas and their sums
        assert {m for marks_here in found for m in marks_here} == {mark}, (name, s.work)


def test_check_takes_an_add_and_norms_symbol_and_not_another_ones(tmp_path):
    """find-the-mistake of a decoder block: the wrong step answered by its printed symbol
    (R_1, mu_1, ...) is right; the same step of another Add & Norm is wrong."""
    from worksheet.check import check_answers

    doc = build_document(["find-the-mistake:of=decoder-block,mistake=sample-variance"], seed=1)
    p = doc.problems[0]
    step = p.record["step"]
    assert re.fullmatch(r"norm\d\.variance", step), step
    k = int(step[4])
    key = tmp_path / "k.json"
    key.write_text(render_document(doc, ["json"], name="k")["k.json"], encoding="utf-8")
    shown = p.inputs[f"shown.{step}"].symbol
    assert read_latex(SHOWN.sub("", str(shown))) == read_latex(rf"\sigma^2_{k}")

    def status(answer):
        a = tmp_path / "a.json"
        a.write_text(json.dumps({"step": [[answer]], "mistake": [["sample-variance"]]}), encoding="utf-8")
        return {r.name: r.status for r in check_answers(key, a).problems[0].steps}["step"]

    # as typed in TeX, in words, by its name, or in the Unicode the sheet prints (σ²₁)
    for answer in (rf"$\sigma^2_{k}$", rf"\sigma^2_{{{k}}}", f"sigma^2_{k}", step, f"σ²_{k}", f"σ²{'₀₁₂₃'[k]}"):
        assert status(answer) == "correct", answer
    other = k % 3 + 1
    for answer in (rf"$\sigma^2_{other}$", f"norm{other}.variance", rf"$\mu_{k}$", f"σ²_{other}", f"μ_{k}"):
        assert status(answer) != "correct", answer


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
def test_across_kinds_z_is_the_attention_output_and_y_a_layer_norms(numbers):
    """Issue 29: the output was Z in one kind and Y in another, and Y is also layer
    norm's output.  Z = A V (or A X) wherever attention's weighted sum is the answer;
    Y (Y_k in a block) only ever a layer norm's scale and shift."""
    for kind in KINDS:
        p = build_document([kind], seed=1, options={"numbers": numbers}).problems[0]
        for s in p.steps:
            if s.is_written:
                continue
            base = re.sub(r"_\{?\d\}?$", "", str(s.symbol))
            if base == "Y":
                assert kind == "layer-norm" or s.name.startswith("norm") or s.name == "output", (kind, s.name)
                assert "scale and shift" in s.title.lower() or kind == "layer-norm" or "norm" in s.title.lower()
            if base == "Z":
                assert str(s.formula).startswith("Z = A"), (kind, s.name, s.formula)
    for kind in ("attention", "self-attention-basic", "cross-attention"):
        assert str(build_document([kind], seed=1).problems[0].step("output").symbol) == "Z"
