"""`Diary`: what a writer is asked in `summarize` and the private entries its answers make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wargraph.kernel.question import Question
from wargraph.kernel.state import Event
from wargraph.prompts import render_prompt

if TYPE_CHECKING:
    from wargraph.kernel.table import Table


@dataclass(frozen=True)
class Diary:
    """One private summary per writer and round, kept in its `diary` memory slot."""

    def questions(self, table: Table, writer: str) -> list[tuple[str, Question]]:
        """What a writer is asked this phase, as `(key, question)` (tasks differ)."""
        return [
            (
                "",
                Question(
                    task="diary",
                    question=render_prompt(
                        "summarize_question", table.variant(writer), round=table.round
                    ),
                    schema="diary",
                    fallback={"summary": "Nothing new to note."},
                    memory_slot="diary",
                ),
            )
        ]

    def asked(self, table: Table, writer: str) -> list[tuple[str, str]]:
        """The `(key, task)` of each question `questions` gives the writer at this step, without
        making them: the step that records the answers needs only their names. A world whose
        questions cost something to make (a view of their own) says it cheaply here."""
        return [(key, q.task) for key, q in self.questions(table, writer)]

    def events(self, table: Table, writer: str, answers: dict[str, dict[str, Any]]) -> list[Event]:
        """The private entries a writer's answers (by task) make."""
        return [
            table.event(
                kind="summary",
                author=writer,
                text=answers["diary"]["value"]["summary"],
                audience=[writer],
            )
        ]
