"""Validate batches of server messages against surface states, atomically.

This is the entry point for the service layer::

    changes = validate_batch(states, messages, registry, strict=False, policy=policy)
    # raises ValidationFailed (with .index, .surface_id, .path, .message); else:
    for sid, state in changes.states.items(): store(sid, state.to_dict())
    for sid in changes.deleted: drop(sid)
    forward(changes.messages)          # policy applied (trusted theme, sanitized text)

``states`` is never modified: the batch runs on cheap copies of the surfaces
it touches (data-model updates path-copy), so an invalid message anywhere in
the batch leaves everything as it was. :class:`SessionSurfaces` wraps the same
thing for callers that keep states in memory.

Stateful rules enforced here: a surfaceId is unique among the **active** surfaces (v0.9.1):
createSurface for an existing surface is refused, but once deleted (in an earlier batch or
earlier in the same one) the id may be created again, as a new surface that starts from
nothing; updates to unknown surfaces are refused; the
component graph rules of :mod:`a2ui.core.surfaces.graph` run after every
updateComponents (``strict=True`` additionally requires a complete tree with no
orphans after each updateComponents: use it for snapshots and one-shot UIs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2ui.core.surfaces.catalog import CatalogRegistry, default_registry
from a2ui.core.surfaces.datamodel import DataModelError
from a2ui.core.surfaces.envelope import (
    check_components,
    check_create,
    check_data_model,
    check_delete,
    split_server_message,
    surface_id_of,
)
from a2ui.core.surfaces.errors import PROTOCOL_VERSION, Invalid, ValidationFailed
from a2ui.core.surfaces.graph import GraphError, check_graph, graph_invalid
from a2ui.core.surfaces.policy import (
    DEFAULT_POLICY,
    ServerPolicy,
    sanitize_components,
    with_trusted_identity,
)
from a2ui.core.surfaces.state import SurfaceState


@dataclass
class SurfaceChanges:
    """Outcome of a valid batch.

    states: new state of every touched surface that exists afterwards;
    deleted: ids of surfaces that existed before the batch and are gone;
    created: ids in ``states`` that a createSurface of this batch started: new surfaces, and
    surfaces deleted and created again (``replaced`` says which), whose state owes nothing to
    the one before;
    replaced: ids among ``created`` that existed before the batch (deleted, then created again);
    messages: the accepted messages as they should be forwarded and logged, each with
    ``"version": "v0.9"`` (the form v0.9 and v0.9.1 clients both accept, whatever the agent
    wrote).
    """

    states: dict[str, SurfaceState] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


class _Batch:
    """Working copies of the surfaces touched by one batch."""

    def __init__(self, states: Mapping[str, SurfaceState], registry: CatalogRegistry,
                 strict: bool, policy: ServerPolicy) -> None:
        self.original = states
        self.work: dict[str, SurfaceState | None] = {}
        self.registry = registry
        self.strict = strict
        self.policy = policy
        self.accepted: list[dict[str, Any]] = []
        self.created: dict[str, None] = {}  # ids a createSurface of this batch started, in order

    def current(self, sid: str) -> SurfaceState | None:
        if sid in self.work:
            return self.work[sid]
        state = self.original.get(sid)
        if state is None or state.deleted:
            return None
        self.work[sid] = state.copy()
        return self.work[sid]

    def apply(self, message: Any) -> None:
        kind, body = split_server_message(message)
        try:
            getattr(self, "_" + kind)(message, body)
        except Invalid as e:
            e.parts.append(kind)
            raise
        accepted = self.accepted[-1]
        if accepted["version"] != PROTOCOL_VERSION:  # "v0.9.1": the same message, said as v0.9
            self.accepted[-1] = {**accepted, "version": PROTOCOL_VERSION}

    def _existing(self, body: dict, check: Any) -> SurfaceState:
        check(body)
        state = self.current(body["surfaceId"])
        if state is None:
            raise Invalid(f"Unknown surface '{body['surfaceId']}': send createSurface first.",
                          ["surfaceId"])
        return state

    def _createSurface(self, message: dict, body: dict) -> None:  # noqa: N802
        check_create(body, self.registry, self.policy.check_urls)
        sid = body["surfaceId"]
        if self.current(sid) is not None:  # unique among active surfaces (v0.9.1)
            raise Invalid(f"Surface '{sid}' already exists; delete it before creating it again.",
                          ["surfaceId"])
        if self.policy.enforce_identity:
            message = with_trusted_identity(message, self.policy.agent_display_name,
                                            self.policy.icon_url)
        self.work[sid] = SurfaceState.from_create(message)
        self.created[sid] = None  # (a delete took out an earlier create of the batch)
        self.accepted.append(message)

    def _updateComponents(self, message: dict, body: dict) -> None:  # noqa: N802
        state = self._existing(body, _check_surface_only)
        catalog = self.registry.get(state.catalog_id)
        if catalog is None:
            raise Invalid(f"The catalog '{state.catalog_id}' of this surface is not registered.",
                          ["surfaceId"])
        entries = check_components(body, catalog, self.policy.check_urls)
        if self.policy.sanitize_text is not None:
            message = sanitize_components(message, self.policy.sanitize_text)
            clean = message["updateComponents"]["components"]
            entries = [(cid, comp, meta) for (cid, _old, meta), comp in zip(entries, clean,
                                                                              strict=True)]
        state.put_components(entries)
        try:
            check_graph(state.components, state.meta, self.strict)
        except GraphError as e:
            raise graph_invalid(e, entries) from None
        self.accepted.append(message)

    def _updateDataModel(self, message: dict, body: dict) -> None:  # noqa: N802
        path, has_value, value = check_data_model(body)
        state = self._existing(body, _check_surface_only)
        try:
            state.set_data(path, has_value, value)
        except DataModelError as e:
            raise Invalid(str(e), ["path"]) from None
        self.accepted.append(message)

    def _deleteSurface(self, message: dict, body: dict) -> None:  # noqa: N802
        self._existing(body, check_delete)
        self.work[body["surfaceId"]] = None
        self.created.pop(body["surfaceId"], None)
        self.accepted.append(message)

    def _existed(self, sid: str) -> bool:
        return sid in self.original and not self.original[sid].deleted

    def changes(self) -> SurfaceChanges:
        out = SurfaceChanges(messages=self.accepted)
        for sid, state in self.work.items():
            if state is not None:
                out.states[sid] = state
            elif self._existed(sid):
                out.deleted.append(sid)
        out.created = list(self.created)
        out.replaced = [sid for sid in out.created if self._existed(sid)]
        return out


def _check_surface_only(body: dict) -> None:
    sid = body.get("surfaceId")
    if sid is None:
        raise Invalid("Missing required property 'surfaceId'.")
    if type(sid) is not str:
        raise Invalid("Expected a string.", ["surfaceId"])


def validate_batch(states: Mapping[str, SurfaceState], messages: Iterable[Any],
                   registry: CatalogRegistry | None = None, *, strict: bool = False,
                   policy: ServerPolicy | None = None) -> SurfaceChanges:
    """Validate ``messages`` in order against ``states``; all or nothing.

    Raises :class:`ValidationFailed` for the first invalid message (``index``
    is its position); ``states`` is left untouched either way.
    """
    batch = _Batch(states, registry or default_registry(), strict, policy or DEFAULT_POLICY)
    for index, message in enumerate(messages):
        try:
            batch.apply(message)
        except Invalid as e:
            raise ValidationFailed(e.message, e.pointer(), surface_id_of(message), index) \
                from None
    return batch.changes()


class SessionSurfaces:
    """The surfaces of one session, kept in memory, updated only by valid batches."""

    def __init__(self, states: dict[str, SurfaceState] | None = None,
                 registry: CatalogRegistry | None = None,
                 policy: ServerPolicy | None = None) -> None:
        self.states: dict[str, SurfaceState] = dict(states or {})
        self.registry = registry or default_registry()
        self.policy = policy or DEFAULT_POLICY

    def validate(self, messages: Iterable[Any], *, strict: bool = False) -> SurfaceChanges:
        return validate_batch(self.states, messages, self.registry, strict=strict,
                              policy=self.policy)

    def commit(self, changes: SurfaceChanges) -> None:
        """Apply valid changes; ``states`` keeps creation order (a surface created again goes
        last, as a renderer shows it)."""
        for sid in (*changes.deleted, *changes.replaced):
            self.states.pop(sid, None)
        created = set(changes.created)
        for sid, state in changes.states.items():
            if sid not in created:
                self.states[sid] = state
        for sid in changes.created:
            self.states[sid] = changes.states[sid]

    def apply_batch(self, messages: Iterable[Any], *, strict: bool = False) -> SurfaceChanges:
        """Validate then commit; raises ValidationFailed and changes nothing if invalid."""
        changes = self.validate(messages, strict=strict)
        self.commit(changes)
        return changes

    def snapshot_messages(self) -> list[dict[str, Any]]:
        return [m for state in self.states.values() for m in state.snapshot_messages()]

    def to_dict(self) -> dict[str, Any]:
        return {sid: state.to_dict() for sid, state in self.states.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any], registry: CatalogRegistry | None = None,
                  policy: ServerPolicy | None = None) -> SessionSurfaces:
        states = {sid: SurfaceState.from_dict(d, registry) for sid, d in data.items()}
        return cls(states, registry, policy)
