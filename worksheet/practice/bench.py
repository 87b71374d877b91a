"""Benchmark of ``worksheet practice``: ``python -m worksheet.practice.bench``
(a script, not a test: no test depends on speed).  Prints Markdown for
BENCHMARKS.md:

* server time (in process, through the app, no network) of a problem page
  and of checking one cell, for default sizes: a new seed each time (the
  problem is generated and solved) and a seed already served;
* a bounded load test on loopback only: ``uvicorn --factory
  worksheet.practice:app_from_env --workers 2`` (a subprocess on 127.0.0.1 at
  a free port, as docs/practice-deploy.md runs it) and ``--students``
  simulated students (default 300, at most 400) for ``--seconds`` (default
  60, at most 300).  The students arrive over the first few seconds; each
  opens a problem page (a default-size problem of a random kind and seed),
  then fills its cells one at a time, each followed by ``POST /check`` of
  every cell so far, now and then ``POST /reveal`` of a step, thinking
  ``--think`` x (0.5..1.5) s between actions (default 5 s: a student reading
  the sheet and writing a 4-decimal number; ``--think 0``: a saturation
  test), and after its last cell opens a new problem.  p50 and p95 latency
  and the errors (any status but 200, or a failed connection) per request
  type, and the server's tracebacks.

The students run in this process (asyncio + httpx), on the same machine as
the server: on 2 cores they take CPU from it, so the figures are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import subprocess
import sys
import time

KINDS = (
    "attention",
    "self-attention-basic",
    "softmax-scaling",
    "layer-norm",
    "feed-forward",
    "multi-head-attention",
    "next-token",
    "positional-encoding",
)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def server_time(n: int = 30) -> list[str]:
    import warnings

    warnings.filterwarnings("ignore", message="Using `httpx`")  # starlette's note on its TestClient
    from starlette.testclient import TestClient

    from . import create_app

    client = TestClient(create_app())
    rows = [
        "| request, default size | new seed: p50 ms | p95 ms | seed served before: p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in ("attention", "multi-head-attention"):
        page_cold, page_warm, check_cold, check_warm = [], [], [], []
        client.get(f"/p/{kind}?seed=1")  # imports, templates
        for seed in range(1000, 1000 + n):
            t = time.perf_counter()
            r = client.get(f"/p/{kind}?seed={seed}")
            page_cold.append(time.perf_counter() - t)
            assert r.status_code == 200
            t = time.perf_counter()
            client.get(f"/p/{kind}?seed={seed}")
            page_warm.append(time.perf_counter() - t)
        for seed in range(2000, 2000 + n):
            step = "weights" if kind == "attention" else "weights_1"
            body = {"kind": kind, "seed": seed, "numbers": "hand", "settings": {}, "cells": {step: {"1,1": "0.5"}}}
            t = time.perf_counter()
            r = client.post("/check", json=body)
            check_cold.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text
            t = time.perf_counter()
            client.post("/check", json=body)
            check_warm.append(time.perf_counter() - t)
        ms = lambda xs, q: f"{1000 * pct(xs, q):.1f}"  # noqa: E731
        rows.append(
            f"| problem page, {kind} | {ms(page_cold, 0.5)} | {ms(page_cold, 0.95)} | "
            f"{ms(page_warm, 0.5)} | {ms(page_warm, 0.95)} |"
        )
        rows.append(
            f"| check one cell, {kind} | {ms(check_cold, 0.5)} | {ms(check_cold, 0.95)} | "
            f"{ms(check_warm, 0.5)} | {ms(check_warm, 0.95)} |"
        )
    return rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def student(client, base: str, until: float, think: float, rng: random.Random, log: dict) -> None:
    """One student: open a problem, then fill its cells one at a time, each
    followed by a check of every cell so far, thinking between actions;
    sometimes ask for a step's worked line; then a new problem."""
    import re

    async def timed(kind: str, coro):
        t = time.perf_counter()
        try:
            r = await coro
            ok = r.status_code == 200
        except Exception:  # noqa: BLE001 - a failed connection counts as an error
            r, ok = None, False
        log.setdefault(kind, []).append(time.perf_counter() - t)
        if not ok:
            log.setdefault("errors", []).append(kind)
        return r

    async def pause():
        if think:
            await asyncio.sleep(think * (0.5 + rng.random()))

    await asyncio.sleep(rng.random() * 2 * think)  # a class arrives over a while, not in one instant
    while time.monotonic() < until:
        kind, seed = rng.choice(KINDS), rng.randrange(1, 100_000)
        r = await timed("page", client.get(f"{base}/p/{kind}?seed={seed}"))
        if r is None or r.status_code != 200:
            await pause()
            continue
        cells = re.findall(r'data-step="([^"]+)" data-row="(\d+)" data-col="(\d+)"', r.text)[:12]
        given: dict = {}
        problem = {"kind": kind, "seed": seed, "numbers": "hand", "settings": {}}
        for k, (step, row, col) in enumerate(cells):
            if time.monotonic() >= until:
                return
            await pause()
            given.setdefault(step, {})[f"{row},{col}"] = str(rng.choice([0, 1, -1, 2, "0.5", "0.25", "1/3", "x"]))
            await timed("check", client.post(f"{base}/check", json={**problem, "cells": given}))
            if k % 6 == 5:
                await timed("reveal", client.post(f"{base}/reveal", json={**problem, "step": step}))
        await pause()


async def load(base: str, students: int, seconds: float, think: float) -> dict:
    import httpx

    log: dict = {}
    limits = httpx.Limits(max_connections=students, max_keepalive_connections=students)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        until = time.monotonic() + seconds
        await asyncio.gather(*(student(client, base, until, think, random.Random(k), log) for k in range(students)))
    return log


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its children (uvicorn's
    workers), from /proc (Linux); 0 where /proc cannot be read."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0.0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(name) == pid or int(fields[1]) == pid:  # fields[1]: the parent's pid
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


# long: a load-test script: set-up, the simulated students, the report, in order
def load_test(students: int, seconds: float, think: float, workers: int) -> list[str]:
    """``students`` simulated students against ``uvicorn --factory
    worksheet.practice:app_from_env --workers N`` on 127.0.0.1 (a subprocess,
    always stopped); the server's stderr is kept and its tracebacks counted."""
    import os
    import tempfile

    port = free_port()
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "worksheet.practice:app_from_env"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), "--no-access-log"]
    cmd += ["--log-level", "warning", "--backlog", "2048", "--limit-concurrency", "1000"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKSHEET_PRACTICE_")}
    with tempfile.TemporaryFile() as err:
        server = subprocess.Popen(cmd, stderr=err, env=env)
        try:
            import httpx

            base = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    httpx.get(base + "/", timeout=2)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            for _ in range(workers):  # first use of each kind (imports), as a warm server has done
                for kind in KINDS:
                    httpx.get(f"{base}/p/{kind}?seed=1", timeout=60)
            load_before, cpu_before, own_before = os.getloadavg()[0], server_cpu(server.pid), time.process_time()
            t = time.monotonic()
            log = asyncio.run(load(base, students, seconds, think))
            wall = time.monotonic() - t
            cpu, own = server_cpu(server.pid) - cpu_before, time.process_time() - own_before
            load_after = os.getloadavg()[0]
        finally:
            server.terminate()
            server.wait(timeout=30)
        err.seek(0)
        tracebacks = err.read().decode(errors="replace").count("Traceback")
    errors = log.pop("errors", [])
    total = sum(len(v) for v in log.values())
    rows = [
        f"{students} simulated students, {seconds:.0f} s, think time {think:g} s x (0.5..1.5) between actions, "
        f"uvicorn with {workers} workers on 127.0.0.1 (the students in one more process on the same machine); "
        f"{total} requests in {wall:.1f} s ({total / wall:.1f}/s), {len(errors)} errors, "
        f"{tracebacks} server tracebacks.",
        "",
        f"CPU time meanwhile: the server's workers {cpu:.1f} s ({1000 * cpu / max(total, 1):.1f} ms per request, "
        f"{cpu / wall:.2f} of a core on average), the students' process {own:.1f} s; the machine's load "
        f"average (1 min) {load_before:.1f} before and {load_after:.1f} after, on {os.cpu_count()} cores.",
        "",
        "| request | count | errors | p50 ms | p95 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    names = {"page": "problem page (GET)", "check": "POST check", "reveal": "POST reveal"}
    for kind, name in names.items():
        xs = log.get(kind, [])
        rows.append(
            f"| {name} | {len(xs)} | {errors.count(kind)} | {1000 * pct(xs, 0.5):.1f} | "
            f"{1000 * pct(xs, 0.95):.1f} | {1000 * max(xs, default=0):.1f} |"
        )
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m worksheet.practice.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--think", type=float, default=5.0, help="mean pause between a student's actions, s")
    ap.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    ap.add_argument("--no-load", action="store_true", help="only the in-process server times")
    ap.add_argument("--no-server-time", action="store_true", help="only the load test")
    args = ap.parse_args(argv)
    if not 1 <= args.students <= 400 or not 1 <= args.seconds <= 300 or not 1 <= args.workers <= 8:
        ap.error("at most 400 students, 300 s and 8 workers: a bounded test")
    if not 0 <= args.think <= 60:
        ap.error("--think is 0 to 60 s")
    from ..bench import machine

    m = machine()
    print(f"Machine: {m['cores (nproc)']} cores (nproc), {m['CPU']}, Python {m['Python']}\n")
    if not args.no_server_time:
        print("\n".join(server_time()))
    if not args.no_load:
        print()
        print("\n".join(load_test(args.students, args.seconds, args.think, args.workers)))


if __name__ == "__main__":
    main()
