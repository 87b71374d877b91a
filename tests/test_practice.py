"""worksheet practice through Starlette's TestClient: the page contract
(cells with data-step/row/col and labels, verdict elements), POST /check's
verdicts (the same as check's), reveal, own numbers, the spec scope, the
mistakes to practise, and the safety rules (limits, escaping, CSP, no file
system path).  The browser tests are in test_practice_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with __import__("warnings").catch_warnings():  # starlette's note that it will move from httpx to httpx2
    __import__("warnings").simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

import worksheet  # noqa: E402
from worksheet.build import ProblemSpec, build_document  # noqa: E402
from worksheet.practice import Scope, create_app  # noqa: E402
from worksheet.render.html import HtmlRenderer  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`")  # starlette's note on httpx

SEED = 3


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def problem(kind="attention", seed=SEED, **settings):
    return build_document([ProblemSpec(kind, settings)], seed=seed).problems[0]


def entry(x: float) -> str:
    return f"{x:.4f}"


def check(client, cells, kind="attention", seed=SEED, **settings):
    r = client.post(
        "/check", json={"kind": kind, "seed": seed, "numbers": "hand", "settings": settings, "cells": cells}
    )
    assert r.status_code == 200, r.text
    return r.json()


def verdict_of(data, step, row, col):
    return next(v for v in data["verdicts"] if (v["step"], v["row"], v["col"]) == (step, row, col))


# ---------------------------------------------------------------- pages
def test_home_lists_every_kind_with_a_description_for_students_and_settings(client):
    r = client.get("/")
    assert r.status_code == 200
    for kind, (_, summary) in worksheet.kinds.KINDS.items():
        assert f'href="./p/{kind}?seed=1"' in r.text
        assert str(__import__("markupsafe").escape(summary)) not in r.text  # the CLI's one-line help
    assert "Choose causal for a decoder" in r.text and "<msqrt>" in r.text  # words, and maths typeset
    assert 'name="seq-len"' in r.text and 'name="causal"' in r.text and 'name="numbers"' in r.text


def test_problem_page_is_the_problem_worksheet_build_makes(client):
    r = client.get(f"/p/attention?seed={SEED}&seq-len=3&causal=true")
    assert r.status_code == 200
    p = problem(seq_len=3, causal=True)
    given = HtmlRenderer().given(p.inputs["X"])
    assert str(given) in r.text  # the sheet's own MathML of X


def test_every_answer_cell_is_a_labelled_input_with_step_row_and_col(client):
    r = client.get(f"/p/attention?seed={SEED}")
    p = problem()
    cells = re.findall(r"<input [^>]*data-step=[^>]*>", r.text)
    assert len(cells) == sum(s.shape[0] * s.shape[1] for s in p.printed_steps(False))
    w = p.step("weights")
    tag = next(c for c in cells if 'data-step="weights"' in c and 'data-row="1"' in c and 'data-col="2"' in c)
    assert f'aria-label="weights, row {w.rows[0]}, column {w.cols[1]}"' in tag
    cid = re.search(r'id="([^"]+)"', tag).group(1)
    assert f'data-verdict-for="{cid}"' in r.text
    # without labels: numbers
    tag = next(c for c in cells if 'data-step="Q"' in c and 'data-row="2"' in c and 'data-col="3"' in c)
    assert f'aria-label="Q, row {p.step("Q").rows[1]}, column 3"' in tag


def test_problem_page_reveals_no_answer(client):
    p = problem()
    page = client.get(f"/p/attention?seed={SEED}").text
    html = HtmlRenderer()
    aids = {v for a in p.aids for _, v in a.entries}
    for s in p.printed_steps(True):
        assert str(html.exact(s)) not in page, s.name
        for w in s.work:
            assert str(html.display(w)) not in page, (s.name, w)
    for name in ("weights", "output"):
        for x in p.step(name).value.ravel():
            if entry(x) not in aids and entry(x) not in ("0.0000", "1.0000"):
                assert entry(x) not in page


def test_page_has_no_inline_script_and_a_csp_that_forbids_it(client):
    r = client.get(f"/p/attention?seed={SEED}")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    for tag in re.findall(r"<script[^>]*>", r.text):
        assert 'src="../static/practice.js"' in tag
    assert (
        "<style" not in r.text
        and " style=" not in r.text
        and "http://" not in r.text.replace('xmlns="http://www.w3.org/1998/Math/MathML"', "")
    )
    js = client.get("/static/practice.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "content-security-policy" in js.headers
    assert client.get("/static/practice.css").headers["content-type"].startswith("text/css")


# ---------------------------------------------------------------- verdicts
def test_check_gives_right_for_a_key_value(client):
    p = problem()
    data = check(client, {"weights": {"1,1": entry(p.step("weights").value[0, 0])}})
    assert verdict_of(data, "weights", 1, 1)["verdict"] == "right"


def test_check_gives_carried_for_a_value_that_follows_from_a_wrong_earlier_cell(client):
    p = problem()
    scores, scaled = p.step("scores").value, p.step("scaled").value
    root = scores[0, 0] / scaled[0, 0] if scaled[0, 0] else 2.0
    wrong = scores[0, 0] + 2
    data = check(client, {"scores": {"1,1": str(int(wrong))}, "scaled": {"1,1": entry(wrong / root)}})
    assert verdict_of(data, "scores", 1, 1)["verdict"] == "wrong"
    assert verdict_of(data, "scaled", 1, 1)["verdict"] == "carried"


def test_check_names_the_mistake_of_unscaled_scores(client):
    p = problem()
    scores = p.step("scores").value
    i, j = next((i, j) for i in range(3) for j in range(3) if scores[i, j] != 0)
    data = check(client, {"scaled": {f"{i + 1},{j + 1}": str(int(scores[i, j]))}})
    v = verdict_of(data, "scaled", i + 1, j + 1)
    assert v["verdict"] == "mistake" and v["mistake"] == "no-scaling"
    assert "sqrt(d_k)" in data["hints"]["no-scaling"]


def test_a_finished_step_gets_the_verdict_of_worksheet_check(client):
    p = problem()
    unscaled = [[str(int(x)) for x in row] for row in p.step("scores").value]
    data = check(client, {"scaled": unscaled})
    step = next(s for s in data["steps"] if s["name"] == "scaled")
    marks = worksheet.check(p, {"scaled": unscaled})
    assert (
        (step["status"], step["mistake"])
        == (marks["scaled"].status, marks["scaled"].mistake)
        == ("incorrect", "no-scaling")
    )
    assert "not right yet" in step["text"] and "no-scaling" not in step["text"]
    right = [[entry(x) for x in row] for row in p.step("scaled").value]
    done = next(s for s in check(client, {"scaled": right})["steps"] if s["name"] == "scaled")
    assert done["status"] == "correct" and done["good"] == done["cells"] == 9


def test_check_gives_wrong_for_a_value_nothing_explains(client):
    data = check(client, {"weights": {"1,1": "0.123456"}})
    assert verdict_of(data, "weights", 1, 1)["verdict"] == "wrong"


def test_check_answers_with_verdicts_never_the_expected_values(client):
    p = problem()
    data = check(client, {"weights": [["0.123456"] * 3] * 3})
    text = json.dumps(data)
    assert "expected" not in text
    for x in p.step("weights").value.ravel():
        assert f"{x:.4f}" not in text


def test_an_unreadable_entry_is_its_own_verdict_with_its_reason_not_an_error(client):
    data = check(client, {"weights": {"1,1": "__import__('os')"}})
    v = verdict_of(data, "weights", 1, 1)
    assert v["verdict"] == "unreadable" and v["message"] and v["read_as"] == "__import__('os')"


def test_check_takes_cells_as_rows_with_empty_entries(client):
    p = problem()
    data = check(client, {"weights": [[entry(p.step("weights").value[0, 0]), None, ""]]})
    assert [(v["row"], v["col"], v["verdict"]) for v in data["verdicts"]] == [(1, 1, "right")]


def test_check_takes_cells_as_a_list_in_the_shape_of_the_verdicts(client):
    p = problem()
    data = check(client, [{"step": "weights", "row": 1, "col": 1, "value": entry(p.step("weights").value[0, 0])}])
    assert [(v["step"], v["row"], v["col"], v["verdict"]) for v in data["verdicts"]] == [("weights", 1, 1, "right")]


def test_check_refuses_a_cell_outside_the_matrix_and_unknown_steps(client):
    for cells in (
        {"weights": {"9,1": "1"}},
        {"nope": {"1,1": "1"}},
        {"weights": {"a,b": "1"}},
        {"weights": {"1,1": True}},
        "weights",
        {"weights": {"1,1": "1" * 5000}},
        [{"step": "weights", "row": "1", "col": 1, "value": "1"}],
        [1, 2],
    ):
        r = client.post("/check", json={"kind": "attention", "seed": SEED, "cells": cells})
        assert r.status_code == 400 and r.json()["error"], cells


def test_no_js_form_post_marks_every_cell_in_the_page(client):
    p = problem()
    w = p.step("weights").value
    scores = p.step("scores").value
    r = client.post(
        f"/p/attention?seed={SEED}",
        data={
            "cell-weights-1-1": entry(w[0, 0]),
            "cell-scaled-1-1": str(int(scores[0, 0])) if scores[0, 0] else "",
            "action": "check",
        },
    )
    assert r.status_code == 200
    assert re.search(r'data-verdict-for="cell-weights-1-1" data-verdict="right"', r.text)
    assert f'value="{entry(w[0, 0])}"' in r.text
    assert 'data-verdict-for="cell-weights-1-2">' in r.text  # empty cells: no verdict yet


def test_the_page_takes_a_decimal_comma_when_the_student_chooses_it(client):
    """The page has a decimal-separator setting; with "comma" (JavaScript sends it
    in POST /check, the form without JavaScript as a field) 0,2119 is read as 0.2119."""
    p = problem()
    w = p.step("weights").value
    comma = entry(w[0, 0]).replace(".", ",")
    page = client.get(f"/p/attention?seed={SEED}").text
    assert '<select name="decimal" id="decimal">' in page and 'value="comma"' in page
    r = client.post(f"/p/attention?seed={SEED}", data={"cell-weights-1-1": comma, "decimal": "comma"})
    assert re.search(r'data-verdict-for="cell-weights-1-1" data-verdict="right"', r.text)
    assert '<option value="comma" selected>' in r.text  # the choice stays on the marked page
    r = client.post(f"/p/attention?seed={SEED}", data={"cell-weights-1-1": comma})
    assert not re.search(r'data-verdict-for="cell-weights-1-1" data-verdict="right"', r.text)
    assert (
        verdict_of(
            client.post(
                "/check",
                json={"kind": "attention", "seed": SEED, "cells": {"weights": {"1,1": comma}}, "decimal": "comma"},
            ).json(),
            "weights",
            1,
            1,
        )["verdict"]
        == "right"
    )
    bad = client.post(f"/p/attention?seed={SEED}", data={"cell-weights-1-1": comma, "decimal": "semicolon"})
    assert bad.status_code == 400 and "decimal" in bad.text


# ---------------------------------------------------------------- reveal
def test_reveal_gives_one_steps_worked_line_or_the_full_key(client):
    p = problem()
    html = HtmlRenderer()
    r = client.post("/reveal", json={"kind": "attention", "seed": SEED, "step": "weights"})
    assert r.status_code == 200
    steps = r.json()["steps"]
    assert list(steps) == ["weights"]
    assert str(html.display(p.step("weights").work[0])) in steps["weights"]
    everything = client.post("/reveal", json={"kind": "attention", "seed": SEED, "step": "*"}).json()["steps"]
    assert list(everything) == [s.name for s in p.steps]
    assert client.post("/reveal", json={"kind": "attention", "seed": SEED, "step": "nope"}).status_code == 400


def test_reveal_without_js_is_a_form_button(client):
    p = problem()
    r = client.post(f"/p/attention?seed={SEED}", data={"reveal": "scores"})
    assert str(HtmlRenderer().display(p.step("scores").work[0])) in r.text
    assert str(HtmlRenderer().display(p.step("weights").work[0])) not in r.text


# ---------------------------------------------------------------- own numbers
OWN = 'Q = [[1, 0], [0, 1]]\nK = [[1, 2], [0, 1]]\nV = [[1, 0], [0, 1]]\ntokens = ["Je", "suis"]\n'


def test_own_numbers_give_a_practice_page_and_verdicts(client):
    r = client.post("/own", data={"kind": "attention", "table": OWN, "go": "practise"})
    assert r.status_code == 200
    assert 'aria-label="scores, row Je, column suis"' in r.text
    own = worksheet.solve("attention", {"Q": [[1, 0], [0, 1]], "K": [[1, 2], [0, 1]], "V": [[1, 0], [0, 1]]})
    scores = own.step("scores").value
    data = client.post(
        "/check", json={"kind": "attention", "table": OWN, "cells": {"scores": {"1,2": str(int(scores[0, 1]))}}}
    ).json()
    assert data["verdicts"][0]["verdict"] == "right"


def test_own_numbers_worked_solution(client):
    r = client.post("/own", data={"kind": "attention", "table": OWN, "go": "solution"})
    assert r.status_code == 200 and "Worked solution" in r.text


def test_own_numbers_errors_are_one_escaped_line_and_the_text_is_kept(client):
    r = client.post(
        "/own", data={"kind": "attention", "table": "Q = [[1, '<q>hostile']]\nK=[[1]]\nV=[[1]]", "go": "practise"}
    )
    assert r.status_code == 400
    assert "your numbers" in r.text and "<q>" not in r.text and "&lt;q&gt;hostile" in r.text
    r = client.post("/own", data={"kind": "attention", "table": "Q = [[1,", "go": "practise"})
    assert r.status_code == 400 and "invalid TOML" in r.text


def test_own_numbers_keep_the_cli_size_limits(client):
    big = "X = [" + ",".join(["[" + ",".join(["1"] * 4) + "]"] * 17) + "]\n"
    r = client.post("/own", data={"kind": "self-attention-basic", "table": big, "go": "practise"})
    assert r.status_code == 400 and "more than the limit of 16" in r.text


# ---------------------------------------------------------------- bad requests and safety
def test_bad_problem_requests_give_a_message_not_a_traceback(client):
    for url, words in [
        ("/p/nope?seed=1", "unknown kind"),
        ("/p/attention?seed=-1", "seed"),
        ("/p/attention?seed=x", "seed"),
        ("/p/attention?seed=1&colour=red", "has no setting"),
        ("/p/attention?seed=1&numbers=abacus", "numbers must be one of hand, calculator, not &#39;abacus&#39;"),
        ("/p/attention?seed=1&seq_len=2&colour=red", "it has seq-len, d-model"),
        ("/p/attention?seed=1&seq-len=99", "seq-len"),
    ]:
        r = client.get(url)
        assert r.status_code in (400, 404), url
        assert words in r.text, url
        assert "Traceback" not in r.text


@pytest.mark.parametrize(
    "kind, setting, value, words",
    [
        ("attention", "seq-len", "99", "seq-len must be between 1 and 12, not 99"),
        ("attention", "d-model", "1000000", "d-model must be between 1 and 16, not 1000000"),
        ("attention", "d-model", "0", "d-model must be between 1 and 16, not 0"),
        ("attention", "d-model", "abc", "d-model: must be a whole number, not 'abc'"),
        ("attention", "causal", "maybe", "causal: must be true or false, not 'maybe'"),
        ("attention", "d-k", "3", "hand mode needs one of 1, 4, 9, 16, ... (or choose calculator numbers)"),
        ("multi-head-attention", "heads", "99", "heads must be between"),
    ],
)
def test_settings_have_the_cli_rules_worded_for_a_page(client, kind, setting, value, words):
    """The CLI's own check of each setting (its range, not "must be a whole number"),
    with the command line taken out of the message."""
    from worksheet.policy.errors import WorksheetError
    from worksheet.practice.words import for_page

    with pytest.raises(WorksheetError) as exc:
        build_document([f"{kind}:{setting}={value}"] if value != "1000000" else [ProblemSpec(kind, {"d_model": 10**6})])
    r = client.get(f"/p/{kind}?seed=1&{setting}={value}")
    assert r.status_code == 400
    shown = str(__import__("markupsafe").escape(words))
    assert shown in r.text
    assert str(__import__("markupsafe").escape(for_page(str(exc.value)).replace("d_model:", "d-model:"))) in r.text
    main = r.text.split("<main", 1)[1].split("</main>", 1)[0]
    assert "--" not in main and "worksheet " not in main


@pytest.mark.parametrize("seed", ["1.5", "1e3", "1_000", "-1", "+1", "4294967296", "true", " "])
def test_a_seed_is_a_whole_number_in_the_clis_range(client, seed):
    r = client.get("/p/attention", params={"seed": seed})
    assert r.status_code == 400 and "the seed must be a whole number from 0 to 4294967295" in r.text, seed
    for bad in (1.5, True, "1.5", -1, [1]):
        r = client.post("/check", json={"kind": "attention", "seed": bad, "cells": {}})
        assert r.status_code == 400 and "the seed must be a whole number" in r.json()["error"], bad


def test_request_bodies_are_limited(client):
    from worksheet.practice.limits import MAX_BODY

    r = client.post("/check", content=b"x" * (MAX_BODY + 1), headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = client.get("/p/attention?seed=1&tokens=" + "a" * 5000)
    assert r.status_code == 414


def test_no_request_path_reaches_the_file_system(client):
    for url in (
        "/static/../../pyproject.toml",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/practice.py",
        "/static/%2e%2e/app.py",
        "/p/..%2F..%2Fetc?seed=1",
        "/templates/practice/base.html.j2",
    ):
        r = client.get(url)
        assert r.status_code == 404, url
        assert "[project]" not in r.text and "import" not in r.text


def test_a_hostile_label_is_escaped(client):
    r = client.get("/p/attention?seed=1&tokens=<img/src/onerror>+b+c")
    assert r.status_code == 200
    assert "<img" not in r.text
    assert "&lt;img" in r.text


# ---------------------------------------------------------------- scope and mistakes
def test_spec_scope_serves_only_the_specs_kinds_and_settings(tmp_path):
    spec = tmp_path / "midterm.toml"
    spec.write_text(
        'title = "Midterm <revision>"\nnumbers = "hand"\n[[sections]]\nkind = "attention"\n'
        'causal = true\n[[sections]]\nkind = "layer-norm"\n',
        encoding="utf-8",
    )
    with TestClient(create_app(Scope.from_spec(spec))) as c:
        home = c.get("/").text
        assert "Midterm &lt;revision&gt;" in home
        assert 'href="./p/attention?seed=1&amp;numbers=hand&amp;causal=true"' in home
        assert "/p/feed-forward" not in home
        assert c.get("/p/attention?seed=5&causal=true").status_code == 200
        assert c.get("/p/layer-norm?seed=5").status_code == 200
        for url in ("/p/attention?seed=5", "/p/feed-forward?seed=1", "/p/attention?seed=5&causal=true&seq-len=4"):
            r = c.get(url)
            assert r.status_code == 400 and "lecturer" in r.text, url
        r = c.post("/check", json={"kind": "feed-forward", "seed": 1, "cells": {}})
        assert r.status_code == 400


def test_spec_sections_keep_their_prompt_and_written_question(tmp_path):
    spec = tmp_path / "revision.toml"
    spec.write_text(
        '[[sections]]\nkind = "softmax-scaling"\nprompt = "Think of <large> scores."\n'
        'question = "Why scale?"\nanswer = "Large scores make the softmax one-hot."\n',
        encoding="utf-8",
    )
    with TestClient(create_app(Scope.from_spec(spec))) as c:
        page = c.get("/p/softmax-scaling?seed=2&numbers=hand").text
        assert "Think of &lt;large&gt; scores." in page and "Why scale?" in page
        assert "one-hot" not in page  # the model answer only on request
        steps = c.post("/reveal", json={"kind": "softmax-scaling", "seed": 2, "step": "*"}).json()["steps"]
        assert any("one-hot" in html for html in steps.values())


def test_every_named_mistake_has_a_problem_to_practise_it():
    from worksheet.kinds import mistakes

    scope = Scope()
    assert [c for c in mistakes.CATALOGUE if c not in mistakes.WITHOUT_RULE and not scope.exercising(c)] == []


def test_mistakes_give_a_problem_that_shows_them():
    from worksheet.check import shown_mistakes
    from worksheet.practice.exercises import ask_from, problem_json
    from worksheet.practice.exercises import problem as make

    with TestClient(create_app(Scope(focus=("sample-variance",)))) as c:
        home = c.get("/").text
        assert 'data-mistake="sample-variance"' in home and "./mistakes?codes=sample-variance" in home
        for codes in ("sample-variance", "mask-zero-instead-of-inf", "no-scaling,missing-W_O"):
            r = c.get(f"/mistakes?codes={codes}", follow_redirects=False)
            assert r.status_code == 303
            assert r.headers["location"].startswith("./p/")  # relative: the app may sit under a prefix
            kind, _, query = r.headers["location"][4:].partition("?")
            params = dict(p.split("=", 1) for p in query.split("&"))
            shown = shown_mistakes(problem_json(make(ask_from(kind, params))))
            assert set(codes.split(",")) <= set(shown), (codes, kind, shown)
        assert c.get("/mistakes?codes=nope").status_code == 400
        assert "no-scaling" in c.get("/mistakes").text


def test_a_check_report_names_the_practice_command_for_its_mistakes():
    from worksheet.practice import check_focus

    p = problem()
    unscaled = [[str(int(x)) for x in row] for row in p.step("scores").value]
    marks = worksheet.check(p, {"scaled": unscaled})
    assert marks.report.to_dict()["practice_focus"] == ["no-scaling"]
    assert "Practise: worksheet practice --focus no-scaling" in str(marks)
    assert check_focus(",".join(marks.report.focus())) == ("no-scaling",)
    right = [[f"{x:.4f}" for x in row] for row in p.step("scaled").value]
    assert "Practise" not in str(worksheet.check(p, {"scaled": right}))


# ---------------------------------------------------------------- the command
def test_practice_command_help_and_bad_options(runner, cli, tmp_path):
    r = runner.invoke(cli, ["practice", "--help"])
    assert r.exit_code == 0 and "--no-browser" in r.output and "--focus" in r.output
    r = runner.invoke(cli, ["practice", "--no-browser", "--focus", "no-scalin"])
    assert r.exit_code == 2 and "did you mean 'no-scaling'" in r.output and "Traceback" not in r.output
    r = runner.invoke(cli, ["practice", "--no-browser", "--spec", str(tmp_path / "none.toml")])
    assert r.exit_code == 2 and "no such file" in r.output


def test_practice_command_refuses_a_port_in_use(runner, cli):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = runner.invoke(cli, ["practice", "--no-browser", "--port", str(port)])
    assert r.exit_code == 2 and "cannot listen" in r.output


def test_worksheet_help_imports_no_web_stack():
    code = (
        "import sys; from click.testing import CliRunner; from worksheet.cli import main; "
        "CliRunner().invoke(main, ['--help']); CliRunner().invoke(main, ['practice', '--help']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'uvicorn', 'sympy', 'numpy', 'httpx', 'jinja2')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_the_command_serves_the_app_until_stopped():
    """``worksheet practice --no-browser --port 0`` prints its address and serves it;
    the server is always stopped."""
    import os
    import signal
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-c", "from worksheet.cli import main; main()", "practice", "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group()
        for _ in range(100):
            try:
                with urllib.request.urlopen(url + "p/attention?seed=3", timeout=30) as r:
                    page = r.read().decode()
                break
            except OSError:
                import time

                time.sleep(0.1)
        assert 'data-step="weights"' in page
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_problem_is_made_once_even_when_it_cannot_be_made(client, monkeypatch):
    """A request that fails (no hand-friendly numbers for the largest sizes can take
    the CLI many seconds) is remembered, so asking again does not redo the work."""
    from worksheet.policy.errors import ParamError
    from worksheet.practice import exercises as pr

    calls = []

    def failing(*args, **kw):
        calls.append(args)
        raise ParamError("no hand-friendly numbers found")

    monkeypatch.setattr(pr, "build_document", failing)
    for _ in range(3):
        r = client.get("/p/attention?seed=987654&seq-len=5")
        assert r.status_code == 400 and "no hand-friendly numbers found" in r.text
    assert len(calls) == 1
