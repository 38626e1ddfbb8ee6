"""A terminal with a person in a seat shows that seat only what it may see (the progress
printer of `wargraph play/resume`), in every family: every free text of the game carries a
canary token (the prompt-injection attacker), the first player holds a canary secret, and the
printer's output for each seat may hold only tokens of events that seat can see. `--show all`
(the facilitator) prints everything."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

import wargraph.cli as cli
from tests.reliability._support import Family, family_params
from tests.reliability.test_prompt_injection import (
    SCENARIOS,
    SECRET,
    TOKEN,
    install_attacker,
    run,
    visible_to,
)
from wargraph.kernel.scenario import load_scenario
from wargraph.seats.terminal import audience_filter

# Families whose progress holds events some seat may not see (so the filter is tested there):
# a private inject is set below for crisis; waragent private verdicts, blotto private
# allocation verdicts.
PRIVATE_PROGRESS = {"crisis", "waragent", "blotto"}


def printed(monkeypatch, events, shown) -> str:
    out = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=out, width=300, color_system=None))
    cli._progress_printer(shown)("order", {"events": events})
    return out.getvalue()


def tokens(text: str) -> set[str]:
    return set(TOKEN.findall(text)) | ({SECRET} if SECRET in text else set())


@pytest.mark.parametrize("family", family_params())
def test_a_seat_terminal_prints_only_what_the_seat_may_see(family: Family, tmp_path, monkeypatch):
    family.require()
    scenario, overrides = SCENARIOS[family.name]
    sc = load_scenario(scenario, overrides)
    owner, other = list(sc.players)[:2]
    overrides = [*overrides, f"players.{owner}.secrets=['{SECRET}']"]
    if family.name == "crisis":  # an inject for one seat only, with the secret
        overrides.append(
            f"injects=[{{round: 1, text: 'For {owner} only: {SECRET}', audience: [{owner}]}}]"
        )
    sc = load_scenario(scenario, overrides)
    install_attacker(monkeypatch)
    record, _trace = run(scenario, overrides, tmp_path, "game")
    events = record["events"]

    everything = printed(monkeypatch, events, audience_filter(sc, [], "seats"))
    hidden_somewhere = 0
    for seat in sc.players:
        seen = [e for e in events if visible_to(e, seat, sc)]
        visible = set().union(*(tokens(e["text"] + json.dumps(e.get("data", {}))) for e in seen))
        shown = printed(monkeypatch, events, audience_filter(sc, [seat], "seats"))
        assert tokens(shown) <= visible, f"{seat}'s terminal shows {tokens(shown) - visible}"
        if seat != owner:
            assert SECRET not in shown, f"{owner}'s secret on {seat}'s terminal"
        # events of the progress's kinds this seat may not see: their text is not printed
        seen_text = " ".join(e["text"] for e in seen)
        for e in events:
            if e["kind"] in cli.PROGRESS_KINDS and e not in seen:
                hidden_somewhere += 1
                line = str(e["text"]).split("\n")[0][:80]
                if line and line not in seen_text:
                    assert line not in shown, f"{seat}'s terminal shows {e['id']}: {line}"
        full = printed(monkeypatch, events, audience_filter(sc, [seat], "all"))
        assert full == everything  # the facilitator's view, asked for explicitly
    # several people at one terminal: only what all of their seats may see
    both = printed(monkeypatch, events, audience_filter(sc, [owner, other], "seats"))
    assert SECRET not in both
    if family.name in PRIVATE_PROGRESS:
        assert hidden_somewhere, "no private event in the progress: the test proves nothing here"
