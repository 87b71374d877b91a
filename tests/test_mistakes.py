"""Every mistake in the catalogue is recognised: for each code, a generated
problem where the wrong rule changes the answer, answered with that mistake
(and every later step computed consistently from it), is diagnosed with
exactly that code, and the later steps are carried forward."""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest

from check_util import inputs_of, key_values, make_key, mistakes_of, recompute, statuses, table, write_toml
from worksheet import kinds
from worksheet.kinds import mistakes
from worksheet.check import check_answers, recomputer
from worksheet.policy.errors import WorksheetError
from worksheet.build import build_document
from worksheet.kinds import chain, encoder_block
from worksheet.solution.step_ref import StepRef

REQUIRED = [
    "no-scaling",
    "scaled-by-d_k",
    "scaled-by-sqrt-d_model",
    "scores-transposed",
    "softmax-over-columns",
    "mask-wrong-triangle",
    "mask-zero-instead-of-inf",
    "mask-after-softmax",
    "weights-times-X",
    "sample-variance",
    "normalized-across-tokens",
    "missing-residual",
    "pe-sin-cos-swapped",
    "pe-index-not-halved",
    "concat-wrong-axis",
    "missing-W_O",
    "relu-after-second-layer",
    "arithmetic-slip",
]


def test_catalogue_has_every_code_with_one_plain_sentence():
    assert set(REQUIRED) <= set(mistakes.CATALOGUE)
    for code, m in mistakes.CATALOGUE.items():
        assert m.code == code
        s = m.sentence
        assert s.endswith(".") and "\n" not in s and "$" not in s and len(s) < 200, code


def test_register_rejects_unknown_codes():
    with pytest.raises(ValueError):
        mistakes.register("attention", "scores", "no-such-mistake")


def test_head_steps_use_the_rules_of_their_base_name():
    found = mistakes.rules("multi-head-attention", "scaled_2")
    assert {c for c, _, _ in found} >= {"no-scaling", "scaled-by-d_k"}
    assert all(ctx == {"at": StepRef("", "scaled", 2)} for _, _, ctx in found)
    enc = mistakes.rules("encoder-block", "attn.scaled_1")
    assert {c for c, _, _ in enc} == {c for c, _, _ in mistakes.rules("multi-head-attention", "scaled_1")}
    assert all(ctx["at"] == StepRef("attn", "scaled", 1) for _, _, ctx in enc)
    assert {c for c, _, _ in mistakes.rules("encoder-block", "norm2.variance")} == {
        "sample-variance",
        "normalized-across-tokens",
    }


def test_values_look_up_a_part_of_the_encoder_block():
    data = {"X": 1, "attn.output": 2, "attn.scores_1": 3, "norm1.mean": 4, "gamma_1": 5}
    v = mistakes.Values(data, at=StepRef("norm1", ""), aliases=encoder_block.PARTS["norm1."][1])
    assert (v["X"], v["S"], v["mean"], v["gamma"]) == (1, 2, 4, 5)
    assert mistakes.Values(data, at=StepRef("attn", "", 1))["scores"] == 3


# ---------------------------------------------------------------- where the rules live
def test_a_kinds_rules_are_registered_when_they_are_asked_for():
    """Importing the catalogue imports no kind; asking for a kind's rules imports its module."""
    code = (
        "import sys\n"
        "from worksheet.kinds import mistakes\n"
        # (the catalogue reads its hints, worksheet.kinds.hints, words only: no kind)
        "kinds = [m for m in sys.modules if m.startswith('worksheet.kinds.') and m != 'worksheet.kinds.hints']\n"
        "assert sorted(kinds) == ['worksheet.kinds.mistakes', 'worksheet.kinds.registry'], kinds  # no kind module yet\n"
        "assert {c for c, _, _ in mistakes.rules('layer-norm', 'variance')} == "
        "{'sample-variance', 'normalized-across-tokens'}\n"
        "assert 'worksheet.kinds.layer_norm' in sys.modules\n"
        "assert 'concat-wrong-axis' in mistakes.codes_for('encoder-block')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _all_rules():
    for name in kinds.names():
        kinds.get(name)
    return mistakes._RULES


def test_every_rule_lives_with_its_kind_or_in_the_shared_place():
    """A rule is registered for a kind by that kind's module, by the module the
    LSTM and GRU share, or (shared by several attention kinds) by worksheet.kinds.mistakes."""
    shared = {"worksheet.kinds.mistakes", "worksheet.kinds.recurrent"}
    for (kind, step), found in _all_rules().items():
        own = kinds.get(kind).__name__
        for code, rule in found:
            assert rule.__module__ in shared | {own}, (kind, step, code, rule.__module__)
            if rule.__module__ == "worksheet.kinds.mistakes":
                assert kind in mistakes.ATTENTION_LIKE, (kind, step, code)


def test_unknown_kinds_have_no_rules_and_only_the_slip():
    assert mistakes.rules("no-such-kind", "scores") == []
    assert mistakes.codes_for("no-such-kind") == [mistakes.SLIP]


@pytest.mark.parametrize("block", ["encoder-block", "decoder-block"])
def test_a_block_is_diagnosed_through_the_parts_its_solve_wires(block):
    """The block module's PARTS names every input of each part, from the block's own
    inputs or earlier parts' steps; its codes are its parts' codes."""
    module = kinds.get(block)
    options = {"numbers": "calculator", "positional": True} if block == "encoder-block" else {}
    p = build_document([block], seed=1, options=options).problems[0]
    names = set(p.inputs) | {s.name for s in p.steps}
    for prefix, (part, wiring) in module.PARTS.items():
        assert set(kinds.get(part).INPUTS) <= set(wiring), (prefix, part)
        assert set(wiring.values()) <= names, (prefix, set(wiring.values()) - names)
        assert any(s.name.startswith(prefix) for s in p.steps), prefix
    of_parts = {c for part, _ in module.PARTS.values() for c in mistakes.codes_for(part)}
    assert set(mistakes.codes_for(block)) == of_parts


def test_a_part_input_missing_from_the_block_is_the_blocks_own():
    """Without positional encoding there is no pe.X_plus_PE: attention reads X itself."""
    p = build_document(["encoder-block"], seed=1).problems[0]
    assert "pe.X_plus_PE" not in {s.name for s in p.steps}
    X = p.inputs["X"].exact
    assert chain.wire(p, encoder_block.PARTS["attn."][1])["X"] is X
    assert chain.wire(p, encoder_block.PARTS["norm1."][1])["S"] is p.step("attn.output").exact


# ---------------------------------------------------------------- wrong rules, written out here
def softmax(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def above(S):
    return np.triu(np.ones(S.shape, dtype=bool), k=1)


def below(S):
    return np.tril(np.ones(S.shape, dtype=bool), k=-1)


def put(S, mask, value):
    out = S.copy()
    out[mask] = value
    return out


def _slip(v, p):
    S = v["scores"].copy()
    S[0, 0] += 1
    return "scores", S


# code -> (kind, options, wrong(values, problem) -> (origin step, wrong value))
SCENARIOS = {
    "no-scaling": ("attention", {}, lambda v, p: ("scaled", v["scores"])),
    "scaled-by-d_k": ("attention", {}, lambda v, p: ("scaled", v["scores"] / v["K"].shape[1])),
    "scaled-by-sqrt-d_model": ("attention", {"d_model": 3}, lambda v, p: ("scaled", v["scores"] / np.sqrt(3))),
    "scores-transposed": ("attention", {}, lambda v, p: ("scores", v["scores"].T)),
    "softmax-over-columns": ("attention", {}, lambda v, p: ("weights", softmax(v["scaled"], axis=0))),
    "mask-wrong-triangle": (
        "attention",
        {"causal": True},
        lambda v, p: ("masked", put(v["scaled"], below(v["scaled"]), -np.inf)),
    ),
    "mask-zero-instead-of-inf": (
        "attention",
        {"causal": True},
        lambda v, p: ("masked", put(v["scaled"], above(v["scaled"]), 0.0)),
    ),
    "mask-after-softmax": (
        "attention",
        {"causal": True},
        lambda v, p: ("weights", put(softmax(v["scaled"]), above(v["scaled"]), 0.0)),
    ),
    "weights-times-X": ("attention", {}, lambda v, p: ("output", v["weights"] @ v["X"])),
    "arithmetic-slip": ("attention", {}, _slip),
    "sample-variance": ("layer-norm", {}, lambda v, p: ("variance", sample_variance(residual(v), v["mean"]))),
    "normalized-across-tokens": ("layer-norm", {"seq_len": 3}, lambda v, p: ("normalized", across_tokens(residual(v)))),
    "missing-residual": ("layer-norm", {}, lambda v, p: ("residual", v["S"])),
    "pe-sin-cos-swapped": ("positional-encoding", {}, lambda v, p: ("PE", pe(v, p, swapped=True))),
    "pe-index-not-halved": ("positional-encoding", {}, lambda v, p: ("PE", pe(v, p, halved=False))),
    "concat-wrong-axis": ("multi-head-attention", {}, lambda v, p: ("concat", np.vstack([v["head_1"], v["head_2"]]))),
    "missing-W_O": ("multi-head-attention", {}, lambda v, p: ("output", v["concat"])),
    "relu-after-second-layer": ("feed-forward", {}, lambda v, p: ("hidden", v["hidden_pre"])),
}


def residual(v):
    return v["residual"] if "residual" in v else v["X"]


def sample_variance(R, mean):
    return ((R - mean) ** 2).sum(axis=1, keepdims=True) / (R.shape[1] - 1)


def across_tokens(R):
    return (R - R.mean(axis=0, keepdims=True)) / np.sqrt(R.var(axis=0, keepdims=True))


def pe(v, p, *, swapped=False, halved=True):
    """Sinusoidal PE written out: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    pos = np.array(p.params["positions"], dtype=float).reshape(-1, 1)
    d = v["PE"].shape[1]
    j = np.arange(d)
    i = j // 2 if halved else j  # the pair index, or (wrongly) the column index
    angle = pos / 10000.0 ** (2 * i / d)
    even, odd = (np.cos, np.sin) if swapped else (np.sin, np.cos)
    return np.where(j % 2 == 0, even(angle), odd(angle))


# the same mistakes in the other kinds that share the attention steps
MORE = [
    ("softmax-over-columns", "self-attention-basic", {}, lambda v, p: ("weights", softmax(v["scores"], axis=0))),
    (
        "mask-zero-instead-of-inf",
        "self-attention-basic",
        {"causal": True},
        lambda v, p: ("masked", put(v["scores"], above(v["scores"]), 0.0)),
    ),
    ("no-scaling", "cross-attention", {}, lambda v, p: ("scaled", v["scores"])),
    ("weights-times-X", "cross-attention", {}, lambda v, p: ("output", v["weights"] @ v["H_enc"])),
    ("no-scaling", "multi-head-attention", {"heads": 2, "d_k": 4}, lambda v, p: ("scaled_2", v["scores_2"])),
    ("normalized-across-tokens", "layer-norm", {}, lambda v, p: ("mean", residual(v).mean(axis=0, keepdims=True))),
    (
        "relu-after-second-layer",
        "feed-forward",
        {},
        lambda v, p: ("output", np.maximum(v["hidden_pre"] @ v["W_2"] + v["b_2"], 0)),
    ),
    (
        "sample-variance",
        "encoder-block",
        {},
        lambda v, p: ("norm1.variance", sample_variance(v["norm1.residual"], v["norm1.mean"])),
    ),
    ("weights-times-X", "multi-head-attention", {}, lambda v, p: ("head_1", v["weights_1"] @ v["X"])),
    ("no-scaling", "softmax-scaling", {}, lambda v, p: ("softmax_sqrt_dk", softmax(v["scores"]))),
    ("scaled-by-d_k", "softmax-scaling", {}, lambda v, p: ("softmax_sqrt_dk", softmax(v["scores"] / p.params["d_k"]))),
    ("no-scaling", "alignment", {"__spec": "alignment:score=scaled-dot"}, lambda v, p: ("scores", v["s"] @ v["H"].T)),
    (
        "scaled-by-d_k",
        "alignment",
        {"__spec": "alignment:score=scaled-dot"},
        lambda v, p: ("scores", v["s"] @ v["H"].T / v["s"].shape[1]),
    ),
]


def _available(kind: str):
    try:
        kinds.get(kind)
    except WorksheetError:
        pytest.skip(f"kind {kind} is not available yet")


def _first_seed_where_it_matters(tmp_path, kind, options, wrong):
    """The first seed whose problem the wrong rule changes by more than 0.01."""
    options = dict(options)
    spec = options.pop("__spec", kind)  # a per-problem setting such as alignment:score=...
    for seed in range(1, 40):
        path, doc = make_key(tmp_path, [spec], seed=seed, options=options)
        p = doc.problems[0]
        v = {**inputs_of(p), **key_values(p)}
        with np.errstate(all="ignore"):
            origin, bad = wrong(v, p)
        if np.isnan(bad).any() or np.isposinf(bad).any():
            continue  # e.g. a column with no spread: not a sensible answer
        right = v[origin]
        if bad.shape != right.shape or _differs(bad, right):
            return path, p, origin, bad
    pytest.fail(f"no seed where the wrong rule changes {kind}")


def _differs(a, b) -> bool:
    fa, fb = np.isfinite(a), np.isfinite(b)
    if (fa != fb).any():
        return True
    return bool(np.nanmax(np.abs(np.where(fa, a, 0) - np.where(fb, b, 0))) > 0.01)


def _answer_with(tmp_path, p, origin, bad, *, only=None):
    names = [s.name for s in p.steps if not s.is_written]  # words are marked by a person
    run = recomputer(p.kind, p.params, inputs_of(p))
    values = run({origin: bad}) if run is not None else None
    if values is None:  # no carried-forward support (or a shape it cannot go on from)
        values = {**key_values(p), origin: bad}
        names = names[: names.index(origin) + 1]
    values[origin] = bad
    steps = table(values, steps=only or names)
    return write_toml(tmp_path / "answers.toml", steps), names


def _check_diagnosis(tmp_path, code, kind, options, wrong):
    _available(kind)
    key, p, origin, bad = _first_seed_where_it_matters(tmp_path, kind, options, wrong)
    answers, names = _answer_with(tmp_path, p, origin, bad)
    report = check_answers(key, answers)
    st = statuses(report)
    assert mistakes_of(report) == {origin: code}, report.text()
    k = names.index(origin)
    assert all(st[n] == "correct" for n in names[:k]), report.text()
    if report.problems[0].carried_forward:
        later = names[k + 1 :]  # the steps answered after the mistake
        # a later step is carried forward, or already right (e.g. masked entries)
        assert all(st[n] in ("carried-forward", "correct") for n in later), report.text()
        assert any(st[n] == "carried-forward" for n in later) or not later or report.ok is False
    assert report.exit_code == 1


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_mistake_is_diagnosed_with_its_code(tmp_path, code):
    _check_diagnosis(tmp_path, code, *SCENARIOS[code])


@pytest.mark.parametrize("code, kind, options, wrong", MORE, ids=[f"{c}-{k}" for c, k, *_ in MORE])
def test_mistake_is_diagnosed_in_other_kinds(tmp_path, code, kind, options, wrong):
    _check_diagnosis(tmp_path, code, kind, options, wrong)


def test_every_required_code_has_a_scenario():
    assert set(REQUIRED) <= set(SCENARIOS)


@pytest.mark.parametrize(
    "code, origin, wrong_step",
    [
        ("no-scaling", "scaled", "weights"),
        ("scaled-by-d_k", "scaled", "output"),
        ("mask-zero-instead-of-inf", "masked", "weights"),
        ("scores-transposed", "scores", "output"),
        ("sample-variance", "variance", "output"),
        ("missing-residual", "residual", "normalized"),
        ("pe-sin-cos-swapped", "PE", "X_plus_PE"),
        ("pe-index-not-halved", "PE", "X_plus_PE"),
        ("missing-W_O", "output", "output"),
    ],
)
def test_a_mistake_is_followed_into_later_steps(tmp_path, code, origin, wrong_step):
    """A student who wrote only a later step is still told which mistake it was."""
    kind, options, wrong = SCENARIOS[code]
    _available(kind)
    if "given" not in inspect.signature(kinds.get(kind).reference).parameters and origin != wrong_step:
        pytest.skip(f"{kind}: no carried-forward support yet")
    key, p, origin_, bad = _first_seed_where_it_matters(tmp_path, kind, options, wrong)
    assert origin_ == origin
    answers, _ = _answer_with(tmp_path, p, origin, bad, only=[wrong_step])
    report = check_answers(key, answers)
    assert mistakes_of(report) == {wrong_step: code}, report.text()


def test_a_mistake_on_top_of_an_earlier_slip_is_still_named(tmp_path):
    """scores has a slip; scaled then divides the student's own scores by d_k."""
    key, doc = make_key(tmp_path, seed=2)
    p = doc.problems[0]
    S = p.step("scores").value.copy()
    S[1, 0] += 2
    values = recompute(p, {"scores": S, "scaled": S / 4})
    report = check_answers(key, write_toml(tmp_path / "a.toml", table(values)))
    assert mistakes_of(report) == {"scores": "arithmetic-slip", "scaled": "scaled-by-d_k"}, report.text()
    assert statuses(report)["weights"] == "carried-forward"


def test_relu_after_the_second_layer_is_named_from_the_output_alone(tmp_path):
    kind, options, wrong = SCENARIOS["relu-after-second-layer"]
    _available(kind)
    for seed in range(1, 40):
        key, doc = make_key(tmp_path, [kind], seed=seed)
        p = doc.problems[0]
        v = {**inputs_of(p), **key_values(p)}
        out = np.maximum(v["hidden_pre"] @ v["W_2"] + v["b_2"], 0)
        if _differs(out, v["output"]):
            break
    report = check_answers(key, write_toml(tmp_path / "a.toml", table({"output": out})))
    assert mistakes_of(report) == {"output": "relu-after-second-layer"}, report.text()


def test_encoder_block_mistake_is_carried_forward_to_the_end(tmp_path):
    """norm1 with the sample variance; everything after it follows consistently."""
    _available("encoder-block")
    key, doc = make_key(tmp_path, ["encoder-block"], seed=2)
    p = doc.problems[0]
    R, mean = p.step("norm1.residual").value, p.step("norm1.mean").value
    values = recompute(p, {"norm1.variance": sample_variance(R, mean)})
    report = check_answers(key, write_toml(tmp_path / "a.toml", table(values)))
    assert mistakes_of(report) == {"norm1.variance": "sample-variance"}, report.text()
    names = [s.name for s in p.steps]
    later = names[names.index("norm1.variance") + 1 :]
    assert all(statuses(report)[n] in ("carried-forward", "correct") for n in later), report.text()


@pytest.mark.parametrize("of", ["encoder-block", "decoder-block"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_find_the_mistake_in_a_block_is_diagnosed_and_its_shown_steps_before_it_are_the_keys(tmp_path, of, seed):
    """The block's flawed chain carries the shown 4-place values (as the key carries its own):
    the shown steps before the mistake are exactly the key's, a student who copies the flawed
    solution is told the planted mistake, and the key's corrected steps are marked correct."""
    from worksheet.steps.layer_steps import round_matrix

    key, doc = make_key(tmp_path, [f"find-the-mistake:of={of}"], seed=seed)
    p = doc.problems[0]
    right = build_document([of], seed=seed).problems[0]
    first, code = p.record["step"], p.record["mistake"]
    names = [s.name for s in right.steps if not s.is_written]
    for name in names[: names.index(first)]:
        assert p.inputs[f"shown.{name}"].exact == round_matrix(right.step(name).exact, 4), name
    answers = {s.name: s.value for s in p.steps if s.name not in ("step", "mistake", "corrections")}
    report = check_answers(key, write_toml(tmp_path / "right.toml", table(answers)))
    assert all(statuses(report)[n] == "correct" for n in answers), report.text()
    # the corrected steps asked (the wrong one's sublayer, at most 30 numbers), as the flawed solution shows them
    wrong = dict(answers, **{n: p.inputs[f"shown.{n}"].value for n in names[names.index(first) :] if n in answers})
    report = check_answers(key, write_toml(tmp_path / "wrong.toml", table(wrong)))
    assert statuses(report)[first] == "incorrect", report.text()
    # every later shown step follows from the shown ones before it, as a pencil gives it; copied
    # from the flawed solution (an input of the problem) it earns no carried credit, and says so
    later = [n for n in names[names.index(first) + 1 :] if n in answers]
    made = mistakes_of(report)  # the mistake made again in a later step where its rule applies
    steps = {s.name: s for s in report.problems[0].steps}
    assert all(
        statuses(report)[n] in ("carried-forward", "correct") or made.get(n) == code or "no credit" in steps[n].message
        for n in later
    ), report.text()
    if code != mistakes.SLIP:  # named where check can tell it (one wrong entry is told as a slip)
        assert {code, mistakes.SLIP} & set(made.values()), report.text()
