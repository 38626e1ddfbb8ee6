"""The powers' diaries: after the talks of a movement phase each power writes a private entry
(summary, intent, goals, relationships; by code when no message reached it), and once a year is
over a digest of that year's entries that replaces them in its view."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.graphs.diplomacy.engine import POWERS, PhaseInfo
from wargraph.graphs.diplomacy.phase import info_of
from wargraph.graphs.diplomacy.scenario import diplomacy_scenario
from wargraph.graphs.diplomacy.schemas import RELATIONS, digest_chars
from wargraph.graphs.diplomacy.view import NOTE_SLOT, relationships_of
from wargraph.kernel.parts import Diary
from wargraph.kernel.question import Question
from wargraph.kernel.state import Event
from wargraph.kernel.views import quote
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Diaries(Diary):
    """A diary entry (`diary`) where the power talked, and a digest (`digest`) of the years no
    digest covers yet."""

    def asked(self, table: Table, writer: str) -> list[tuple[str, str]]:
        """A diary entry where the power talked (a model asked to summarise talks that did not
        happen invents them: `events` writes that entry by code), a digest while entries of
        earlier years are undigested; told from the power's view alone."""
        seen = table.view(writer, policy="full")  # its own diary, whatever the policy
        out = [("", "diary")] if talked(seen, table.round) else []
        if undigested(seen, writer, info_of(table).year):
            out.append(("", "digest"))
        return out

    def questions(self, table: Table, writer: str) -> list[tuple[str, Question]]:
        info = info_of(table)
        seen = table.view(writer, policy="full")
        tasks = {task for _, task in self.asked(table, writer)}
        out: list[tuple[str, Question]] = []
        if "diary" in tasks:
            out.append(("", self._diary_question(table, writer, seen)))
        if "digest" in tasks:
            entries = undigested(seen, writer, info.year)
            out.append(("", digest_question(table, writer, entries, seen)))
        return out

    def _diary_question(self, table: Table, writer: str, seen: list[Event]) -> Question:
        info = info_of(table)
        others = [o for o in POWERS if o != writer]
        chars = diary_chars(table, writer)
        return Question(
            task="diary",
            question=render_prompt(
                "diplomacy_diary_question",
                table.variant(writer),
                power=writer,
                phase=info.name,
                others=", ".join(others),
                relations=", ".join(RELATIONS),
            ),
            schema="diplomacy_diary",
            schema_args={
                "others": others,
                "chars": chars,
                # a person's form keeps each relationship as it stands unless they change it
                **(
                    {"people": True, "current": relationships_of(seen, writer)}
                    if table.seat(writer).get("kind") == "human"
                    else {}
                ),
            },
            fallback={
                "summary": f"{info.name}: nothing new to note.",
                "intent": "",
                "goals": "",
                **relationships_of(seen, writer),
            },
            memory_slot=NOTE_SLOT,
            notes=False,
            max_tokens=2 * chars + 10 * len(others) + 30,
        )

    def events(self, table: Table, writer: str, answers: dict[str, dict[str, Any]]) -> list[Event]:
        info = info_of(table)
        events: list[Event] = []
        digest = answers.get("digest")
        if digest:
            entries = undigested(table.view(writer, policy="full"), writer, info.year)
            events.append(
                table.event(
                    kind="diary_digest",
                    author=writer,
                    text=digest["value"]["digest"],
                    audience=[writer],
                    data={
                        "through_year": max(e["data"]["year"] for e in entries),
                        "phases": [e["data"]["phase"] for e in entries],
                        "source": digest["source"],
                    },
                )
            )
        d = answers.get("diary") or silent_diary(table.view(writer, policy="full"), writer, info)
        value = d["value"]
        rel = {o: value.get(o, "Neutral") for o in POWERS if o != writer}
        text = value["summary"]
        if value.get("intent"):
            text += f"\nIntent: {value['intent']}"
        events.append(
            table.event(
                kind="diary",
                author=writer,
                text=text,
                audience=[writer],
                data={
                    "phase": info.name,
                    "year": info.year,
                    "summary": value["summary"],
                    "intent": value.get("intent", ""),
                    "goals": value.get("goals", ""),
                    "relationships": rel,
                    "source": d["source"],
                },
            )
        )
        return events


def diary_chars(table: Table, power: str) -> int:
    """The longest diary summary of a power: the scenario's, raised by its seat's model profile
    (wargraph.models.profiles)."""
    return table.profile(power).diary_limit(diplomacy_scenario(table).diplomacy.diary_chars)


def digest_question(table: Table, power: str, entries: list[Event], seen: list[Event]) -> Question:
    """The yearly digest: the power's earlier digest and the entries it now replaces."""
    cfg = diplomacy_scenario(table).diplomacy
    digests = [e for e in seen if e["kind"] == "diary_digest" and e["author"] == power]
    parts = []
    if digests:
        parts.append("Your earlier digest:\n" + quote(digests[-1]["text"]))
    # an entry the view already shows whole (under "Your diary") is named, not shown again
    view = table.view_text(power)
    listed = []
    for e in entries:
        block = f"{e['data']['phase']}:\n{quote(e['text'])}"
        listed.append(
            f'{e["data"]["phase"]}: as shown above under "Your diary"' if block in view else block
        )
    parts.append("Diary entries to digest:\n" + "\n".join(listed))
    years = sorted({e["data"]["year"] for e in entries})
    chars = digest_chars(cfg, diary_chars(table, power))
    fallback = " ".join(e["data"]["summary"] for e in entries)[:chars]
    question = render_prompt(
        "diplomacy_digest_question",
        table.variant(power),
        power=power,
        years=", ".join(map(str, years)),
    )
    return Question(
        task="digest",
        question="\n\n".join(parts) + "\n\n" + question,
        schema="diplomacy_digest",
        schema_args={"chars": chars},
        fallback={"digest": fallback or "Nothing to note."},
        memory_slot=NOTE_SLOT,
        notes=False,
        max_tokens=chars + 20,
    )


def talked(seen: list[Event], rnd: int) -> bool:
    """Whether the power sent or read a message this round (its view holds what reached it)."""
    return any(e["round"] == rnd and e["kind"] == "message" for e in seen)


def silent_diary(seen: list[Event], power: str, info: PhaseInfo) -> dict[str, Any]:
    """The diary answer of a phase with no messages, written by code: it says no talks took
    place and keeps the power's goals and relationships."""
    entries = [e for e in seen if e["kind"] == "diary" and e["author"] == power]
    goals = entries[-1]["data"].get("goals", "") if entries else ""
    value = {
        "summary": f"{info.name}: no messages were sent or received this phase.",
        "intent": "",
        "goals": goals,
        **relationships_of(seen, power),
    }
    return {"value": value, "source": "code"}


def undigested(seen: list[Event], power: str, year: int) -> list[Event]:
    """Diary entries of years before `year` that no digest covers yet."""
    mine = [e for e in seen if e["author"] == power]
    through = max(
        (e["data"]["through_year"] for e in mine if e["kind"] == "diary_digest"), default=0
    )
    return [e for e in mine if e["kind"] == "diary" and through < e["data"]["year"] < year]
