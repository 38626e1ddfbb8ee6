"""The store: checkpoints on SQLite or PostgreSQL, sealed and encrypted, held by one writer
(leases and fences), copied and pruned."""
