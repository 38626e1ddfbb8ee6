"""`wargraph studio`: the LangGraph development server for one developer and LangGraph Studio.

The players' server (`wargraph serve`) refuses Studio: one game thread holds every seat's secrets,
and langgraph-api lets any request that says `x-auth-scheme: langsmith` in as the Studio user.
This mode is the other one: loopback only, the Studio page's origin allowed for the LangGraph API,
Studio's authentication on, and no players' pages or seat routes (seat tokens are refused).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from wargraph.server.serve import STUDIO_ORIGIN, Server, foreground

WARNING = (
    "Studio sees every seat's secrets (plans, inboxes, private verdicts of every game here): "
    "debug with it, never seat real players on this server."
)


def studio_link(server_url: str) -> str:
    return f"{STUDIO_ORIGIN}/studio/?baseUrl={quote(server_url, safe=':/')}"


def studio(host: str = "127.0.0.1", port: int = 2024, **options: Any) -> int:
    """Run Studio mode in the foreground until Ctrl-C; print the Studio link and the warning."""
    from rich.console import Console

    console = Console(stderr=True)

    def announce(server: Server) -> None:
        console.print(
            f"LangGraph Studio:\n  {studio_link(server.url)}", highlight=False, soft_wrap=True
        )
        console.print(f"[bold yellow]warning:[/] {WARNING}", highlight=False, soft_wrap=True)

    # `options`: those of `serve` (config, state_dir, scenarios, allow_models)
    return foreground(console, announce, host=host, port=port, studio=True, **options)
