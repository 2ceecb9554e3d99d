"""What every REST view of the app shares: a JSON parser that cannot be made to 500, and the
app's exception handler, so the views behave the same whatever the project's DRF settings."""

import functools
import io

from adrf.views import APIView as AsyncAPIView
from asgiref.sync import async_to_sync
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.views import APIView

from a2ui.api.exceptions import exception_handler
from a2ui.api.renderers import SafeJSONRenderer
from a2ui.conf import a2ui_settings
from a2ui.core.content import jsonvalue
from a2ui.core.errors import DomainError
from a2ui.infra import caps
from a2ui.rpc.errors import ErrorCode, ProtocolError
from a2ui.sessions import lifecycle as sessions


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body exceeds A2UI['MAX_PAYLOAD_SIZE']."
    default_code = "payload_too_large"


class JSONValueRefused(ProtocolError):
    """A body the JSON value policy refuses (a2ui.core.content.jsonvalue): -32602 with
    ``data.path`` (dotted, JSON-RPC style) and ``data.pointer`` (RFC 6901, v0.9 style)."""

    def __init__(self, exc):
        self.refusal = exc
        data = {"path": exc.dotted, "pointer": exc.pointer, "reason": exc.reason}
        if exc.path and isinstance(exc.path[0], int):
            data["index"] = exc.path[0]  # the position in a list body, as the views report it
        super().__init__(ErrorCode.INVALID_PARAMS, data=data)


class SafeJSONParser(JSONParser):
    """JSON bodies up to MAX_PAYLOAD_SIZE; too large is 413, too deeply nested or invalid 400,
    a value the JSON value policy refuses (integers beyond ±(2**53-1), 1e400, lone surrogates,
    NUL in keys) 400 with the path (422 on the v0.9 view: see exceptions.py).

    DRF's parser lets RecursionError (``[[[[...`` a few thousand deep) escape as a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        limit = a2ui_settings.MAX_PAYLOAD_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge()
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            return jsonvalue.loads(raw.decode(encoding))
        except jsonvalue.JSONValueError as exc:
            raise JSONValueRefused(exc) from None
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        except (ValueError, UnicodeError, LookupError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


def app_authenticators():
    """The credentials the app's endpoints take, whatever the project's DRF settings say:
    stream tokens refused, agent keys, DRF tokens (when ``rest_framework.authtoken`` is
    installed) and the Django session (with CSRF)."""
    from django.apps import apps
    from rest_framework.authentication import SessionAuthentication, TokenAuthentication

    from a2ui.authentication import AgentKeyAuthentication, RejectStreamTokenAuthentication

    classes = [RejectStreamTokenAuthentication, AgentKeyAuthentication]
    if apps.is_installed("rest_framework.authtoken"):
        classes.append(TokenAuthentication)
    classes.append(SessionAuthentication)
    return [cls() for cls in classes]


def keep_streamed_body(request, limit):
    """A body streamed without a Content-Length, read now (at most ``limit + 1`` bytes) and
    kept as Django keeps a body it has read, with that length.

    Django's ``request.body`` reads such a body whole, however large, and DRF takes a request
    with no Content-Length for one without a body (a JSON POST served as empty). With its
    length known, every reader after this sees the body and the JSON parser refuses one over
    the limit with 413.
    """
    if request.META.get("CONTENT_LENGTH") or request._read_started or hasattr(request, "_body"):
        return
    raw = request.read(limit + 1)
    _empty(request._stream)  # what was read is in ``raw``; the rest is never read
    request._body = raw
    request._stream = io.BytesIO(raw)
    request.META["CONTENT_LENGTH"] = str(len(raw))


def _empty(stream):
    """Drop what ``stream`` (the request's body file, still referenced by the handler until
    the response ends) holds in memory or on disk."""
    truncate = getattr(stream, "truncate", None)
    if truncate is None:
        return
    try:
        stream.seek(0)
        truncate(0)
    except (OSError, ValueError):  # closed, or not seekable
        pass


def let_body_go(request):
    """A response that streams for minutes (an AG-UI 1.0 run) keeps no copy of its request's
    body: Django's handler keeps the request and its body file until the response ends, and a
    run's body carries the whole conversation (up to ``MAX_PAYLOAD_SIZE``), held twice (the
    body file and ``request.body``) for the run's life. Called once the view has answered."""
    _empty(getattr(request, "_stream", None))
    request.__dict__.pop("_body", None)  # read again: Django's RawPostDataException


def limited_body(request, limit):
    """The request's body, of which no more than ``limit + 1`` bytes are read (a longer one
    is longer than ``limit``: refuse it); ``request.body`` when it has been read already."""
    if hasattr(request, "_body") or request._read_started:
        return request.body
    return request.read(limit + 1)


def too_large_response(limit):
    return JsonResponse({"error": {"code": "refused", "reason": "payload_too_large",
                                   "message": f"The body is larger than {limit} bytes."}},
                        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)


def json_body_view(view):
    """A plain async view of the app with a JSON body (not DRF: the AG-UI 1.0 run): a body
    streamed without a Content-Length is read no further than ``MAX_PAYLOAD_SIZE`` (it is
    then longer than that), and Django's ``RequestDataTooBig`` (a Content-Length past
    DATA_UPLOAD_MAX_MEMORY_SIZE, raised wherever the body is read: an HTML 400) is a JSON
    413, as on every DRF view (``A2UIViewMixin``)."""

    @functools.wraps(view)
    async def wrapped(request, *args, **kwargs):
        limit = a2ui_settings.MAX_PAYLOAD_SIZE
        keep_streamed_body(request, limit)
        try:
            response = await view(request, *args, **kwargs)
        except RequestDataTooBig:
            return too_large_response(limit)
        if response.streaming:
            let_body_go(request)
        return response

    return wrapped


def json_parser_for(media_type):
    """A :class:`SafeJSONParser` for another JSON media type (``application/a2ui+json``)."""
    parser = SafeJSONParser()
    parser.media_type = media_type
    return parser


class A2UIViewMixin:
    parser_classes = [SafeJSONParser]
    renderer_classes = [SafeJSONRenderer, BrowsableAPIRenderer]
    #: JSON media types the view takes besides ``application/json`` (a view attribute: the
    #: v0.9 route's ``rest_options`` give ``application/a2ui+json`` and its older spelling).
    media_types = ()

    def get_parsers(self):
        return [*super().get_parsers(), *(json_parser_for(m) for m in self.media_types)]

    def get_authenticators(self):
        return app_authenticators()

    def initialize_request(self, request, *args, **kwargs):
        keep_streamed_body(request, a2ui_settings.MAX_PAYLOAD_SIZE)
        return super().initialize_request(request, *args, **kwargs)

    def get_exception_handler(self):
        return exception_handler

    def handle_exception(self, exc):
        # DRF reads ``request.body`` before any JSON parser runs, and Django refuses a body past
        # DATA_UPLOAD_MAX_MEMORY_SIZE there (an HTML 400): the same 413 as MAX_PAYLOAD_SIZE.
        if isinstance(exc, RequestDataTooBig):
            exc = PayloadTooLarge()
        return super().handle_exception(exc)


class A2UIAPIView(A2UIViewMixin, APIView):
    """A sync view of the app (no await inside: reads and writes of the request's own)."""


class A2UIAsyncAPIView(A2UIViewMixin, AsyncAPIView):
    """An async view (adrf): authentication and permissions run once on a thread (their
    database lookups), then the handler awaits the services on the server's event loop, with
    no thread -> loop -> thread bouncing per call."""


def session_id_query(request):
    """``?session_id=`` of a listing, as a UUID, or None when absent; 400 when it is not one."""
    session_id = request.query_params.get("session_id")
    if session_id is None:
        return None
    try:
        return sessions.parse_session_id(session_id)
    except DomainError:
        raise ValidationError({"session_id": ["Not a session id (a UUID)."]}) from None


def rate_limit(kind, request):
    """Count one ``kind`` for the request's person and address (``caps.check_rate``): 429 with
    ``Retry-After`` and the JSON-RPC error -32001 past the limit."""
    async_to_sync(caps.check_rate)(kind, f"user:{request.user.pk}",
                                   caps.address_of_request(request))
