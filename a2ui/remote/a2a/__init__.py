"""The A2A client with the A2UI extension v0.9.1 (docs/remote-agents.md, "A2A agents").

Sans-I/O: ``extension`` (the URI, MIME types, catalogs, client messages), ``card`` (where the
card is, which JSON-RPC endpoint and A2A version), ``parts`` (a stream event read into items),
``mapping`` (items onto the runtime's ops), ``outgoing`` (the messages we send). Network:
``transport`` (the card fetched, the official a2a-sdk client on the outbound HTTP client, byte
limits) and ``client`` (the ``"a2a"`` kind of :class:`a2ui.remote.clients.RemoteClient`).
"""
