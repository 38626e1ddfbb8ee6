"""The custom app of Studio mode (`http.app` of the config `wargraph studio` writes): no pages and
no seat routes, only the guard in front of the LangGraph API, letting the Studio page's origin in.
"""

from __future__ import annotations

from wargraph.server.custom_app import custom_app

STUDIO_ORIGIN = "https://smith.langchain.com"

app = custom_app([], seat_links=False, studio_origins=(STUDIO_ORIGIN,))
