"""The library's face (issue 19 §6): ``dir(worksheet)`` shows problem, solve,
check, kinds, build and the error types, not internal modules;
``worksheet.check`` is the function; ``solve`` takes what the CLI takes;
``to_numpy()`` and ``to_sympy()`` include the inputs; ``worksheet.kinds()``
lists the kinds with their parameters."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import worksheet
from worksheet.policy.errors import InputError, ParamError, WorksheetError

ROOT = Path(__file__).resolve().parent.parent
FACE = {"problem", "solve", "check", "kinds", "build"}
ERRORS = {
    "WorksheetError",
    "InputError",
    "ParamError",
    "UnknownKindError",
    "ShapeError",
    "GenerationError",
    "OutputError",
}


def test_dir_shows_the_face_and_the_errors_not_internal_modules():
    import worksheet.render.html  # noqa: F401  (submodules imported: they must not show)
    from worksheet.check import check_answers  # noqa: F401
    from worksheet.build import build_document  # noqa: F401

    names = set(dir(worksheet))
    assert FACE | ERRORS <= names
    modules = {n for n in names if isinstance(getattr(worksheet, n), types.ModuleType) and n != "kinds"}
    assert not modules, modules
    assert not {"api", "render", "model", "exact", "parse", "errors", "spec", "variants"} & names
    for name in ERRORS:
        assert issubclass(getattr(worksheet, name), Exception)


def test_check_and_build_are_the_functions_and_kinds_is_callable():
    import worksheet.check  # noqa: F401  (the package: it must not replace the function)

    assert isinstance(worksheet.check, types.FunctionType) and isinstance(worksheet.build, types.FunctionType)
    assert worksheet.check.__doc__ and "Mark answers" in worksheet.check.__doc__
    assert callable(worksheet.kinds)


def test_import_worksheet_stays_light():
    code = "import sys, worksheet; print(sorted(m for m in ('sympy', 'numpy', 'jinja2') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_solve_takes_a_file_a_dict_or_an_example_like_the_cli(tmp_path):
    path = ROOT / "examples" / "mine.toml"
    from_file = worksheet.solve("attention", path)
    from_text = worksheet.solve("attention", str(path))
    import tomllib

    table = tomllib.loads(path.read_text(encoding="utf-8"))
    from_dict = worksheet.solve("attention", table)
    for p in (from_text, from_dict):
        assert [s.name for s in p.steps] == [s.name for s in from_file.steps]
        assert p["weights"].exact == from_file["weights"].exact
    example = worksheet.solve(example="thinking-machines")
    assert example["scaled"].exact[0][:2] == (14, 12)
    causal = worksheet.solve("attention", path, causal=True)  # an option, as --causal
    assert "masked" in [s.name for s in causal.steps]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: worksheet.solve("attention"), "solve needs a kind and its inputs"),
        (lambda: worksheet.solve("attention", 42), "a file path or a dict"),
        (lambda: worksheet.solve("attention", {"Q": [[1]]}, example="thinking-machines"), "not both"),
        (lambda: worksheet.solve("attention", "no-such-file.toml"), "no-such-file.toml"),
        (lambda: worksheet.solve(example="nope"), "unknown example"),
    ],
)
def test_solve_bad_inputs_raise_worksheet_errors(call, message):
    with pytest.raises(WorksheetError, match=message):
        call()


def test_the_views_are_to_numpy_and_to_sympy_with_the_inputs():
    p = worksheet.problem("attention", seed=4)
    arrays, exact = p.to_numpy(), p.to_sympy()
    assert list(arrays) == list(exact) == [*p.inputs, *(s.name for s in p.steps)]
    assert np.array_equal(arrays["X"], np.array(exact["X"].tolist(), dtype=float))
    assert hasattr(p, "to_numpy") and hasattr(p, "to_sympy")


def test_kinds_lists_every_kind_with_its_parameters():
    from worksheet import kinds

    infos = worksheet.kinds()
    assert [k.name for k in infos] == kinds.names()
    attention = infos[0]
    params = {p.name: p for p in attention.parameters}
    assert {"seq_len", "d_model", "d_k", "causal"} <= set(params)
    assert params["seq_len"].default["hand"] == 3
    assert "4, 9, 16" in params["d_k"].accepted["hand"] and params["d_k"].accepted["calculator"] == "1–64"
    assert ("no-scaling", "The scores were not divided by sqrt(d_k).") in attention.mistakes
    assert "Hand mode" in attention.modes["hand"]


def test_build_makes_what_the_cli_builds():
    doc = worksheet.build("attention", "layer-norm", seed=7, causal=True)
    cli_doc = worksheet.build_document(["attention", "layer-norm"], seed=7, options={"causal": True})
    assert [p.kind for p in doc.problems] == ["attention", "layer-norm"]
    assert doc.problems[0]["weights"].exact == cli_doc.problems[0]["weights"].exact
    variants = worksheet.build(spec=ROOT / "examples" / "midterm.toml", variants=3)
    assert [d.variant for d in variants] == ["v01", "v02", "v03"]
    with pytest.raises(ParamError, match="--heads does not apply to attention"):
        worksheet.build("attention", heads=2)


def test_check_takes_the_views_and_refuses_unknown_names():
    p = worksheet.problem("feed-forward", seed=2)
    assert worksheet.check(p, p.to_numpy()).ok
    with pytest.raises(InputError, match="unknown step"):
        worksheet.check(p, {"hiden": [[1]]})
