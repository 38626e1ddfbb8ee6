"""Server configuration, graph factories and seat tokens (no server started here)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

import wargraph.server.factory as factories
from tests.aio import run
from wargraph.kernel.scenario import ScenarioError
from wargraph.server import FAMILIES
from wargraph.server.seats import (
    TokenError,
    bearer,
    check_token,
    facilitator_token,
    seat_token,
)
from wargraph.server.serve import (
    DEFAULT_CONFIG,
    ServeError,
    effective_config,
    free_port,
    serve,
    start,
)

ROOT = Path(__file__).resolve().parents[2]


_run = run


def test_repository_langgraph_json_is_the_served_default():
    data = json.loads((ROOT / "langgraph.json").read_text())
    for key in ("auth", "http"):
        assert data[key] == DEFAULT_CONFIG[key], key
    # the same graph modules: by file path in the repository (LangGraph's convention), by module
    # name when served from an installed wheel
    for family, spec in data["graphs"].items():
        path, _, var = spec.rpartition(":")
        assert path == f"./src/wargraph/graphs/{family}/graph.py", spec
        assert DEFAULT_CONFIG["graphs"][family] == f"wargraph.graphs.{family}.graph:{var}"
    assert list(data["graphs"]) == list(FAMILIES)
    assert data["auth"]["disable_studio_auth"] is True  # else Studio's scheme skips our auth


def test_effective_config_leaves_out_graphs_that_cannot_load(tmp_path):
    (tmp_path / "mine.py").write_text("graph = None\n")
    cfg = tmp_path / "langgraph.json"
    cfg.write_text(
        json.dumps(
            {
                "dependencies": ["."],
                "graphs": {
                    "crisis": "wargraph.server.graphs:crisis",
                    "ghost": "wargraph.server.graphs:ghost_family",
                    "nomodule": "no_such_package.games:graph",
                    "local": "./mine.py:graph",
                    "nofile": "./missing.py:graph",
                    "broken": "no-colon-here",
                },
                "auth": {"path": "./auth.py:auth"},
            }
        )
    )
    data, skipped = effective_config(cfg)
    assert set(data["graphs"]) == {"crisis", "local"}
    assert set(skipped) == {"ghost", "nomodule", "nofile", "broken"}
    assert "unknown game family 'ghost_family'" in skipped["ghost"]  # the registry says why
    assert data["graphs"]["local"] == f"{tmp_path / 'mine.py'}:graph"  # relative to the config
    assert data["auth"]["path"] == f"{tmp_path / 'auth.py'}:auth"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such config file"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "'graphs' mapping"),
        ('{"graphs": {"x": "nowhere.at.all:graph"}}', "no game graph can be loaded"),
    ],
)
def test_bad_config_files_get_a_clear_error(tmp_path, content, message):
    cfg = tmp_path / "langgraph.json"
    if content is not None:
        cfg.write_text(content)
    with pytest.raises(ServeError, match=message):
        effective_config(cfg)


def test_a_busy_port_is_refused_before_anything_starts(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(ServeError, match=f"port {port}"):
            start(port=port, state_dir=tmp_path / "state")
        assert serve(port=port, state_dir=tmp_path / "state") == 2
    assert "in use" in capsys.readouterr().err
    assert not (tmp_path / "state" / ".langgraph_api").exists()


def test_seat_tokens_verify_and_resist_tampering():
    secret = "s3cret"
    token = seat_token("thread-1", "azuristan", secret)
    holder = check_token(token, secret)
    assert (holder.kind, holder.thread_id, holder.seat) == ("seat", "thread-1", "azuristan")
    assert check_token(facilitator_token(secret), secret).kind == "facilitator"
    other_body = seat_token("thread-1", "crimsonia", secret).split(".")[1]
    _, _, mac = token.split(".")
    for bad in [
        "",
        None,
        "s.x",
        f"s.{other_body}.{mac}",  # another seat under this seat's signature
        seat_token("thread-1", "azuristan", "other-secret"),
        facilitator_token("other-secret"),
        "f." + "0" * 32,
        "s.!!!.abc",
        "x" * 5000,
    ]:
        with pytest.raises(TokenError):
            check_token(bad, secret)
    with pytest.raises(TokenError):
        seat_token("thread\n1", "azuristan", secret)


def test_bearer_reads_the_server_hook_headers():
    assert bearer({b"authorization": b"Bearer abc"}) == "abc"
    assert bearer({"Authorization": "bearer  abc "}) == "abc"
    assert bearer({"x-api-key": "k"}) == "k"
    assert bearer({"authorization": "Basic abc"}) is None
    assert bearer({}) is None and bearer(None) is None


def test_factories_refuse_missing_families_and_bad_selections():
    from starlette.exceptions import HTTPException

    with pytest.raises(factories.GraphUnavailable, match="ghost_family"):
        factories._load("ghost_family")
    with pytest.raises(HTTPException) as err:
        _run(factories.graph_for("ghost_family", {}))
    assert err.value.status_code == 422
    with pytest.raises(factories.GraphUnavailable, match="configurable.scenario"):
        factories.selection({"configurable": {"scenario": 42}})
    with pytest.raises(factories.GraphUnavailable, match="configurable.overrides"):
        factories.selection({"configurable": {"overrides": ["rounds=3"]}})
    with pytest.raises(factories.GraphUnavailable, match="family 'tabletop'"):
        factories.build_compiled("crisis", "haiwire", {})


def test_factory_builds_the_seats_of_the_selected_scenario_and_caches_it():
    config = {"configurable": {"scenario": "strait_standoff", "overrides": {"rounds": 1}}}
    first = _run(factories.graph_for("crisis", config))
    again = _run(factories.graph_for("crisis", config))
    assert first is again
    assert "agent_sela_president" in first.nodes and "agent_azuristan" not in first.nodes
    default = _run(factories.graph_for("crisis", {"configurable": {}}))
    assert "agent_azuristan" in default.nodes
    assert default.checkpointer is None  # the server brings its own


def test_registered_scenarios_are_checked_before_the_server_starts(tmp_path, capsys):
    from wargraph.server.catalog import check_registration

    good = tmp_path / "my_game.yaml"
    good.write_text("title: mine\n")
    assert check_registration([good]) == {"my_game": good.resolve()}
    (tmp_path / "other").mkdir()
    (tmp_path / "azuristan_crimsonia.yaml").write_text("title: shadow\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "other" / "my_game.yml").write_text("title: twin\n")
    cases = {
        tmp_path / "missing.yaml": "no such file",
        tmp_path / "notes.txt": "ends in .yaml",
        tmp_path / "azuristan_crimsonia.yaml": "name of a shipped scenario",
    }
    for path, message in cases.items():
        with pytest.raises(ScenarioError, match=message):
            check_registration([path])
    with pytest.raises(ScenarioError, match="two files are named 'my_game'"):
        check_registration([good, tmp_path / "other" / "my_game.yml"])
    with pytest.raises(ServeError, match="no such file"):
        start(port=free_port(), state_dir=tmp_path / "state", scenarios=[tmp_path / "gone.yaml"])
    assert serve(port=free_port(), state_dir=tmp_path / "state", scenarios=["gone.yaml"]) == 2
    assert "gone.yaml: no such file" in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_a_name_from_a_request_is_never_read_as_a_file(tmp_path, monkeypatch):
    from wargraph.server.catalog import REGISTERED_ENV, catalog, open_scenario

    monkeypatch.chdir(tmp_path)
    (tmp_path / "leak").write_text("title: leaked\n")
    (tmp_path / "azuristan_crimsonia").mkdir()  # a local folder named like a shipped scenario
    monkeypatch.setenv(REGISTERED_ENV, "relative.yaml")  # only absolute paths count
    assert "relative" not in catalog()
    for name in ("leak", "./leak", str(tmp_path / "leak"), "relative"):
        with pytest.raises(ScenarioError, match="no shipped or registered scenario"):
            open_scenario(name, None)
    assert open_scenario("azuristan_crimsonia", None).title.startswith("The Zafaristan")


def test_scenario_text_is_read_like_a_file_without_aliases():
    from wargraph.kernel.scenario import shipped_scenarios
    from wargraph.server.catalog import read_text

    text = shipped_scenarios()["azuristan_crimsonia"].read_text(encoding="utf-8")
    assert read_text(text)["title"].startswith("The Zafaristan")
    bomb = 'a: &a ["x", "x"]\nb: &b [*a, *a]\nc: [*b, *b]\ntitle: boom\n'
    cases = {
        bomb: "anchors and aliases",
        "title: [unclosed\n": "scenario_text: line",
        "title: one\ntitle: two\n": "given twice",
        "- just\n- a list\n": "expected a mapping",
    }
    for given, message in cases.items():
        with pytest.raises(ScenarioError, match=message) as err:
            read_text(given)
        assert "wargraph-scenario-" not in str(err.value)  # the temporary file is not shown
