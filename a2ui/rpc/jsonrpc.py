"""JSON-RPC 2.0 framing: bytes/str in, :class:`Message` out; dicts in, wire text out.

Sans-I/O in the h11 sense: nothing here reads a socket. Adapters hand us the frame they
received and send whatever string we give back. Only the envelope is checked here;
params are checked per method by :mod:`a2ui.core.content.methods`.

Policies (see docs/protocol-jsonrpc.md):

* Size is checked on the UTF-8 byte length *before* JSON parsing (-32002).
* Batches (a top-level JSON array) are refused with -32600 "Batch requests are not
  supported": A2UI messages are independent and ordered; batching buys nothing.
* ``"id": null`` is read as a notification, the same as an absent id. JSON-RPC 2.0
  discourages null ids and no A2UI method needs a reply to one.
* ids must be strings or integers (not booleans, not fractions). A string id must not hold NUL
  (U+0000): the id is stored with the request it opens (to answer it after a move), and
  PostgreSQL's jsonb cannot hold NUL; such an id is -32600 with id ``null``.
* params must be an object or absent (absent = ``{}``); a positional array is -32602.
* Values follow :mod:`a2ui.core.content.jsonvalue` (integers within ±(2**53-1), finite numbers, no
  lone surrogates, no NUL in keys): a refused value is -32602 with ``data.path`` (``params.value``,
  ``id``...), carrying the id only when the id itself is acceptable, so the reply is encodable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from a2ui.core.content import jsonvalue
from a2ui.rpc.errors import ErrorCode, ProtocolError, default_message

JSONRPC_VERSION = "2.0"
#: Seed 000 §2 / §7: 1 MB.
DEFAULT_MAX_SIZE = 1_048_576

RequestId = str | int | None


@dataclass(frozen=True)
class Message:
    """One JSON-RPC request or notification, envelope checked, params not yet validated."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)
    id: RequestId = None

    @property
    def is_notification(self) -> bool:
        """True when no response may be sent (absent or null id)."""
        return self.id is None


@dataclass(frozen=True)
class ErrorObject:
    """The ``error`` member of a JSON-RPC error response."""

    code: int
    message: str
    data: Any = None


@dataclass(frozen=True)
class Response:
    """A JSON-RPC response: exactly one of ``result`` / ``error`` is meaningful."""

    id: RequestId
    result: Any = None
    error: ErrorObject | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    def raise_for_error(self) -> Any:
        """Return ``result``, or raise the error as a :class:`ProtocolError` (SDK helper)."""
        if self.error is None:
            return self.result
        raise ProtocolError(self.error.code, self.error.message, self.error.data, self.id)


def _load(raw: str | bytes, max_size: int) -> Any:
    """Size check, UTF-8 decode and JSON parse, in that order, as ProtocolErrors."""
    if isinstance(raw, str):
        if len(raw) > max_size:  # a character is at least one byte: cheap early reject
            raise ProtocolError(ErrorCode.PAYLOAD_TOO_LARGE, data={"max_size": max_size})
        try:
            size = len(raw.encode("utf-8"))
        except UnicodeEncodeError:
            raise ProtocolError(ErrorCode.PARSE_ERROR, data={"reason": "invalid UTF-8"}) from None
        text = raw
    elif isinstance(raw, bytes | bytearray | memoryview):
        raw = bytes(raw)
        size = len(raw)
        text = None
    else:
        raise TypeError(f"raw must be str or bytes, not {type(raw).__name__}")
    if size > max_size:
        raise ProtocolError(ErrorCode.PAYLOAD_TOO_LARGE, data={"max_size": max_size, "size": size})
    if text is None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(ErrorCode.PARSE_ERROR, data={"reason": "invalid UTF-8"}) from None
    try:
        return jsonvalue.loads(text)
    except jsonvalue.JSONValueError as exc:
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            data={"path": exc.dotted, "reason": exc.reason},
            request_id=readable_id(exc.document),
        ) from None
    except (ValueError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc) or "too deep"
        raise ProtocolError(ErrorCode.PARSE_ERROR, data={"reason": reason}) from None


def _valid_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def readable_id(document: Any) -> RequestId:
    """The id of a refused document if the id itself passes the value policy, else None (what
    an error reply may echo: every JSON-RPC edge, /mcp's envelope check included)."""
    request_id = document.get("id") if isinstance(document, dict) else None
    if not _valid_id(request_id) or jsonvalue.find(request_id) is not None:
        return None
    if isinstance(request_id, str) and "\x00" in request_id:
        return None
    return request_id


def _invalid(reason: str, request_id: RequestId = None) -> ProtocolError:
    return ProtocolError(ErrorCode.INVALID_REQUEST, data={"reason": reason}, request_id=request_id)


def _envelope(obj: Any) -> RequestId:
    """Check what requests and responses share; return the id (None if unreadable)."""
    if isinstance(obj, list):
        raise _invalid("Batch requests are not supported")
    if not isinstance(obj, dict):
        raise _invalid("a JSON-RPC message must be a JSON object")
    request_id = obj.get("id")
    if not _valid_id(request_id):
        raise _invalid("id must be a string, an integer or absent")
    if isinstance(request_id, str) and "\x00" in request_id:
        raise _invalid("id must not contain NUL (\\u0000)")
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        raise _invalid('jsonrpc must be exactly "2.0"', request_id)
    return request_id


def message_from_obj(obj: Any) -> Message:
    """Check an already-decoded request/notification object (for the REST/Python paths)."""
    request_id = _envelope(obj)
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        raise _invalid("method must be a non-empty string", request_id)
    params = obj.get("params", {})
    if isinstance(params, list):
        raise ProtocolError(
            ErrorCode.INVALID_PARAMS,
            data={"path": "params", "reason": "params must be an object (no positional params)"},
            request_id=request_id,
        )
    if not isinstance(params, dict):
        raise _invalid("params must be an object", request_id)
    return Message(method=method, params=params, id=request_id)


def parse(raw: str | bytes, *, max_size: int = DEFAULT_MAX_SIZE) -> Message:
    """Parse one incoming request or notification frame.

    Raises :class:`ProtocolError` with -32002 (too large), -32700 (not UTF-8 JSON),
    -32600 (not a valid request object, batch) or -32602 (positional params), carrying
    the request id whenever it could be read.
    """
    return message_from_obj(_load(raw, max_size))


def response_from_obj(obj: Any) -> Response:
    """Check an already-decoded response object."""
    request_id = _envelope(obj)
    has_result, has_error = "result" in obj, "error" in obj
    if has_result == has_error:
        raise _invalid("a response has exactly one of result and error", request_id)
    if has_result:
        return Response(id=request_id, result=obj["result"])
    error = obj["error"]
    if not isinstance(error, dict):
        raise _invalid("error must be an object", request_id)
    code, message = error.get("code"), error.get("message")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(message, str):
        raise _invalid("error needs an integer code and a string message", request_id)
    return Response(id=request_id, error=ErrorObject(code, message, error.get("data")))


def parse_response(raw: str | bytes, *, max_size: int = DEFAULT_MAX_SIZE) -> Response:
    """Parse a JSON-RPC response frame (what an agent SDK reads back from us)."""
    return response_from_obj(_load(raw, max_size))


def parse_incoming(raw: str | bytes, *, max_size: int = DEFAULT_MAX_SIZE) -> Message | Response:
    """Parse a frame that may be either: objects with ``method`` are requests/notifications."""
    obj = _load(raw, max_size)
    if isinstance(obj, dict) and "method" in obj:
        return message_from_obj(obj)
    return response_from_obj(obj)


# -- builders ---------------------------------------------------------------------------


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request without id: the peer must not answer."""
    return {"jsonrpc": JSONRPC_VERSION, "method": method, "params": params or {}}


def request(id: str | int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request the peer must answer with the same id."""
    return {"jsonrpc": JSONRPC_VERSION, "method": method, "params": params or {}, "id": id}


def result(id: RequestId, result: Any) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "result": result}


def error_response(
    id: RequestId, code: int, message: str | None = None, data: Any = None
) -> dict[str, Any]:
    """An error response; ``message`` defaults to the §9 text for ``code``."""
    error: dict[str, Any] = {
        "code": int(code),
        "message": message if message is not None else default_message(code),
    }
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC_VERSION, "id": id, "error": error}


def encode(obj: Any) -> str:
    """Compact wire text. ``ensure_ascii=False`` keeps frames small for non-Latin text;
    ``allow_nan=False`` because NaN/Infinity are not JSON."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
