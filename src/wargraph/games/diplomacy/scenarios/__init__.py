"""The diplomacy family's shipped scenarios (data only)."""
