"""Two games claiming one new `--out` folder at once: exactly one wins, the marker names it,
the other is refused with the winner's name (src/wargraph/runs/rundir.py)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

import wargraph.runs.rundir as rundir

CLAIMERS = 12
FOLDERS = 15


def _claim(folder: str, thread_id: str, start, results) -> None:
    start.wait()  # all claimers released together: the race is real
    try:
        rundir.claim(folder, thread_id, new_game=True)
        results.put((folder, thread_id, "won"))
    except rundir.OutputError as exc:
        results.put((folder, thread_id, str(exc)))


@pytest.mark.slow  # half a minute or more on 2 shared cores
@pytest.mark.timeout(120)
def test_concurrent_claims_of_one_new_folder_have_one_winner(tmp_path):
    ctx = mp.get_context("fork")
    for n in range(FOLDERS):
        folder = str(tmp_path / f"runs{n}" / "out")  # new, parents too
        start, results = ctx.Barrier(CLAIMERS), ctx.Queue()
        procs = [
            ctx.Process(target=_claim, args=(folder, f"game{i:02d}", start, results))
            for i in range(CLAIMERS)
        ]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=30)
        winners = [t for _, t, how in outcomes if how == "won"]
        assert len(winners) == 1, (n, winners)
        owner = (Path(folder) / rundir.OWNER).read_text().strip()
        assert owner == winners[0]
        for _, t, how in outcomes:
            if t != owner:
                assert f"holds game {owner!r}" in how, how
        assert sorted(p.name for p in Path(folder).iterdir()) == [rundir.OWNER]  # no drafts


def test_the_owner_claims_its_folder_again(tmp_path):
    out = tmp_path / "out"
    rundir.claim(out, "a1", new_game=True)
    rundir.claim(out, "a1", new_game=False)  # resume
    with pytest.raises(rundir.OutputError, match="holds game 'a1'"):
        rundir.claim(out, "b2", new_game=True)
