"""The practice web app (Starlette): its routes, behind the guard of
:mod:`.limits` (request sizes, security headers).  See
:mod:`worksheet.practice` for what a student sees.

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
is made, and the two static files are read then too.  Every address a page
writes is relative (:func:`base_of`), so the app can be served under any
path prefix.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import fields as dc_fields
from dataclasses import replace
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
from ..kinds.param_types import BOOL, Declared, declared
from . import exercises as pr
from .limits import Guard, Limits
from .pages import PracticeRenderer, cell_id
from .words import for_page, mistake_words, progress_text, typing_hint

MAX_FIELDS = 5000  # fields of one form

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


def base_of(request: Request) -> str:
    """The way from this page back to the app's root, as a relative URL
    (``./`` on ``/own``, ``../`` on ``/p/KIND``): every address the pages
    write starts with it, so the app works under any path prefix a proxy
    gives it, whether or not the proxy tells it the prefix (ASGI ``root_path``)."""
    path, root = request.scope.get("path", "/"), request.scope.get("root_path", "")
    if root and path.startswith(root):  # servers differ on whether path holds the prefix
        path = path[len(root) :]
    return "../" * max(0, path.count("/") - 1) or "./"


# long: the app's routes as closures over its settings (Starlette's style); each route is short
def create_app(scope: pr.Scope | None = None, limits: Limits | None = None) -> Guard:  # noqa: C901, PLR0915
    """The ASGI app for a scope (every kind, or a lecturer's spec; mistakes to
    focus on) and the request limits (:class:`~.limits.Limits`)."""
    scope = scope or pr.Scope()
    renderer = PracticeRenderer()
    for name in PAGES:  # read now: no request ever makes the app open a file
        renderer.page_template(name)
    static = {
        name: (resources.files(__package__).joinpath("static", name).read_bytes(), media)
        for name, media in _STATIC.items()
    }
    title = scope.title or "Practise Transformer attention by hand"
    all_mistakes = [(c, mistake_words(c)) for c in mistakes.CATALOGUE]

    def html(request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        return HTMLResponse(renderer.page(name, base=base_of(request), **context), status_code=status)

    def error_page(request: Request, message: str, status: int = 400) -> HTMLResponse:
        return html(request, "error.html.j2", status, message=for_page(message))

    # ---------------------------------------------------------------- pages
    async def home(request: Request):
        rows = []
        for kind, summary, settings in scope.kinds():
            about = renderer.kind_words(kind).about or summary
            if scope.sections is None:
                params = kinds.get(kind).Params
                fields = [
                    (
                        f.name.replace("_", "-"),
                        _default(f),
                        "bool" if declared(params)[f.name] == Declared(BOOL, False) else "text",
                    )
                    for f in dc_fields(params)
                    if f.name != "numbers"
                ]
                fixed = "seed=1"
            else:
                fixed_settings = {k.replace("_", "-"): pr.setting_text(v) for k, v in settings.items()}
                fields = list(fixed_settings.items())
                fixed = urlencode([("seed", 1), *fixed_settings.items()])
            rows.append((kind, about, fields, fixed))
        focus = [(c, mistake_words(c)) for c in scope.focus]
        return html(
            request,
            "home.html.j2",
            title=title,
            kinds=rows,
            fixed_scope=scope.sections is not None,
            focus=focus,
            all_mistakes=all_mistakes,
        )

    async def problem_get(request: Request):
        kind = request.path_params["kind"]
        params = {k: v for k, v in request.query_params.multi_items() if v != ""}
        try:
            ask = _in_scope(pr.ask_from(kind, params))
            body = await run_in_threadpool(problem_page, base_of(request), ask, {}, set())
        except pr.RequestError as exc:
            return error_page(request, str(exc), 404 if "unknown kind" in str(exc) else 400)
        return HTMLResponse(body)

    async def problem_post(request: Request):
        kind = request.path_params["kind"]
        params = {k: v for k, v in request.query_params.multi_items() if v != ""}
        form = await _form(request)
        if form is None:
            return error_page(request, "the form could not be read")
        try:
            ask = _in_scope(pr.ask_from(kind, params))
            body = await run_in_threadpool(problem_page, base_of(request), ask, *_answered(form), _one(form, "decimal"))
        except pr.RequestError as exc:
            return error_page(request, str(exc))
        return HTMLResponse(body)

    def problem_page(base: str, ask: pr.Ask, cells: dict, reveal: set, decimal: str = "") -> str:
        """The problem's page; with ``cells``, marked (``decimal``: the separator the
        student chose on the page, "point" or "comma")."""
        decimal = decimal or "point"
        doc = pr.document(ask)
        p = doc.problems[0]
        steps = p.printed_steps(False)
        values: dict[str, str] = {}
        verdicts: dict[str, dict] = {}
        progress = {s.name: f"0 of {s.shape[0] * s.shape[1]} cells right so far." for s in steps}
        named: dict[str, list[str]] = {}
        if cells:
            for step, got in cells.items():
                for (r, c), x in got.items():
                    values[cell_id(step, r, c)] = str(x)
            marks = pr.mark(ask, cells, decimal)
            for v in marks["verdicts"]:
                verdicts[cell_id(v["step"], v["row"], v["col"])] = v
            for sp in marks["steps"]:
                progress[sp["name"]] = progress_text(sp)
            named = pr.named_by_step(marks)
        revealed = {s.name for s in p.steps} | {"*"} if "*" in reveal else set(reveal)
        own = ask.table is not None
        hidden = [("kind", ask.kind), ("table", ask.table)] if own else []
        page = f"{base}p/{ask.kind}?"
        return renderer.page(
            "problem.html.j2",
            base=base,
            doc=doc,
            p=p,
            steps=steps,
            own=own,
            values=values,
            verdicts=verdicts,
            progress=progress,
            named=named,
            revealed=revealed,
            hidden=hidden,
            decimal=decimal,
            hint=typing_hint(renderer.kind_words(ask.kind), p, doc.numbers),
            problem_fields=json.dumps(ask.fields()),
            action=f"{base}own" if own else page + ask.query(),
            here=page + ask.query(),
            next_url=page + replace(ask, seed=min(ask.seed + 1, pr.MAX_SEED), words=None).query(),
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
        out["named"] = pr.named_by_step(out)  # step -> the codes to say under its grid
        out["words"] = {code: str(renderer.mistake_html(code)) for code in out["hints"]}
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
    def own_page(request: Request, error: str = "", kind: str = kinds.DEFAULT[0], table: str = "", status: int = 200):
        allowed = [k for k, _, _ in scope.kinds()]
        listed = [(k, s) for k, (_, s) in kinds.KINDS.items() if k in allowed and kinds.get(k).INPUTS]
        inputs = [(k, kinds.get(k).INPUTS) for k, _ in listed]
        return html(
            request,
            "own.html.j2",
            status,
            error=for_page(error),
            kind=kind,
            table=table or EXAMPLE,
            kinds=listed,
            inputs=inputs,
        )

    async def own_get(request: Request):
        return own_page(request)

    async def own_post(request: Request):
        form = await _form(request)
        if form is None:
            return own_page(request, "the form could not be read", status=400)
        kind, table = _one(form, "kind"), _one(form, "table")
        try:
            ask = _in_scope(pr.own_ask(kind, table))
            cells, reveal_ = _answered(form)
            if _one(form, "go") == "solution":
                reveal_ = {"*"}
            body = await run_in_threadpool(problem_page, base_of(request), ask, cells, reveal_, _one(form, "decimal"))
        except pr.RequestError as exc:
            return own_page(request, str(exc), kind, table, status=400)
        return HTMLResponse(body)

    # ---------------------------------------------------------------- mistakes
    async def mistakes_page(request: Request):
        codes_text = request.query_params.get("codes", "")
        try:
            codes = pr.check_focus(codes_text)
        except pr.RequestError as exc:
            return catalogue(request, str(exc), 400)
        if not codes:
            return await run_in_threadpool(catalogue, request)
        ask = await run_in_threadpool(exercise, codes)
        if ask is None:
            return catalogue(request, "no problem here shows " + ", ".join(codes), 404)
        return RedirectResponse(f"{base_of(request)}p/{ask.kind}?{ask.query()}", status_code=303)

    def catalogue(request: Request, message: str = "", status: int = 200) -> HTMLResponse:
        rows = [
            (m.code, m.typeset, len(scope.exercising(m.code)))
            for m in mistakes.CATALOGUE.values()
            if m.code not in mistakes.WITHOUT_RULE
        ]
        return html(
            request, "mistakes.html.j2", status, message=for_page(message), catalogue=rows, all_mistakes=all_mistakes
        )

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
            return plain_response(404, "not found")
        body, media = static[name]
        return Response(body, media_type=media, headers={"cache-control": "no-cache"})

    async def favicon(request: Request):
        return Response(status_code=204)

    async def not_found(request: Request, exc):
        return error_page(request, "no such page", 404)

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
    return Guard(Starlette(routes=routes, exception_handlers={404: not_found}), limits)


EXAMPLE = """# Scaled dot-product attention from Q, K and V (the kind: attention)
Q = [[1, 0], [0, 1]]
K = [[1, 2], [0, 1]]
V = [[1, 0], [0, 1]]
tokens = ["Je", "suis"]
"""


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
    return JSONResponse({"error": for_page(message)}, status_code=status)


def plain_response(status: int, text: str) -> Response:
    return Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8")
