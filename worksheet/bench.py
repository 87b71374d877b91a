"""Benchmark: ``python -m worksheet.bench`` (not a test; takes a few minutes).

Prints, as Markdown ready for BENCHMARKS.md:

* the machine (cores, CPU model, Python);
* start-up time of ``worksheet --help`` and ``worksheet list``;
* for every kind at its default size: problems per second for
  generate + solve, and for rendering each text format (md, tex, json, html);
* Markdown and HTML end to end (generate, solve, render) side by side, per
  kind (each in a fresh process), in CPU milliseconds per problem, and their
  ratio; and ``worksheet build attention --variants 300 --jobs 1`` to md and
  to html;
* attention end to end: ``worksheet build attention --variants N --format
  md,tex,json`` in a fresh process, with ``--jobs 1`` and on every core;
* wall time of a 300-variant, 5-problem exam to md + tex + json, and to one
  combined PDF (sheet and key).

Targets (2 cores): start-up < 0.3 s; >= 200 attention problems/s end to
end; HTML end to end within 1.5x of Markdown for every kind; the exam to
md+tex+json < 30 s, to PDF < 90 s.

Options: ``--quick`` (fewer repetitions, a 60-variant exam), ``--no-pdf``,
``--variants N``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEXT_FORMATS = ("md", "tex", "json", "html")
EXAM = ("attention", "attention:causal=true", "self-attention-basic", "cross-attention", "next-token")


def machine() -> dict[str, str]:
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cores (nproc)": str(os.cpu_count()),
        "CPU": model,
        "Python": platform.python_version(),
        "OS": platform.platform(terse=True),
    }


def _command() -> list[str]:
    script = Path(sys.executable).with_name("worksheet")
    return [str(script)] if script.exists() else [sys.executable, "-m", "worksheet.cli"]


def startup(repeat: int) -> dict[str, tuple[float, float]]:
    """(best, median) seconds of a fresh process, and of bare Python for scale."""
    out = {}
    for label, cmd in (
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("worksheet --help", _command() + ["--help"]),
        ("worksheet list", _command() + ["list"]),
    ):
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - t)
        out[label] = (min(times), statistics.median(times))
    return out


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def per_kind(n: int) -> list[tuple[str, dict[str, float]]]:
    """Problems/s per kind: generate+solve, then each format (fresh seeds, one problem per document)."""
    from . import kinds
    from .build import build_document, render_document
    from .policy.errors import UnknownKindError

    rows = []
    for name in kinds.names():
        try:
            kinds.get(name)
        except UnknownKindError:
            continue
        build_document([name], seed=10_000)  # imports, warm caches of code, not of values
        t = time.perf_counter()
        docs = [build_document([name], seed=s) for s in range(n)]
        row = {"generate+solve": _rate(n, time.perf_counter() - t)}
        for fmt in TEXT_FORMATS:
            render_document(build_document([name], seed=10_001), [fmt])
            fresh = [build_document([name], seed=s) for s in range(20_000, 20_000 + n)]
            t = time.perf_counter()
            for d in fresh:
                render_document(d, [fmt])
            row[fmt] = _rate(n, time.perf_counter() - t)
        del docs
        rows.append((name, row))
    return rows


def md_vs_html(n: int) -> list[tuple[str, float, float, float]]:
    """Per kind, CPU milliseconds per problem end to end (generate, solve,
    render) to Markdown and to HTML, measured side by side: each kind in a
    fresh process (as a build starts; the caches and heap of other kinds do
    not weigh on it), the two formats alternating problem by problem (fresh
    seeds each, so neither finds the other's cached text), and CPU time (not
    wall time) summed, so load from other processes counts for neither.
    Returns (kind, generate+solve ms, md end to end ms, html end to end ms)."""
    import json

    from . import kinds
    from .policy.errors import UnknownKindError

    rows = []
    for name in kinds.names():
        try:
            kinds.get(name)
        except UnknownKindError:
            continue
        out = subprocess.run(
            [sys.executable, "-m", "worksheet.bench", "--pair", name, "--pair-n", str(n)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rows.append((name, *json.loads(out.strip().splitlines()[-1])))
    return rows


def _pair(name: str, n: int) -> tuple[float, float, float]:
    """One kind's (generate+solve, md, html) CPU ms per problem, in this process (see md_vs_html)."""
    from .build import build_document, render_document

    clock = time.process_time
    for fmt in ("md", "html"):  # imports and templates, not values
        render_document(build_document([name], seed=10_000), [fmt])
    spent = {"build": 0.0, "md": 0.0, "html": 0.0}
    for i in range(n):
        for fmt, seed in (("md", 40_000 + 2 * i), ("html", 40_001 + 2 * i)):
            t = clock()
            doc = build_document([name], seed=seed)
            u = clock()
            render_document(doc, [fmt])
            spent["build"] += u - t
            spent[fmt] += clock() - u
    build = spent["build"] / (2 * n)
    return 1000 * build, 1000 * (build + spent["md"] / n), 1000 * (build + spent["html"] / n)


def cli_md_vs_html(variants: int) -> dict[str, float]:
    """Wall seconds of ``worksheet build attention --variants N --jobs 1`` to
    md and to html, each a fresh process (start-up and writing included)."""
    out = {}
    for fmt in ("md", "html"):
        with tempfile.TemporaryDirectory() as folder:
            cmd = _command() + [
                "build",
                "attention",
                "--variants",
                str(variants),
                "--seed",
                "2026",
                "--jobs",
                "1",
                "--format",
                fmt,
                "-o",
                folder,
            ]
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            out[fmt] = time.perf_counter() - t
    return out


HTML_RATIO_TARGET = 1.5  # HTML end to end within 1.5x of Markdown, every kind


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def attention_end_to_end(n: int) -> dict[str, float]:
    """Attention problems/s end to end: ``worksheet build attention --variants n
    --format md,tex,json`` in a fresh process (start-up, generate, solve,
    render, write), in one process (``--jobs 1``) and on every core."""
    out = {}
    for run, jobs in enumerate((1, _cores())):
        with tempfile.TemporaryDirectory() as folder:
            cmd = _command() + [
                "build",
                "attention",
                "--variants",
                str(n),
                "--seed",
                str(2026 + run),
                "--jobs",
                str(jobs),
                "--format",
                "md,tex,json",
                "-o",
                folder,
            ]
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            out[f"--jobs {jobs}"] = _rate(n, time.perf_counter() - t)
    return out


def exam(variants: int, formats: list[str], jobs: int | None = None, seed: int = 2026) -> float:
    """Wall seconds to build and write a ``variants`` x 5-problem exam in ``formats``
    (``jobs`` processes; default: one per core, as the command does)."""
    from .build import render_variants, write_rendered

    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        outlines, rendered = render_variants(
            EXAM,
            variants,
            formats,
            name="exam",
            seed=seed,
            jobs=jobs,
            title="Benchmark exam",
            course="CS 480",
            date="Week 7",
        )
        write_rendered(outlines, rendered, formats, out, name="exam")
        return time.perf_counter() - t


def html_table(n: int) -> None:
    """Print the Markdown/HTML side-by-side table (see md_vs_html)."""
    print(f"\n## Markdown and HTML end to end, side by side ({n} problems each per kind)\n")
    print(
        "(CPU ms per problem: generate + solve + render; the formats alternate problem by problem; "
        f"target: HTML within {HTML_RATIO_TARGET}x of Markdown)\n"
    )
    print("| kind | generate+solve ms | md ms | html ms | html / md |\n|---|---:|---:|---:|---:|")
    worst = 0.0
    for name, build, md, html in md_vs_html(n):
        worst = max(worst, html / md)
        print(f"| {name} | {build:.2f} | {md:.2f} | {html:.2f} | {html / md:.2f} |")
    print(f"\nWorst ratio: {worst:.2f} ({'met' if worst <= HTML_RATIO_TARGET else 'NOT met'})")
    cli = cli_md_vs_html(300)
    print(
        f"\n`worksheet build attention --variants 300 --jobs 1` (wall, fresh process): "
        f"md {cli['md']:.2f} s, html {cli['html']:.2f} s, html / md {cli['html'] / cli['md']:.2f}"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m worksheet.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and a 60-variant exam")
    ap.add_argument("--no-pdf", action="store_true", help="skip the PDF exam (no LaTeX needed)")
    ap.add_argument("--variants", type=int, default=None, help="variants of the exam (default 300)")
    ap.add_argument("--html-only", action="store_true", help="only the Markdown/HTML side-by-side table")
    ap.add_argument("--pair", metavar="KIND", help=argparse.SUPPRESS)  # one kind of that table, as JSON
    ap.add_argument("--pair-n", type=int, default=100, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.pair:
        import json

        print(json.dumps(_pair(args.pair, args.pair_n)))
        return None
    n = 30 if args.quick else 100
    variants = args.variants or (60 if args.quick else 300)

    print("## Machine\n")
    for k, v in machine().items():
        print(f"- {k}: {v}")
    if args.html_only:
        return html_table(n)

    print("\n## Start-up (fresh process; best / median of runs)\n")
    print("| command | best s | median s |\n|---|---:|---:|")
    for label, (best, median) in startup(5 if args.quick else 15).items():
        print(f"| `{label}` | {best:.3f} | {median:.3f} |")

    print(f"\n## Problems per second, default size, {n} fresh seeds each\n")
    print("| kind | generate+solve | " + " | ".join(TEXT_FORMATS) + " |")
    print("|---|---:|" + "---:|" * len(TEXT_FORMATS))
    for name, row in per_kind(n):
        print(f"| {name} | " + " | ".join(f"{row[k]:.0f}" for k in ("generate+solve", *TEXT_FORMATS)) + " |")

    html_table(n)

    count = 20 * n
    print(f"\n## Attention end to end: `worksheet build attention --variants {count} --format md,tex,json`\n")
    print("(a fresh process each: start-up, generate, solve, render, write)\n")
    for label, rate in attention_end_to_end(count).items():
        print(f"- {label}: {rate:.0f} problems/s ({count / rate:.1f} s)")

    print(f"\n## Exam: {variants} variants x {len(EXAM)} problems ({', '.join(EXAM)})\n")
    print(f"- to md + tex + json, {_cores()} processes (the default): {exam(variants, ['md', 'tex', 'json']):.1f} s")
    print(
        f"- to md + tex + json, 1 process (--jobs 1): {exam(variants, ['md', 'tex', 'json'], jobs=1, seed=2027):.1f} s"
    )
    if not args.no_pdf:
        if shutil.which("pdflatex") is None:
            print("- to one combined PDF: skipped (no LaTeX installed)")
        else:
            print(f"- to one combined PDF (sheet + key): {exam(variants, ['pdf'], seed=2028):.1f} s")


if __name__ == "__main__":
    main()
