"""Trust, round four (issue 32), the attacks that need no server: one lock per store however it
is named, a trace that is a device, a pipe or huge, a person's over-long answer, a tournament's
bad seed, the view's fork command and call count, the error log's place, and thread ids whole
and by prefix. (The server's: tests/server/test_trust_four.py.)"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.reliability._support import HERE
from wargraph.cli import app
from wargraph.kernel.context import GameContext
from wargraph.runs.runner import GameError, play, resume
from wargraph.store.errors import StoreError
from wargraph.store.lease import GameHeld, lease

SCENARIO = "azuristan_crimsonia"


# --- 2. one store, one lock, however it is named ------------------------------------------------


def _names(tmp_path: Path) -> dict[str, str]:
    """One store, named four ways: its path, a symlink, a relative path with `..` and a
    symlinked folder."""
    folder = tmp_path / "stores"
    folder.mkdir()
    db = folder / "games.sqlite"
    with lease(str(db), "setup"):  # create the store
        pass
    (tmp_path / "link.sqlite").symlink_to(db)
    (tmp_path / "dirlink").symlink_to(folder)
    rel = os.path.relpath(folder / ".." / "stores" / "games.sqlite")
    return {
        "path": str(db),
        "symlink": str(tmp_path / "link.sqlite"),
        "relative with ..": rel,
        "folder symlink": str(tmp_path / "dirlink" / "games.sqlite"),
    }


@pytest.mark.parametrize("other", ["symlink", "relative with ..", "folder symlink", "path"])
def test_a_holder_through_one_name_refuses_a_holder_through_another(tmp_path, other):
    names = _names(tmp_path)
    with lease(names["path"], "busy", command="play"):  # noqa: SIM117  (the order matters)
        with pytest.raises(GameHeld, match="in use by `play`"):
            with lease(names[other], "busy", command="resume"):
                pass
    # and the other way round: held through the other name, refused through the path
    with lease(names[other], "busy", command="resume"):  # noqa: SIM117
        with pytest.raises(GameHeld, match="in use by `resume`"):
            with lease(names["path"], "busy", command="play"):
                pass


def _child(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(HERE / "_lease_child.py"), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("other", ["symlink", "hard link"])
def test_a_cli_game_in_another_process_refuses_a_resume_through_another_name(tmp_path, other):
    """The attack as it was run: a CLI process plays the game through one name; `resume`
    through a symlink (or a hard link made meanwhile) was let in, and the first holder
    stopped. A hard link is refused outright: SQLite keeps a write-ahead log per name, so the
    two names would be two diverging stores."""
    names = _names(tmp_path)
    child = _child("play", names["path"], "g1", "2")
    try:
        assert child.stdout is not None
        assert child.stdout.readline().startswith("step"), "the child game did not start"
        if other == "hard link":
            os.link(names["path"], tmp_path / "hard.sqlite")
            with pytest.raises(StoreError, match="2 names \\(hard links\\)"):
                resume(db=str(tmp_path / "hard.sqlite"), thread_id="g1")
            refused = CliRunner().invoke(
                app, ["resume", "--thread", "g1", "--db", str(tmp_path / "hard.sqlite")]
            )
            assert refused.exit_code == 2 and "hard links" in refused.output, refused.output
            os.unlink(tmp_path / "hard.sqlite")  # one name again: the game goes on
        else:
            with pytest.raises(GameError, match="in use by `play`"):
                resume(db=names[other], thread_id="g1")
        out, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    assert out.strip().endswith("done"), out  # the first holder was never cut off


def test_a_served_store_named_through_a_symlink_or_a_hard_link(tmp_path):
    """`serve --db` checks the store as the CLI does: a hard-linked store is refused before
    the server starts; a symlink is the same store (and the same locks) as its target."""
    from wargraph.server.serve import ServeError, check_store

    names = _names(tmp_path)
    assert check_store(names["symlink"]) == str(Path(names["path"]).resolve())
    os.link(names["path"], tmp_path / "hard.sqlite")
    with pytest.raises(ServeError, match="hard links"):
        check_store(str(tmp_path / "hard.sqlite"))
    with pytest.raises(ServeError, match="hard links"):
        check_store(names["path"])


def test_a_copied_store_has_its_own_locks(tmp_path):
    """A copy (not a link) is another store: its games are not held by the original's."""
    names = _names(tmp_path)
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(Path(names["path"]).read_bytes())
    with lease(names["path"], "busy"), lease(str(copy), "busy"):
        pass


# --- 3. a trace that is a device, a pipe or huge --------------------------------------------------


def _game_folder(tmp_path: Path) -> Path:
    out = tmp_path / "game"
    play(
        SCENARIO,
        overrides=["rounds=1"],
        context=GameContext(model="scripted", seed=1),
        db=str(tmp_path / "g.sqlite"),
        thread_id="viewed",
        out_dir=out,
    )
    return out


def _view(folder: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wargraph.cli", "view", str(folder)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge"])
def test_view_of_a_trace_that_is_not_a_bounded_file_is_refused_at_once(tmp_path, kind):
    folder = _game_folder(tmp_path)
    trace = folder / "trace.jsonl"
    trace.unlink(missing_ok=True)
    if kind == "dev-zero":
        trace.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(trace)
    else:
        import wargraph.runs.trace as tracemod

        with open(trace, "wb") as fh:  # sparse: no disk used
            fh.truncate(tracemod.MAX_TRACE_BYTES + 1)
    t0 = time.monotonic()
    done = _view(folder)
    assert time.monotonic() - t0 < 30
    assert done.returncode == 2, done.stderr
    assert "trace" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert ("not a regular file" in done.stderr) or ("larger than" in done.stderr), done.stderr
    assert not (folder / "view.html").exists() or kind == "huge"


# --- 5. a person's over-long answer is asked again, not cut -----------------------------------------


def test_a_persons_over_long_answer_is_asked_again_with_the_limit(tmp_path):
    from pydantic import BaseModel, Field

    from wargraph.kernel.question import Question  # noqa: F401  (the schemas' module loads)
    from wargraph.seats.deciders import parse_answer

    class Plan(BaseModel):
        plan: str = Field(max_length=1200)

    long = "x" * 5000
    assert len(parse_answer({"plan": long}, Plan).plan) == 1200  # a model's: cut (documented)
    with pytest.raises(ValueError, match=r"plan: 5,000 characters, the most is 1,200"):
        parse_answer({"plan": long}, Plan, cut=False)
    with pytest.raises(ValueError, match="the most is 1,200"):
        parse_answer(json.dumps({"plan": long}), Plan, cut=False)  # pasted JSON at the terminal


class _Enough(Exception):
    pass


def test_a_seat_asks_a_person_again_when_the_plan_is_over_long(tmp_path):
    """A person pastes a 5,000-character plan (at the terminal, or through the seat API: both
    answer the seat's question): the seat asks again with the limit; the shorter answer is the
    one recorded."""
    db = str(tmp_path / "p.sqlite")
    first = play(
        SCENARIO,
        overrides=["rounds=1"],
        context=GameContext(model="scripted", seed=1, humans=["crimsonia"]),
        db=db,
        thread_id="person",
    )
    asked = first.interrupts[0]["value"]
    assert asked["task"] == "plan"
    limit = asked["schema"]["properties"]["plan"]["maxLength"]
    seen: list[dict] = []

    def person(payload):
        seen.append(payload)
        if len(seen) == 1:
            return {"plan": "L" * 5000}
        if len(seen) == 2:
            return {"plan": "SHORT-PLAN hold the line"}
        raise _Enough

    with contextlib.suppress(_Enough):  # a later question: enough seen
        resume(db=db, thread_id="person", human_io=person)
    assert len(seen) >= 2 and not seen[0]["error"]
    assert seen[1]["ask_id"] == seen[0]["ask_id"], "the same question is asked again"
    assert f"5,000 characters, the most is {limit:,}" in seen[1]["error"], seen[1]["error"]
    from wargraph.runs.runner import game_graph, load_run
    from wargraph.store.saver import open_saver

    sc, _ = load_run(db, "person")
    with open_saver(db, create=False) as saver:
        state = game_graph(sc, saver).get_state({"configurable": {"thread_id": "person"}})
    texts = [e["text"] for e in state.values["events"]]
    assert not any("L" * 1200 in t for t in texts)
    assert any("SHORT-PLAN" in t for t in texts)


# --- 6. a tournament's bad values are refused before play ----------------------------------------


@pytest.mark.parametrize(
    "seed, why", [(-7, "greater than or equal to 0"), (1.5, "integer"), (True, "integer")]
)
def test_a_tournament_with_a_bad_seed_is_refused_before_any_game(tmp_path, seed, why):
    from wargraph.evals.tournament.spec import TournamentError, load_tournament

    spec = {
        "name": "t",
        "scenario": SCENARIO,
        "entrants": {"a": {"model": "scripted"}, "b": {"model": "scripted"}},
        "seed": seed,
    }
    with pytest.raises(TournamentError, match=why):
        load_tournament(spec)
    path = tmp_path / "t.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")
    for extra in ([], ["--report-only"]):
        result = CliRunner().invoke(
            app, ["tournament", str(path), "--out", str(tmp_path / "out"), *extra]
        )
        assert result.exit_code == 2, result.output
        assert "seed" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # no game was played


def test_report_only_of_a_hand_edited_schedule_is_one_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(
        json.dumps(
            {
                "name": "t",
                "scenario": SCENARIO,
                "entrants": {"a": {"model": "scripted"}, "b": {"model": "scripted"}},
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    out.mkdir()
    (out / "schedule.json").write_text(json.dumps({"games": [{"index": 0}]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["tournament", str(path), "--out", str(out), "--report-only"])
    assert result.exit_code == 2, result.output
    assert "not a tournament schedule" in result.output


# --- 10, 11. the view's fork command and its count of model calls ---------------------------------


def test_the_view_forks_from_the_store_the_game_was_played_with(tmp_path):
    from wargraph.runs.records import load_record
    from wargraph.runs.trace import read_trace
    from wargraph.view import build_view

    os.chdir(tmp_path)
    result = CliRunner().invoke(
        app,
        ["play", SCENARIO, "--model", "scripted", "--rounds", "1", "--db", "x.sqlite"]
        + ["--thread", "forked", "--out", "game"],
    )
    assert result.exit_code == 0, result.output
    record = load_record(tmp_path / "game")
    data = build_view(record, read_trace(tmp_path / "game" / "trace.jsonl"))
    commands = [p["replay"] for p in data["phases"] if p.get("replay")]
    assert commands and all(f"--db {tmp_path / 'x.sqlite'}" in c for c in commands), commands
    assert not any("wargraph.sqlite" in c for c in commands)
    # and the CLI's view writes the same (no --db given)
    done = CliRunner().invoke(app, ["view", "game"])
    assert done.exit_code == 0, done.output
    page = (tmp_path / "game" / "view.html").read_text(encoding="utf-8")
    packed = max(re.findall(r"[A-Za-z0-9+/=]{200,}", page), key=len)
    shown = json.loads(gzip.decompress(base64.b64decode(packed)))
    assert [p["replay"] for p in shown["phases"] if p.get("replay")] == commands
    # an explicit --db still wins
    data = build_view(record, [], db="other.sqlite")
    assert all("--db other.sqlite" in p["replay"] for p in data["phases"] if p.get("replay"))


def test_the_view_counts_model_calls_as_the_command_line_does():
    from wargraph.models.faults import summarize
    from wargraph.view.payload import build_payload

    def line(event: str, **kw) -> dict:
        return {"event": event, "role": "azuristan", "node": "order", "round": 1, **kw}

    trace = [line("call"), line("corrected"), line("call"), line("rejected"), line("call")]
    trace += [line("fallback"), line("corrected")]
    record = {"scenario": {"family": "crisis", "title": "t"}, "events": [], "thread_id": "t"}
    data = build_payload(record, trace)
    assert data["model_calls"] == summarize(trace, "t")["calls"] == 3
    js = (Path(__file__).parents[2] / "src/wargraph/view/assets/view.js").read_text()
    assert "d.model_calls" in js and 'd.calls.length + " calls"' not in js


# --- the error log, thread ids -----------------------------------------------------------------


def test_the_error_log_is_per_user_and_private(tmp_path, monkeypatch):
    import tempfile

    import wargraph.runs.errorlog as errorlog

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    path = errorlog.write_error_log("Traceback: secret prompt")
    assert path.parent == tmp_path / f"wargraph-{os.getuid()}"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "Traceback: secret prompt"
    # a name squatted by someone else (here a symlink to a folder open to all) is not used
    for child in path.parent.iterdir():
        child.unlink()
    path.parent.rmdir()
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    (tmp_path / f"wargraph-{os.getuid()}").symlink_to(shared)
    other = errorlog.write_error_log("second")
    assert shared not in other.parents and other.parent.parent == tmp_path
    assert stat.S_IMODE(other.parent.stat().st_mode) == 0o700
    assert not list(shared.iterdir())


def _stored_games(db: str, threads: list[str]) -> None:
    for tid in threads:
        play(
            SCENARIO,
            overrides=["rounds=1"],
            context=GameContext(model="scripted", seed=1),
            db=db,
            thread_id=tid,
        )


def test_games_lists_whole_ids_piped_and_as_json_and_resume_takes_a_prefix(tmp_path):
    db = str(tmp_path / "g.sqlite")
    long_a = "abc1234567890-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    long_b = "abc1234567890-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    _stored_games(db, [long_a, long_b])
    listed = subprocess.run(
        [sys.executable, "-m", "wargraph.cli", "games", "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert listed.returncode == 0, listed.stderr
    assert long_a in listed.stdout and long_b in listed.stdout, listed.stdout
    as_json = CliRunner().invoke(app, ["games", "--db", db, "--json"])
    rows = json.loads(as_json.stdout)
    assert {r["thread_id"] for r in rows} == {long_a, long_b}
    assert {"status", "round", "family", "scenario"} <= set(rows[0])
    # a unique prefix names its game; an ambiguous one lists the matches
    done = CliRunner().invoke(app, ["resume", "--thread", "abc1234567890-b", "--db", db])
    assert done.exit_code == 0, done.output
    assert long_b in done.output
    amb = CliRunner().invoke(app, ["resume", "--thread", "abc123", "--db", db])
    assert amb.exit_code == 2
    assert long_a in amb.output and long_b in amb.output and "give more" in amb.output
    view = CliRunner().invoke(
        app, ["view", "--thread", "abc1234567890-a", "--db", db, "--out", str(tmp_path / "v.html")]
    )
    assert view.exit_code == 0, view.output
    assert (tmp_path / "v.html").exists()


# --- 4. a plug-in's scenarios= and prompts= packages, under the guard -------------------------------

BAD_PACKAGES = {
    "exits": "import sys\nsys.exit(0)\n",
    "raises": "raise RuntimeError('PLUGIN-BOOM')\n",
    "prints": "import os\nprint('PLUGIN-LOUD')\nos.write(1, b'PLUGIN-LOUD fd1\\n')\n",
    "slow": "import time\ntime.sleep(0.6)\n",
}


@pytest.fixture
def bad_data_plugins(tmp_path, monkeypatch, entry_points):
    """One plug-in family per misbehaviour, each with a scenarios and a prompts package whose
    import misbehaves so (the family's own module is a good one)."""
    root = tmp_path / "plugins"
    (root / "wg_trust4").mkdir(parents=True)
    (root / "wg_trust4" / "__init__.py").write_text("")
    targets = {}
    for kind, code in BAD_PACKAGES.items():
        name = f"t4{kind}"
        (root / "wg_trust4" / f"{name}.py").write_text(
            "from wargraph.kernel.families import Family\n"
            f"FAMILY = Family('{name}', 'wargraph.kernel.scenario:Scenario', 'wargraph.graphs.crisis.graph',"
            f" scenarios='wg_trust4_{kind}_sc', prompts='wg_trust4_{kind}_pr')\n"
        )
        for suffix in ("sc", "pr"):
            pkg = root / f"wg_trust4_{kind}_{suffix}"
            pkg.mkdir()
            (pkg / "__init__.py").write_text(code)
        (root / f"wg_trust4_{kind}_sc" / f"{name}_game.yaml").write_text("family: x\n")
        targets[name] = f"wg_trust4.{name}:FAMILY"
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr("wargraph.kernel.families.SLOW_IMPORT_S", 0.2)
    entry_points(**targets)
    return targets


def test_a_plugins_data_packages_are_imported_under_the_guard(bad_data_plugins, capfd):
    import wargraph.kernel.families as families
    from wargraph.prompts import PromptError, load_prompt

    shipped = families.shipped_scenarios()  # neither exits, raises nor prints on stdout
    assert "azuristan_crimsonia" in shipped  # the built-ins' are all there
    assert "t4prints_game" in shipped and "t4slow_game" in shipped
    assert "t4exits_game" not in shipped and "t4raises_game" not in shipped
    captured = capfd.readouterr()
    assert "PLUGIN-LOUD" not in captured.out and "PLUGIN-LOUD fd1" in captured.err
    assert "plug-in 't4slow' (wg_trust4_slow_sc) is still importing" in captured.err
    problems = families.problems()
    assert "SystemExit" in problems["t4exits"] and "PLUGIN-BOOM" in problems["t4raises"]
    # a fresh family whose prompts package alone fails (its scenarios never read)
    families.refresh()
    with pytest.raises(PromptError, match=r"plug-in 't4exits' \(wg_trust4_exits_pr\).*SystemExit"):
        load_prompt("control_system", family="t4exits")
    assert load_prompt("control_system", family="t4prints")  # falls back to wargraph's own
    assert "PLUGIN-LOUD" not in capfd.readouterr().out


def test_scenarios_play_and_serve_work_beside_a_broken_data_package(bad_data_plugins, tmp_path):
    from wargraph.server.serve import effective_config

    listed = CliRunner().invoke(app, ["scenarios"])
    assert listed.exit_code == 0, listed.output
    assert "azuristan_crimsonia" in listed.output and "PLUGIN-BOOM" in listed.output
    played = CliRunner().invoke(
        app,
        ["play", SCENARIO, "--model", "scripted", "--rounds", "1"]
        + ["--db", str(tmp_path / "g.sqlite"), "--out", str(tmp_path / "g")],
    )
    assert played.exit_code == 0, played.output
    config, _skipped = effective_config()
    assert "crisis" in config["graphs"]


# --- 9. a seat's private notes do not repeat its own messages its view shows ---------------------


def test_a_seats_notes_do_not_repeat_its_own_message(tmp_path):
    from wargraph.runs.trace import read_trace

    play(
        "blotto",
        overrides=["rounds=1"],
        context=GameContext(model="scripted", seed=1),
        db=str(tmp_path / "b.sqlite"),
        thread_id="blotto",
        out_dir=tmp_path / "b",
    )
    trace = read_trace(tmp_path / "b" / "trace.jsonl")
    sent = [
        m["text"]
        for t in trace
        if t.get("role") == "north" and t.get("task") == "message"
        for m in (t.get("output") or {}).get("messages", [])
    ]
    diary = next(t for t in trace if t.get("role") == "north" and t.get("task") == "diary")
    prompt = diary["messages"][-1]["content"]
    assert sent or "message from north" in prompt
    mine = prompt.split("[round 1, message from north", 1)[1].split("\n")[1].lstrip("> ")
    assert prompt.count(mine[:40]) == 1, prompt  # shown once, in the view; not again as a note


# --- 12. two `order` mounts: a revision is read by the mount that placed the proposal ------------


def test_a_persons_revised_reply_is_read_by_the_mount_that_asked(monkeypatch, entry_points):
    """The bargaining plug-in (tests/plugins/bargain) mounts `order` twice (offers, replies) and
    the secretary after each; here the secretary refuses each first reply and asks it again.
    A person's revised reply is a reply, read by `respond`'s Orders, not `propose`'s (which
    made it an empty offer, counted as no answer)."""
    import dataclasses

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from tests.plugins import bargain
    from wargraph.kernel.graphkit import build_game
    from wargraph.kernel.scenario import load_scenario
    from wargraph.nodes.adjudicate import adjudicate
    from wargraph.nodes.order import order
    from wargraph.nodes.secretary_validate import secretary_validate
    from wargraph.worlds import Check, Question

    entry_points(bargain="tests.plugins.bargain:FAMILY")

    class RepliesAskedTwice(bargain.Shares):
        def check(self, table, actor, proposal):
            attempts = ((table.state.get("world") or {}).get("attempts") or {}).get(actor, 0)
            if isinstance(proposal, bool) and attempts == 0:
                return Check(accepted=proposal, reasons=["say it once more"])
            return super().check(table, actor, proposal)

        def revise_question(self, table, actor, proposal, check, attempt):
            if isinstance(proposal, bool):
                return Question(task="revise", question="Again?", schema=bargain.REPLY, fallback={})
            return super().revise_question(table, actor, proposal, check, attempt)

    shares = bargain.BARGAIN.secretary  # its template and terms kept, its checks extended
    kept = {f.name: getattr(shares, f.name) for f in dataclasses.fields(shares)}
    world = dataclasses.replace(
        bargain.BARGAIN, secretary=RepliesAskedTwice(**{**kept, "give_up_status": "x"})
    )
    sc = load_scenario(bargain.DEFAULT_SCENARIO, ["rounds=1"])
    phases = {
        "propose": order,
        "secretary_validate": secretary_validate,
        "respond": order,
        "check_replies": secretary_validate,
        "adjudicate": adjudicate,
    }
    graph = build_game(phases, roster=list(sc.roles), world=world, scenario=sc).compile(
        checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    ctx = GameContext(model="scripted", seed=0, humans=["bob"])
    graph.invoke({"scenario": sc.model_dump()}, config, context=ctx)
    tasks = []
    for _ in range(6):
        pending = graph.get_state(config).interrupts
        if not pending:
            break
        tasks += [i.value["task"] for i in pending]
        graph.invoke(Command(resume={i.id: {"accept": True} for i in pending}), config, context=ctx)
    assert tasks == ["reply", "revise"], tasks  # bob replied, was asked again, said yes again
    # the round's proposals as the adjudicator found them
    judged = next(
        h.values["world"] for h in graph.get_state_history(config) if h.next == ("adjudicate",)
    )
    assert judged["proposals"]["bob"] is True, judged["proposals"]
    assert judged["placed_by"]["bob"] == "respond" and judged["status"]["bob"] == "accepted"
    verdicts = [
        e["text"] for e in graph.get_state(config).values["events"] if e["kind"] == "verdict"
    ]
    assert not any(e.startswith("The secretary's verdict") and "bob" in e for e in verdicts[1:])
