"""``worksheet practice``: a local web app where a student fills in a
problem's steps and each cell is checked as it is left, by the same code as
``worksheet check`` (error carried forward, named mistakes).

The top layer, beside :mod:`worksheet.api` and :mod:`worksheet.cli`: it
may import anything below it, and nothing below imports it.  The parts:

* :mod:`.exercises` -- problems from a request (the same as ``worksheet
  build``), a lecturer's scope (``--spec``), own numbers, verdicts
  (:func:`worksheet.check.mark_cells`), problems that exercise a mistake;
* :mod:`.pages` -- the HTML: the HTML renderer's MathML over the templates
  in ``templates/practice/``, and the answer cells;
* :mod:`.words` -- what the pages say to a student (verdicts, typing hints,
  the library's messages without the command line);
* :mod:`.app` -- the Starlette app: routes, every address relative;
* :mod:`.limits` -- request limits and security headers (ASGI middleware);
* ``static/`` -- the page's one script and its styles, served by the app.

For a class (many workers, behind a proxy: docs/practice-deploy.md), the
factory :func:`app_from_env` reads its settings from the environment::

    WORKSHEET_PRACTICE_SPEC=midterm.toml WORKSHEET_PRACTICE_FOCUS=no-scaling \
        uvicorn --factory worksheet.practice:app_from_env --workers 4

Stateless: everything needed to re-create a problem is in the request (the
address for a generated problem; the pasted text for own numbers).  The
browser keeps, in its localStorage only, the named mistakes a student made.

Library use::

    from worksheet.practice import create_app, serve
    app = create_app()                       # an ASGI app (Starlette)
    serve(port=8000, open_browser=False)     # uvicorn, one process, until Ctrl-C
"""

from __future__ import annotations

import os
from typing import Mapping

from .app import create_app
from .exercises import Scope, check_focus
from .limits import Limits

__all__ = ["create_app", "serve", "Scope", "check_focus", "Limits", "app_from_env", "config_from_env", "ENVIRONMENT"]

ENVIRONMENT = {  # variable -> what it sets (docs/practice-deploy.md lists them too)
    "WORKSHEET_PRACTICE_SPEC": "a lecturer's spec file (TOML): serve only its problems (as --spec)",
    "WORKSHEET_PRACTICE_FOCUS": "mistake codes to suggest, comma-separated (as --focus)",
    "WORKSHEET_PRACTICE_MAX_BODY": "bytes of one request body, default 1100000 (413 past it)",
    "WORKSHEET_PRACTICE_MAX_QUERY": "characters of one query string, default 4096 (414 past it)",
}


def config_from_env(environ: Mapping[str, str]) -> tuple[Scope, Limits]:
    """The scope and limits the ``WORKSHEET_PRACTICE_*`` variables of ``environ``
    ask for; a bad value is a :class:`~worksheet.policy.errors.WorksheetError`
    naming the variable."""
    from ..policy.errors import ParamError, WorksheetError

    unknown = sorted(k for k in environ if k.startswith("WORKSHEET_PRACTICE_") and k not in ENVIRONMENT)
    if unknown:
        raise ParamError(f"{unknown[0]}: unknown setting; the practice app reads {', '.join(ENVIRONMENT)}")
    try:
        focus = check_focus(environ.get("WORKSHEET_PRACTICE_FOCUS", ""))
    except WorksheetError as exc:
        raise ParamError(f"WORKSHEET_PRACTICE_FOCUS: {exc}") from None
    spec = environ.get("WORKSHEET_PRACTICE_SPEC", "")
    try:
        scope = Scope.from_spec(spec, focus) if spec else Scope(focus=focus)
    except WorksheetError as exc:
        raise ParamError(f"WORKSHEET_PRACTICE_SPEC: {exc}") from None
    sizes = {}
    for name, var in (("max_body", "WORKSHEET_PRACTICE_MAX_BODY"), ("max_query", "WORKSHEET_PRACTICE_MAX_QUERY")):
        text = environ.get(var, "").strip()
        if text:
            if not text.isdigit() or not 1 <= int(text[:12]) <= 100_000_000:
                raise ParamError(f"{var} must be a whole number from 1 to 100000000, not {text[:40]!r}")
            sizes[name] = int(text)
    return scope, Limits(**sizes)


def app_from_env():
    """The app as ``uvicorn --factory worksheet.practice:app_from_env`` (or
    gunicorn's uvicorn worker) makes it in each worker, configured by the
    ``WORKSHEET_PRACTICE_*`` environment variables (:data:`ENVIRONMENT`).  A bad
    value stops the server with one line on stderr (exit status 2)."""
    import sys

    from ..policy.errors import WorksheetError

    try:
        scope, limits = config_from_env(os.environ)
    except WorksheetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return create_app(scope, limits)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    open_browser: bool = True,
    scope: Scope | None = None,
    limits: Limits | None = None,
    announce=print,
) -> None:
    """Serve the practice pages with uvicorn (one process) until interrupted;
    ``announce`` gets the address once the socket is bound.  For a class,
    run several workers instead (:func:`app_from_env`, docs/practice-deploy.md)."""
    import socket

    import uvicorn

    app = create_app(scope, limits)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{bound}/"
    announce(f"worksheet practice: {url}  (Ctrl-C stops it)")
    if host in ("0.0.0.0", "::"):
        announce(
            "listening on every network interface: students on this network can open it at this "
            f"machine's address, port {bound}"
        )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        server_header=False,
        limit_concurrency=256,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16384,
    )
    server = uvicorn.Server(config)
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    server.run(sockets=[sock])
