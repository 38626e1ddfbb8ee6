"""The built-in game families, one package each, shaped like a plug-in: the package's
`FAMILY` (its entry point) declares everything the family has; beside it its scenario, world
and parts, graph (built on demand), measures, panels, bots, eval, prompts and scenarios."""
