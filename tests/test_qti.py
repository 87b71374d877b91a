"""--format qti: an IMS QTI 2.1 content package, validated against the official
schemas (tests/xsd/, see its README), and its response processing run as a
QTI player runs it (a small interpreter of the subset the items use)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worksheet import render
from worksheet.build import build_document, render_documents
from worksheet.cli import main
from worksheet.exact import NegInf, to_float
from worksheet.kinds import KINDS
from worksheet.kinds.mistakes import CATALOGUE
from worksheet.render.assessment import mistake_values

etree = pytest.importorskip("lxml.etree")

XSD = Path(__file__).parent / "xsd"
Q = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"
CP = "{http://www.imsglobal.org/xsd/imscp_v1p1}"
M = "{http://www.w3.org/1998/Math/MathML}"


@pytest.fixture(scope="module")
def schemas():
    return {
        "qti": etree.XMLSchema(etree.parse(str(XSD / "qtiv2p1" / "imsqti_v2p1.xsd"))),
        "cp": etree.XMLSchema(etree.parse(str(XSD / "imscp_v1p1.xsd"))),
    }


def package(docs, name="worksheet") -> dict[str, bytes]:
    data = render_documents(docs, ["qti"], name=name).files[f"{name}-qti.zip"]
    z = zipfile.ZipFile(io.BytesIO(data))
    assert z.testzip() is None
    return {n: z.read(n) for n in z.namelist()}


def assert_valid(files: dict[str, bytes], schemas) -> None:
    for name, data in files.items():
        schema = schemas["cp"] if name == "imsmanifest.xml" else schemas["qti"]
        doc = etree.fromstring(data)
        assert schema.validate(doc), (name, [e.message for e in schema.error_log][:3])


def run(*args):
    return CliRunner().invoke(main, list(args))


# ---------------------------------------------------------------- the schemas
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_is_a_valid_package(kind, schemas):
    for seed in (1, 2):
        files = package([build_document([kind], seed=seed)])
        assert list(files)[:2] == ["imsmanifest.xml", "test.xml"]
        assert len(files) == 3  # one problem: one item
        assert_valid(files, schemas)


def test_variants_are_one_item_each_and_the_test_selects_one_per_problem(tmp_path, schemas):
    r = run("build", "attention", "layer-norm", "--variants", "3", "--format", "qti", "-o", str(tmp_path))
    assert r.exit_code == 0, r.output
    z = zipfile.ZipFile(tmp_path / "worksheet-qti.zip")
    files = {n: z.read(n) for n in z.namelist()}
    assert_valid(files, schemas)
    items = [f"items/item-v0{v}-p{k}.xml" for v in (1, 2, 3) for k in (1, 2)]
    assert list(files)[2:] == items
    test = etree.fromstring(files["test.xml"])
    sections = test.findall(f".//{Q}assessmentSection[@visible='false']")
    assert [s.get("title") for s in sections] == ["Problem 1", "Problem 2"]
    for k, s in enumerate(sections, 1):
        assert s.find(f"{Q}selection").get("select") == "1"
        assert [r.get("href") for r in s.findall(f"{Q}assessmentItemRef")] == [
            f"items/item-v0{v}-p{k}.xml" for v in (1, 2, 3)
        ]
    manifest = etree.fromstring(files["imsmanifest.xml"])
    hrefs = [f.get("href") for f in manifest.iter(f"{CP}file")]
    assert sorted(hrefs) == sorted(n for n in files if n != "imsmanifest.xml")  # every file listed, once


def test_a_question_in_words_is_an_extended_text_without_score(schemas):
    from worksheet.build import resolve_build

    plan = resolve_build(
        Path("examples/midterm.toml"),
        (),
        seed=3,
        options={},
        title=None,
        variants=None,
        name=None,
        paper=None,
        split=False,
        compact=None,
    )
    files = package([build_document(plan.problems, **plan.document_args())])
    assert_valid(files, schemas)
    bodies = [etree.fromstring(d) for n, d in files.items() if n.startswith("items/")]
    assert any(b.find(f".//{Q}extendedTextInteraction") is not None for b in bodies)


# ---------------------------------------------------------------- the same bytes
def test_the_same_seed_gives_the_same_bytes_whatever_the_jobs(tmp_path):
    out = []
    for jobs, folder in (("1", "a"), ("2", "b")):
        r = run("build", "attention", "--variants", "4", "-j", jobs, "--format", "qti", "-o", str(tmp_path / folder))
        assert r.exit_code == 0, r.output
        out.append((tmp_path / folder / "worksheet-qti.zip").read_bytes())
    assert out[0] == out[1]
    infos = zipfile.ZipFile(io.BytesIO(out[0])).infolist()
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}


# ---------------------------------------------------------------- processing
class Player:
    """The response processing of one item, run as QTI 2.1 says (the operators it uses)."""

    def __init__(self, data: bytes):
        self.root = etree.fromstring(data)
        self.correct = {}
        self.base = {}
        for d in self.root.findall(f"{Q}responseDeclaration"):
            v = d.find(f"{Q}correctResponse/{Q}value")
            self.base[d.get("identifier")] = d.get("baseType")
            self.correct[d.get("identifier")] = None if v is None else self.value(v.text, d.get("baseType"))

    @staticmethod
    def value(text: str, base: str):
        return float(text) if base == "float" else text

    def outcomes(self, responses: dict) -> dict:
        out = {}
        for o in self.root.findall(f"{Q}outcomeDeclaration"):
            v = o.find(f"{Q}defaultValue/{Q}value")
            out[o.get("identifier")] = float(v.text) if v is not None else set()
        self.vars = {**out, **responses}
        self.rules(self.root.find(f"{Q}responseProcessing"))
        return {k: self.vars[k] for k in out}

    def rules(self, parent) -> None:
        for rule in parent:
            if rule.tag == f"{Q}responseCondition":
                for branch in rule:
                    if branch.tag == f"{Q}responseElse" or self.ev(branch[0]) is True:
                        self.rules(branch if branch.tag == f"{Q}responseElse" else branch[1:])
                        break
            elif rule.tag == f"{Q}setOutcomeValue":
                self.vars[rule.get("identifier")] = self.ev(rule[0])

    def ev(self, e):
        tag = e.tag[len(Q) :]
        args = [self.ev(c) for c in e]
        if tag == "variable":
            return self.vars.get(e.get("identifier"))
        if tag == "baseValue":
            return self.value(e.text, e.get("baseType"))
        if tag == "correct":
            return self.correct[e.get("identifier")]
        if tag == "equal":
            assert e.get("toleranceMode") == "absolute"
            lo, hi = map(float, e.get("tolerance").split())
            return None if args[0] is None else args[1] - lo <= args[0] <= args[1] + hi
        if tag == "match":
            return None if args[0] is None else args[0] == args[1]
        if tag == "stringMatch":
            return None if args[0] is None else args[0].lower() == args[1].lower()
        if tag == "or":
            return any(a is True for a in args)
        if tag == "and":
            return all(a is True for a in args)
        if tag == "sum":
            return sum(a for a in args if a is not None)
        if tag == "multiple":
            return set().union(*({a} if isinstance(a, str) else a for a in args))
        raise AssertionError(f"operator {tag} not in the interpreter")

    def right_answers(self) -> dict:
        return {k: v for k, v in self.correct.items() if v is not None}


def items_of(kind: str, seed: int):
    doc = build_document([kind], seed=seed)
    files = package([doc])
    return doc.problems[0], Player(next(d for n, d in files.items() if n.startswith("items/")))


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_right_answers_score_full_marks_and_nothing_scores_nothing(kind):
    p, item = items_of(kind, 1)
    full = item.outcomes(item.right_answers())
    assert full["MAXSCORE"] > 0 and full["SCORE"] == pytest.approx(full["MAXSCORE"])
    assert full.get("FEEDBACK", set()) == set()
    empty = item.outcomes({})
    assert empty["SCORE"] == 0 and empty.get("FEEDBACK", set()) == set()


def test_the_right_values_are_the_doubles_nearest_the_exact_values():
    p, item = items_of("layer-norm", 4)
    steps = p.printed_steps(False)
    checked = 0
    for ident, v in item.right_answers().items():
        _, s, i, j = ident.split("_")
        x = steps[int(s[1:]) - 1].exact[int(i) - 1][int(j) - 1]
        if not isinstance(x, (str, NegInf)):
            assert v == to_float(x)
            checked += 1
    assert checked > 10


def test_an_answer_within_the_tolerance_is_right_and_one_beyond_it_is_not():
    p, item = items_of("attention", 7)
    answers = item.right_answers()
    first = next(k for k, v in answers.items() if isinstance(v, float))
    step = "SCORE_" + first.split("_")[1]
    right = item.outcomes(answers)[step]
    assert item.outcomes({**answers, first: answers[first] + 0.0009})[step] == right
    assert item.outcomes({**answers, first: answers[first] + 0.002})[step] < right


def test_a_named_mistake_shows_its_feedback_and_loses_the_step_its_marks():
    p, item = items_of("attention", 7)
    steps = p.printed_steps(False)
    n = next(k for k, s in enumerate(steps, 1) if s.name == "scaled")
    wrong = mistake_values(p)["scaled"]["no-scaling"]
    assert np.array_equal(wrong, p.step("scores").value)  # not divided: the scores themselves
    answers = dict(item.right_answers())
    for ident in answers:
        if ident.startswith(f"R_S{n}_"):
            _, _, i, j = ident.split("_")
            answers[ident] = float(wrong[int(i) - 1, int(j) - 1])
    out = item.outcomes(answers)
    assert out[f"SCORE_S{n}"] < item.outcomes(item.right_answers())[f"SCORE_S{n}"]
    assert len(out["FEEDBACK"]) == 1
    (shown,) = out["FEEDBACK"]
    fb = item.root.find(f"{Q}modalFeedback[@identifier='{shown}']")
    assert "no-scaling" in "".join(fb.itertext()) and "not divided by" in "".join(fb.itertext())
    assert fb.find(f".//{M}msqrt") is not None  # the hint's maths is MathML


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["attention", "layer-norm", "feed-forward", "gru-cell"]))
def test_a_wrong_box_costs_exactly_its_share_of_its_step(seed, kind):
    p, item = items_of(kind, seed)
    answers = item.right_answers()
    full = item.outcomes(answers)
    for ident, v in list(answers.items())[:: max(1, len(answers) // 5)]:
        if not isinstance(v, float):
            continue
        step = "SCORE_" + ident.split("_")[1]
        cells = sum(1 for k in answers if k.startswith(ident.rsplit("_", 2)[0] + "_"))
        share = full[step] / cells
        out = item.outcomes({**answers, ident: v + 0.5})
        assert out[step] == pytest.approx(full[step] - share)
        assert out["SCORE"] == pytest.approx(full["SCORE"] - share)


def test_mistakes_that_give_the_same_values_share_one_feedback():
    from worksheet.render.assessment import feedback_groups

    right = {(0, 0): [1.0], (0, 1): [2.0]}
    same = np.array([[1.5, 2.5]])
    groups = feedback_groups(
        None, {"no-scaling": same, "scaled-by-d_k": same.copy(), "x": np.array([[1.0, 2.0]])}, [(0, 0), (0, 1)], right
    )
    assert [g[0] for g in groups] == [["no-scaling", "scaled-by-d_k"]]  # the right values are no mistake


def test_every_feedback_names_catalogued_mistakes_and_is_reachable():
    for kind in ("attention", "layer-norm", "multi-head-attention", "positional-encoding"):
        p, item = items_of(kind, 2)
        declared = {b.text for b in item.root.iter(f"{Q}baseValue") if b.get("baseType") == "identifier"}
        shown = {f.get("identifier") for f in item.root.findall(f"{Q}modalFeedback")}
        assert declared == shown
        for f in item.root.findall(f"{Q}modalFeedback"):
            assert {c.text for c in f.iter(f"{Q}code")} <= set(CATALOGUE)


# ---------------------------------------------------------------- user text
def test_labels_and_titles_stay_text(tmp_path, schemas):
    tokens = ["<b>x</b>", "]]>&amp;", "{1:SA:=x} \\input{a}"]
    spec = {
        "X": [[1, 0], [0, 1], [1, 1]],
        "W_Q": [[1, 0], [0, 1]],
        "W_K": [[1, 0], [0, 1]],
        "W_V": [[1, 0], [0, 1]],
        "tokens": tokens,
    }
    (tmp_path / "in.json").write_text(json.dumps(spec))
    out = tmp_path / "mine.zip"
    r = run("solve", "attention", "-i", str(tmp_path / "in.json"), "--format", "qti", "-o", str(out))
    assert r.exit_code == 0, r.output
    z = zipfile.ZipFile(out)
    files = {n: z.read(n) for n in z.namelist()}
    assert_valid(files, schemas)
    root = etree.fromstring(files["items/item-p1.xml"])
    assert not list(root.iter(f"{Q}b")) and not list(root.iter("b"))
    texts = [t for e in root.iter(f"{Q}th") for t in e.itertext()]
    assert all(t in texts for t in tokens)


# ---------------------------------------------------------------- the command line
def test_a_package_is_never_written_to_stdout_and_never_over_a_file(tmp_path):
    r = run("build", "attention", "--format", "qti", "-o", "-")
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "-o DIR" in r.output
    (tmp_path / "worksheet-qti.zip").write_bytes(b"mine")
    r = run("build", "attention", "--format", "qti,md", "-o", str(tmp_path))
    assert r.exit_code == 2 and (tmp_path / "worksheet-qti.zip").read_bytes() == b"mine"
    assert not (tmp_path / "worksheet.md").exists()


def test_qti_is_one_module_and_one_registry_line():
    assert render.FORMATS["qti"] == "qti:QtiPackage"
    f = render.get("qti")
    assert (
        f.binary and [a.role for a in f.artefacts()] == ["package"] and f.files("exam") == {"package": "exam-qti.zip"}
    )


def test_a_title_is_text_in_the_test_and_every_item(tmp_path, schemas):
    title = "<i>Quiz</i> & ]]> {1:SA:=x}"
    r = run("build", "attention", "--variants", "2", "--title", title, "--format", "qti", "-o", str(tmp_path))
    assert r.exit_code == 0, r.output
    z = zipfile.ZipFile(tmp_path / "worksheet-qti.zip")
    files = {n: z.read(n) for n in z.namelist()}
    assert_valid(files, schemas)
    test = etree.fromstring(files["test.xml"])
    assert test.get("title") == title and not list(test.iter(f"{Q}i"))
    for name, data in files.items():
        assert not list(etree.fromstring(data).iter(f"{Q}i")), name


def test_a_character_xml_cannot_hold_becomes_a_replacement_character():
    from xml.etree.ElementTree import fromstring

    from worksheet.render.assessment import document, el

    root = el(None, "p", "a\x01b", title="c\x02d")
    back = fromstring(document(root).encode())
    assert back.text == "a\ufffdb" and back.get("title") == "c\ufffdd"
