"""docs/how-a-game-is-built.md cannot rot: every Python block of it runs here, in order, in one
namespace (a later block uses what an earlier one made), on the scripted decider the page
itself names. Its blocks build a graph, compile it with a checkpointer, invoke and stream it on
a scenario, read the result and show that a graph built for other seats raises."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-a-game-is-built.md"
BLOCK = re.compile(r"```python\n(?P<code>.*?)\n```", re.S)


def blocks() -> list[str]:
    return [m["code"] for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_goes_from_builder_to_a_result():
    code = "\n".join(blocks())
    for step in ("build_game(", ".compile(checkpointer=", ".invoke(", ".stream(", "WrongSeats"):
        assert step in code, f"the page shows no {step}"


def test_every_python_block_of_the_page_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # nothing the blocks write lands in the checkout
    namespace: dict[str, object] = {"__name__": "how_a_game_is_built"}
    for i, code in enumerate(blocks()):
        try:
            exec(compile(code, f"{PAGE.name} block {i + 1}", "exec"), namespace)  # noqa: S102
        except Exception as err:  # the page's block, named, with its own error
            pytest.fail(f"block {i + 1} of {PAGE.name} fails: {type(err).__name__}: {err}")
    out = capsys.readouterr().out
    assert "negotiate" in out and "adjudicate" in out  # the record was printed
    assert "this graph was built for the seats ['a', 'b', 'control']" in out
