"""What /mcp refuses in a POST body before the SDK reads it. Sans-I/O.

The SDK would answer some JSON-RPC envelopes wrongly or not at all:

* a request whose ``id`` is not a string or an integer (``1.5``, ``true``, ``null``, ``[]``,
  ``{}``) was taken for a notification: ``202 Accepted`` and no answer ever, so the client
  waits forever. MCP: "Requests MUST include a string or integer ID ... MUST NOT be null".
  Now ``-32600`` with id ``null``, as on the seed-000 sockets (docs/protocol-jsonrpc.md, "id
  policy"); a string id must not contain NUL there either;
* a batch (a JSON array; not part of MCP since 2025-06-18, and the SDK reads none) got
  ``-32602`` with pydantic's validation text. Now ``-32600`` "Batch requests are not
  supported";
* values the JSON value policy of every other edge refuses (``a2ui.core.content.jsonvalue``:
  integers beyond ±(2**53-1), such as ids of 2**64 that JavaScript clients cannot match, numbers
  that overflow a double, lone surrogates, NUL in keys) went on to the handlers. Now ``-32602``
  with ``data.path`` and ``data.reason``, as everywhere else.

* a request that also carries ``result`` or ``error`` was read by the SDK as a response:
  ``202`` and no answer. Now ``-32600``, as is a response with both ``result`` and ``error``;

* ``NaN``, ``Infinity`` and ``-Infinity`` literals, which the SDK's parser reads as numbers
  (``"id": -Infinity`` made a request a notification again), are ``-32700`` as everywhere.

Other text that is not JSON is left to the SDK (``-32700``).
"""

from __future__ import annotations

import json

from a2ui.core.content import jsonvalue
from a2ui.infra import prom
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.rpc.jsonrpc import readable_id


def _error(code, data, request_id=None):
    if prom.ON:
        prom.refused("mcp", int(code))
    return ProtocolError(code, data=data, request_id=request_id).to_response()


def _id_problem(request_id):
    """MCP's id rule: a request's id is a string or an integer, never null (seed 000's
    sockets also take a request without an id as a notification); a string id holds no NUL."""
    if request_id is None:
        return "id must be a string or an integer (not null)"
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return "id must be a string or an integer"
    if isinstance(request_id, str) and "\x00" in request_id:
        return "id must not contain NUL (\\u0000)"
    return None


def mcp_path(dotted):
    """A path from the message's root as /mcp's handlers name it: relative to ``params``
    (``arguments.data.title``, ``notifications.resourceSubscriptions[0]``); the envelope's own
    members (``id``, ``method``) as they are."""
    return dotted[len("params."):] if dotted.startswith("params.") else dotted


def _only_with_constants(text):
    """True when ``text`` parses only as Python's JSON extension (NaN, Infinity)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def check(body: bytes):
    """The JSON-RPC error object to answer (with HTTP 400) for ``body``, or None to let the
    SDK handle it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        document = jsonvalue.loads(text)
    except jsonvalue.JSONValueError as exc:
        return _error(ErrorCode.INVALID_PARAMS,
                      {"path": mcp_path(exc.dotted), "reason": exc.reason},
                      readable_id(exc.document))
    except (ValueError, RecursionError):
        if _only_with_constants(text):  # the SDK would read NaN and Infinity as numbers
            return _error(ErrorCode.PARSE_ERROR, {"reason": "NaN and Infinity are not JSON"})
        return None  # not JSON: the SDK's -32700
    if isinstance(document, list):
        return _error(ErrorCode.INVALID_REQUEST, {"reason": "Batch requests are not supported"})
    if isinstance(document, dict) and ("result" in document or "error" in document):
        # A request with a result or an error (the SDK read it as a response: 202, no answer),
        # or a response with both (JSON-RPC: exactly one).
        if "method" in document or ("result" in document and "error" in document):
            return _error(ErrorCode.INVALID_REQUEST, {
                "reason": "a message is a request (method) or a response (result or error), "
                          "not both"}, readable_id(document) if "method" in document else None)
    if isinstance(document, dict) and "id" in document:
        problem = _id_problem(document["id"])
        if problem and (document["id"] is not None or "method" in document):
            # (an error response to a message the client could not read has id null)
            return _error(ErrorCode.INVALID_REQUEST, {"reason": problem})
    return None
