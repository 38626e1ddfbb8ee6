"""A game's output folder (`--out`): it belongs to one thread, is checked before the first
model call, and its files are replaced as a set with the record last.

The folder's owner is named in `.wargraph-thread` (written when a game first claims it).
A folder that holds another game's files (another thread's marker, or a record or trace from
before markers) is refused: one folder, one game, so its trace and record always match.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import time
import uuid
from pathlib import Path

from wargraph.store.errors import StoreError

OWNER = ".wargraph-thread"
MIN_FREE = 1 << 20  # bytes: less than this and a game's files would be cut short
GAME_FILES = ("record.json", "transcript.md", "trace.jsonl")


class OutputError(StoreError):
    """An output folder that cannot take this game's files."""


def owner_of(out: Path) -> str | None:
    """The thread whose game the folder holds, or None for a folder with no game in it."""
    marker = out / OWNER
    if marker.is_file():
        return marker.read_text(encoding="utf-8").strip() or None
    record = out / "record.json"
    if record.is_file():
        try:
            return str(json.loads(record.read_text(encoding="utf-8")).get("thread_id") or "?")
        except (OSError, ValueError, AttributeError):
            return "?"
    if (out / "trace.jsonl").exists():
        return "?"  # an older game's trace, of no known thread
    return None


def check(out: str | Path) -> Path:
    """What can be known about a folder without writing: not a file, not a root, writable."""
    path = Path(out).expanduser()
    resolved = path.resolve()
    if resolved == Path(resolved.anchor):
        raise OutputError(f"--out {out}: a filesystem root is not a game folder")
    if path.exists() and not path.is_dir():
        raise OutputError(f"--out {out}: is a file, not a folder")
    existing = next((p for p in (resolved, *resolved.parents) if p.exists()), None)
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"--out {out}: {existing} is not writable")
    return path


def claim(out: str | Path, thread_id: str, *, new_game: bool) -> Path:
    """Make `out` this thread's folder, or refuse. `new_game` starts its trace afresh (a
    thread played again after it was killed before its first checkpoint has no calls to
    keep); a resumed game appends to its trace."""
    path = check(out)
    owner = owner_of(path) if path.exists() else None
    if owner is not None and owner != thread_id:
        held = f"game {owner!r}" if owner != "?" else "another game's files"
        raise OutputError(
            f"--out {out}: the folder holds {held}; choose another folder "
            f"(one folder per game) or remove it"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        owner = _take(path, thread_id)
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot write there ({_why(exc)})") from None
    if owner != thread_id:  # another game claimed the folder first
        raise OutputError(
            f"--out {out}: the folder holds game {owner!r}; choose another folder "
            f"(one folder per game) or remove it"
        )
    try:
        for leftover in path.glob("*.tmp"):  # of a write killed half-way (ours: we own it)
            leftover.unlink()
        if new_game:
            (path / "trace.jsonl").unlink(missing_ok=True)
        free = shutil.disk_usage(path).free
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot write there ({_why(exc)})") from None
    if free < MIN_FREE:
        raise OutputError(f"--out {out}: the disk is full ({free} bytes free)")
    return path


def _take(path: Path, thread_id: str) -> str:
    """Name this thread in the folder's marker unless a game already is named there; the owner
    afterwards. Atomic across processes: the marker is written whole under a name of its own and
    hard-linked into place (a link never replaces a file), so of two games claiming one new
    folder exactly one wins and the other reads a complete marker naming the winner."""
    marker = path / OWNER
    draft = path / f"{OWNER}.{os.getpid()}.{uuid.uuid4().hex[:8]}.claim"
    try:
        _create(draft, thread_id)
        try:
            os.link(draft, marker)
        except FileExistsError:
            pass
        except OSError:  # a filesystem without hard links: create-exclusive, then fill in
            with contextlib.suppress(FileExistsError):
                _create(marker, thread_id)
    finally:
        with contextlib.suppress(OSError):
            draft.unlink()
    return _marker_owner(marker)


def _create(path: Path, thread_id: str) -> None:
    """A new file holding the thread id, synced; FileExistsError if the name is taken."""
    with open(path, "x", encoding="utf-8") as fh:
        fh.write(thread_id + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _marker_owner(marker: Path, waits: int = 50) -> str:
    """The thread a marker names; an empty one is being filled in (no-link fallback): wait."""
    for _ in range(waits):
        text = marker.read_text(encoding="utf-8").strip()
        if text:
            return text
        time.sleep(0.01)
    return "?"


def adopt_trace(out: Path, earlier: str | Path | None) -> None:
    """A game resumed into a new folder takes its earlier calls along (one trace per game)."""
    if earlier is None:
        return
    source, target = Path(earlier), out / "trace.jsonl"
    if source.is_file() and source.resolve() != target.resolve() and not target.exists():
        try:
            shutil.copyfile(source, target)
        except OSError as exc:
            raise OutputError(f"--out {out}: cannot copy the game's trace ({_why(exc)})") from None


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    return exc.strerror or str(exc)


def _write(path: Path, text: str) -> None:
    """Write a file whole or not at all: a temporary file, synced, then renamed over."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_set(out: str | Path, files: dict[str, str]) -> None:
    """Replace the files of a run; the caller orders them with the record last, so a record on
    disk is never older than the files beside it."""
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            _write(path / name, text)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the game's files ({_why(exc)})") from None
