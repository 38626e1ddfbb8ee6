"""The flow family's shipped scenarios (data only)."""
