"""The in-process LangGraph client the server's routes read and run games through (created on
first use, inside the server's loop; it bypasses the auth, so the routes' own seat checks are
what keep one player out of another's seat)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

_client: LangGraphClient | None = None


def client() -> LangGraphClient:
    """The one client of this process."""
    global _client
    if _client is None:
        from langgraph_sdk import get_client

        _client = get_client(url=None, api_key=None)
    return _client
