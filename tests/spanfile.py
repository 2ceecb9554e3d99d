"""Test-only span exporters (``A2UI['TRACING_EXPORTER']``): one in memory, one to a file."""

import json
import os

from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

memory = None


def in_memory():
    """A new in-memory exporter (one a provider shut down stays stopped), kept as ``memory``."""
    global memory
    memory = InMemorySpanExporter()
    return memory


def to_file():
    """Each span as one JSON line in the file named by A2UI_TEST_SPAN_FILE."""
    out = open(os.environ["A2UI_TEST_SPAN_FILE"], "a", buffering=1)  # noqa: SIM115
    return ConsoleSpanExporter(out=out,
                               formatter=lambda span: span.to_json(indent=None) + "\n")


def read(path):
    """The spans a :func:`to_file` exporter wrote: a list of dicts."""
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []
