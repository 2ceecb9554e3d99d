"""The protocol-neutral core: session events, domain errors and the adapter registry."""
