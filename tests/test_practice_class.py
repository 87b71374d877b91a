"""worksheet practice for a whole class: under a path prefix (ASGI root_path,
relative addresses), configured from the environment for many workers,
a chunked body over the limit refused by a real uvicorn without a
traceback, the same answers to POST /check from many threads as from one,
and pages that never name a command-line flag or command."""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

with __import__("warnings").catch_warnings():  # starlette's note that it will move from httpx to httpx2
    __import__("warnings").simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from practice_util import served  # noqa: E402
from worksheet import kinds  # noqa: E402
from worksheet.build import ProblemSpec, build_document  # noqa: E402
from worksheet.practice import ENVIRONMENT, Limits, Scope, app_from_env, config_from_env, create_app  # noqa: E402
from worksheet.practice.limits import MAX_BODY  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`")

SEED = 3
ADDRESS = re.compile(r'(?:href|src|action)="([^"]*)"')


def addresses(html: str) -> list[str]:
    return ADDRESS.findall(html)


# ---------------------------------------------------------------- any path prefix
def test_every_address_a_page_writes_is_relative():
    with TestClient(create_app(Scope(focus=("no-scaling",)))) as c:
        pages = ["/", "/own", "/mistakes", f"/p/attention?seed={SEED}", "/p/nope", "/no/such/page"]
        for url in pages:
            html = c.get(url).text
            found = addresses(html)
            assert found, url
            for a in found:
                assert not a.startswith(("/", "http:", "https:")), (url, a)
            assert 'data-base="' in html
        js = c.get("/static/practice.js").text
        assert not re.search(r"""["']/(check|reveal|mistakes|static|p/)""", js)


def test_the_app_works_under_a_root_path():
    """Behind a proxy that passes the prefix (uvicorn --root-path /practice): the
    pages, their static files, POST check and the mistake redirect all resolve
    under /practice, as a browser resolves the relative addresses."""
    from urllib.parse import urljoin

    p = build_document([ProblemSpec("attention", {})], seed=SEED).problems[0]
    with TestClient(create_app(), root_path="/practice", base_url="http://uni.example") as c:
        page_url = f"http://uni.example/practice/p/attention?seed={SEED}"
        r = c.get(page_url)
        assert r.status_code == 200
        base = urljoin(page_url, re.search(r'data-base="([^"]+)"', r.text).group(1))
        assert base == "http://uni.example/practice/"
        for a in addresses(r.text):
            target = urljoin(page_url, a)
            assert target.startswith("http://uni.example/practice/"), a
            if "static/" in a or a.endswith("/practice/"):
                assert c.get(target).status_code == 200, target
        check = c.post(
            urljoin(base, "check"),
            json={
                "kind": "attention",
                "seed": SEED,
                "cells": {"weights": {"1,1": f"{p.step('weights').value[0, 0]:.4f}"}},
            },
        )
        assert check.json()["verdicts"][0]["verdict"] == "right"
        home = c.get("http://uni.example/practice/")
        assert home.status_code == 200 and 'href="./p/attention?seed=1"' in home.text
        r = c.get("http://uni.example/practice/mistakes?codes=no-scaling", follow_redirects=False)
        assert r.status_code == 303
        assert urljoin("http://uni.example/practice/mistakes", r.headers["location"]).startswith(
            "http://uni.example/practice/p/"
        )


def test_a_student_works_through_a_path_prefix_in_chromium():
    """The app mounted under /practice/ (as a proxy serves it): nothing outside
    the prefix answers, yet the page checks a cell, reveals a line and follows
    its links, so no address the page uses is absolute."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from practice_util import browser_page

    outer = Starlette(routes=[Mount("/practice", app=create_app())])
    p = build_document([ProblemSpec("attention", {})], seed=SEED).problems[0]
    with served(app=outer) as base, browser_page() as page:
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: errors.append(r.url))
        page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.goto(f"{base}/practice/p/attention?seed={SEED}")
        assert page.evaluate("getComputedStyle(document.querySelector('.scroll')).overflowX") == "auto"  # the CSS
        page.fill("#cell-weights-1-1", f"{p.step('weights').value[0, 0]:.4f}")
        page.press("#cell-weights-1-1", "Tab")
        page.wait_for_selector('[data-verdict-for="cell-weights-1-1"][data-verdict="right"]')
        page.click('button[data-reveal-step="scores"]')
        page.wait_for_selector("#solution-scores h4")
        page.click("nav.top >> text=Practise your mistakes")
        page.wait_for_selector("ul.catalogue")
        assert page.url == f"{base}/practice/mistakes"
        page.click('ul.catalogue a[href$="codes=no-scaling"]')
        page.wait_for_selector("input[data-step]")
        assert page.url.startswith(f"{base}/practice/p/")
        page.click("nav.top >> text=All problems")
        page.wait_for_selector("section.kind")
        assert page.url == f"{base}/practice/"
        assert errors == []


# ---------------------------------------------------------------- configured from the environment
def test_the_factory_reads_spec_focus_and_limits_from_the_environment(tmp_path):
    spec = tmp_path / "quiz.toml"
    spec.write_text('title = "Quiz 3"\n[[sections]]\nkind = "layer-norm"\n', encoding="utf-8")
    scope, limits = config_from_env(
        {
            "WORKSHEET_PRACTICE_SPEC": str(spec),
            "WORKSHEET_PRACTICE_FOCUS": "sample-variance",
            "WORKSHEET_PRACTICE_MAX_BODY": "5000",
            "WORKSHEET_PRACTICE_MAX_QUERY": "300",
            "PATH": "/usr/bin",
        }
    )
    assert scope.title == "Quiz 3" and [k for k, _ in scope.sections] == ["layer-norm"]
    assert scope.focus == ("sample-variance",) and limits == Limits(5000, 300)
    assert config_from_env({}) == (Scope(), Limits())
    with TestClient(create_app(scope, limits)) as c:
        assert "Quiz 3" in c.get("/").text
        assert c.post("/check", content=b"x" * 5001).status_code == 413
        assert c.get("/p/layer-norm?seed=1&x=" + "a" * 300).status_code == 414


@pytest.mark.parametrize(
    "env, words",
    [
        ({"WORKSHEET_PRACTICE_FOCUS": "no-scalin"}, "WORKSHEET_PRACTICE_FOCUS: unknown mistake code 'no-scalin'"),
        ({"WORKSHEET_PRACTICE_SPEC": "/none/such.toml"}, "WORKSHEET_PRACTICE_SPEC: "),
        ({"WORKSHEET_PRACTICE_MAX_BODY": "1e6"}, "WORKSHEET_PRACTICE_MAX_BODY must be a whole number"),
        ({"WORKSHEET_PRACTICE_MAX_QUERY": "0"}, "WORKSHEET_PRACTICE_MAX_QUERY must be a whole number"),
        ({"WORKSHEET_PRACTICE_SPECS": "a.toml"}, "WORKSHEET_PRACTICE_SPECS: unknown setting"),
    ],
)
def test_a_bad_environment_stops_the_factory_with_one_line(monkeypatch, capsys, env, words):
    for k in ENVIRONMENT:
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit) as exc:
        app_from_env()
    err = capsys.readouterr().err
    assert exc.value.code == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---------------------------------------------------------------- a real uvicorn
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _raw(port: int, head: bytes, chunks: list[bytes]) -> bytes:
    """Send a request with a chunked body; the whole answer, as bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(head)
        try:
            for c in chunks:
                s.sendall(b"%x\r\n%s\r\n" % (len(c), c))
            s.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer before it has read everything
        out = b""
        while b"\r\n\r\n" not in out or len(out) < out.find(b"\r\n\r\n") + 4 + _length(out):
            part = s.recv(65536)
            if not part:
                break
            out += part
        return out


def _length(response: bytes) -> int:
    m = re.search(rb"content-length: (\d+)", response, re.IGNORECASE)
    return int(m.group(1)) if m else 0


@pytest.fixture(scope="module")
def uvicorn_server():
    """``uvicorn --factory worksheet.practice:app_from_env`` on 127.0.0.1, its stderr kept."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKSHEET_PRACTICE_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "worksheet.practice:app_from_env"]
        + ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )
    try:
        for _ in range(600):  # counted waits, up to about a minute
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
        yield port, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_a_streamed_body_is_counted_as_it_arrives():
    """No Content-Length (a generator's body goes chunked): over the limit, 413
    and the app never runs; under it, the app reads the very body counted."""

    def body(parts):
        yield from parts

    with TestClient(create_app(limits=Limits(max_body=2000))) as c:
        r = c.post("/check", content=body([b"{" + b" " * 1500, b" " * 1500 + b"}"]))
        assert r.status_code == 413 and "larger than 2000 bytes" in r.text
        assert "content-security-policy" in r.headers
        ok = json.dumps({"kind": "attention", "seed": SEED, "cells": {"weights": {"1,1": "0.5"}}}).encode()
        r = c.post("/check", content=body([ok[:10], ok[10:30], ok[30:]]))
        assert r.status_code == 200 and r.json()["verdicts"][0]["verdict"] in ("right", "wrong")
        form = b"cell-weights-1-1=0.5&action=check"
        r = c.post(
            f"/p/attention?seed={SEED}",
            content=body([form[:7], form[7:]]),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 200 and 'value="0.5"' in r.text


def test_a_chunked_body_over_the_limit_gets_413_and_no_traceback(uvicorn_server):
    port, proc = uvicorn_server
    head = (
        b"POST /check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    big = [b"x" * 65536] * (MAX_BODY // 65536 + 2)  # no Content-Length: counted as it arrives
    answer = _raw(port, head, big)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"request body larger than" in answer
    # under the limit, the same chunked way: the body the app reads is the one counted
    body = json.dumps({"kind": "attention", "seed": SEED, "cells": {"weights": {"1,1": "0.5"}}}).encode()
    answer = _raw(port, head, [body[:20], body[20:]])
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert b'"verdicts"' in answer
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    err = proc.stderr.read().decode(errors="replace")
    assert "Traceback" not in err and "Unexpected ASGI message" not in err and "Exception" not in err, err


# ---------------------------------------------------------------- many students at once
def _requests() -> list[dict]:
    """Mixed kinds, each with right, carried, wrong, unreadable and mistaken entries."""
    out = []
    for kind in ("attention", "layer-norm", "multi-head-attention", "lstm-cell", "next-token", "feed-forward"):
        for seed in (1, 2):
            p = build_document([ProblemSpec(kind, {})], seed=seed).problems[0]
            steps = [s for s in p.printed_steps(False) if not s.is_written and not s.choices]
            for k, s in enumerate(steps[:4]):
                v = s.value
                cells = {s.name: {"1,1": f"{float(v[0, 0]):.4f}" if v[0, 0] > -1e300 else "-inf"}}
                if v.shape[1] > 1:
                    cells[s.name]["1,2"] = ["7.25", "1/√3", "0.1", "x+"][k % 4]
                if k and v.shape[0] > 1:
                    prev = steps[k - 1]
                    cells[prev.name] = {"2,1": "3"}
                out.append({"kind": kind, "seed": seed, "numbers": "hand", "settings": {}, "cells": cells})
    return out


def test_check_from_many_threads_gives_the_answers_of_one(monkeypatch):
    """16 threads post the same mixed requests, three times each, to a fresh
    server (problems made while others are marked); every answer equals the
    one a single client gets, one request at a time."""
    import httpx

    from worksheet.practice import exercises as pr

    bodies = _requests()
    assert len(bodies) >= 40
    for cache in (pr._remembered, pr._cached_key, pr._codes_shown):
        cache.cache_clear()
    with served() as base:

        def post(body):
            with httpx.Client(timeout=120) as client:
                r = client.post(f"{base}/check", json=body)
                return r.status_code, r.json()

        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            together = list(pool.map(post, bodies * 3))
        for cache in (pr._remembered, pr._cached_key):
            cache.cache_clear()
        alone = [post(b) for b in bodies]
    assert all(code == 200 for code, _ in alone), [a for a in alone if a[0] != 200][:1]
    for i, got in enumerate(together):
        assert got == alone[i % len(bodies)], bodies[i % len(bodies)]
    verdicts = {v["verdict"] for _, a in alone for v in a["verdicts"]}
    assert {"right", "wrong", "unreadable"} <= verdicts


# ---------------------------------------------------------------- no command line on a page
FLAG = re.compile(r"(?<![\w-])--[a-z]")
COMMAND = re.compile(r"worksheet (list|build|solve|check|template|practice)|check marks")


def _main(html: str) -> str:
    return html.split("<main", 1)[1].split("</main>", 1)[0]


def test_no_page_names_a_flag_or_a_command(tmp_path):
    with TestClient(create_app(Scope(focus=("no-scaling",)))) as c:
        urls = ["/", "/own", "/mistakes", "/mistakes?codes=nope", "/p/nope", "/p/attention?seq-len=99"]
        urls += [f"/p/{k}?seed={SEED}" for k in kinds.names()]
        urls += ["/p/attention?d-k=3", "/p/multi-head-attention?heads=3&d-model=4", "/p/attention?seed=1&tokens=a"]
        for url in urls:
            main = _main(c.get(url).text)
            assert not FLAG.search(main) and not COMMAND.search(main), (url, FLAG.search(main) or COMMAND.search(main))
        r = c.post("/own", data={"kind": "attention", "table": "Q = [[1,", "go": "practise"})
        assert not FLAG.search(_main(r.text)) and not COMMAND.search(_main(r.text))
        p = build_document([ProblemSpec("attention", {})], seed=SEED).problems[0]
        unscaled = [[str(int(x)) for x in row] for row in p.step("scores").value]
        data = c.post("/check", json={"kind": "attention", "seed": SEED, "cells": {"scaled": unscaled}}).json()
        text = json.dumps({k: data[k] for k in ("steps", "words")})
        assert not FLAG.search(text) and not COMMAND.search(text)
        assert "<msqrt>" in data["words"]["no-scaling"]  # the words with their maths typeset
        assert data["named"] == {"scaled": ["no-scaling"]}


def test_without_javascript_a_named_mistake_is_said_in_words_under_its_grid():
    p = build_document([ProblemSpec("attention", {})], seed=SEED).problems[0]
    form = {
        f"cell-scaled-{i + 1}-{j + 1}": str(int(x))
        for (i, j), x in __import__("numpy").ndenumerate(p.step("scores").value)
    }
    with TestClient(create_app()) as c:
        html = c.post(f"/p/attention?seed={SEED}", data={**form, "cell-weights-1-1": "0.2(", "action": "check"}).text
    named = html.split('id="named-scaled"', 1)[1].split("</ul>", 1)[0]
    assert '<li data-mistake="no-scaling">' in named and "<msqrt>" in named and "not divided by" in named
    assert 'data-verdict="mistake" data-mistake="no-scaling"' in html
    cell = html.split('data-verdict-for="cell-weights-1-1"', 1)[1].split("</td>", 1)[0]
    assert 'data-verdict="unreadable"' in cell and "can’t read this" in cell and 'class="why"' in cell


@pytest.mark.parametrize(
    "cli, page",
    [
        ("--seq-len must be between 1 and 12, not 99", "seq-len must be between 1 and 12, not 99"),
        (
            "hand mode needs one of 1, 4, 9 (or use --numbers calculator)",
            "hand mode needs one of 1, 4, 9 (or choose calculator numbers)",
        ),
        (
            "no numbers found; try smaller sizes or --numbers calculator",
            "no numbers found; try smaller sizes or choose calculator numbers",
        ),
        (
            "the table grows with each); use --numbers calculator",
            "the table grows with each); choose calculator numbers",
        ),
        ("unknown kind 'x'; see 'worksheet list'", "unknown kind 'x'; see the list of problems on the first page"),
        ("2 positions given but --seq-len is 3", "2 positions given but seq-len is 3"),
        ("a score of -2 -- or --3", "a score of -2 -- or --3"),
    ],
)
def test_library_messages_are_worded_for_a_page(cli, page):
    from worksheet.practice.words import for_page

    assert for_page(cli) == page


def test_each_kind_has_its_own_typing_hint():
    from worksheet.check.answers import parse_entry
    from worksheet.parse import Budget
    from worksheet.policy.limits import ANSWER_WORK

    with TestClient(create_app()) as c:
        for kind in kinds.names():
            html = c.get(f"/p/{kind}?seed={SEED}").text
            hint = html.split('class="howto"', 1)[1].split("</section>", 1)[0]
            gated = kind in ("lstm-cell", "gru-cell")
            assert ("sigma(0.5)" in hint) == gated, kind
            p = build_document([ProblemSpec(kind, {})], seed=SEED).problems[0]
            masked = any(
                s.value.dtype.kind == "f" and (s.value == float("-inf")).any()
                for s in p.printed_steps(False)
                if not s.is_written
            )
            assert ("-inf" in hint) == masked, kind  # only where a mask is
            assert "0.001" in hint and "4 decimals" in hint, kind  # the sheet's rounding rule
            for typed in re.findall(r"<code>([^<]+)</code>", hint.split("logistic")[0]):
                if typed not in ("-inf",):
                    parse_entry(typed.replace("&#43;", "+"), (), Budget(*ANSWER_WORK))  # the reader takes it
        causal = c.get(f"/p/attention?seed={SEED}&causal=true").text.split('class="howto"', 1)[1]
        assert "-inf" in causal.split("</section>", 1)[0]
        assert "-inf" in c.get(f"/p/decoder-block?seed={SEED}").text.split('class="howto"', 1)[1].split("</section>")[0]


def test_the_pages_rounding_rule_names_exactly_the_tables_it_prints():
    """An LSTM page prints tables of σ and tanh: its rule names those, on this page, and
    not eˣ, √x, sin or cos; an attention page names eˣ only."""
    from worksheet.practice.words import KindWords, typing_hint

    with TestClient(create_app()) as c:
        for kind, named, unnamed in (
            ("lstm-cell", (r"\sigma", r"\tanh"), ("e^x", r"\sqrt", r"\sin")),
            ("attention", ("e^x",), (r"\sigma", r"\tanh", r"\sqrt", r"\sin")),
        ):
            p = build_document([ProblemSpec(kind, {})], seed=SEED).problems[0]
            rule = typing_hint(KindWords("", ()), p, "hand").rule
            assert "on this page" in rule and "sheet" not in rule, kind
            assert all(n in rule for n in named) and not any(u in rule for u in unnamed), (kind, rule)
            html = c.get(f"/p/{kind}?seed={SEED}").text.split('class="rule"', 1)[1].split("</p>", 1)[0]
            assert "on this page" in html, kind
