"""The resource URIs of /mcp. Sans-I/O.

* ``a2ui://sessions/<session_id>/surfaces/<surfaceId>``: a v0.9 surface (application/a2ui+json)
* ``ui://sessions/<session_id>/components/<component_id>``: a seed-000 component (text/html)
* ``ui://sessions/<session_id>/apps/<component_id>``: the same as an MCP App
  (text/html;profile=mcp-app)
* ``ui://sessions/<session_id>/client``: the web client's URL for the session (text/uri-list)

Ids are percent-encoded (every byte outside ``A-Za-z0-9-._~``), so any id round-trips.
"""

import uuid
from dataclasses import dataclass
from urllib.parse import quote, unquote

A2UI_MIME = "application/a2ui+json"
HTML_MIME = "text/html"
APP_MIME = "text/html;profile=mcp-app"
URI_LIST_MIME = "text/uri-list"
APPS_EXTENSION = "io.modelcontextprotocol/ui"
MAX_URI = 2048

KINDS = {"surfaces": ("a2ui", A2UI_MIME), "components": ("ui", HTML_MIME),
         "apps": ("ui", APP_MIME)}


@dataclass(frozen=True)
class Ref:
    kind: str  # "surfaces" | "components" | "apps" | "client"
    session_id: uuid.UUID
    item: str | None = None

    @property
    def mime_type(self):
        return URI_LIST_MIME if self.kind == "client" else KINDS[self.kind][1]

    def uri(self):
        return build(self.kind, self.session_id, self.item)


def build(kind, session_id, item=None):
    if kind == "client":
        return f"ui://sessions/{session_id}/client"
    scheme = KINDS[kind][0]
    return f"{scheme}://sessions/{session_id}/{kind}/{quote(str(item), safe='')}"


def parse(uri):
    """The Ref a URI names, or None (not one of ours, malformed, too long)."""
    if not isinstance(uri, str) or len(uri) > MAX_URI:
        return None
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in ("a2ui", "ui"):
        return None
    parts = rest.split("/")
    if len(parts) < 3 or parts[0] != "sessions":
        return None
    try:
        session_id = uuid.UUID(parts[1])
    except ValueError:
        return None
    if parts[1] != str(session_id):
        return None
    if len(parts) == 3 and parts[2] == "client" and scheme == "ui":
        return Ref("client", session_id)
    if len(parts) != 4 or parts[2] not in KINDS or KINDS[parts[2]][0] != scheme or not parts[3]:
        return None
    item = unquote(parts[3], errors="strict") if _decodable(parts[3]) else None
    if item is None or quote(item, safe="") != parts[3]:
        return None  # one spelling per id, so subscriptions match
    return Ref(parts[2], session_id, item)


def _decodable(text):
    try:
        unquote(text, errors="strict")
    except UnicodeDecodeError:
        return False
    return True


TEMPLATES = [
    ("a2ui://sessions/{session_id}/surfaces/{surface_id}", "A2UI v0.9 surface", A2UI_MIME,
     "A surface's current state as A2UI v0.9 messages (createSurface, updateComponents, "
     "updateDataModel)."),
    ("ui://sessions/{session_id}/components/{component_id}", "UI component", HTML_MIME,
     "A component as a self-contained HTML document; its buttons and forms post MCP-UI "
     "actions (MCP_UI_ACTION) to the host."),
    ("ui://sessions/{session_id}/apps/{component_id}", "UI component (MCP App)", APP_MIME,
     "The same component as an MCP App."),
    ("ui://sessions/{session_id}/client", "Web client", URI_LIST_MIME,
     "The web client's URL for the session."),
]
