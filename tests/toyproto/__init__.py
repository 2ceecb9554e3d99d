"""A toy protocol, added to a project through settings alone (docs/adding-a-protocol.md):
``A2UI['ADAPTERS'] += ["tests.toyproto.adapter"]``. Its clients read a session's events as
newline-delimited JSON at ``GET /toy/sessions/<id>/events`` with a ``stream_toy`` token of their
own (no migration), and its agents may call one method of its own, ``toy.wave``."""

TOKEN_TYPE = "stream_toy"
