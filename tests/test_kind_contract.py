"""Every registered kind keeps the kind contract of ``worksheet.kinds.base``
(``KindModule``): the same members, the same signatures, a reference that
``worksheet check`` can call from a key alone."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from worksheet import kinds
from worksheet.build import build_document
from worksheet.check import recomputer
from worksheet.kinds import base
from worksheet.solution.problem import to_array

P = inspect.Parameter
NAMES = kinds.names()
MODES = base.NUMBER_MODES


def _shape(fn) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def _generated(name: str, numbers: str):
    module = kinds.get(name)
    params = module.Params.from_options({"numbers": numbers})
    inputs = module.generate(np.random.default_rng(1), params)
    return module, params, {k: to_array(v) for k, v in inputs.items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True) for k in a)


@pytest.mark.parametrize("name", NAMES)
def test_every_kind_module_satisfies_the_kind_protocol(name):
    module = kinds.get(name)
    assert isinstance(module, base.KindModule)
    assert isinstance(module.TITLE, str) and module.TITLE
    assert isinstance(module.INPUTS, tuple) and all(isinstance(n, str) for n in module.INPUTS)
    assert issubclass(module.Params, base.Params)
    assert dataclasses.is_dataclass(module.Params) and module.Params.__dataclass_params__.frozen


@pytest.mark.parametrize("name", NAMES)
def test_every_kind_declares_whether_it_carries_and_which_conventions_depend_on_a_parameter(name):
    """Declared, never inspected: ``carries`` is true exactly when ``solve`` takes
    ``carry``, and ``conventions_if`` names its own conventions and boolean fields."""
    module = kinds.get(name)
    params = module.Params
    assert params.carries is ("carry" in inspect.signature(module.solve).parameters)
    assert "carries" not in params.field_names() and "conventions_if" not in params.field_names()
    fields = {f.name: f.type for f in dataclasses.fields(params)}
    for key, flag in params.conventions_if.items():
        assert key in [c.key for c in module.CONVENTIONS] and fields[flag] == "bool", (key, flag)


@pytest.mark.parametrize("name", NAMES)
def test_reference_takes_inputs_params_and_keyword_only_given(name):
    assert _shape(kinds.get(name).reference) == [
        ("inputs", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("params", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("given", P.KEYWORD_ONLY, None),
    ]


@pytest.mark.parametrize("name", NAMES)
def test_generate_takes_rng_and_params(name):
    assert _shape(kinds.get(name).generate) == [
        ("rng", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("params", P.POSITIONAL_OR_KEYWORD, P.empty),
    ]


@pytest.mark.parametrize("name", NAMES)
def test_solve_takes_inputs_params_then_only_optional_keywords_seed_first(name):
    shape = _shape(kinds.get(name).solve)
    assert shape[:3] == [
        ("inputs", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("params", P.POSITIONAL_OR_KEYWORD, P.empty),
        ("seed", P.KEYWORD_ONLY, None),
    ]
    # the block kinds' extras (carry=, ...) are keyword-only with defaults: a kind solves on its own
    assert all(kind == P.KEYWORD_ONLY and default is not P.empty for _, kind, default in shape[3:])


@pytest.mark.parametrize("numbers", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_reference_with_an_empty_given_is_the_plain_reference(name, numbers):
    module, params, inputs = _generated(name, numbers)
    plain = module.reference(dict(inputs), params)
    assert plain
    assert _same(module.reference(dict(inputs), params, given={}), plain)


@pytest.mark.parametrize("numbers", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_the_params_a_key_records_recompute_every_step(name, numbers):
    """What ``check`` does: Params from the key's JSON params (unchecked), then reference."""
    problem = build_document([name], seed=2, options={"numbers": numbers}).problems[0]
    module = kinds.get(name)
    params = module.Params.from_options(problem.params, checked=False)
    floats = {k: q.value for k, q in problem.inputs.items()}
    ref = module.reference(floats, params)
    compared = [s for s in problem.steps if s.name in ref]
    assert compared
    for s in compared:
        np.testing.assert_allclose(ref[s.name], s.value, rtol=1e-9, atol=1e-9, err_msg=s.name)


@pytest.mark.parametrize("name", NAMES)
def test_every_kind_gets_carried_forward_marks(name):
    problem = build_document([name], seed=2).problems[0]
    run = recomputer(name, problem.params, {k: q.value for k, q in problem.inputs.items()})
    assert run is not None
    plain = run({})
    first = next(s for s in problem.steps if s.name in plain)  # find-the-mistake: the corrected steps
    out = run({first.name: first.value + 1})
    assert out is not None and np.array_equal(out[first.name], first.value + 1)
    assert not _same(out, plain)


def test_unchecked_params_keep_sizes_beyond_the_generation_limits():
    attention = kinds.get("attention")
    with pytest.raises(base.ParamError):
        attention.Params.from_options({"seq_len": 40})
    assert attention.Params.from_options({"seq_len": 40, "d_k": 2}, checked=False).seq_len == 40


@pytest.mark.parametrize("name", NAMES)
def test_every_kind_is_read_once_into_a_kind_record_with_its_hooks(name):
    """The hooks are all declared (a kind that passes its settings on) or none
    (the record's defaults: its own settings, conventions and mistakes)."""
    module, record = kinds.get(name), kinds.kind(name)
    assert record is kinds.kind(name) and record.module is module and record.Params is module.Params
    declared = [h for h in ("settings_of", "conventions_of", "mistakes_of") if h in vars(module)]
    assert declared in ([], ["settings_of", "conventions_of", "mistakes_of"])
    assert record.passes_settings_on is bool(declared) is isinstance(module, base.PassesOn)
    if not declared:
        assert record.settings_of({}) == module.Params.field_names()
        assert record.conventions_of({"x": 1}) == (name, {"x": 1})
        assert record.mistakes_of({"x": 1}, {}) == (name, {"x": 1}, {})
    for hook in declared:  # the signatures of the PassesOn protocol
        want = [p for p in inspect.signature(getattr(base.PassesOn, hook)).parameters if p != "self"]
        assert list(inspect.signature(getattr(module, hook)).parameters) == want, hook


def test_find_the_mistake_passes_on_the_settings_conventions_and_mistakes_of_its_kind():
    record = kinds.kind("find-the-mistake")
    assert record.passes_settings_on
    assert record.settings_of({"of": "layer-norm"}) == kinds.get("layer-norm").Params.field_names()
    assert record.conventions_of({"of": "gru-cell", "options": {"numbers": "hand"}}) == (
        "gru-cell",
        {"numbers": "hand"},
    )
    kind, _, aliases = record.mistakes_of({"of": "attention", "step": "A"}, {"shown.S": 1, "shown.A": 2})
    assert kind == "attention" and aliases == {"S": "shown.S"}


def test_no_caller_probes_a_kind_module_for_its_hooks():
    """The hooks are read once, by the registry (``kinds.kind``)."""
    import re
    from pathlib import Path

    import worksheet

    root = Path(worksheet.__file__).parent
    probe = re.compile(r"(hasattr|getattr)\([^)]*\"(settings_of|conventions_of|mistakes_of|CONVENTIONS|INPUTS|PARTS)\"")
    found = [str(p.relative_to(root)) for p in root.rglob("*.py") if probe.search(p.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_declares_a_type_with_a_converter(name):
    """Read once per Params class from the annotations (no annotation text matched)."""
    from worksheet.kinds import param_types

    params = kinds.get(name).Params
    types = param_types.declared(params)
    assert types is param_types.declared(params)
    assert list(types) == params.field_names()
    assert all(d.type in param_types.TYPES.values() for d in types.values())
    assert types["numbers"] == param_types.Declared(param_types.TEXT, False)


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("BOOL", "yes", "must be true or false, not 'yes'"),
        ("WHOLE", 2.5, "must be a whole number, not 2.5"),
        ("WHOLE", True, "must be a whole number, not True"),
        ("TEXT", 3, "must be text, not 3"),
        ("LABELS", {"a": 1}, "must be a list of labels"),
        ("WHOLES", "1 two", "must be a list of whole numbers, not '1 two'"),
        ("WHOLES", [1, True], "must be a list of whole numbers"),
    ],
)
def test_a_converter_fails_with_one_line_naming_the_field(kind, value, message):
    from worksheet.kinds import param_types

    with pytest.raises(base.InputError) as err:
        getattr(param_types, kind).convert(value, {"file": "x.toml", "field": "f"})
    assert message in str(err.value) and "f" in str(err.value) and "\n" not in str(err.value)


def test_converters_keep_what_the_command_line_and_files_give():
    from fractions import Fraction

    from worksheet.kinds import param_types as t

    where = {"field": "f"}
    assert t.WHOLES.convert("1, -2 3", where) == (1, -2, 3)
    assert t.LABELS.convert("a b", where) == ("a", "b") == t.LABELS.convert(["a", "b"], where)
    assert t.EXACT.convert("0.1", where) == Fraction(1, 10)
    assert t.BOOL.convert(False, where) is False


def test_a_parameter_of_an_undeclared_type_is_the_kinds_mistake():
    from worksheet.kinds import param_types

    @dataclasses.dataclass(frozen=True)
    class Odd(base.Params):
        weights: dict | None = None

    with pytest.raises(TypeError, match="Odd.weights: no converter"):
        param_types.declared(Odd)


def test_no_module_reads_a_parameter_type_from_its_text():
    import re
    from pathlib import Path

    import worksheet

    root = Path(worksheet.__file__).parent
    text_of_type = re.compile(r"str\(\w+\.type\)")
    assert [p.name for p in root.rglob("*.py") if text_of_type.search(p.read_text(encoding="utf-8"))] == []


def test_a_calculator_sheet_states_the_calculator_words_of_each_convention():
    """The texts come from the kinds; a Document receives them as they are."""
    problems = build_document(["alignment", "attention"], seed=1).problems
    said = {c.key: c for c in kinds.every_convention().values()}
    hand, calc = kinds.conventions(problems), kinds.conventions(problems, "calculator")
    assert len(hand) == len(calc)
    changed = {(h, c) for h, c in zip(hand, calc) if h != c}
    assert changed == {(said[k].text, said[k].calculator) for k in ("softmax_form", "softmax_form_e")}
    doc = build_document(["alignment", "attention"], seed=1, options={"numbers": "calculator"})
    assert doc.conventions == kinds.conventions(doc.problems, "calculator")


def test_a_carried_step_is_the_kinds_reference_given_the_carried_values():
    """``base.carried_step``: the independent chain until the carry rounds, then the
    kind's own reference from the carried (rounded) earlier steps."""
    from fractions import Fraction

    from worksheet.kinds import feed_forward
    from worksheet.steps.scaled_dot_product import Carry

    params = feed_forward.Params()
    inputs = feed_forward.generate(np.random.default_rng(3), params)
    floats = {k: to_array(v) for k, v in inputs.items()}
    ref = feed_forward.reference(floats, params)
    hidden = tuple(tuple(Fraction(k + 1, 7) for k in range(len(inputs["W_2"]))) for _ in inputs["X"])
    assert (
        base.carried_step(None, feed_forward.reference, floats, params, "output", ref, hidden=hidden) is ref["output"]
    )
    carry = Carry(rounding=True)
    got = base.carried_step(carry, feed_forward.reference, floats, params, "output", ref, hidden=hidden)
    np.testing.assert_array_equal(got, to_array(hidden) @ floats["W_2"] + floats["b_2"])


def test_the_worked_example_of_contributing_declares_its_contract(monkeypatch):
    """The example kind of CONTRIBUTING.md's "Adding a kind" runs as written."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    code = re.search(r"## Adding a kind.*?```python\n(.*?)```", text, re.S).group(1)
    code = code.replace("from . import", "from worksheet.kinds import").replace(
        "from .shared", "from worksheet.kinds.shared"
    )
    import sys
    import types

    module = types.ModuleType("worksheet_contributing_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, "CONTRIBUTING.md", "exec"), module.__dict__)  # our own documentation, not user text
    space = module.__dict__
    from worksheet.kinds import param_types

    assert [c.key for c in space["CONVENTIONS"]] == ["token_rows", "similarity", "exact"]
    types = param_types.declared(space["Params"])
    assert types["seq_len"].type is param_types.WHOLE and types["tokens"].optional
    assert space["Params"].from_options({"seq_len": 4, "tokens": "a b c d"}).tokens == ("a", "b", "c", "d")


@pytest.mark.parametrize("name", NAMES)
def test_params_to_json_is_asdict_made_jsonable(name):
    """``Params.to_json`` skips ``dataclasses.asdict``'s deep copy for plain fields, and
    gives what it gave: the fields in order, tuples as fresh lists, Fractions as text."""
    from fractions import Fraction

    module = kinds.get(name)
    for numbers in MODES:
        params = module.Params.from_options({"numbers": numbers})
        for changed in (params, _with_every_field_set(params)):
            want = {k: base.jsonable(v) for k, v in dataclasses.asdict(changed).items()}
            got = changed.to_json()
            assert got == want and list(got) == list(want)
            assert all(type(got[k]) is type(want[k]) for k in want)
            assert not any(isinstance(v, (tuple, Fraction)) for v in got.values())
            assert changed.to_json() is not got  # a fresh dict each time (callers add to it)


def _with_every_field_set(params):
    """The params with each field that takes a tuple or a Fraction given one (labels, a temperature)."""
    import copy
    from fractions import Fraction

    changes = {}
    for f in dataclasses.fields(params):
        text = str(f.type)
        if "tuple" in text:
            changes[f.name] = ("a", "b")
        elif "Fraction" in text:
            changes[f.name] = Fraction(3, 2)
    out = copy.copy(params)  # set as they are, unchecked: to_json reads any value
    for k, v in changes.items():
        object.__setattr__(out, k, v)
    return out
