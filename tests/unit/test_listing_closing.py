"""`wargraph games` does not list as done a game whose closing phases did not finish (issue 40,
item 9): a game stopped after its last round but before its questions were answered (a model
that stopped answering there; here the run is stopped at that step) is "stopped in <phase>
(resumable)", and done once resumed. A real scripted game in a SQLite store."""

from __future__ import annotations

import pytest

from wargraph.kernel.context import GameContext
from wargraph.runs.listing import list_games
from wargraph.runs.runner import play, resume


class StopHere(Exception):
    pass


def test_a_game_stopped_before_its_questions_is_not_done(tmp_path):
    db = tmp_path / "g.sqlite"

    def stop_at_the_closing_phases(_node, values):
        if values.get("done") and values.get("next") not in (None, "__end__"):
            raise StopHere(values["next"])

    with pytest.raises(StopHere) as stopped:
        play(
            "azuristan_crimsonia",
            overrides=["rounds=1"],
            context=GameContext(model="scripted", seed=1),
            db=db,
            thread_id="closing",
            progress=stop_at_the_closing_phases,
        )
    [row] = list_games(db)
    assert row.status == f"stopped in {stopped.value.args[0]} (resumable)", row.status
    assert resume(db=db, thread_id="closing").finished
    assert list_games(db)[0].status == "done"
