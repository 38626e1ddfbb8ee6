"""Custom auth for the LangGraph server (`auth.path` in langgraph.json).

One thread holds every seat's secrets (all plans, every inbox), so thread ownership cannot
separate the players of one game. The LangGraph API (threads, runs, state, history, assistants,
store, crons) is therefore for the facilitator only; a player reaches only their own seat through
the player's routes of `wargraph.server.app`, which check the seat of the token on every call.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

from wargraph.server.seats import FACILITATOR, TokenError, bearer, check_token

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes] | None) -> Auth.types.MinimalUserDict:
    try:
        holder = check_token(bearer(headers))
    except TokenError as err:
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(err)) from None
    if holder.kind != FACILITATOR:
        # A seat token is valid, but not here: the whole API would show every seat's secrets.
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="a seat token opens only the player's page (/play), not the LangGraph API",
        )
    return {"identity": FACILITATOR, "permissions": [FACILITATOR], "display_name": "facilitator"}


@auth.on
async def facilitator_only(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Defence in depth: every resource and action needs the facilitator's identity."""
    if ctx.user.identity != FACILITATOR or FACILITATOR not in (ctx.permissions or []):
        raise Auth.exceptions.HTTPException(status_code=403, detail="facilitator only")
    return True
