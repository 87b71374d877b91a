"""How a notebook shows a problem or a document: Jupyter calls their
``_repr_html_`` and ``_repr_markdown_``, which ask :data:`show`.

Rendering is two layers above this one, so this layer does not import it.
The package :mod:`worksheet`, which Python runs before any of its modules,
sets :data:`show` to a function that renders through :mod:`worksheet.render`
(see :mod:`worksheet.render.notebook`).
"""

from __future__ import annotations

from typing import Any, Callable

show: Callable[[Any, str], str]  # (a Problem or a Document, "html" or "md") -> the text shown
