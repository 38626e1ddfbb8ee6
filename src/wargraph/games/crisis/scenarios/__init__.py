"""The crisis family's shipped scenarios (data only)."""
