"""A step's name, read once: :class:`StepRef` (part, name, index).

Step names are part of the contract (the files a student hands in and the
keys use them as they are): ``scores``, ``scores_2`` (head 2 of multi-head
attention; a recurrent cell's time step 2), ``attn.scores_2`` (a block's
part ``attn``), ``norm1.mean``.  :meth:`StepRef.parse` reads one and ``str``
writes it back, the same text; code that needs a step's part, base name or
head asks the record, never splits the text itself.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["StepRef"]

_NAME = re.compile(r"(?:(?P<part>[^.]+)\.)?(?P<name>.+?)(?:_(?P<index>[1-9][0-9]*))?")


@dataclass(frozen=True)
class StepRef:
    """A step by its part (a block's sublayer, ``attn``; "" in a kind of one
    part), its base name (``scores``) and its index (the 1-based head of
    multi-head attention or time step of a recurrent cell; None)."""

    part: str
    name: str
    index: int | None = None

    @staticmethod
    def parse(text: str) -> StepRef:
        """``attn.scores_2`` -> StepRef("attn", "scores", 2); ``str`` gives the text back."""
        return _parse(text)

    def __str__(self) -> str:
        return self.prefix + self.name + self.suffix

    @property
    def prefix(self) -> str:
        """``attn.`` (a block's ``PARTS`` key), or ""."""
        return f"{self.part}." if self.part else ""

    @property
    def suffix(self) -> str:
        """``_2``, or ""."""
        return "" if self.index is None else f"_{self.index}"

    @property
    def local(self) -> StepRef:
        """The same step within its part (``scores_2`` of ``attn.scores_2``)."""
        return StepRef("", self.name, self.index)

    @property
    def base(self) -> StepRef:
        """The step without its index (``attn.scores`` of ``attn.scores_2``)."""
        return StepRef(self.part, self.name)

    def within(self, part: str) -> StepRef:
        """This step as part ``part`` of a block names it (``part`` with or without its dot)."""
        return StepRef(part.removesuffix("."), self.name, self.index)


@functools.lru_cache(maxsize=4096)  # names recur in every reference call; bounded, keyed by the text
def _parse(text: str) -> StepRef:
    m = _NAME.fullmatch(text)
    if m is None:  # "" or ".x": no part, all name
        return StepRef("", text)
    index = m["index"]
    return StepRef(m["part"] or "", m["name"], int(index) if index else None)
