"""Progress while a model thinks (issue 41): the CLI says which seat is waited on, in which phase,
on which model and for how long; where nothing animates (a pipe, a log, this test) the line is
printed every WARGRAPH_PROGRESS_EVERY seconds a call lasts. The slow model is the loopback
stand-in with a delay (tests/capable_standin.py)."""

from __future__ import annotations

import re
import threading
import time

from typer.testing import CliRunner

from tests.capable_standin import CapableStandIn
from wargraph.cli import app
from wargraph.models import waits


def test_a_slow_model_is_shown_with_its_seat_and_elapsed_time(tmp_path, monkeypatch):
    monkeypatch.setenv("WARGRAPH_PROGRESS_EVERY", "0.3")
    with CapableStandIn(delay=1.2) as slow:
        args = ["play", "azuristan_crimsonia", "--rounds", "1", "--set", "questions=[]"]
        args += ["--db", str(tmp_path / "g.sqlite"), "--out", str(tmp_path / "run")]
        args += ["--model", f"openai:frontier@{slow.url}", "--call-timeout", "30"]
        r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("still waiting on ")]
    assert lines, r.stderr
    said = "\n".join(lines)
    # a player's order in round 1, and the control's adjudication, each with its seconds
    assert re.search(
        r"(azuristan|crimsonia) \(order, round 1\) on openai:frontier@\S+: \d+ s", said
    )
    assert re.search(r"control \(adjudicate, round 1\) on openai:frontier@\S+: \d+ s", said)
    assert not waits.now_waiting()  # every call unregistered when it ended


def test_the_line_names_the_oldest_wait_and_counts_the_others():
    done = threading.Event()
    entered = threading.Barrier(3)

    def ask(seat: str) -> None:
        with waits.waiting(seat, "order", 2, "embedded") as wait:
            if seat == "b":
                wait.state, wait.tokens = "writing", 17
            entered.wait()
            done.wait(5)

    threads = [threading.Thread(target=ask, args=(s,)) for s in ("b",)]
    threads[0].start()
    time.sleep(0.05)  # b first: the oldest
    threads.append(threading.Thread(target=ask, args=("c",)))
    threads[1].start()
    entered.wait()
    try:
        line = waits.summary(waits.now_waiting())
        assert line.startswith("waiting on b (order, round 2) on embedded: 0 s")
        assert "17 tokens written so far" in line and "(and 1 other seat(s))" in line
    finally:
        done.set()
        for t in threads:
            t.join()
    assert waits.now_waiting() == []


def test_tokens_are_counted_only_while_watched():
    assert not waits.watched()
    with waits.watch():
        assert waits.watched()
    assert not waits.watched()
    wait = waits.Wait("a", "order", 1, "embedded", state="writing")
    with waits.watch():  # no token yet: the embedded model reads the prompt
        assert wait.text().endswith("reading its prompt")
    counter = waits.CountTokens(wait)
    logits = object()
    assert counter(None, logits) is logits and counter(None, logits) is logits
    assert wait.tokens == 2


def test_on_a_terminal_the_spinner_carries_the_wait(monkeypatch):
    import io

    from rich.console import Console

    import wargraph.cli as cli

    screen = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=screen, force_terminal=True, width=200))
    with (
        cli._spinner("playing azuristan_crimsonia on embedded ..."),
        waits.waiting("azuristan", "order", 1, "embedded"),
    ):
        time.sleep(1.4)
    shown = screen.getvalue()
    assert "playing azuristan_crimsonia on embedded ..." in shown
    assert "waiting on azuristan (order, round 1) on embedded: 1 s" in shown


def test_an_experiment_shows_the_call_its_games_wait_on():
    """The experiment's bars, and under them the model call waited on longest (issue 41's
    leftover: the bars said "run 1: order" and nothing of the model)."""
    import io

    from rich.console import Console

    from wargraph.evals.experiment.plan import plan_games
    from wargraph.evals.experiment.progress import ProgressView
    from wargraph.evals.experiment.spec import load_experiment

    exp = load_experiment("azuristan_personas", runs=1, model="scripted")
    plans = plan_games(exp, check=False)
    out = io.StringIO()
    screen = Console(file=out, force_terminal=True, width=160)
    with ProgressView(exp, plans, 0, True, screen) as view:
        assert waits.watched()  # the embedded model counts its tokens while the line shows
        with waits.waiting("azuristan", "order", 1, "embedded") as wait:
            wait.state, wait.tokens = "writing", 42
            view.progress.refresh()
        shown_during = out.getvalue()
        view.progress.refresh()
    assert not waits.watched()
    assert "waiting on azuristan (order, round 1) on embedded" in shown_during
    assert "42 tokens written so far" in shown_during
    last = out.getvalue()[len(shown_during) :]
    assert "waiting on" not in last  # the call ended: the line went with it
