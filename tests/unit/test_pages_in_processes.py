"""A report's pages (`--pages`) are written on every core: `ensure_views` forks workers for the
missing pages, which are the pages `ensure_view` writes one by one, in the same order."""

from __future__ import annotations

import os
import shutil
import threading

import pytest

import wargraph.view as view
from wargraph.evals.tournament import load_tournament, run_tournament


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    out = tmp_path_factory.mktemp("cup")
    t = load_tournament(
        {
            "name": "cup",
            "scenario": "blotto",
            "set": {"rounds": 2, "blotto.exchanges": 0, "questions": []},
            "entrants": {"br": {"model": "bot:best_response"}, "fixed": {"model": "bot:fixed"}},
            "rotations": 3,
            "score": "points",
            "bootstrap": 20,
            "workers": "threads",
        }
    )
    run_tournament(t, out, show_progress=False)
    folders = sorted(p.parent for p in out.glob("games/*/*/record.json"))
    assert len(folders) == 6
    return out, folders


def _copy(out, folders, to):
    shutil.copytree(out, to)
    return [to / f.relative_to(out) for f in folders]


def test_pages_in_workers_are_the_pages_written_one_by_one(games, tmp_path, monkeypatch):
    if threading.active_count() > 1:
        pytest.skip("other threads run in this process: the pages are written here")
    out, folders = games
    serial = [view.ensure_view(f) for f in _copy(out, folders, tmp_path / "serial")]
    forked = _copy(out, folders, tmp_path / "forked")
    write = view.ensure_view

    def writer(folder, **kw):  # which process wrote each page
        (folder / "writer.pid").write_text(str(os.getpid()))
        return write(folder, **kw)

    monkeypatch.setattr(view, "ensure_view", writer)  # the workers are forked: they have it too
    pages = view.ensure_views(forked, workers=2)
    assert [p.relative_to(tmp_path / "forked") for p in pages] == [
        p.relative_to(tmp_path / "serial") for p in serial
    ]
    assert [p.read_bytes() for p in pages] == [p.read_bytes() for p in serial]
    writers = {int((f / "writer.pid").read_text()) for f in forked}
    assert os.getpid() not in writers and len(writers) >= 1
    # written pages are kept: asked again, nothing is written
    stamps = [p.stat().st_mtime_ns for p in pages]
    assert view.ensure_views(forked, workers=2) == pages
    assert [p.stat().st_mtime_ns for p in pages] == stamps


def test_a_folder_without_a_game_has_no_page(games, tmp_path):
    out, folders = games
    copies = _copy(out, folders, tmp_path / "c")
    (copies[2] / "record.json").unlink()
    pages = view.ensure_views(copies, workers=2)
    assert pages[2] is None and all(p is not None for i, p in enumerate(pages) if i != 2)


CHILD = """
import os, sys, time
from pathlib import Path
import wargraph.view as view

def slow(folder, **kw):  # a page that takes long: Ctrl-C must not wait for it, nor for the queue
    (folder / "writer.pid").write_text(str(os.getpid()))
    time.sleep(60)

view.ensure_view = slow
folders = [Path(sys.argv[1]) / f"g{i}" for i in range(8)]
for f in folders:
    f.mkdir()
view.ensure_views(folders, workers=2)
"""


def test_ctrl_c_while_pages_are_written_stops_at_once(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        start_new_session=True,  # its own group: the terminal's Ctrl-C reaches every process
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("g*/writer.pid"))) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "no worker started"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        stopped = time.monotonic()
        proc.wait(30)
        assert time.monotonic() - stopped < 20, "Ctrl-C waited for the pages still queued"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0
    assert proc.stderr is not None and proc.stderr.read().count("Traceback") <= 1  # the parent's
    for pid_file in tmp_path.glob("g*/writer.pid"):
        pid = int(pid_file.read_text())
        for _ in range(50):  # ended by the parent, reaped by nobody once it has gone
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"page worker {pid} still runs")
