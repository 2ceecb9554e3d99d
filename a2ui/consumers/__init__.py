"""The transport kit every protocol's listeners are built on: ``base`` (the JSON-RPC socket
base, frame limits, direct-delivery turns), ``session`` (``SessionListener``: the one loop that
listens to a session, with the adapter's kinds, sequence numbers, resync, direct delivery,
consent and closes; ``SessionSocket``: a person's socket on it) and ``streams``
(``ChannelListener``: the same loop on a channel of its own, for the SSE streams and the MCP
watcher). No protocol's words here."""
