"""The A2UI extension of A2A, v0.9.1: its URI, MIME types, catalogs and the messages we send.

Sans-I/O: plain dicts in, plain dicts out (the A2A 1.0 JSON form of a ``Part``); the client
(:mod:`a2ui.remote.a2a.client`) turns them into the SDK's objects. The extension's version lives
in :data:`EXTENSION_URI` and nowhere else.

What the extension says (a2ui.org, "A2UI Extension for A2A Protocol v0.9.1"):

- activation: the client names :data:`EXTENSION_URI` in the A2A extensions header of every
  request (``A2A-Extensions`` in A2A 1.0, ``X-A2A-Extensions`` in 0.3);
- ``message.metadata["a2uiClientCapabilities"]`` on every message: the catalogs the client shows;
- A2UI messages are ``DataPart`` s whose metadata ``mimeType`` is :data:`MIME`, their ``data`` a
  list of messages; a person's action goes back the same way, as the v0.9 client ``action``
  message, and a refused server message as the client ``error`` message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: The one place the extension's version is named.
EXTENSION_URI = "https://a2ui.org/a2a-extension/a2ui/v0.9.1"
#: Every A2UI extension URI starts with this (v0.8, v0.9, v0.9.1, v1.0 ...).
EXTENSION_BASE = "https://a2ui.org/a2a-extension/a2ui/"
#: The MIME type of an A2UI DataPart; v0.8/v0.9 drafts used the legacy form, still accepted.
MIME = "application/a2ui+json"
LEGACY_MIME = "application/json+a2ui"
MIMES = frozenset({MIME, LEGACY_MIME})
#: The ``version`` we write on client messages: both v0.9.1's schemas and the official samples'
#: executors (``data.get("version") == "v0.9"``) take it.
MESSAGE_VERSION = "v0.9"
#: ``message.metadata`` key of the client capabilities, and of the data model of the surfaces
#: that ask for it (``sendDataModel``).
CAPABILITIES_KEY = "a2uiClientCapabilities"
DATA_MODEL_KEY = "a2uiClientDataModel"
#: v0.9.1 moved the capabilities entry from ``"v0.9"`` to ``"v0.9.1"``; we send both, side by side.
CAPABILITY_KEYS = ("v0.9", "v0.9.1")

#: The basic catalog's id in v0.9 (what this server's validator and clients know) and the id
#: v0.9.1's extension page gives it. Both name the same catalog.
BASIC_CATALOG_V09 = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
BASIC_CATALOG_V091 = "https://a2ui.org/specification/v0_9_1/catalogs/basic/catalog.json"
CATALOG_ALIASES = {BASIC_CATALOG_V091: BASIC_CATALOG_V09}

MAX_CATALOG_IDS = 50
#: Earlier A2UI extension URIs whose messages are v0.9's too: requested as well when an agent's
#: card advertises one (CrewAI's A2UI server extension advertises v0.9).
ALSO_UNDERSTOOD = (EXTENSION_BASE + "v0.9",)


def requested_extensions(card: Mapping[str, Any]) -> list[str]:
    """The extension URIs to activate with an agent: ours, plus a v0.9 one its card invites."""
    uris = [EXTENSION_URI]
    caps = card.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, Mapping) else None
    for ext in exts if isinstance(exts, list) else []:
        uri = ext.get("uri") if isinstance(ext, Mapping) else None
        if uri in ALSO_UNDERSTOOD and uri not in uris:
            uris.append(uri)
    return uris


def canonical_catalog_id(catalog_id: str) -> str:
    """The id this server knows a catalog by (v0.9.1's basic catalog id -> v0.9's)."""
    return CATALOG_ALIASES.get(catalog_id, catalog_id)


def client_capabilities(catalog_ids: Iterable[str],
                        inline_catalogs: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``a2uiClientCapabilities`` for the union of the session's clients' catalogs.

    The basic catalog is named by both its v0.9 and its v0.9.1 id, so an agent that knows either
    picks it; the entry is written under both capability keys (v0.9's and v0.9.1's).
    """
    ids: list[str] = []
    for cid in catalog_ids:
        if not isinstance(cid, str) or cid in ids:
            continue
        ids.append(cid)
        if cid == BASIC_CATALOG_V09 and BASIC_CATALOG_V091 not in ids:
            ids.append(BASIC_CATALOG_V091)
    entry: dict[str, Any] = {"supportedCatalogIds": ids[:MAX_CATALOG_IDS]}
    inline = [dict(c) for c in inline_catalogs]
    if inline:
        entry["inlineCatalogs"] = inline
    return {key: dict(entry) for key in CAPABILITY_KEYS}


def agent_extension(card: Mapping[str, Any]) -> dict[str, Any] | None:
    """The card's A2UI extension entry for our version (its ``params`` may say what it makes).

    ``None`` when the card names no A2UI extension at all; an entry of another A2UI version
    (v0.8, v0.9) is returned too (``uri`` tells which), since an agent that advertises one
    usually takes any client capabilities we send.
    """
    caps = card.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, Mapping) else None
    if not isinstance(exts, list):
        return None
    found = None
    for ext in exts:
        if not isinstance(ext, Mapping) or not isinstance(ext.get("uri"), str):
            continue
        if ext["uri"] == EXTENSION_URI:
            return dict(ext)
        if ext["uri"].startswith(EXTENSION_BASE) and found is None:
            found = dict(ext)
    return found


def a2ui_part(messages: list[dict[str, Any]], *, as_list: bool) -> dict[str, Any]:
    """A DataPart (A2A 1.0 JSON form) carrying A2UI client messages.

    ``as_list``: the extension's form, ``data`` a list of messages (A2A 1.0, where ``data`` is any
    JSON value). A2A 0.3's ``DataPart.data`` is an object, so there each part carries one message
    object, the form the official samples' executors read: call once per message.
    """
    data: Any = messages if as_list else messages[0]
    return {"data": data, "mediaType": MIME, "metadata": {"mimeType": MIME}}


def action_message(action: Mapping[str, Any]) -> dict[str, Any]:
    """The v0.9 client ``action`` message for a person's action on an agent's surface."""
    return {"version": MESSAGE_VERSION, "action": dict(action)}


def error_message(code: str, surface_id: str, message: str, path: str | None = None
                  ) -> dict[str, Any]:
    """The v0.9 client ``error`` message reporting a refused server message to the agent.

    ``VALIDATION_FAILED`` needs ``path``; any other code is the schema's generic error.
    """
    body: dict[str, Any] = {"code": code, "surfaceId": surface_id, "message": message}
    if code == "VALIDATION_FAILED":
        body["path"] = path if path is not None else ""
    return {"version": MESSAGE_VERSION, "error": body}


def client_data_model(surface_id: str, model: Mapping[str, Any]) -> dict[str, Any]:
    """``a2uiClientDataModel`` for one surface that sends its data model."""
    return {"version": MESSAGE_VERSION, "surfaces": {surface_id: dict(model)}}


def parts_for(messages: list[dict[str, Any]], *, as_list: bool) -> list[dict[str, Any]]:
    """DataParts for client messages: one list part (1.0), or one part per message (0.3)."""
    if not messages:
        return []
    if as_list:
        return [a2ui_part(messages, as_list=True)]
    return [a2ui_part([m], as_list=False) for m in messages]
