"""The waragent family's shipped scenarios (data only)."""
