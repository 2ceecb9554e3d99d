"""A2UI v0.9 validation and pure surface state (sans-I/O: no Django, no network).

Service-layer API (see docs/v09.md):

* ``validate_batch(states, messages, registry=None, *, strict=False, policy=None)
  -> SurfaceChanges`` — validate server->client messages in order against the
  current ``{surfaceId: SurfaceState}``; all or nothing. Raises
  :class:`ValidationFailed` (``surface_id``, ``path``, ``message``, ``index``;
  ``to_error_message()`` gives the standard ``VALIDATION_FAILED`` message).
  ``SurfaceChanges`` has ``states`` (to store), ``deleted`` (to drop) and
  ``messages`` (to forward, with ``ServerPolicy`` applied).
* ``SessionSurfaces`` — the same over an in-memory dict (``apply_batch``).
* ``SurfaceState`` — ``apply``, ``to_dict``/``from_dict``, ``snapshot_messages``.
* ``validate_server_message`` — one message, no state (schema-level + in-message graph).
* ``validate_client_message`` — ``action``/``error`` (``userAction`` normalized to ``action``).
* ``CatalogRegistry`` — catalogId -> compiled catalog; basic pre-registered.
* ``ServerPolicy`` / ``with_trusted_identity`` / ``is_safe_url`` — anti-impersonation,
  URL schemes, ``sanitize_text`` hook.
* ``MIME_TYPE`` (``application/a2ui+json``), ``ACCEPTED_MIME_TYPES`` (plus the drafts'
  ``application/json+a2ui``), ``CAPABILITY_KEYS`` (``"v0.9.1"``, ``"v0.9"``).
"""

from a2ui.core.surfaces.catalog import (
    BASIC_CATALOG_ID,
    CatalogRegistry,
    CompiledCatalog,
    default_registry,
)
from a2ui.core.surfaces.client import validate_client_message
from a2ui.core.surfaces.envelope import CAPABILITY_KEYS, VERSIONS
from a2ui.core.surfaces.errors import PROTOCOL_VERSION, CatalogError, ValidationFailed
from a2ui.core.surfaces.media import ACCEPTED_MIME_TYPES, MIME_TYPE
from a2ui.core.surfaces.policy import ServerPolicy, sanitize_components, with_trusted_identity
from a2ui.core.surfaces.session import SessionSurfaces, SurfaceChanges, validate_batch
from a2ui.core.surfaces.state import SurfaceState
from a2ui.core.surfaces.urls import is_safe_url
from a2ui.core.surfaces.validator import validate_server_message

__all__ = [
    "ACCEPTED_MIME_TYPES",
    "BASIC_CATALOG_ID",
    "CAPABILITY_KEYS",
    "MIME_TYPE",
    "PROTOCOL_VERSION",
    "CatalogError",
    "CatalogRegistry",
    "CompiledCatalog",
    "ServerPolicy",
    "SessionSurfaces",
    "SurfaceChanges",
    "SurfaceState",
    "VERSIONS",
    "ValidationFailed",
    "default_registry",
    "is_safe_url",
    "sanitize_components",
    "validate_batch",
    "validate_client_message",
    "validate_server_message",
    "with_trusted_identity",
]
