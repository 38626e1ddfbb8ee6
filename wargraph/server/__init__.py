"""The LangGraph server side of wargraph: graph factories, seat tokens, auth, players' pages."""

FAMILIES = ("crisis", "tabletop", "waragent", "diplomacy", "flow")
"""Graph ids served, in langgraph.json order; each is the module `wargraph.graphs.<id>`."""
