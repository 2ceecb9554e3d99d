"""Which A2UI catalogs and UI forms an MCP host declared. Sans-I/O.

Seed 004 puts A2UI's client capabilities in ``capabilities.a2ui.clientCapabilities`` at
``initialize`` (the SDK drops that unknown key: ``a2ui.mcp.server`` keeps the raw one) or in
``_meta.a2ui.clientCapabilities`` of each request (stateless use; it wins). The SEP-2133
``extensions`` form is accepted too: ``capabilities.extensions["a2ui"]`` (or any identifier
ending in ``/a2ui``) holding ``{"clientCapabilities": {...}}``. MCP Apps hosts declare the
``io.modelcontextprotocol/ui`` extension with the ``mimeTypes`` they render: a host that lists
``application/a2ui+json`` there renders A2UI natively (the A2UI MCP Apps extension draft:
``ui_form`` "a2ui"), any other MCP Apps host gets the HTML app (``text/html;profile=mcp-app``).
On the 2026-07-28 revision the capabilities come with each request
(``_meta["io.modelcontextprotocol/clientCapabilities"]``, ``request_capabilities``).
"""

from a2ui.mcp.uris import A2UI_MIME, APPS_EXTENSION

#: Where a 2026-07-28 request carries the client's capabilities.
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"


def _a2ui_extension(extensions):
    if not isinstance(extensions, dict):
        return None
    for key, value in extensions.items():
        if isinstance(key, str) and (key == "a2ui" or key.endswith("/a2ui")):
            return value
    return None


def client_capabilities(init_capabilities, meta=None):
    """The host's A2UI ``clientCapabilities`` (``{"v0.9": {...}}``), or None if undeclared."""
    init_capabilities = init_capabilities if isinstance(init_capabilities, dict) else {}
    sources = [
        (meta or {}).get("a2ui") if isinstance(meta, dict) else None,
        init_capabilities.get("a2ui"),
        _a2ui_extension(init_capabilities.get("extensions")),
    ]
    for source in sources:
        if isinstance(source, dict) and isinstance(source.get("clientCapabilities"), dict):
            return source["clientCapabilities"]
    return None


def request_capabilities(init_capabilities, meta=None):
    """The host's capabilities: those of ``initialize`` (the handshake era), else those the
    request's ``_meta`` carries (2026-07-28), else ``{}``."""
    if isinstance(init_capabilities, dict) and init_capabilities:
        return init_capabilities
    carried = meta.get(CLIENT_CAPABILITIES_META) if isinstance(meta, dict) else None
    return carried if isinstance(carried, dict) else {}


def _apps_extension(capabilities):
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return extensions.get(APPS_EXTENSION) if isinstance(extensions, dict) else None


def wants_apps(init_capabilities):
    """True when the host declared the MCP Apps extension."""
    extensions = (init_capabilities or {}).get("extensions") if isinstance(
        init_capabilities, dict) else None
    return isinstance(extensions, dict) and APPS_EXTENSION in extensions


def ui_mime_types(capabilities):
    """The MIME types the host's MCP Apps extension declares (strings only, lower-cased), or
    None when it declared no extension."""
    if not wants_apps(capabilities):
        return None
    declared = _apps_extension(capabilities)
    types = declared.get("mimeTypes") if isinstance(declared, dict) else None
    return [t.strip().lower() for t in types if isinstance(t, str)] \
        if isinstance(types, list) else []


def ui_form(capabilities):
    """How the host is shown an app: "a2ui" (it declared ``application/a2ui+json``: the A2UI
    messages natively), "html" (any other MCP Apps host: the ``text/html;profile=mcp-app``
    document), or None (no MCP Apps extension)."""
    types = ui_mime_types(capabilities)
    if types is None:
        return None
    return "a2ui" if A2UI_MIME in types else "html"
