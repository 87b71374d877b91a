"""Writing output files safely: all or nothing, never overwriting by accident.

Every file is first written to a temporary name in the destination folder and
renamed into place only when all of them are written, so an error leaves no
partial file and no half-updated set.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from .errors import OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def refuse_existing(paths: Iterable) -> None:
    """Raise OutputError naming the first of ``paths`` that exists (and how many more)."""
    existing = [p for p in map(Path, paths) if p.exists()]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise OutputError(f"{existing[0]} already exists{more}; use --force to overwrite")


def write_all(files: dict[Path, str | bytes], *, force: bool = False) -> list[Path]:
    """Write ``{path: content}``; refuse existing files unless ``force``."""
    paths = [Path(p) for p in files]
    if not force:
        refuse_existing(paths)
    temps: list[tuple[Path, Path]] = []
    try:
        for path, content in files.items():
            path = Path(path)
            folder = path.parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
            except OSError as exc:
                raise OutputError(f"cannot write to folder {folder}: {exc.strerror or exc}") from None
            temps.append((Path(tmp), path))
            data = content.encode("utf-8") if isinstance(content, str) else content
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; use what open() would
        for tmp, path in temps:
            os.replace(tmp, path)
        temps = []
    except OSError as exc:
        raise OutputError(f"cannot write output: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
    return paths
