"""The practice app's guard at the door (ASGI middleware): the size of a
request's body and query string, and the security headers of every response.

A body is read here, in full, before the app sees it, counting the bytes as
they arrive whatever ``Content-Length`` says (a chunked or streamed body has
none): past the limit the answer is 413 and the app never starts, so no
response is half sent and the server logs no traceback.  The body the app
then reads is the one read here.

Limits are arguments (:class:`Limits`), set by :func:`worksheet.practice.create_app`
or the environment (:func:`worksheet.practice.app_from_env`).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_BODY = 1_100_000  # bytes of one request body: own numbers are at most 1 MB (worksheet.policy.limits)
MAX_QUERY = 4096  # characters of a query string

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


@dataclass(frozen=True)
class Limits:
    """What one request may be."""

    max_body: int = MAX_BODY  # bytes of a request body (413 past it)
    max_query: int = MAX_QUERY  # characters of a query string (414 past it)

    def __post_init__(self):
        for name in ("max_body", "max_query"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 100_000_000:
                raise ValueError(f"{name} must be a whole number from 1 to 100000000, not {v!r}")


class Guard:
    """ASGI middleware: :class:`Limits` on every HTTP request, and the security headers."""

    def __init__(self, app, limits: Limits | None = None):
        self.app = app
        self.limits = limits or Limits()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        limit = self.limits.max_body
        if len(scope.get("query_string", b"")) > self.limits.max_query:
            return await plain(414, "query string too long", scope, receive, send_with_headers)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return await plain(413, f"request body larger than {limit} bytes", scope, receive, send_with_headers)
        body, state = await _read_body(receive, limit)
        if state == "gone":
            return None
        if state == "large":
            return await plain(413, f"request body larger than {limit} bytes", scope, receive, send_with_headers)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # a disconnect, later

        await self.app(scope, replay, send_with_headers)


async def _read_body(receive, limit: int) -> tuple[bytes, str]:
    """The whole body (``"ok"``), or ``"large"`` past ``limit`` bytes (the rest,
    up to as much again, is read and dropped so that the client can read the
    413), or ``"gone"`` when the client left."""
    chunks, seen = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", "gone"
        part = message.get("body", b"")
        seen += len(part)
        if seen > limit:
            drained = 0
            while message.get("more_body", False) and drained <= limit:
                message = await receive()
                if message["type"] == "http.disconnect":
                    break
                drained += len(message.get("body", b""))
            return b"", "large"
        chunks.append(part)
        if not message.get("more_body", False):
            return b"".join(chunks), "ok"


async def plain(status: int, text: str, scope, receive, send) -> None:
    """A short plain-text answer (the status says what went wrong)."""
    from starlette.responses import Response

    await Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8")(scope, receive, send)
