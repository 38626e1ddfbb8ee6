"""One graph factory per registered family, by the family's name, so a graph spec
`wargraph.server.graphs:<family>` serves any family, a plug-in's included (langgraph-api reads
the module's namespace). The built-ins' langgraph.json entries name their own `graph.py:make_graph`,
the same factory (`wargraph.server.factory`)."""

from __future__ import annotations

import wargraph.kernel.families as families
from wargraph.server.factory import available, served_graph

for _name in families.families():
    globals().setdefault(_name, served_graph(_name))


# Import the families now: the server imports this module in a worker thread at startup, so the
# scenario files the modules read do not touch the event loop later.
available()
