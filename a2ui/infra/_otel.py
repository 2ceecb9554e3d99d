"""The OpenTelemetry side of :mod:`a2ui.infra.tracing`, imported only when tracing is on."""

from contextlib import contextmanager

from django.utils.module_loading import import_string
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_propagator = TraceContextTextMapPropagator()
_tracer = None
_provider = None


def configure(exporter, simple=False):
    """The tracer: of the global provider, or of a provider of our own exporting to
    ``exporter()`` (an import string of a factory returning a SpanExporter)."""
    global _tracer, _provider
    if exporter:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        factory = import_string(exporter) if isinstance(exporter, str) else exporter
        _provider = TracerProvider(resource=Resource.create({"service.name": "a2ui"}))
        processor = SimpleSpanProcessor if simple else BatchSpanProcessor
        _provider.add_span_processor(processor(factory()))
        _tracer = _provider.get_tracer("a2ui")
    else:
        _provider = None
        _tracer = trace.get_tracer("a2ui")


def shutdown():
    if _provider is not None:
        _provider.shutdown()


@contextmanager
def span(name, traceparent, tracestate, attributes):
    context = None
    if traceparent:
        carrier = {"traceparent": traceparent}
        if tracestate:
            carrier["tracestate"] = tracestate
        context = _propagator.extract(carrier)
    with _tracer.start_as_current_span(name, context=context,
                                       attributes=_clean(attributes)) as current:
        yield current


def inject(carrier):
    _propagator.inject(carrier)


def _clean(attributes):
    return {f"a2ui.{k}": v if isinstance(v, (str, bool, int, float)) else str(v)
            for k, v in attributes.items() if v is not None}
