"""The push pipeline: how an agent's push reaches every client of a session.

Read top to bottom: ``entry`` (the one entry every agent path calls), ``pipeline`` (admit,
store in one transaction, deliver), ``keys`` (idempotency keys and outcomes), ``fanout``
(number each event and send it), ``direct`` (straight to this process's sockets).
"""
