"""AG-UI 1.0 over HTTP + SSE for people: POST /api/v4/agui/run (docs/protocol-agui.md)."""

from ..core.adapters import Adapter
from ..core.events import Kind


def _http_urls():
    from django.urls import path

    from .view import run_view

    return [path("api/v4/agui/run", run_view, name="a2ui-agui-run")]


ADAPTER = Adapter(
    name="agui1",
    http_urls=_http_urls,
    kinds=frozenset(Kind),  # every kind: each has an AG-UI 1.0 form (a2ui.agui1.translate)
    summary="AG-UI 1.0 runs over HTTP + SSE (RunAgentInput in, AG-UI events out): "
            "docs/protocol-agui.md",
)
