"""Custom auth of Studio mode (`wargraph studio`): the hosted LangGraph Studio page, or a program
holding the server's token, for one developer on loopback.

langgraph-api (under `langgraph dev`, with `disable_studio_auth` false) lets a request that says
`x-auth-scheme: langsmith` in as a `StudioUser` without asking this module; every other request
authenticates here with the server's token, as on the players' server. Either way the handler
below still checks what is asked: scenarios from the catalog, models from the allow-list. Seat
tokens never get this far: the guard refuses them in Studio mode.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth
from langgraph_sdk.auth import is_studio_user

from wargraph.server.auth import authenticate, check_request, is_facilitator

auth = Auth()
auth.authenticate(authenticate)


@auth.on
async def developer_only(ctx: Auth.types.AuthContext, value: Any) -> bool:
    if not (is_studio_user(ctx.user) or is_facilitator(ctx)):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="Studio mode: LangGraph Studio or the server's token only"
        )
    await check_request(value)
    return True
