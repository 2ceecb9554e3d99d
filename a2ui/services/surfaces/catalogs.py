"""The catalogs a server knows (A2UI['CATALOGS']) and the ones a client declares."""

import json
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from a2ui.conf import a2ui_settings
from a2ui.core.content.fields import name_reason
from a2ui.core.surfaces import BASIC_CATALOG_ID, CatalogError, CatalogRegistry
from a2ui.services.surfaces.cleaning import _failed

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


def client_catalog_ids(capabilities):
    """Catalog ids a client declared, or None when it did not declare A2UI v0.9 at all.

    Accepts the official ``{"v0.9": {"supportedCatalogIds": [...]}}`` and the same wrapped as
    ``{"a2uiClientCapabilities": {...}}``. A bare ``"v0.9"`` without a list means basic only.
    """
    if not isinstance(capabilities, dict):
        return None
    if isinstance(capabilities.get("a2uiClientCapabilities"), dict):
        capabilities = capabilities["a2uiClientCapabilities"]
    if "v0.9" not in capabilities:
        return None
    v09 = capabilities["v0.9"]
    if isinstance(v09, dict) and isinstance(v09.get("supportedCatalogIds"), list):
        return frozenset(c for c in v09["supportedCatalogIds"] if isinstance(c, str))
    return frozenset({BASIC_CATALOG_ID})


def parse_client_capabilities(obj):
    """The capabilities a /ws/v09 client sends first; returns the dict to store on the session.

    ``{"version": "v0.9", "capabilities": {"v0.9": {"supportedCatalogIds": [...]}}}`` (or
    ``a2uiClientCapabilities`` instead of ``capabilities``). Raises SurfaceValidationError.
    """
    if not isinstance(obj, dict) or obj.get("version") not in ("v0.9", "v0.9.1"):
        raise _failed("The first message must be {\"version\": \"v0.9\", \"capabilities\": "
                      "{\"v0.9\": {\"supportedCatalogIds\": [...]}}}.", "/version")
    key = "capabilities" if "capabilities" in obj else "a2uiClientCapabilities"
    caps = obj.get(key)
    if not isinstance(caps, dict) or not isinstance(caps.get("v0.9"), dict):
        raise _failed("Expected an object with a \"v0.9\" object.", f"/{key}")
    ids = caps["v0.9"].get("supportedCatalogIds")
    path = f"/{key}/v0.9/supportedCatalogIds"
    if not isinstance(ids, list) or len(ids) > 50:
        raise _failed("supportedCatalogIds must be an array of at most 50 catalog id strings.",
                      path)
    for i, catalog_id in enumerate(ids):
        reason = name_reason(catalog_id, MAX_CATALOG_ID)
        if reason:  # stored with the session: no NUL (jsonb), no control characters
            raise _failed(f"A catalog id {reason}.", f"{path}/{i}")
    return {"v0.9": {"supportedCatalogIds": list(ids)}}

