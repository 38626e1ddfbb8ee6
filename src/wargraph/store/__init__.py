"""The store: checkpoints on SQLite or PostgreSQL, sealed and encrypted, held by one writer.

Layered, each module using only those above it:
  errors    what goes wrong with a store, and how a `--db` value is read and shown
  sql       wargraph's own tables and their SQL on both backends
  fence     the generation number that refuses a cut-off holder's write
  crypto    compression, AES-GCM bound to what a blob belongs to (and older formats), keys, MACs
  connect   SQLite connections and PostgreSQL pools
  setup     LangGraph's tables and wargraph's, the store's key; wargraph's own SQL (`own_sql`)
  filelock, lease   one writer per game (a kernel lock or an advisory lock, plus the fence)
  backends  the LangGraph savers underneath: fenced SQLite writes, one PostgreSQL transaction
  copying, pruning  a game copied or deleted under the leases it needs
  saver     `Saver` and `open_saver` / `open_async_saver`: what every other part of wargraph uses
"""
