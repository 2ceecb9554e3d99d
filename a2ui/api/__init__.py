"""The REST kit and the agent API over REST (DRF): base views, authentication, permissions, the
error mapping, stream tokens, the dispatch table's session pushes, pending requests, runs and
consents. A protocol's own REST views live in its package (seed 000's messages:
``a2ui.jsonrpc.views``)."""
