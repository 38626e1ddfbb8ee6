"""The LangGraph server side of wargraph: graph factories, seat tokens, auth, players' pages."""

from wargraph.families import BUILTIN

FAMILIES = tuple(f.name for f in BUILTIN)
"""The built-in graph ids, in langgraph.json order; plug-in families (`wargraph.families`) are
served too (`wargraph serve` adds them; `wargraph.server.graphs` has a factory for each)."""
