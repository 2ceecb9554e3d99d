"""Traces of a push, the thin facade the services and the entry points call.

With ``A2UI['TRACING']`` off (the default), or without the ``otel`` extra installed, every call
here is a no-op and nothing of OpenTelemetry is imported. On, :mod:`a2ui.infra._otel` is
imported on first use and each call makes a span:

* an entry point (REST, MCP tool, agent socket) opens its span with the caller's trace context
  (``traceparent``/``tracestate``, read by ``a2ui.core.tracecontext``);
* ``delivery`` opens ``a2ui.push`` inside it and :func:`inject` writes the current context into
  the session event's channel message, so a person's socket in any process opens its
  ``a2ui.deliver`` span as a child of the push (:func:`span` with the message's context).
"""

import contextlib
import logging

from a2ui.conf import a2ui_settings

log = logging.getLogger("a2ui.services")

_NOOP = contextlib.nullcontext()
_UNSET = object()
_backend = _UNSET  # the _otel module, or None when the extra is missing


def enabled():
    return bool(a2ui_settings.TRACING) and _load() is not None


def _load():
    global _backend
    if _backend is _UNSET:
        try:
            from a2ui.infra import _otel
        except ImportError:
            log.warning("a2ui: A2UI['TRACING'] is on but OpenTelemetry is not installed "
                        "(pip install django-a2ui[otel]): no traces")
            _backend = None
        else:
            _otel.configure(a2ui_settings.TRACING_EXPORTER,
                            a2ui_settings.TRACING_SIMPLE_PROCESSOR)
            _backend = _otel
    return _backend


def span(name, traceparent=None, tracestate=None, **attributes):
    """A context manager: a span named ``name``, child of the current one, or of the given
    trace context when there is one (a remote parent). A no-op when tracing is off."""
    if not a2ui_settings.TRACING:
        return _NOOP
    backend = _load()
    if backend is None:
        return _NOOP
    return backend.span(name, traceparent, tracestate, attributes)


def inject(message):
    """Write the current trace context into ``message`` (a dict) as ``traceparent`` (and
    ``tracestate``); nothing when tracing is off or no span is current."""
    if a2ui_settings.TRACING and _load() is not None:
        _backend.inject(message)
    return message


def current():
    """The current span's ``traceparent``, or None."""
    if a2ui_settings.TRACING and _load() is not None:
        carrier = {}
        _backend.inject(carrier)
        return carrier.get("traceparent")
    return None


def reset():
    """Forget the backend (a test changing TRACING_EXPORTER)."""
    global _backend
    if _backend not in (_UNSET, None):
        _backend.shutdown()
    _backend = _UNSET
