"""The page: one HTML file with its style, script and data inline (no network, no CDN)."""

from __future__ import annotations

import base64
import hashlib
import html
import importlib.resources
import re
from functools import cache

_SLOT = re.compile(r"__(?:TITLE|CSP|ENCODING|CSS|JS|DATA)__")


@cache
def asset(name: str) -> str:
    return (importlib.resources.files("wargraph.view") / "assets" / name).read_text("utf-8")


def _inline_safe(code: str) -> str:
    # the only way out of an inline <script>/<style> is its end tag
    return code.replace("</", "<\\/")


def page(title: str, data: str, *, encoding: str = "gzip-b64") -> str:
    """The page around `data` (base64: no character of it can end the script element). With
    `encoding="served"` the page holds no data and fetches it behind the facilitator's token."""
    parts = {
        "__CSS__": asset("view.css"),
        "__JS__": _inline_safe(asset("view.js")),
        "__ENCODING__": encoding,
        "__DATA__": data,
        "__TITLE__": html.escape(f"{title} — wargraph view"),
        # the file carries its own policy too: only its own script and style run, nothing is
        # fetched, even if a text were ever to slip into the markup
        "__CSP__": content_policy(meta=True),
    }
    # one pass over the template: a title holding "__JS__" is not replaced again
    return _SLOT.sub(lambda m: parts[m.group(0)], asset("view.html"))


def content_policy(*, meta: bool = False) -> str:
    """The page's Content-Security-Policy: its own inline script and style, by hash, and nothing
    else (data: images for the maps; fetches to its own server). `meta`: the form a <meta> tag
    takes (no frame-ancestors there)."""

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    policy = (
        f"default-src 'none'; script-src {digest(_inline_safe(asset('view.js')))}; "
        f"style-src {digest(asset('view.css'))}; img-src data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'"
    )
    return policy if meta else policy + "; frame-ancestors 'none'"
