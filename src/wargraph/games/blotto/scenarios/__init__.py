"""The blotto family's shipped scenarios (data only)."""
