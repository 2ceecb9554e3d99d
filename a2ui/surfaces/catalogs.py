"""The catalogs a server knows (A2UI['CATALOGS']) and the ones a client declares."""

import json
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from a2ui.conf import a2ui_settings
from a2ui.core.content.fields import name_reason
from a2ui.core.surfaces import (
    BASIC_CATALOG_ID,
    CAPABILITY_KEYS,
    VERSIONS,
    CatalogError,
    CatalogRegistry,
)
from a2ui.surfaces.cleaning import _failed

# Catalogs --------------------------------------------------------------------------------------

_registry = None
MAX_CATALOG_ID = 500


def load_catalog(entry):
    """A catalog definition from a settings entry: a dict, a JSON file path or a dotted path."""
    if isinstance(entry, dict):
        return entry
    if isinstance(entry, Path) or (
        isinstance(entry, str) and (entry.endswith(".json") or "/" in entry or "\\" in entry)
    ):
        try:
            return json.loads(Path(entry).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ImproperlyConfigured(f"A2UI catalog file {str(entry)!r}: {exc}") from exc
    if not isinstance(entry, str):
        raise ImproperlyConfigured(
            f"A2UI['CATALOGS'] entries are dotted paths or JSON file paths, got {entry!r}."
        )
    try:
        obj = import_string(entry)
    except ImportError as exc:
        raise ImproperlyConfigured(f"A2UI catalog {entry!r}: {exc}") from exc
    try:
        definition = obj() if callable(obj) else obj
    except Exception as exc:
        raise ImproperlyConfigured(f"A2UI catalog {entry!r} failed to load: {exc}") from exc
    if not isinstance(definition, dict):
        raise ImproperlyConfigured(f"A2UI catalog {entry!r} is not a JSON object (dict).")
    return definition


def build_registry(entries):
    """The basic catalog plus every configured one, compiled; ImproperlyConfigured if bad."""
    registry = CatalogRegistry()
    if not isinstance(entries, list | tuple):
        raise ImproperlyConfigured("A2UI['CATALOGS'] must be a list.")
    for entry in entries:
        definition = load_catalog(entry)
        try:
            registry.register(definition)
        except CatalogError as exc:
            raise ImproperlyConfigured(f"A2UI catalog {str(entry)[:200]!r}: {exc}") from exc
    return registry


def catalog_registry():
    """The process's registry, built once from A2UI['CATALOGS'] (rebuilt when it changes)."""
    global _registry
    if _registry is None:
        _registry = build_registry(a2ui_settings.CATALOGS)
    return _registry


def _reset_registry(*, setting, **kwargs):
    global _registry
    if setting == "A2UI":
        _registry = None


setting_changed.connect(_reset_registry)


# Capabilities ----------------------------------------------------------------------------------


def declared_entry(capabilities):
    """``(key, entry)`` of the A2UI entry a capabilities object declares, or ``(None, None)``.

    v0.9.1 keys its entry ``"v0.9.1"`` (v0.9: ``"v0.9"``); a client may send both side by
    side, and then the ``"v0.9.1"`` one is used (the official evolution guide: fall back to
    ``"v0.9"`` when there is no ``"v0.9.1"``). ``{"a2uiClientCapabilities": {...}}`` (the
    metadata member's name) is unwrapped.
    """
    if not isinstance(capabilities, dict):
        return None, None
    if isinstance(capabilities.get("a2uiClientCapabilities"), dict):
        capabilities = capabilities["a2uiClientCapabilities"]
    for key in CAPABILITY_KEYS:
        if key in capabilities:
            return key, capabilities[key]
    return None, None


def declares_a2ui(capabilities):
    """True when a capabilities object has a v0.9 or v0.9.1 entry."""
    return declared_entry(capabilities)[0] is not None


def client_catalog_ids(capabilities):
    """Catalog ids a client declared, or None when it did not declare A2UI v0.9 at all.

    Accepts the official ``{"v0.9.1": {"supportedCatalogIds": [...]}}`` and v0.9's
    ``{"v0.9": {...}}`` (both side by side: the v0.9.1 entry), also wrapped as
    ``{"a2uiClientCapabilities": {...}}``. An entry without a list means basic only.
    """
    key, entry = declared_entry(capabilities)
    if key is None:
        return None
    if isinstance(entry, dict) and isinstance(entry.get("supportedCatalogIds"), list):
        return frozenset(c for c in entry["supportedCatalogIds"] if isinstance(c, str))
    return frozenset({BASIC_CATALOG_ID})


def parse_client_capabilities(obj):
    """The capabilities a /ws/v09 client sends first; returns the dict to store on the session.

    ``{"version": "v0.9", "capabilities": {"v0.9.1": {"supportedCatalogIds": [...]}}}`` (v0.9:
    ``"v0.9"`` instead of ``"v0.9.1"``; both may be there; ``"version"`` may be ``"v0.9.1"``;
    ``a2uiClientCapabilities`` instead of ``capabilities``). Each entry given is checked and
    kept. Raises SurfaceValidationError.
    """
    version = obj.get("version") if isinstance(obj, dict) else None
    if type(version) is not str or version not in VERSIONS:
        raise _failed("The first message must be {\"version\": \"v0.9\", \"capabilities\": "
                      "{\"v0.9.1\": {\"supportedCatalogIds\": [...]}}}.", "/version")
    key = "capabilities" if "capabilities" in obj else "a2uiClientCapabilities"
    caps = obj.get(key)
    present = [k for k in CAPABILITY_KEYS if isinstance(caps, dict) and k in caps]
    if not present:
        raise _failed("Expected an object with a \"v0.9.1\" (or \"v0.9\") object.", f"/{key}")
    out = {}
    for version in present:
        entry = caps[version]
        if not isinstance(entry, dict):
            raise _failed("Expected an object.", f"/{key}/{version}")
        ids = entry.get("supportedCatalogIds")
        path = f"/{key}/{version}/supportedCatalogIds"
        if not isinstance(ids, list) or len(ids) > 50:
            raise _failed("supportedCatalogIds must be an array of at most 50 catalog id "
                          "strings.", path)
        for i, catalog_id in enumerate(ids):
            reason = name_reason(catalog_id, MAX_CATALOG_ID)
            if reason:  # stored with the session: no NUL (jsonb), no control characters
                raise _failed(f"A catalog id {reason}.", f"{path}/{i}")
        out[version] = {"supportedCatalogIds": list(ids)}
    return out
