"""The tabletop family's prompt templates (v1/<name>.txt, v2/...), looked up before wargraph's own."""
