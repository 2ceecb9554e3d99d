"""Remote agents: agents a team built with its framework (an AG-UI 1.0 endpoint, an A2A server
with the A2UI extension, or an AG-UI app in this process), run by this server for the people of
its sessions (docs/remote-agents.md).

* ``ops``: what an upstream protocol client yields and what a person's turn is (sans-I/O);
* ``clients``: the ``RemoteClient`` protocol, ``RunContext`` and the registry of kinds;
* ``runtime``: turns a person's input into runs and the ops into session events;
* ``port``: the one module through which this package calls the services;
* ``agui``: the AG-UI 1.0 client (``a2a``: the A2A client with the A2UI extension).
"""
