"""What `wargraph play` and `wargraph resume` print, through the real command:

- a person's terminal (`--human`) shows only what that seat may see; `--show all` is the
  facilitator's full view;
- model and scenario text is printed as text: `[/INST]`, `[/]` (Rich markup) and terminal
  control sequences (colours, window titles, a cleared screen) in it neither crash the game nor
  reach the terminal as controls."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.reliability._support import FakeEndpoint
from wargraph.kernel.scenario import shipped_scenarios

WARGRAPH = Path(sys.executable).with_name("wargraph")
CANARY = "CANARY-INJECT-4b7e"
ENV = {
    **os.environ,
    "NO_COLOR": "1",
    "TERM": "dumb",
    "COLUMNS": "200",
    "OPENAI_API_KEY": "test-key",
    "LANGSMITH_TRACING": "false",
}

# real terminals (a pty and a child process per test): each takes up to a minute or two
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def wargraph(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(WARGRAPH), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=ENV,
        timeout=200,
    )


def crisis_with_private_inject(tmp_path: Path) -> Path:
    """The shipped crisis, two rounds, with a round-2 inject only azuristan receives."""
    data = yaml.safe_load(shipped_scenarios()["azuristan_crimsonia"].read_text(encoding="utf-8"))
    data["rounds"] = 2
    data["injects"] = [
        {"round": 2, "text": f"Only for azuristan: {CANARY}", "audience": ["azuristan"]}
    ]
    path = tmp_path / "private_inject.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


PLANS = "Hold the border and call for talks.\n" * 6


@pytest.mark.parametrize("show", ["seats", "all"])
def test_a_persons_terminal_shows_only_its_seat_in_play_and_resume(tmp_path, show):
    scenario = crisis_with_private_inject(tmp_path)
    common = ["--db", str(tmp_path / "g.sqlite")]
    seat = ["--human", "crimsonia", "--model", "scripted"]
    # played to the end at once
    played = wargraph(
        "play", str(scenario), *seat, *common, "--thread", "p1", "--show", show, cwd=tmp_path,
        stdin=PLANS,
    )  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    assert "Game over" in played.stdout
    # stopped at the first question (no answer on stdin), then resumed with the answers
    stopped = wargraph("play", str(scenario), *seat, *common, "--thread", "r1", cwd=tmp_path)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    resumed = wargraph(
        "resume", "--thread", "r1", *common, "--show", show, cwd=tmp_path, stdin=PLANS
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    for out in (played, stopped, resumed):
        terminal = out.stdout + out.stderr
        if show == "seats":
            assert CANARY not in terminal, "azuristan's inject on crimsonia's terminal"
        assert "inject" in played.stdout or show == "seats"
    if show == "all":  # the facilitator's view prints it: the test above can fail
        assert CANARY in played.stdout and CANARY in resumed.stdout


def test_no_person_at_the_terminal_prints_every_event_as_before(tmp_path):
    scenario = crisis_with_private_inject(tmp_path)
    out = wargraph(
        "play", str(scenario), "--model", "scripted", "--db", str(tmp_path / "g.sqlite"),
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert CANARY in out.stdout


HOSTILE = (
    "The river [/INST] rises [/] at [bold]dawn[/bold]\x1b]0;pwned-title\x07 "
    "\x1b[2J\x1b[31mred\x1b[0m \x9b6n \x07bell \x00nul\x1b[?1049h end."
)
SAFE_PART = "The river [/INST] rises [/] at [bold]dawn[/bold]"


def markup_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "markup.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "title": "Markup [/] and \x1b[31mcolour",
                "setting": "Two neighbours [/INST] quarrel.",
                "rounds": 2,
                "players": {"north": {}, "south": {}},
            }
        ),
        encoding="utf-8",
    )
    return path


def test_model_text_with_markup_and_controls_is_printed_as_text(tmp_path):
    endpoint = FakeEndpoint(reply=HOSTILE).start()
    try:
        scenario = markup_scenario(tmp_path)
        model = ["--model", f"openai:fake@{endpoint.url}"]
        db = ["--db", str(tmp_path / "g.sqlite")]
        played = wargraph("play", str(scenario), *model, *db, "--thread", "m1", cwd=tmp_path)
        stopped = wargraph(
            "play", str(scenario), *model, *db, "--thread", "m2", "--human", "south", cwd=tmp_path
        )
        resumed = wargraph(
            "resume", "--thread", "m2", *db, cwd=tmp_path, stdin="We [/] wait \x1b[2J.\n" * 4
        )
    finally:
        endpoint.stop()
    assert played.returncode == 0, played.stdout + played.stderr
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    for out in (played, resumed):
        assert SAFE_PART in out.stdout  # the narration, word for word
        assert "red" in out.stdout and "end." in out.stdout
    for out in (played, stopped, resumed):
        terminal = out.stdout + out.stderr
        assert "\x1b" not in terminal and "\x07" not in terminal and "\x9b" not in terminal
        assert "\x00" not in terminal and "pwned-title" not in terminal
    assert "Markup [/] and colour" in stopped.stdout or "what south knows" in stopped.stdout


def test_games_lists_a_title_with_markup_as_text(tmp_path):
    data = yaml.safe_load(shipped_scenarios()["azuristan_crimsonia"].read_text(encoding="utf-8"))
    data["title"] = "The [/] crisis [bold]\x1b]0;owned\x07"
    data["rounds"] = 1
    path = tmp_path / "markup_title.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    db = str(tmp_path / "games.sqlite")
    played = wargraph("play", str(path), "--model", "scripted", "--db", db, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    listed = wargraph("games", "--db", db, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "The [/] crisis [bold]" in listed.stdout
    assert "\x1b" not in listed.stdout and "Traceback" not in listed.stderr


def test_a_person_writes_diplomacy_messages_from_the_example_shown(tmp_path):
    """The messages question names each field (a list of {to, text}) and shows a well-formed
    answer; that answer, with the person's words, is sent (and no longer has to be guessed)."""
    common = ["--db", str(tmp_path / "g.sqlite"), "--thread", "d1"]
    setup = ["--set", "diplomacy.max_year=1901", "--set", "diplomacy.negotiation_rounds=1"]
    args = ["diplomacy", "--model", "scripted", "--human", "FRANCE", *setup, "--set"]
    stopped = wargraph("play", *args, "diplomacy.maps=none", *common, cwd=tmp_path)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    # the recipients in the order the question lists them (seeded per seat and phase)
    assert re.search(r"messages: a list of up to 2 \{to: one of GLOBAL, [A-Z]+,", stopped.stdout)
    shown = next(line for line in stopped.stdout.splitlines() if line.startswith("For example: "))
    answer = json.loads(shown.removeprefix("For example: "))
    assert answer == {"action": "send", "messages": [{"to": "GLOBAL", "text": "..."}]}
    answer["messages"][0]["text"] = CANARY
    resumed = wargraph("resume", *common, cwd=tmp_path, stdin=json.dumps(answer) + "\n")
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # waits for the diary next
    assert "Your last answer was not accepted" not in resumed.stdout
    # the diary question's view shows the message as sent to every power
    assert "FRANCE to everyone:" in resumed.stdout and f"> {CANARY}" in resumed.stdout


def test_a_person_writes_diplomacy_messages_field_by_field(tmp_path):
    """No JSON to write: Enter keeps `send`, a recipient by name, the text, Enter ends the list;
    the message reaches the record (the diary question's view shows it, to ENGLAND)."""
    common = ["--db", str(tmp_path / "g.sqlite"), "--thread", "d2"]
    setup = ["--set", "diplomacy.max_year=1901", "--set", "diplomacy.negotiation_rounds=1"]
    args = ["diplomacy", "--model", "scripted", "--human", "FRANCE", *setup, "--set"]
    stopped = wargraph("play", *args, "diplomacy.maps=none", *common, cwd=tmp_path)
    assert stopped.returncode == 3, stopped.stdout + stopped.stderr
    typed = f"\nengland\n{CANARY}\n\n"
    resumed = wargraph("resume", *common, cwd=tmp_path, stdin=typed)
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr  # waits for the diary next
    assert "action (1 send, 2 stay_silent) [send]: " in resumed.stdout
    assert "Your last answer was not accepted" not in resumed.stdout
    assert "you to ENGLAND:" in resumed.stdout and f"> {CANARY}" in resumed.stdout


def test_a_person_at_a_real_terminal_sees_the_prompt_whole(tmp_path):
    """In a terminal (a pseudo-terminal here) the game's spinner stops while a person types: it
    drew over the typing, held the prompt back until Enter, and read it as markup ("[send]"
    vanished)."""
    import pty
    import select

    setup = ["--set", "diplomacy.max_year=1901", "--set", "diplomacy.negotiation_rounds=1"]
    argv = [str(WARGRAPH), "play", "diplomacy", "--model", "scripted", "--human", "FRANCE"]
    argv += [*setup, "--set", "diplomacy.maps=none", "--db", str(tmp_path / "g.sqlite")]
    env = {k: v for k, v in ENV.items() if k not in ("TERM", "NO_COLOR")} | {"TERM": "xterm"}
    main, child = pty.openpty()
    proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, cwd=tmp_path, env=env)
    os.close(child)
    seen = b""

    def read_for(seconds: float, until: bytes | None = None) -> None:
        nonlocal seen
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0 and not (until and until in seen):
            if select.select([main], [], [], min(left, 1.0))[0]:
                try:
                    seen += os.read(main, 65536)
                except OSError:  # the game ended: nothing more to read
                    return

    try:
        read_for(60, until=b"stay_silent)")
        read_for(1.5)  # a spinner would go on drawing below the prompt meanwhile
    finally:
        proc.kill()
        proc.wait(timeout=30)
        os.close(main)
    assert b"stay_silent)" in seen, seen[-500:]
    after = seen[seen.index(b"stay_silent)") :]
    assert after.rstrip().endswith(b":"), after  # the prompt is the last thing drawn
    assert b"action (1 send, 2 stay_silent) [send]: " in seen
