"""Files a user names on the command line: read only regular files, bounded, never hanging; and
say in one line what to do when the operating system refuses a path."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any


class UserFileError(ValueError):
    """A named file that cannot be read as asked; the message names it and says why."""


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`. Folders, pipes, devices and sockets
    are refused without being read: opening a FIFO without O_NONBLOCK waits for a writer
    forever, and /dev/zero never ends."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UserFileError(f"{path}: {_reason(exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UserFileError(f"{path}: is a folder, not a file")
        if not stat.S_ISREG(mode):
            raise UserFileError(f"{path}: not a regular file (a device, pipe or socket)")
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise UserFileError(f"{path}: larger than {max_bytes:,} bytes")
    return raw


def read_json(path: str | Path, max_bytes: int) -> Any:
    """A JSON file read with `read_regular`'s bounds; UserFileError names what is wrong (not
    JSON, not UTF-8, nested too deeply to read)."""
    raw = read_regular(path, max_bytes)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UserFileError(f"{path}: not a UTF-8 text file") from None
    except json.JSONDecodeError as err:
        raise UserFileError(f"{path}: not valid JSON (line {err.lineno}: {err.msg})") from None
    except RecursionError:
        raise UserFileError(f"{path}: JSON nested too deeply to read") from None


_WHAT_TO_DO = {
    errno.ENOENT: "check the path",
    errno.EEXIST: "a file stands where a folder is needed; choose another path",
    errno.ENOTDIR: "a file stands where a folder is needed; choose another path",
    errno.EISDIR: "a folder stands where a file is needed; give a file name",
    errno.EACCES: "not allowed here; choose a path you may use",
    errno.EPERM: "not allowed here; choose a path you may use",
    errno.EROFS: "the file system is read-only; choose a writable folder",
    errno.ENOSPC: "the disk is full; free some space, then run the command again or resume",
    errno.EDQUOT: "the disk quota is used up; free some space and run the command again",
    errno.ENAMETOOLONG: "use a shorter path",
}


def _reason(exc: OSError) -> str:
    why = exc.strerror or str(exc)
    hint = _WHAT_TO_DO.get(exc.errno or 0)
    return f"{why.lower()} ({hint})" if hint else why.lower()


def explain_os_error(exc: OSError) -> str:
    """One line for an operating-system refusal: which path, why, and what to do."""
    where = exc.filename if exc.filename is not None else "a file"
    other = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    return f"{where}{other}: {_reason(exc)}"
