"""Writing output files safely: all or nothing, never overwriting by accident.

:func:`write_all` works in three phases, so an error leaves no partial file
and no half-updated set:

1. check every target: without ``force`` nothing may be there, not even a
   dangling symbolic link; with ``force`` a target may be a file or a link
   (the link itself is replaced, never followed) but not a folder;
2. write every file to a temporary name in its destination folder;
3. rename each into place, moving the file it replaces aside first; if a
   rename fails, every file already renamed is put back as it was.

Every error names the path it is about.

:func:`write_changed` is what a build uses: a file already there with the
same bytes is left as it is (a build run twice is "up to date"), one with
other bytes is refused without ``force``, naming it.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Iterable

from .errors import InputError, OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _folder_trouble(folder: Path, exc: OSError) -> str:
    """Why files cannot be written in ``folder``, truly: a file stands where a folder
    should be, or the system refuses files there (``/proc``), or its own reason."""
    here = folder
    while not os.path.lexists(here) and here != here.parent:
        here = here.parent
    if os.path.lexists(here) and not here.is_dir():
        return f"cannot write to folder {folder}: {here} is a file, not a folder"
    if here != folder or folder.is_dir():
        if exc.errno in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS):
            where = here if here != folder else folder
            return f"cannot write to folder {folder}: the system does not allow new files in {where} ({_reason(exc)})"
    return f"cannot write to folder {folder}: {_reason(exc)}"


def refuse_existing(paths: Iterable) -> None:
    """Raise OutputError naming the first of ``paths`` that exists, a dangling
    symbolic link included (and how many more)."""
    existing = [p for p in map(Path, paths) if os.path.lexists(p)]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        what = "a symbolic link" if existing[0].is_symlink() else ""
        raise OutputError(
            f"{existing[0]} already exists{' as ' + what if what else ''}{more}; use --force to overwrite"
        )


def same_content(path: Path, content: str | bytes) -> bool:
    """Is ``path`` a regular file (not a symbolic link) holding exactly ``content``?"""
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(data):
            return False
        with open(path, "rb") as fh:
            return fh.read(len(data) + 1) == data
    except OSError:
        return False


class WriteResult(list):
    """The paths of every file of a write, in order (a list); ``unchanged``
    holds those that were already there byte for byte and were not touched."""

    def __init__(self, paths=(), unchanged=()):
        super().__init__(paths)
        self.unchanged = list(unchanged)


def refuse_changed(files: dict[Path, str | bytes]) -> None:
    """Raise OutputError naming the first target that exists with other content
    (and how many more); a target with the same bytes, or none, is fine."""
    differ = [Path(p) for p, c in files.items() if os.path.lexists(p) and not same_content(Path(p), c)]
    if differ:
        more = f" (and {len(differ) - 1} more)" if len(differ) > 1 else ""
        what = "as a symbolic link" if differ[0].is_symlink() else "with other content"
        raise OutputError(f"{differ[0]} already exists {what}{more}; use --force to overwrite")


def write_changed(files: dict[Path, str | bytes], *, force: bool = False) -> WriteResult:
    """:func:`write_all` of the files whose bytes are new: a target that already
    holds the same bytes is left untouched (in ``unchanged``); one with other
    bytes is refused, all or nothing, unless ``force``."""
    files = {Path(p): c for p, c in files.items()}
    if not force:
        refuse_changed(files)
    same = [p for p, c in files.items() if same_content(p, c)]
    write_all({p: c for p, c in files.items() if p not in same}, force=force)
    return WriteResult(files, same)


def check_targets(paths: Iterable[Path]) -> None:
    """With --force: every target can be replaced by a file (it is not a folder)."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            raise OutputError(f"cannot write {path}: it is a folder")


def write_all(files: dict[Path, str | bytes], *, force: bool = False) -> list[Path]:
    """Write ``{path: content}``, all or nothing; refuse existing files unless ``force``."""
    paths = [Path(p) for p in files]
    if not force:
        refuse_existing(paths)
    check_targets(paths)
    temps: list[tuple[Path, Path]] = []
    try:
        for path, content in zip(paths, files.values()):
            folder = path.parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
            except OSError as exc:
                raise OutputError(_folder_trouble(folder, exc)) from None
            temps.append((Path(tmp), path))
            data = content.encode("utf-8") if isinstance(content, str) else content
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; use what open() would
            except OSError as exc:
                raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
        _rename_all(temps)
        temps = []
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
    return paths


def _rename_all(temps: list[tuple[Path, Path]]) -> None:
    """Rename each temporary file onto its target; on any failure undo them all."""
    done: list[tuple[Path, Path | None]] = []  # (target, where its old file was moved)
    try:
        for tmp, path in temps:
            backup = None
            try:
                if os.path.lexists(path):
                    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
                    os.close(fd)
                    backup = Path(name)
                    os.replace(path, backup)  # a link is moved, not followed
                try:
                    os.replace(tmp, path)
                except OSError:
                    if backup is not None:
                        os.replace(backup, path)
                    raise
            except OSError as exc:
                if backup is not None and backup.exists():
                    backup.unlink(missing_ok=True)
                raise OutputError(f"cannot write {path}: {_reason(exc)}") from None
            done.append((path, backup))
    except OutputError:
        for path, backup in reversed(done):
            try:
                if backup is not None:
                    os.replace(backup, path)
                else:
                    path.unlink(missing_ok=True)
            except OSError:  # pragma: no cover - the folder itself went away
                pass
        raise
    for _, backup in done:
        if backup is not None:
            backup.unlink(missing_ok=True)


def read_text(path: Path | str, label: str, limit: int) -> str:
    """The UTF-8 text of an untrusted file (input, key or answers), read only
    up to ``limit`` bytes: a larger file, a folder, an unreadable file or
    bytes that are not UTF-8 are one-line errors naming the file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise InputError("is a folder, not a file", file=label) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=label) from None
    if len(data) > limit:
        raise InputError(f"file is larger than the limit of {_size(limit)}", file=label)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start + 1})", file=label) from None


def _size(limit: int) -> str:
    for unit, name in ((1024 * 1024, "MB"), (1_000_000, "MB"), (1024, "KB"), (1000, "KB")):
        if limit >= unit and limit % unit == 0:
            return f"{limit // unit} {name}"
    return f"{limit} bytes"
