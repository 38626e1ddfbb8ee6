"""The tabletop family's shipped scenarios (data only)."""
