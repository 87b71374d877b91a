"""Renderers: one module per output format over a shared base.

A renderer turns a :class:`~worksheet.solution.document.Document` into text; it never
looks at which kind a problem is, and it never recomputes anything.
``FORMATS`` maps a format name to ``module:Class`` so that importing a
renderer (and Jinja2) happens only when that format is asked for; the
module is one of this package's, or a dotted name of one outside it
(``mycourse.formats:Csv``).  Every format follows the Format protocol
(:mod:`.artefacts`): the build and the CLI dispatch on it, never on a name,
so adding a format is one module and one line here.

This layer may import policy, exact, solution, parse, steps and kinds (the
notebook display states a problem's conventions), and :mod:`worksheet.check`
beside it (Moodle's tolerances are the checker's).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

from ..policy.errors import ParamError

FORMATS: dict[str, str] = {
    "md": "markdown:MarkdownRenderer",
    "tex": "latex:LatexRenderer",
    "json": "json:JsonRenderer",
    "pdf": "pdf:PdfRenderer",
    "html": "html:HtmlRenderer",
    "moodle": "moodle:MoodleRenderer",
    "qti": "qti:QtiPackage",
    "text": "console:TextRenderer",
}


def get(fmt: str, templates=None):
    """The renderer of a format; one per (format, templates folder), reused, so
    a Jinja environment compiles each template once per process."""
    if fmt not in FORMATS:
        raise ParamError(f"unknown format '{fmt}'; choose from {', '.join(FORMATS)}")
    return _cached(fmt, str(Path(templates).resolve()) if templates else None)


@lru_cache(maxsize=32)
def _cached(fmt: str, templates: str | None):
    module, cls = FORMATS[fmt].split(":")
    module = module if "." in module else f"{__name__}.{module}"
    return getattr(importlib.import_module(module), cls)(templates and Path(templates))
