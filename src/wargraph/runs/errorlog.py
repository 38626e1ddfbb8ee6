"""Where an unexpected failure's details go: a folder of this user's own in the system's
temporary folder (`wargraph-<uid>`, created 0700, the log 0600), never one path shared by every
user of the machine, where another user could read a traceback (prompts, paths, settings) or
put a symlink in its place."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

LOG_NAME = "error.log"


def _own_private_folder(folder: Path) -> bool:
    """Whether `folder` is a real folder (not a symlink) of this user that no one else may use."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and not st.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def log_folder() -> Path:
    """This user's private folder for error logs: `<tmp>/wargraph-<uid>`, or a new private one
    when that name is taken by something else (another user's folder, a symlink, a file)."""
    folder = Path(tempfile.gettempdir()) / f"wargraph-{os.getuid()}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix="wargraph-"))
    if _own_private_folder(folder):
        return folder
    return Path(tempfile.mkdtemp(prefix="wargraph-"))  # 0700, a fresh name


def write_error_log(text: str) -> Path:
    """Write `text` as this user's error log (private, replacing the last one); its path."""
    path = log_folder() / LOG_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path
