"""Custom auth for the LangGraph server (`auth.path` in langgraph.json).

One thread holds every seat's secrets (all plans, every inbox), so thread ownership cannot
separate the players of one game. The LangGraph API (threads, runs, state, history, assistants,
store, crons) is therefore for the facilitator only; a player reaches only their own seat through
the player's routes of `wargraph.server.app`, which check the seat of the token on every call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph_sdk import Auth

from wargraph.server.seats import FACILITATOR, TOKEN_WHERE, TokenError, bearer, check_token

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes] | None) -> Auth.types.MinimalUserDict:
    try:
        holder = check_token(bearer(headers))
    except TokenError as err:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail=f"{err}. The LangGraph API takes the facilitator's token as "
            f"Authorization: Bearer <token>: {TOKEN_WHERE}",
        ) from None
    if holder.kind != FACILITATOR:
        # A seat token is valid, but not here: the whole API would show every seat's secrets.
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="a seat token opens only the player's page (/play), not the LangGraph API",
        )
    return {"identity": FACILITATOR, "permissions": [FACILITATOR], "display_name": "facilitator"}


def _asked_scenario(value: Any) -> Any:
    """The scenario a run's input names (None when it names none)."""
    kwargs = value.get("kwargs") if isinstance(value, dict) else None
    run_input = kwargs.get("input") if isinstance(kwargs, dict) else None
    return run_input.get("scenario") if isinstance(run_input, dict) else None


def is_facilitator(ctx: Auth.types.AuthContext) -> bool:
    return ctx.user.identity == FACILITATOR and FACILITATOR in (ctx.permissions or [])


async def check_request(value: Any) -> None:
    """What any caller of the API may ask: a run names only a scenario of the server's catalog
    (a name is never opened as a file) and only the models the operator allows."""
    from wargraph.server.endpoints import request_refusal

    why = request_refusal(value)
    if why:
        raise Auth.exceptions.HTTPException(status_code=403, detail=why)
    scenario = _asked_scenario(value)
    # The catalog lists a folder: read it off the event loop.
    if isinstance(scenario, str) and scenario not in await asyncio.to_thread(_allowed_names):
        raise Auth.exceptions.HTTPException(
            status_code=422,
            detail=f"input.scenario: {scenario[:100]!r} is no shipped or registered scenario; "
            "name one from GET /wargraph/scenarios or send the scenario as a mapping",
        )


@auth.on
async def facilitator_only(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Defence in depth: every resource and action needs the facilitator's identity."""
    if not is_facilitator(ctx):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="facilitator only: use the facilitator's token"
        )
    await check_request(value)
    return True


def _allowed_names() -> set[str]:
    from wargraph.server.catalog import catalog

    known = catalog()
    return set(known) | {str(path) for path in known.values()}
