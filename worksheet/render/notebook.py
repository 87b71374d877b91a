"""What a notebook shows of a problem or a document: the answer key, through
the HTML or the Markdown renderer (:mod:`worksheet.solution.notebook` asks).
"""

from __future__ import annotations

from .. import kinds
from ..solution.document import Document
from . import get


def show(shown, fmt: str) -> str:
    """A :class:`Problem` or :class:`Document` as Jupyter shows it: ``"html"``,
    the answer key with its worked solutions unfolded and without the page's
    own head (styles), so the notebook's styles stay as they are; ``"md"``, the
    answer key in Markdown."""
    doc = shown if isinstance(shown, Document) else document(shown)
    if fmt == "html":
        return (
            get("html")
            .body(doc, 0, 1, key=True)
            .replace('<details class="solution">', '<details class="solution" open>')
        )
    return get("md").render(doc, key=True)


def document(problem) -> Document:
    """One problem as a document of its own, stating its conventions."""
    return Document(
        problem.title,
        [problem],
        seed=problem.seed,
        numbers=str(problem.params.get("numbers") or "own"),
        conventions=kinds.conventions([problem]),
    )
