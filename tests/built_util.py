"""Sheets built once per test process and read by many tests.

Several modules check different properties of the same one-problem sheets
(``build_document([kind], seed=seed)``): the student with a pencil, the worked
lines, the tables, the planted mistakes.  A build is deterministic (the same
seed gives the same bytes), so building it again for each property checks
nothing more; a find-the-mistake block costs about half a second a build.
:func:`document` builds a sheet once per process.  A module whose tests share
sheets parametrizes its kinds with ``scope="module"``: pytest then orders the
tests of one kind one after the other, and pytest-xdist's load scheduling
sends runs of consecutive tests to one worker, which built them.  (pytest-xdist's
``--dist loadgroup`` would say it directly, but it does not group under pytest 9:
it renames node ids by an attribute pytest 9 no longer reads.)

The documents are shared: a test reads them and never changes them (a test
that changes a problem builds its own with ``build_document``).
"""

from __future__ import annotations

import functools

from worksheet.build import build_document, render_document


def document(kind: str, seed: int, numbers: str = "hand"):
    """``build_document([kind], seed=seed)``; calculator numbers when asked (hand is the default)."""
    return _document(kind, seed, numbers)


@functools.cache
def _document(kind: str, seed: int, numbers: str):  # one key however the caller spells its arguments
    return build_document([kind], seed=seed, options={} if numbers == "hand" else {"numbers": numbers})


@functools.cache
def rendered(kind: str, seed: int, formats: tuple[str, ...], name: str) -> dict[str, str]:
    """The files of :func:`document` in ``formats``, named ``name``."""
    return render_document(document(kind, seed), list(formats), name=name)
