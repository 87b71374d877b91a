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
* :mod:`.app` -- the Starlette app: routes, request limits, security headers;
* ``static/`` -- the page's one script and its styles, served by the app.

Stateless: everything needed to re-create a problem is in the request (the
address for a generated problem; the pasted text for own numbers).  The
browser keeps, in its localStorage only, the named mistakes a student made.

Library use::

    from worksheet.practice import create_app, serve
    app = create_app()                       # an ASGI app (Starlette)
    serve(port=8000, open_browser=False)     # uvicorn, one process, until Ctrl-C
"""

from __future__ import annotations

from .app import create_app
from .exercises import Scope, check_focus

__all__ = ["create_app", "serve", "Scope", "check_focus"]


def serve(
    host: str = "127.0.0.1", port: int = 8000, *, open_browser: bool = True, scope: Scope | None = None, announce=print
) -> None:
    """Serve the practice pages with uvicorn (one process) until interrupted;
    ``announce`` gets the address once the socket is bound."""
    import socket

    import uvicorn

    app = create_app(scope)
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
