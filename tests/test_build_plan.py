"""Spec file versus options (worksheet.build.plan.resolve_build): the rules that
``worksheet build --spec`` follows, held by the library, so a caller of the
library gets the same sheet as the command line."""

from __future__ import annotations


import pytest

from worksheet.build import build_document, render_document
from worksheet.policy.errors import WorksheetError
from worksheet.build.plan import BuildPlan, resolve_build
from worksheet.build.spec import ProblemSpec, SpecError, parse_spec

SPEC = """\
title = "Quiz 3"
course = "CS 480"
paper = "letter"
numbers = "calculator"
variants = 4
seed = 5
name = "quiz3"

[[sections]]
kind = "attention"
points = 6
seq_len = 2

[[sections]]
kind = "layer-norm"
"""


@pytest.fixture
def spec():
    return parse_spec(SPEC, source="quiz.toml")


def test_without_options_the_spec_gives_seed_title_variants_and_name(spec):
    plan = resolve_build(spec)
    assert (plan.seed, plan.title, plan.variants, plan.name) == (5, "Quiz 3", 4, "quiz3")
    assert plan.options == {"numbers": "calculator"}
    assert plan.doc_fields == {"course": "CS 480", "date": "", "instructions": "", "paper": "letter"}
    assert [p.kind for p in plan.problems] == ["attention", "layer-norm"]
    assert plan.problems[0] == ProblemSpec("attention", {"seq_len": 2}, 6)


def test_an_option_given_wins_over_the_spec(spec):
    plan = resolve_build(
        spec, seed=9, title="Retake", variants=2, name="retake", paper="a4", options={"numbers": "hand"}
    )
    assert (plan.seed, plan.title, plan.variants, plan.name) == (9, "Retake", 2, "retake")
    assert plan.options == {"numbers": "hand"} and plan.doc_fields["paper"] == "a4"


def test_seed_zero_from_the_options_still_wins_over_the_spec(spec):
    assert resolve_build(spec, seed=0).seed == 0


def test_an_option_given_as_none_is_not_given(spec):
    plan = resolve_build(spec, seed=None, title=None, options={"numbers": None, "causal": None})
    assert (plan.seed, plan.title, plan.options) == (5, "Quiz 3", {"numbers": "calculator"})


def test_a_kind_option_joins_the_spec_number_mode(spec):
    assert resolve_build(spec, options={"causal": True}).options == {"numbers": "calculator", "causal": True}


def test_a_section_parameter_wins_over_the_options(spec):
    plan = resolve_build(spec, options={"seq_len": 3}, variants=None)
    doc = build_document(plan.problems, **plan.document_args())
    attention, layer_norm = doc.problems
    assert len(attention.inputs["X"].exact) == 2  # the section's seq_len = 2
    assert len(layer_norm.inputs["X"].exact) == 3  # the option's, where the section has none


def test_without_a_spec_the_defaults_are_attention_seed_1_one_sheet():
    plan = resolve_build()
    assert plan == BuildPlan(("attention",), 1, {}, None, None, "worksheet", False, {})
    assert resolve_build(None, ["layer-norm"], paper="letter").doc_fields == {"paper": "letter"}


def test_an_empty_name_falls_back_to_worksheet(spec):
    assert resolve_build(spec, name="").name == "worksheet"


def test_kinds_and_a_spec_together_are_refused(spec):
    with pytest.raises(WorksheetError, match="give problem kinds or --spec, not both"):
        resolve_build(spec, ["attention"])


def test_split_needs_variants_from_the_options_or_the_spec(spec):
    with pytest.raises(WorksheetError, match="--split needs --variants N"):
        resolve_build(None, ["attention"], split=True)
    assert resolve_build(spec, split=True).split  # the spec has variants = 4


def test_a_spec_path_is_loaded_and_a_missing_one_named(tmp_path):
    path = tmp_path / "quiz.toml"
    path.write_text(SPEC, encoding="utf-8")
    assert resolve_build(path).name == "quiz3"
    with pytest.raises(SpecError, match="no such file"):
        resolve_build(tmp_path / "missing.toml")


def test_the_library_plan_gives_the_command_line_sheet(runner, cli, tmp_path):
    path = tmp_path / "quiz.toml"
    path.write_text(SPEC.replace("variants = 4\n", ""), encoding="utf-8")
    res = runner.invoke(
        cli, ["build", "--spec", str(path), "--seed", "11", "--numbers", "hand", "--format", "md", "-o", "-"]
    )
    assert res.exit_code == 0, res.output
    plan = resolve_build(path, seed=11, options={"numbers": "hand"})
    doc = build_document(plan.problems, **plan.document_args())
    assert render_document(doc, ["md"], name=plan.name, roles=("sheet",))["quiz3.md"] == res.stdout


def test_worksheet_build_gives_every_name_of_its_modules_as_the_same_object():
    """The package worksheet.build is the library's face for building: each name
    it exports is the very object of the module that defines it."""
    import importlib

    from worksheet.build import output, plan, sheets, spec, variants

    b = importlib.import_module("worksheet.build")  # the module (worksheet.build is the function build())

    for name in b.__all__:
        owners = [m for m in (spec, plan, sheets, output, variants) if name in vars(m)]
        assert owners and all(getattr(b, name) is getattr(m, name) for m in owners), name
    with pytest.raises(AttributeError):
        b.no_such_name
