"""The model cache's store (wargraph.models.cache) on SQLite and PostgreSQL: LangChain's cache
interface, the keys of a call, and rows that are not answers."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration

from tests.capable_standin import CapableStandIn
from wargraph.models import cache as model_cache
from wargraph.models.chat import chat_model, parse_model_ref
from wargraph.store.errors import is_url


def test_answers_are_kept_and_found_by_their_whole_key(store_db):
    where = model_cache.location(True, store_db)  # `--cache`: beside the games, in their store
    assert where == (store_db if is_url(store_db) else str(Path(store_db).resolve()))
    cache = model_cache.cache_at(where)
    cache.clear()
    reply = AIMessage(
        "Hold the line.",
        usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10},
        response_metadata={"finish_reason": "stop"},
    )
    assert cache.lookup("prompt", '{"model": "openai:a"}') is None
    cache.update("prompt", '{"model": "openai:a"}', [ChatGeneration(message=reply)])
    (found,) = cache.lookup("prompt", '{"model": "openai:a"}') or []
    assert isinstance(found, ChatGeneration)
    assert found.message.content == "Hold the line."
    assert found.message.usage_metadata["output_tokens"] == 3
    assert found.message.response_metadata["finish_reason"] == "stop"
    # another model, another prompt: never this answer
    assert cache.lookup("prompt", '{"model": "openai:b"}') is None
    assert cache.lookup("prompt ", '{"model": "openai:a"}') is None
    # the first answer kept stays (a second writer of the same call changes nothing)
    cache.update("prompt", '{"model": "openai:a"}', [ChatGeneration(message=AIMessage("other"))])
    assert cache.lookup("prompt", '{"model": "openai:a"}')[0].message.content == "Hold the line."
    assert cache.count() == 1
    cache.clear(model="openai:b")
    assert cache.count() == 1
    cache.clear()
    assert cache.count() == 0


def test_a_row_that_is_not_an_answer_is_asked_afresh(tmp_path):
    cache = model_cache.cache_at(str(tmp_path / "c.sqlite"))
    key = model_cache._key("p", "s")
    for junk in ('{"lc": 1, "type": "constructor"}', "not json", "[1]"):
        cache._sql.run("DELETE FROM wargraph_model_cache")
        cache._sql.run(
            "INSERT INTO wargraph_model_cache (key, model, answer, created) VALUES (?, '', ?, 0)",
            (key, junk),
        )
        assert cache.lookup("p", "s") is None


def test_the_keys_hold_the_messages_the_settings_and_the_server():
    ref = parse_model_ref("openai:m@http://127.0.0.1:9/v1")
    model = chat_model(ref, temperature=0.5)
    messages = [SystemMessage("rules"), HumanMessage("your move")]
    prompt, settings = model_cache.call_keys(ref, model, messages, {"seed": 1})
    assert "your move" in prompt and "http://127.0.0.1:9/v1" in settings
    assert model_cache.call_keys(ref, model, messages, {"seed": 2})[1] != settings
    schema = {"response_format": {"type": "json_object", "schema": {"type": "object"}}}
    assert model_cache.call_keys(ref, model, messages, schema)[1] != settings
    hotter = chat_model(ref, temperature=0.9)
    assert model_cache.call_keys(ref, hotter, messages, {"seed": 1})[1] != settings
    other = parse_model_ref("openai:m@http://localhost:9/v1")
    assert model_cache.call_keys(other, model, messages, {"seed": 1})[1] != settings


def test_it_is_a_langchain_cache_a_chat_model_can_use(tmp_path):
    """As any LangChain chat model's `cache=`: the second call never reaches the server."""
    with CapableStandIn() as server:
        ref = parse_model_ref(f"openai:frontier@{server.url}")
        model = chat_model(ref).model_copy(
            update={"cache": model_cache.cache_at(str(tmp_path / "lc.sqlite"))}
        )
        first = model.invoke("Say something.")
        again = model.invoke("Say something.")
        assert len(server.requests) == 1
        assert again.content == first.content


def test_the_commands_open_the_cache_where_they_are_told(tmp_path, monkeypatch):
    """`--cache` keeps answers in the games' store, `--cache-at` where it names, on play,
    experiment and tournament (scripted seats and bots: the table is made, nothing is asked);
    a location that cannot be one is one line, before any game."""
    import sqlite3

    from typer.testing import CliRunner

    from wargraph.cli import app

    monkeypatch.chdir(tmp_path)

    def tables(path: str) -> set[str]:
        with sqlite3.connect(path) as conn:
            return {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}

    def ok(*args: str) -> None:
        out = CliRunner().invoke(app, list(args))
        assert out.exit_code == 0, out.output

    ok("play", "azuristan_crimsonia", "--model", "scripted", "--rounds", "1", "--cache")
    assert "wargraph_model_cache" in tables("wargraph.sqlite")
    ok(
        "experiment",
        "azuristan_personas",
        "--model",
        "scripted",
        "--runs",
        "1",
        "--out",
        "exp",
        "--cache-at",
        "exp-answers.sqlite",
    )
    assert "wargraph_model_cache" in tables("exp-answers.sqlite")
    ok("tournament", "blotto_bots", "--out", "t", "--cache")
    assert "wargraph_model_cache" in tables("t/checkpoints.sqlite")
    (tmp_path / "folder").mkdir()
    out = CliRunner().invoke(
        app, ["play", "azuristan_crimsonia", "--model", "scripted", "--cache-at", "folder"]
    )
    said = " ".join(out.output.split())  # the console wraps long lines
    assert out.exit_code == 2 and "model cache:" in said and "is a folder, not a SQLite" in said
    assert len(list((tmp_path / "runs").iterdir())) == 1  # the first play's; none for this one
