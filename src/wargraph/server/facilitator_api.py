"""The facilitator's API: the scenarios on offer, starting games with seat links, and every game's
seats and transcript. Every route needs the facilitator's token.

  GET  /wargraph/scenarios                 shipped and registered scenarios, their seats and
                                           their family's options (`Family.play_options`)
  GET  /wargraph/graphs                     games on this server
  POST /wargraph/graphs                     start a game (a scenario's name, mapping or YAML
                                           text; `options`: the family's), get the seat links
  GET  /wargraph/graphs/{thread_id}         seats, who is to answer, the transcript
  GET  /wargraph/graphs/{thread_id}/record  record.json of the game
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

import wargraph.server.stored as stored
from wargraph.kernel.context import GameContext
from wargraph.server.api import (
    ApiError,
    body_of,
    facilitator_of,
    json_response,
    route,
    thread_id_of,
)
from wargraph.server.deadlines import deadline_of, phase_key
from wargraph.server.games import (
    client,
    family_moment,
    moment_of,
    people,
    public_event,
    question,
    read_game,
    run_settings,
    status_of,
    stored_scenario,
    wargraph_meta,
)
from wargraph.server.seats import seat_token
from wargraph.server.shared import adopt_listed

if TYPE_CHECKING:
    from wargraph.kernel.scenario import Scenario

_NS = uuid.UUID("5b0c3e7e-8f5c-4c55-9f4e-6f0e8c2f4a11")
# What a run's context may set from the facilitator page; the rest keeps its default.
_PAGE_CONTEXT = ("model", "role_models", "seed", "humans", "temperature", "max_tokens")
_SETTING_TYPES = (
    ("model", str, "a model reference such as embedded or openai:gpt-4o-mini"),
    ("role_models", dict, "a mapping of seat to model reference"),
    ("seed", int, "a whole number"),
    ("temperature", (int, float), "a number"),
    ("max_tokens", int, "a whole number"),
)


def _offered() -> list[dict[str, Any]]:
    """Shipped and registered scenarios with their seats (sync: reads files; run in a thread)."""
    from wargraph.kernel.scenario import ScenarioError
    from wargraph.server.catalog import catalog, open_scenario, registered
    from wargraph.server.factory import available

    served = {f for f, err in available().items() if err is None}
    mine = registered()
    out: list[dict[str, Any]] = []
    for name in sorted(catalog()):
        try:
            sc = open_scenario(name, None)
        except ScenarioError as err:
            out.append({"name": name, "error": str(err)})
            continue
        out.append(
            {
                "name": name,
                "registered": name in mine,
                "title": sc.title,
                "family": sc.family,
                "served": sc.family in served,
                "rounds": sc.rounds,
                "seats": [
                    {"seat": r, "kind": role.kind, "review": role.review}
                    for r, role in sc.roles.items()
                ],
                "control": sc.control.name,
                "options": family_options(sc),
            }
        )
    return out


def _current(sc: Scenario, dotted: str) -> Any:
    """The scenario's value at a dotted key (`diplomacy.max_year`), None when it has none."""
    node: Any = sc
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else getattr(node, part, None)
        if node is None:
            return None
    return node if isinstance(node, str | int | float | bool) else None


def family_options(sc: Scenario) -> list[dict[str, Any]]:
    """The options of the scenario's family (`Family.play_options`, those `wargraph play` takes)
    with the scenario's own values: what the setup page offers to change."""
    from wargraph.kernel.families import FamilyError, get

    try:
        declared = get(sc.family).play_options
    except FamilyError:
        return []
    return [
        {
            "key": o.key,
            "label": o.help or o.flag.removeprefix("--").replace("-", " "),
            "flag": o.flag,
            "metavar": o.metavar,
            "value": _current(sc, o.key),
        }
        for o in declared
    ]


@route
async def scenarios(request: Request) -> Response:
    facilitator_of(request)
    return json_response({"scenarios": await asyncio.to_thread(_offered)})


def _read_text(text: str) -> dict[str, Any]:
    from wargraph.kernel.scenario import ScenarioError
    from wargraph.server.catalog import read_text

    try:
        return read_text(text)
    except ScenarioError as err:
        raise ApiError(400, str(err)) from None


def _selection(body: dict[str, Any]) -> tuple[str | dict[str, Any], dict[str, Any]]:
    """The scenario and overrides a game request asks for."""
    scenario = body.get("scenario")
    text = body.get("scenario_text")
    if text is not None:
        if scenario is not None or not isinstance(text, str) or not text.strip():
            raise ApiError(
                400, "scenario_text: the YAML text of a scenario file, sent instead of scenario"
            )
        scenario = _read_text(text)
    if not isinstance(scenario, str | dict) or not scenario:
        raise ApiError(
            400,
            "scenario: the name of a shipped or registered scenario, or a scenario mapping "
            "(or send scenario_text: the YAML text of a scenario file)",
        )
    overrides = body.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise ApiError(400, "overrides: a mapping of dotted keys, e.g. {'rounds': 3}")
    overrides = dict(overrides)
    rounds = body.get("rounds")
    if rounds not in (None, ""):
        if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 200:
            raise ApiError(400, "rounds: a whole number from 1 to 200")
        overrides["rounds"] = rounds
    if body.get("review"):
        overrides["control.review"] = True
    return scenario, overrides


def _options(body: dict[str, Any], sc: Scenario) -> dict[str, Any]:
    """The family options a game request sets (`options: {key: value}`, keys as
    `GET /wargraph/scenarios` lists them), as scenario overrides; empty values keep the
    scenario's own."""
    given = body.get("options")
    if given in (None, {}):
        return {}
    known = {o["key"]: o for o in family_options(sc)}
    if not isinstance(given, dict):
        raise ApiError(
            400, "options: a mapping of option key to value, e.g. {'diplomacy.max_year': 1902}"
        )
    unknown = sorted(str(k) for k in given if k not in known)
    if unknown:
        mine = ", ".join(known) or "none"
        raise ApiError(400, f"options: {sc.family} games take no {unknown} (theirs: {mine})")
    out: dict[str, Any] = {}
    for key, value in given.items():
        if value in (None, ""):
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, str | int | float)
            or len(str(value)) > 200
        ):
            raise ApiError(400, f"options: {key} ({known[key]['label']}): a number or a short text")
        out[key] = value
    return out


def _context(body: dict[str, Any], sc: Scenario, humans: list[str]) -> dict[str, Any]:
    """The run settings a game request asks for, checked against the scenario's seats."""
    from wargraph.models.chat import ModelRefError, parse_model_ref

    context: dict[str, Any] = {"humans": list(dict.fromkeys(humans))}
    for key in _PAGE_CONTEXT:
        if key in body and key != "humans" and body[key] not in (None, ""):
            context[key] = body[key]
    for key, kinds, what in _SETTING_TYPES:
        value = context.get(key)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            raise ApiError(400, f"{key}: expected {what}")
    if not 0 <= float(context.get("temperature", 0.7)) <= 2:
        raise ApiError(400, "temperature: from 0 to 2")
    if not 1 <= int(context.get("max_tokens", 200)) <= 8192:
        raise ApiError(400, "max_tokens: from 1 to 8192")
    bad_roles = sorted(set(context.get("role_models") or {}) - set(sc.roles))
    if bad_roles:
        raise ApiError(400, f"role_models: no seat {bad_roles} in this scenario")
    try:
        ctx = GameContext(**context)
        parse_model_ref(ctx.model)
        for ref in ctx.role_models.values():
            if not isinstance(ref, str):
                raise ValueError("role_models: each value is a model reference string")
            parse_model_ref(ref)
    except (ValueError, ModelRefError) as err:
        raise ApiError(400, str(err)) from None
    _check_models(context, sc)
    return context


def _check_models(context: dict[str, Any], sc: Scenario) -> None:
    """Every model the game would call is the operator's to allow, never the request's."""
    from wargraph.server.endpoints import allowed, why_refused

    entries = allowed()
    asked = [context.get("model") or "embedded", *(context.get("role_models") or {}).values()]
    asked += [role.model for role in sc.roles.values() if role.model]
    for reference in asked:
        why = why_refused(reference, entries)
        if why:
            raise ApiError(403, why)


def _prepare_game(body: dict[str, Any]) -> dict[str, Any]:
    """Validate a game request (sync: loads the scenario)."""
    from wargraph.kernel.scenario import ScenarioError
    from wargraph.server.catalog import open_scenario, resolve
    from wargraph.server.factory import available

    scenario, overrides = _selection(body)
    try:
        sc = open_scenario(scenario, overrides)
        chosen = _options(body, sc)
        if chosen:
            overrides = {**overrides, **chosen}
            sc = open_scenario(scenario, overrides)
    except ScenarioError as err:
        raise ApiError(400, str(err)) from None
    errors = available()
    if sc.family not in errors:
        raise ApiError(400, f"no graph serves the {sc.family!r} family on this server")
    why = errors[sc.family]
    if why:
        raise ApiError(400, why)
    humans = body.get("humans") or []
    if not isinstance(humans, list) or not all(isinstance(h, str) for h in humans):
        raise ApiError(400, "humans: a list of seat names")
    unknown = sorted(set(humans) - set(sc.roles))
    if unknown:
        raise ApiError(400, f"humans: no seat {unknown} in this scenario (seats: {list(sc.roles)})")
    return {
        "scenario": scenario,
        # The run's setup reads its scenario from here: the catalog's file, never a bare name.
        "source": str(resolve(scenario)) if isinstance(scenario, str) else scenario,
        "overrides": overrides,
        "family": sc.family,
        "title": sc.title,
        "seats": list(sc.roles),
        "humans": people(sc, humans),
        "context": _context(body, sc, humans),
    }


def _links(request: Request, thread_id: str, humans: list[str]) -> dict[str, str]:
    base = str(request.base_url).rstrip("/")
    return {h: f"{base}/play#token={seat_token(thread_id, h)}" for h in humans}


@route
async def create_game(request: Request) -> Response:
    facilitator_of(request)
    game = await asyncio.to_thread(_prepare_game, await body_of(request))
    c = client()
    selection = {"scenario": game["scenario"], "overrides": game["overrides"]}
    key = json.dumps([game["family"], selection], sort_keys=True)
    assistant_id = str(uuid.uuid5(_NS, key))
    # One assistant per (family, scenario, overrides): the graph factory builds its seats, and
    # thread reads find the same graph through the assistant's config.
    await c.assistants.create(
        game["family"],
        config={"configurable": selection},
        assistant_id=assistant_id,
        if_exists="do_nothing",
        name=f"{game['family']}: {game['title']}"[:120],
    )
    meta = {
        "wargraph": {
            "title": game["title"],
            "family": game["family"],
            "scenario": game["scenario"] if isinstance(game["scenario"], str) else "(inline)",
            "assistant_id": assistant_id,
            "context": game["context"],
        }
    }
    thread = await c.threads.create(metadata=meta)
    thread_id = thread["thread_id"]
    await c.runs.create(
        thread_id,
        assistant_id,
        input={"scenario": game["source"], "overrides": game["overrides"]},
        context=game["context"],
        multitask_strategy="reject",
    )
    return json_response(
        {
            "thread_id": thread_id,
            "title": game["title"],
            "family": game["family"],
            "seats": game["seats"],
            "humans": game["humans"],
            "links": _links(request, thread_id, game["humans"]),
        },
        201,
    )


@route
async def list_games(request: Request) -> Response:
    facilitator_of(request)
    c = client()
    threads = await c.threads.search(limit=100, sort_by="created_at", sort_order="desc")
    if stored.store() is not None:
        # the games other servers of the store started, and every game as the store has it
        # now (another server may have moved it on since this one last played it)
        for thread_id in await adopt_listed({str(t["thread_id"]) for t in threads}):
            threads.append(await c.threads.get(thread_id))
        threads = [await _as_stored(t) for t in threads]
    games = await asyncio.to_thread(lambda: [_listed(t) for t in threads])
    return json_response({"games": games})


async def _as_stored(thread: Any) -> Any:
    """A thread of the list with its values and open questions read from the store."""
    from langgraph_sdk.errors import NotFoundError

    try:
        state = await client().threads.get_state(str(thread["thread_id"]))
    except NotFoundError:
        return thread
    asked = [i for i in state.get("interrupts") or [] if isinstance(i, dict)]
    return {**thread, "values": state.get("values") or {}, "interrupts": {"": asked}}


def _listed(t: Mapping[str, Any]) -> dict[str, Any]:
    """A game's row in the list: what tells it apart from the others (its id, when it started,
    where it stands in its own terms) and who it waits for. Sync (a family hook reads the
    state)."""
    wg = wargraph_meta(t)
    stored = t.get("values")
    values = stored if isinstance(stored, dict) else {}
    spec = values.get("spec") or {}
    family = wg.get("family") or (t.get("metadata") or {}).get("graph_id", "")
    asked = t.get("interrupts")
    waiting = [
        i["value"]["seat"]
        for found in (asked.values() if isinstance(asked, dict) else [])
        for i in found or []
        if isinstance(i, dict) and isinstance(i.get("value"), dict) and i["value"].get("seat")
    ]
    rounds = spec.get("rounds") if isinstance(spec, dict) else None
    return {
        "thread_id": t["thread_id"],
        "title": wg.get("title") or spec.get("title") or "(not started)",
        "family": family,
        "status": t.get("status"),
        "round": values.get("round", 0),
        "rounds": rounds if isinstance(rounds, int) else None,
        "moment": family_moment(family, values) if family and values else "",
        "waiting_for": list(dict.fromkeys(waiting)),
        "humans": list((wg.get("context") or {}).get("humans") or []),
        "done": bool(values.get("done")),
        "error": bool(values.get("error")),
        "created_at": str(t.get("created_at", "")),
    }


def _seats(
    sc: Scenario | None,
    named: list[str],
    waiting: dict[str, dict[str, Any]],
    links: dict[str, str],
) -> list[dict[str, Any]]:
    """Each seat of a game: played by a person or not, and the question it has open."""
    order = list(sc.roles) if sc is not None else sorted(set(named) | set(waiting))
    seats = []
    for seat in order:
        q = waiting.get(seat)
        seats.append(
            {
                "seat": seat,
                "human": seat in named or (sc is not None and sc.roles[seat].kind == "human"),
                "review": bool(sc is not None and sc.roles[seat].review),
                "waiting": q is not None,
                "task": q.get("task") if q else None,
                "ask_id": q.get("ask_id") if q else None,
                "link": links.get(seat),
            }
        )
    return seats


@route
async def game_detail(request: Request) -> Response:
    facilitator_of(request)
    thread_id = thread_id_of(request.path_params["thread_id"])
    game = await read_game(thread_id)
    values = game["values"]
    sc = await asyncio.to_thread(stored_scenario, values)
    moment = await asyncio.to_thread(moment_of, sc, values)
    wg = wargraph_meta(game["thread"])
    context = wg.get("context")
    if context is None:
        try:
            _, context = await run_settings(thread_id, game["thread"])
        except ApiError:
            context = {}
    named = list(context.get("humans") or [])
    humans = named if sc is None else people(sc, named)
    waiting: dict[str, dict[str, Any]] = {}
    for i in game["interrupts"]:
        waiting.setdefault(i["value"].get("seat", "?"), question(i["value"]))
    seats = _seats(sc, named, waiting, _links(request, thread_id, humans))
    return json_response(
        {
            "thread_id": thread_id,
            "created_at": str(game["thread"].get("created_at", "")),
            "title": sc.title if sc is not None else wg.get("title", ""),
            "family": sc.family if sc is not None else wg.get("family", ""),
            "status": status_of(game),
            "round": values.get("round", 0),
            "rounds": sc.rounds if sc is not None else None,
            "phase": values.get("phase", ""),
            "moment": moment,
            "done": bool(values.get("done")),
            "error": values.get("error", ""),
            "seats": seats,
            "waiting_for": [s["seat"] for s in seats if s["waiting"]],
            "deadline": None
            if values.get("done")
            else deadline_of(game["deadline"], phase_key(moment, values)),
            "events": [public_event(e) for e in values.get("events") or []],
        }
    )


@route
async def game_record(request: Request) -> Response:
    from wargraph.runs.records import build_record

    facilitator_of(request)
    thread_id = thread_id_of(request.path_params["thread_id"])
    game = await read_game(thread_id)
    return json_response(build_record(game["values"], thread_id=thread_id))
