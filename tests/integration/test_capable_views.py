"""What a capable seat reads (issue 39): on the tagging stand-in (tests/capable_standin.py, each
free text it writes opens with a tag of its own) every family plays under the capable profile,
and each text is looked for, whole, in the later prompts of every seat it was addressed to (a
text holding one, as WarAgent's "France: request alliance -> ...  Message: T0039 ...", too):

- every text of a round a seat could see (its own, its teams', public ones) is whole in each of
  its prompts of the next round (Diplomacy: the next phase with talks), and in its order prompts
  of the same phase (the talks are over by then);
- a Diplomacy power's own latest diary entry (summary, intent) and goals are whole in its
  prompts until its next entry;
- the record's view coverage is 1.0, and no prompt is over the seat's context budget (the most
  seen is printed).

The same check on the small profile finds texts cut, which is why it is measured."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.capable_standin import CapableStandIn
from wargraph.graphs.diplomacy.budget import estimate_tokens
from wargraph.kernel.context import GameContext
from wargraph.kernel.table import scenario_of
from wargraph.models.profiles import CAPABLE
from wargraph.runs.runner import play

GAMES: list[tuple[str, str, list[str]]] = [
    ("diplomacy", "diplomacy", ["diplomacy.max_year=1902", "diplomacy.negotiation_rounds=2"]),
    ("crisis", "azuristan_crimsonia", ["rounds=3"]),
    ("tabletop", "haiwire", ["rounds=3"]),
    ("flow", "summit", ["rounds=3"]),
    ("blotto", "blotto", ["rounds=3"]),
    ("waragent", "wwi", ["rounds=3"]),
]
PROMPTED = ("call",)
TAG = re.compile(r"(?<![A-Za-z0-9])T\d{4} ")


@pytest.fixture(scope="module")
def endpoint():
    with CapableStandIn(tag=True) as standin:
        yield standin


def flat(text: str) -> str:
    """Text with quote marks at line starts dropped and whitespace folded: a text and the same
    words quoted in a prompt compare equal."""
    lines = (line[2:] if line.startswith("> ") else line.lstrip(">") for line in text.splitlines())
    return " ".join(" ".join(lines).split())


def prompts_of(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ask's first prompt (a re-ask repeats it with the reason)."""
    out, seen = [], set()
    for c in trace:
        if c.get("event") in PROMPTED and c["ask_id"] not in seen:
            seen.add(c["ask_id"])
            out.append({**c, "text": flat("\n".join(m["content"] for m in c["messages"]))})
    return out


def sees(event: dict[str, Any], role: str, groups: dict[str, set[str]]) -> bool:
    audience = set(event.get("audience") or ["*"])
    return "*" in audience or bool(audience & groups.get(role, {role}))


def missing_texts(result: Any, trace: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(seat, ask, text) for every tagged text a prompt should show whole and does not."""
    record = result.record
    scenario = scenario_of(result.values)
    groups = {r: scenario.groups_of(r) for r in scenario.roles}
    events = [e for e in record["events"] if e["round"] > 0 and _tagged(e["text"])]
    diplomacy = record["scenario"].get("family") == "diplomacy" or any(
        e["kind"] == "diary" for e in record["events"]
    )
    talk_rounds = sorted({e["round"] for e in events if e["kind"] == "message"})
    out = []
    for p in prompts_of(trace):
        role, rnd = p["role"], p["round"]
        if diplomacy:
            before = [r for r in talk_rounds if r < rnd]
            due = {before[-1]} if before else set()
            if p["task"] == "orders":
                due.add(rnd)  # the phase's talks are over
            wanted = [e for e in events if e["kind"] == "message" and e["round"] in due]
            # the order question follows the phase's diary entry; the talks and the diary
            # questions precede it
            upto = rnd + 1 if p["task"] == "orders" else rnd
            wanted += _latest_diary(record["events"], role, upto)
        else:
            wanted = [e for e in events if e["round"] == rnd - 1]
        for e in wanted:
            if sees(e, role, groups) and flat(e["text"]) not in p["text"]:
                out.append((role, p["ask_id"], e["text"][:60]))
    return out


def _tagged(text: str) -> bool:
    """A text the stand-in wrote, or one that holds it (WarAgent: "France: request alliance ->
    ...\nMessage: "T0039 ..."")."""
    return TAG.search(text) is not None


def _latest_diary(events: list[dict[str, Any]], power: str, rnd: int) -> list[dict[str, Any]]:
    """The power's latest diary entry before round `rnd`, as its texts (summary and intent as
    the entry's event holds them, its goals)."""
    mine = [e for e in events if e["kind"] == "diary" and e["author"] == power and e["round"] < rnd]
    if not mine:
        return []
    last = mine[-1]
    out = [last] if _tagged(last["text"]) else []
    goals = last["data"].get("goals", "")
    return out + ([{**last, "text": goals}] if _tagged(goals) else [])


def play_tagged(
    endpoint: CapableStandIn, name: str, scenario: str, overrides: list[str], out: Path, **ctx: Any
):
    result = play(
        scenario,
        overrides=overrides,
        context=GameContext(model=f"openai:frontier@{endpoint.url}", seed=5, **ctx),
        db=None,
        thread_id=f"views-{name}-{ctx.get('profile', 'capable')}",
        out_dir=out,
    )
    trace = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines() if line]
    return result, trace


@pytest.mark.parametrize(("name", "scenario", "overrides"), GAMES, ids=[g[0] for g in GAMES])
def test_a_capable_seat_reads_the_current_and_previous_phase_whole(
    endpoint, tmp_path, name, scenario, overrides
):
    result, trace = play_tagged(endpoint, name, scenario, overrides, tmp_path / name)
    assert result.finished, result.values.get("error")
    prompts = prompts_of(trace)
    assert prompts and {p["profile"] for p in prompts} == {"capable"}
    missing = missing_texts(result, trace)
    assert missing == [], f"{len(missing)} texts not whole in later prompts: {missing[:5]}"
    coverage = result.record["view_coverage"]
    assert coverage["chars"] > 0 and coverage["share"] == 1.0, coverage
    tokens = [estimate_tokens("\n".join(m["content"] for m in p["messages"])) for p in prompts]
    print(
        f"{name}: {len(prompts)} asks, prompt tokens max {max(tokens)}, mean {sum(tokens) // len(tokens)}"
    )
    assert max(tokens) <= CAPABLE.context_tokens
    assert set(result.record["seats"]) >= {p["role"] for p in prompts}
    assert all(s["profile"] == "capable" for s in result.record["seats"].values())


def test_under_the_small_profile_the_same_check_finds_cuts(endpoint, tmp_path):
    """The check can fail: the small profile's lean view cuts Diplomacy's talks and diaries."""
    name, scenario, overrides = GAMES[0]
    result, trace = play_tagged(
        endpoint, "small", scenario, overrides, tmp_path / "small", profile="small"
    )
    assert missing_texts(result, trace)
    assert result.record["view_coverage"]["share"] < 0.9


if __name__ == "__main__":  # by hand: python -m tests.integration.test_capable_views [small]
    import sys
    import tempfile

    extra = {"profile": "small"} if "small" in sys.argv else {}
    with CapableStandIn(tag=True) as ep, tempfile.TemporaryDirectory() as tmp:
        for name, scenario, overrides in GAMES:
            res, tr = play_tagged(ep, name, scenario, overrides, Path(tmp) / name, **extra)
            due = missing_texts(res, tr)
            share = res.record.get("view_coverage", {}).get("share")
            print(f"{name}: {len(due)} texts not whole where due; view coverage {share}")
