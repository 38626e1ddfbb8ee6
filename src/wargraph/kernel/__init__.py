"""The kernel every game is made of: state and reducers, the context, the scenario schema,
views, the table, the World and its parts, questions, the family registry and graph
assembly. No family code lives here."""
