"""The LangGraph server side of wargraph: graph factories, seat tokens, auth, players' pages."""

from wargraph.kernel.families import builtin_names

FAMILIES = builtin_names()
"""The built-in graph ids, alphabetically as langgraph.json lists them; plug-in families
(`wargraph.families`) are served too (`wargraph serve` adds them; `wargraph.server.graphs` has a
factory for each)."""
