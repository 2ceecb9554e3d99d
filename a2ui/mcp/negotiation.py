"""Which A2UI catalogs and UI forms an MCP host declared. Sans-I/O.

Seed 004 puts A2UI's client capabilities in ``capabilities.a2ui.clientCapabilities`` at
``initialize`` (the SDK drops that unknown key: ``a2ui.mcp.server`` keeps the raw one) or in
``_meta.a2ui.clientCapabilities`` of each request (stateless use; it wins). The SEP-2133
``extensions`` form is accepted too: ``capabilities.extensions["a2ui"]`` (or any identifier
ending in ``/a2ui``) holding ``{"clientCapabilities": {...}}``. MCP Apps hosts declare the
``io.modelcontextprotocol/ui`` extension.
"""

from a2ui.mcp.uris import APPS_EXTENSION


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


def wants_apps(init_capabilities):
    """True when the host declared the MCP Apps extension."""
    extensions = (init_capabilities or {}).get("extensions") if isinstance(
        init_capabilities, dict) else None
    return isinstance(extensions, dict) and APPS_EXTENSION in extensions
