"""Seed-000 A2UI JSON-RPC 2.0 protocol, sans-I/O: framing, errors, validation, sanitizing.

Typical adapter step::

    msg = None
    try:
        msg = parse(frame, max_size=limit)          # errors carry the id when readable
        params = validate_params(msg.method, msg.params, allowed=UI_TO_AGENT)
    except ProtocolError as exc:
        if msg is not None:
            exc.with_request_id(msg.id)             # params errors do not know the id
        send(encode(exc.to_response()))
"""

from .capabilities import init_result, server_capabilities
from .components import COMPONENT_TYPES, validate_component, validate_metadata
from .errors import (
    CLOSE_CODES,
    CLOSE_REASONS,
    MESSAGES,
    CloseCode,
    ErrorCode,
    ProtocolError,
    default_message,
    invalid_params,
)
from .jsonrpc import (
    DEFAULT_MAX_SIZE,
    ErrorObject,
    Message,
    Response,
    encode,
    error_response,
    message_from_obj,
    notification,
    parse,
    parse_incoming,
    parse_response,
    request,
    response_from_obj,
    result,
)
from .methods import (
    AGENT_TO_UI,
    ALL_METHODS,
    ANSWERED_BY,
    AWAITING,
    FIRE_AND_FORGET,
    UI_TO_AGENT,
    validate_params,
)
from .sanitize import check_url, clean_tree, sanitize_markdown, sanitize_text, sanitize_tree
from .updates import apply_update

__all__ = [
    "AGENT_TO_UI",
    "ALL_METHODS",
    "ANSWERED_BY",
    "AWAITING",
    "CLOSE_CODES",
    "CLOSE_REASONS",
    "COMPONENT_TYPES",
    "DEFAULT_MAX_SIZE",
    "FIRE_AND_FORGET",
    "MESSAGES",
    "UI_TO_AGENT",
    "CloseCode",
    "ErrorCode",
    "ErrorObject",
    "Message",
    "ProtocolError",
    "Response",
    "apply_update",
    "check_url",
    "clean_tree",
    "default_message",
    "encode",
    "error_response",
    "init_result",
    "invalid_params",
    "message_from_obj",
    "notification",
    "parse",
    "parse_incoming",
    "parse_response",
    "request",
    "response_from_obj",
    "result",
    "sanitize_markdown",
    "sanitize_text",
    "sanitize_tree",
    "server_capabilities",
    "validate_component",
    "validate_metadata",
    "validate_params",
]
