"""The practice web app (Starlette): routes, the request-size limit and the
security headers.  See :mod:`worksheet.practice` for what a student sees.

Routes (the contract other tests drive):

* ``GET /`` -- the kinds in scope, their summaries and settings;
* ``GET /p/KIND?seed=N&numbers=hand|calculator&key=value...`` -- a problem
  page (the settings are those of ``worksheet build KIND:key=value``);
  ``POST`` to the same address (the page's form, without JavaScript) marks
  every cell given and reveals the step asked for;
* ``POST /check`` -- JSON ``{"kind", "settings", "seed", "numbers", "cells"}``
  (or ``{"kind", "table", "cells"}`` for own numbers; ``"decimal": "comma"``
  reads ``0,5`` as a half) -> the verdicts as JSON;
* ``POST /reveal`` -- the same problem fields and ``"step"`` (a step name,
  or ``"*"`` for every step) -> ``{"steps": {name: html}}``, the worked lines;
* ``GET /own``, ``POST /own`` -- the student's own numbers;
* ``GET /mistakes`` (``?codes=a,b``: a new problem exercising them);
* ``GET /static/practice.js`` and ``/static/practice.css``, held in memory.

No request path reaches the file system: templates are loaded when the app
is made, and the two static files are read then too.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import fields as dc_fields
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlencode

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from .. import kinds
from ..kinds import mistakes
from . import exercises as pr
from .pages import PracticeRenderer, cell_id

MAX_BODY = 1_100_000  # bytes of one request body: own numbers are at most 1 MB (worksheet.policy.limits)
MAX_QUERY = 4096  # characters of a query string
MAX_FIELDS = 5000  # fields of one form

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]

PAGES = (
    "home.html.j2",
    "problem.html.j2",
    "solution.html.j2",
    "own.html.j2",
    "mistakes.html.j2",
    "error.html.j2",
    "base.html.j2",
)
_STATIC = {"practice.js": "text/javascript; charset=utf-8", "practice.css": "text/css; charset=utf-8"}


class Limits:
    """ASGI middleware: a request body of at most MAX_BODY bytes (413 past it,
    counted as it arrives, whatever Content-Length says), a query string of
    at most MAX_QUERY characters (414), and the security headers on every
    response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        if len(scope.get("query_string", b"")) > MAX_QUERY:
            return await _plain(414, "query string too long")(scope, receive, send_with_headers)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return await _plain(413, f"request body larger than {MAX_BODY} bytes")(scope, receive, send_with_headers)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY:
                    raise _TooLarge()
            return message

        try:
            await self.app(scope, counted, send_with_headers)
        except _TooLarge:
            await _plain(413, f"request body larger than {MAX_BODY} bytes")(scope, receive, send_with_headers)


class _TooLarge(Exception):
    pass


def _plain(status: int, text: str) -> Response:
    return Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def create_app(scope: pr.Scope | None = None) -> Limits:
    """The ASGI app for a scope (every kind, or a lecturer's spec; mistakes to focus on)."""
    scope = scope or pr.Scope()
    renderer = PracticeRenderer()
    for name in PAGES:  # read now: no request ever makes the app open a file
        renderer.page_template(name)
    static = {
        name: (resources.files(__package__).joinpath("static", name).read_bytes(), media)
        for name, media in _STATIC.items()
    }
    title = scope.title or "Practise Transformer attention by hand"

    def html(name: str, status: int = 200, **context) -> HTMLResponse:
        return HTMLResponse(renderer.page(name, **context), status_code=status)

    def error_page(message: str, status: int = 400) -> HTMLResponse:
        return html("error.html.j2", status, message=message)

    # ---------------------------------------------------------------- pages
    async def home(request: Request):
        rows = []
        for kind, summary, settings in scope.kinds():
            if scope.sections is None:
                params = kinds.get(kind).Params
                fields = [
                    (f.name.replace("_", "-"), _default(f), "bool" if str(f.type) == "bool" else "text")
                    for f in dc_fields(params)
                    if f.name != "numbers"
                ]
                fixed = "seed=1"
            else:
                fixed_settings = {k.replace("_", "-"): pr.setting_text(v) for k, v in settings.items()}
                fields = list(fixed_settings.items())
                fixed = urlencode([("seed", 1), *fixed_settings.items()])
            rows.append((kind, summary, fields, fixed))
        focus = [(c, mistakes.CATALOGUE[c].sentence) for c in scope.focus]
        return html("home.html.j2", title=title, kinds=rows, fixed_scope=scope.sections is not None, focus=focus)

    async def problem_get(request: Request):
        kind = request.path_params["kind"]
        params = {k: v for k, v in request.query_params.multi_items() if v != ""}
        try:
            ask = _in_scope(pr.ask_from(kind, params))
            body = await run_in_threadpool(problem_page, ask, {}, set())
        except pr.RequestError as exc:
            return error_page(str(exc), 404 if "unknown kind" in str(exc) else 400)
        return HTMLResponse(body)

    async def problem_post(request: Request):
        kind = request.path_params["kind"]
        params = {k: v for k, v in request.query_params.multi_items() if v != ""}
        form = await _form(request)
        if form is None:
            return error_page("the form could not be read")
        try:
            ask = _in_scope(pr.ask_from(kind, params))
            body = await run_in_threadpool(problem_page, ask, *_answered(form))
        except pr.RequestError as exc:
            return error_page(str(exc))
        return HTMLResponse(body)

    def problem_page(ask: pr.Ask, cells: dict, reveal: set) -> str:
        doc = pr.document(ask)
        p = doc.problems[0]
        steps = p.printed_steps(False)
        values: dict[str, str] = {}
        verdicts: dict[str, dict] = {}
        progress = {s.name: f"0 of {s.shape[0] * s.shape[1]} cells right so far" for s in steps}
        if cells:
            for step, got in cells.items():
                for (r, c), x in got.items():
                    values[cell_id(step, r, c)] = str(x)
            marks = pr.mark(ask, cells)
            for v in marks["verdicts"]:
                verdicts[cell_id(v["step"], v["row"], v["col"])] = v
            for sp in marks["steps"]:
                progress[sp["name"]] = progress_text(sp)
        revealed = {s.name for s in p.steps} | {"*"} if "*" in reveal else set(reveal)
        own = ask.table is not None
        hidden = [("kind", ask.kind), ("table", ask.table)] if own else []
        return renderer.page(
            "problem.html.j2",
            doc=doc,
            p=p,
            steps=steps,
            own=own,
            values=values,
            verdicts=verdicts,
            progress=progress,
            revealed=revealed,
            hidden=hidden,
            problem_fields=json.dumps(ask.fields()),
            action="/own" if own else f"/p/{ask.kind}?{ask.query()}",
            here=f"/p/{ask.kind}?{ask.query()}",
            next_url=f"/p/{ask.kind}?{pr.Ask(ask.kind, ask.settings, min(ask.seed + 1, pr.MAX_SEED), ask.numbers).query()}",
        )

    def _in_scope(ask: pr.Ask) -> pr.Ask:
        served = scope.scoped(ask)
        if served is None:
            raise pr.RequestError(
                "this problem is not part of the lecturer's selection; see the list of problems on the first page"
            )
        return served

    # ---------------------------------------------------------------- JSON
    async def check(request: Request):
        data = await _json(request)
        if not isinstance(data, dict):
            return _json_error("send a JSON object: kind, settings, seed, numbers, cells")
        try:
            ask = _ask_of(data)
            cells = pr.cells_from(data.get("cells"))
            out = await run_in_threadpool(pr.mark, ask, cells, data.get("decimal") or "point")
        except pr.RequestError as exc:
            return _json_error(str(exc))
        for sp in out["steps"]:
            sp["text"] = progress_text(sp)
        return JSONResponse(out)

    async def reveal(request: Request):
        data = await _json(request)
        if not isinstance(data, dict) or not isinstance(data.get("step"), str):
            return _json_error("send a JSON object: the problem's fields and \"step\"")
        try:
            ask = _ask_of(data)
            out = await run_in_threadpool(solutions, ask, data["step"])
        except pr.RequestError as exc:
            return _json_error(str(exc))
        return JSONResponse({"steps": out})

    def solutions(ask: pr.Ask, step: str) -> dict[str, str]:
        p = pr.problem(ask)
        names = [s.name for s in p.steps]
        if step != "*" and step not in names:
            raise pr.RequestError("no such step")
        return {
            s.name: str(Markup("<h4>Worked solution</h4>") + renderer.solution_of(s))
            for s in p.steps
            if step in ("*", s.name)
        }

    def _ask_of(data: dict) -> pr.Ask:
        kind = data.get("kind")
        if not isinstance(kind, str) or len(kind) > 40:
            raise pr.RequestError("no kind")
        if "table" in data:
            ask = pr.own_ask(kind, data["table"])
        else:
            ask = pr.ask_from(
                kind,
                {
                    "seed": data.get("seed", 1),
                    "numbers": data.get("numbers", "hand"),
                    "settings": data.get("settings") or {},
                },
            )
        return _in_scope(ask)

    # ---------------------------------------------------------------- own numbers
    def own_page(error: str = "", kind: str = kinds.DEFAULT[0], table: str = "", status: int = 200) -> HTMLResponse:
        allowed = [k for k, _, _ in scope.kinds()]
        listed = [(k, s) for k, (_, s) in kinds.KINDS.items() if k in allowed and kinds.get(k).INPUTS]
        inputs = [(k, kinds.get(k).INPUTS) for k, _ in listed]
        return html("own.html.j2", status, error=error, kind=kind, table=table or EXAMPLE, kinds=listed, inputs=inputs)

    async def own_get(request: Request):
        return own_page()

    async def own_post(request: Request):
        form = await _form(request)
        if form is None:
            return own_page("the form could not be read", status=400)
        kind, table = _one(form, "kind"), _one(form, "table")
        try:
            ask = _in_scope(pr.own_ask(kind, table))
            cells, reveal_ = _answered(form)
            if _one(form, "go") == "solution":
                reveal_ = {"*"}
            body = await run_in_threadpool(problem_page, ask, cells, reveal_)
        except pr.RequestError as exc:
            return own_page(str(exc), kind, table, status=400)
        return HTMLResponse(body)

    # ---------------------------------------------------------------- mistakes
    async def mistakes_page(request: Request):
        codes_text = request.query_params.get("codes", "")
        try:
            codes = pr.check_focus(codes_text)
        except pr.RequestError as exc:
            return catalogue(str(exc), 400)
        if not codes:
            return await run_in_threadpool(catalogue)
        ask = await run_in_threadpool(exercise, codes)
        if ask is None:
            return catalogue("no problem here shows " + ", ".join(codes), 404)
        return RedirectResponse(f"/p/{ask.kind}?{ask.query()}", status_code=303)

    def catalogue(message: str = "", status: int = 200) -> HTMLResponse:
        rows = [
            (m.code, m.sentence, len(scope.exercising(m.code)))
            for m in mistakes.CATALOGUE.values()
            if m.code not in mistakes.WITHOUT_RULE
        ]
        return html("mistakes.html.j2", status, message=message, catalogue=rows)

    def exercise(codes: tuple[str, ...]) -> pr.Ask | None:
        """A new problem (a random seed) of the (kind, settings) in scope that shows most of ``codes``."""
        count: dict[tuple, int] = {}
        for c in codes:
            for kind, settings in scope.exercising(c):
                k = (kind, tuple(sorted(settings.items())))
                count[k] = count.get(k, 0) + 1
        if not count:
            return None
        best = max(count.values())
        kind, settings = [k for k, n in count.items() if n == best][0]
        d = dict(settings)
        numbers = str(d.pop("numbers", "hand"))
        return pr.Ask(kind, tuple(sorted(d.items())), 1 + secrets.randbelow(99_999), numbers)

    async def static_file(request: Request):
        name = request.path_params["name"]
        if name not in static:
            return _plain(404, "not found")
        body, media = static[name]
        return Response(body, media_type=media, headers={"cache-control": "no-cache"})

    async def favicon(request: Request):
        return Response(status_code=204)

    async def not_found(request: Request, exc):
        return error_page("no such page", 404)

    routes = [
        Route("/", home),
        Route("/p/{kind}", problem_get, methods=["GET"]),
        Route("/p/{kind}", problem_post, methods=["POST"]),
        Route("/check", check, methods=["POST"]),
        Route("/reveal", reveal, methods=["POST"]),
        Route("/own", own_get, methods=["GET"]),
        Route("/own", own_post, methods=["POST"]),
        Route("/mistakes", mistakes_page),
        Route("/static/{name}", static_file),
        Route("/favicon.ico", favicon),
    ]
    return Limits(Starlette(routes=routes, exception_handlers={404: not_found}))


EXAMPLE = """# Scaled dot-product attention from Q, K and V (the kind: attention)
Q = [[1, 0], [0, 1]]
K = [[1, 2], [0, 1]]
V = [[1, 0], [0, 1]]
tokens = ["Je", "suis"]
"""


def progress_text(sp: dict) -> str:
    """A step's progress in words: ``4 of 9 cells right so far``, and check's
    verdict on the step once it is complete."""
    text = f"{sp['good']} of {sp['cells']} cells right so far"
    status = sp.get("status")
    if status == "correct":
        return f"Step done: all {sp['cells']} cells right."
    if status == "carried-forward":
        return f"Step done: right for your earlier answers (error carried forward), {sp['cells']} cells."
    if status == "incorrect":
        code = sp.get("mistake")
        why = f" Named mistake {code}: {pr.hint(code)}" if code else ""
        return f"{text}; check marks this step incorrect.{why}"
    return text


def _default(f) -> str:
    import dataclasses

    d = f.default_factory() if f.default is dataclasses.MISSING else f.default
    if d is None:
        return "auto"
    if isinstance(d, bool):
        return "true" if d else "false"
    if isinstance(d, tuple):
        return " ".join(map(str, d))
    return str(d)


async def _body(request: Request) -> bytes:
    return await request.body()


async def _json(request: Request) -> Any:
    try:
        return json.loads(await _body(request))
    except (ValueError, RecursionError):
        return None


async def _form(request: Request) -> list[tuple[str, str]] | None:
    try:
        text = (await _body(request)).decode("utf-8")
        return parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        return None


def _one(form: list[tuple[str, str]], name: str) -> str:
    return next((v for k, v in form if k == name), "")


def _answered(form: list[tuple[str, str]]) -> tuple[dict, set]:
    """The cells (``cell-STEP-ROW-COL`` fields) and the step to reveal of a submitted problem form."""
    cells: dict[str, dict[tuple[int, int], str]] = {}
    reveal: set[str] = set()
    for k, v in form:
        if k == "reveal":
            reveal.add(v)
        elif k.startswith("cell-") and v.strip():
            rc = k[5:]
            head, r, c = rc.rsplit("-", 2) if rc.count("-") >= 2 else ("", "", "")
            if head and r.isdigit() and c.isdigit() and len(r) <= 3 and len(c) <= 3:
                cells.setdefault(head, {})[(int(r), int(c))] = v
            else:
                raise pr.RequestError("a cell field is cell-STEP-ROW-COL")
    return cells, reveal


def _json_error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)
