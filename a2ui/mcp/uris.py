"""The resource URIs of /mcp. Sans-I/O.

* ``a2ui://sessions/<session_id>/surfaces/<surfaceId>``: a v0.9 surface (application/a2ui+json)
* ``ui://sessions/<session_id>/components/<component_id>``: a seed-000 component (text/html)
* ``ui://sessions/<session_id>/apps/<component_id>``: the same as an MCP App
  (text/html;profile=mcp-app)
* ``ui://sessions/<session_id>/client``: the web client's URL for the session (text/uri-list)
* ``a2ui://sessions/<session_id>/requests/<request_id>``: an agent's open ``request_input`` /
  ``confirm`` (application/json: its kind, params, deadline, and the tool that answers it)
* ``ui://sessions/<session_id>/requests/<request_id>``: the same request as a form
  (text/html); ``ui://sessions/<session_id>/request-apps/<request_id>`` as an MCP App
* ``a2ui://sessions/<session_id>/activity``: the session's activity (application/json: the
  transcript, tool calls, state document, plans, resource tree, roster, artifacts)
* ``ui://a2ui/session``: the MCP App of the ``show_session`` tool (``SESSION_APP``): one static
  document for every session (the session comes with the tool's result), not listed

Ids are percent-encoded (every byte outside ``A-Za-z0-9-._~``), so any id round-trips.
"""

import uuid
from dataclasses import dataclass
from urllib.parse import quote, unquote

A2UI_MIME = "application/a2ui+json"
HTML_MIME = "text/html"
APP_MIME = "text/html;profile=mcp-app"
URI_LIST_MIME = "text/uri-list"
JSON_MIME = "application/json"
APPS_EXTENSION = "io.modelcontextprotocol/ui"
#: The app ``show_session`` links (``_meta.ui.resourceUri``): a template, the same for every
#: session and person (hosts may fetch it once and cache it); ``parse`` does not take it.
SESSION_APP = "ui://a2ui/session"
MAX_URI = 2048

#: kind -> (scheme, mime type, path segment) of the resources with an item.
KINDS = {"surfaces": ("a2ui", A2UI_MIME, "surfaces"), "components": ("ui", HTML_MIME, "components"),
         "apps": ("ui", APP_MIME, "apps"), "requests": ("a2ui", JSON_MIME, "requests"),
         "request_forms": ("ui", HTML_MIME, "requests"),
         "request_apps": ("ui", APP_MIME, "request-apps")}
_BY_SEGMENT = {(scheme, segment): kind for kind, (scheme, _, segment) in KINDS.items()}
#: kind -> (scheme, mime type, path segment) of a session's single resources (no item).
SINGLE = {"client": ("ui", URI_LIST_MIME, "client"), "activity": ("a2ui", JSON_MIME, "activity")}
_SINGLE_BY_SEGMENT = {(scheme, segment): kind for kind, (scheme, _, segment) in SINGLE.items()}


@dataclass(frozen=True)
class Ref:
    kind: str  # a key of KINDS or SINGLE
    session_id: uuid.UUID
    item: str | None = None

    @property
    def mime_type(self):
        return SINGLE[self.kind][1] if self.kind in SINGLE else KINDS[self.kind][1]

    def uri(self):
        return build(self.kind, self.session_id, self.item)


def build(kind, session_id, item=None):
    if kind in SINGLE:
        scheme, _, segment = SINGLE[kind]
        return f"{scheme}://sessions/{session_id}/{segment}"
    scheme, _, segment = KINDS[kind]
    return f"{scheme}://sessions/{session_id}/{segment}/{quote(str(item), safe='')}"


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
    if len(parts) == 3 and (scheme, parts[2]) in _SINGLE_BY_SEGMENT:
        return Ref(_SINGLE_BY_SEGMENT[scheme, parts[2]], session_id)
    kind = _BY_SEGMENT.get((scheme, parts[2])) if len(parts) == 4 else None
    if kind is None or not parts[3]:
        return None
    item = unquote(parts[3], errors="strict") if _decodable(parts[3]) else None
    if item is None or quote(item, safe="") != parts[3]:
        return None  # one spelling per id, so subscriptions match
    return Ref(kind, session_id, item)


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
     "actions to the host (@mcp-ui/client's tool/link messages, or seed 002's MCP_UI_ACTION "
     "to a host that answers no MCP-UI message)."),
    ("ui://sessions/{session_id}/apps/{component_id}", "UI component (MCP App)", APP_MIME,
     "The same component as an MCP App."),
    ("ui://sessions/{session_id}/client", "Web client", URI_LIST_MIME,
     "The web client's URL for the session."),
    ("a2ui://sessions/{session_id}/requests/{request_id}", "Open request", JSON_MIME,
     "An agent's open request_input or confirm: its kind, prompt/fields/options, deadline, "
     "and the tool that answers it (respond or approve)."),
    ("ui://sessions/{session_id}/requests/{request_id}", "Open request (form)", HTML_MIME,
     "The same request as a form; it answers with the respond or approve tool (an MCP-UI "
     "action, as the component's)."),
    ("ui://sessions/{session_id}/request-apps/{request_id}", "Open request (MCP App)", APP_MIME,
     "The same form as an MCP App."),
    ("a2ui://sessions/{session_id}/activity", "Session activity", JSON_MIME,
     "The session's transcript, tool calls, state document, plans, resource tree, roster and "
     "artifacts."),
]
