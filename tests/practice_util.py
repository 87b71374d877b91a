"""Helpers of the practice tests: the app served by uvicorn on 127.0.0.1 (a
free port, in a thread, always stopped) and headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright; nothing downloads a browser).

Browser tests skip when Chromium or Playwright is missing, and fail instead
under WORKSHEET_REQUIRE_CHROMIUM=1 (as .ci/run sets)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time

import pytest

REQUIRE = os.environ.get("WORKSHEET_REQUIRE_CHROMIUM") == "1"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def missing(what: str):
    if REQUIRE:
        pytest.fail(f"{what} is missing but WORKSHEET_REQUIRE_CHROMIUM=1")
    pytest.skip(f"{what} is not installed")


def chromium_path() -> str:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if candidate and os.path.exists(candidate):
            return candidate
    missing("Chromium")


@contextlib.contextmanager
def served(scope=None, app=None):
    """The practice app (or ``app``) on 127.0.0.1 at a free port, in a thread: yields its base URL."""
    import uvicorn

    from worksheet.practice import create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app or create_app(scope), log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(3000):  # up to about a minute, in counted waits (no test reads the clock)
            if server.started or not thread.is_alive():
                break
            time.sleep(0.02)
        if not server.started:
            raise RuntimeError("the practice server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def browser_page():
    """A Playwright page in headless Chromium with a fresh profile."""
    exe = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright for Python")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=exe, headless=True, args=FLAGS[1:], viewport={"width": 1100, "height": 900}
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            yield page
        finally:
            context.close()
