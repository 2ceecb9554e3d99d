"""Pure state of one surface, as a renderer would hold it after the messages so far.

``SurfaceState`` is plain data: it stores as JSON (:meth:`to_dict` /
:meth:`from_dict`) and can replay itself to a client that (re)connects
(:meth:`snapshot_messages`). It does not validate; use
:func:`a2ui.core.surfaces.session.validate_batch`, which works on copies and applies
only batches that are valid as a whole.

Besides the components, the state keeps each component's graph metadata
(child refs, template refs, relative-path flag) computed by the catalog
checkers, so graph rules and snapshots never need the catalog again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from a2ui.core.surfaces import datamodel
from a2ui.core.surfaces.catalog import CatalogRegistry, default_registry
from a2ui.core.surfaces.envelope import Entry, Meta, check_components
from a2ui.core.surfaces.errors import PROTOCOL_VERSION
from a2ui.core.surfaces.graph import reachable_in_order


@dataclass
class SurfaceState:
    surface_id: str
    catalog_id: str
    theme: dict[str, Any] | None = None
    send_data_model: bool = False
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    data_model: Any = field(default_factory=dict)
    meta: dict[str, Meta] = field(default_factory=dict, repr=False)
    deleted: bool = False

    # -- construction ---------------------------------------------------
    @classmethod
    def from_create(cls, message: dict[str, Any]) -> SurfaceState:
        """New state from a createSurface message (or its body)."""
        body = message.get("createSurface", message)
        return cls(surface_id=body["surfaceId"], catalog_id=body["catalogId"],
                   theme=body.get("theme"), send_data_model=bool(body.get("sendDataModel")))

    def copy(self) -> SurfaceState:
        """Cheap copy safe to apply to: dicts copied, data model shared (updates path-copy)."""
        return SurfaceState(self.surface_id, self.catalog_id, self.theme, self.send_data_model,
                            dict(self.components), self.data_model, dict(self.meta), self.deleted)

    # -- applying (no validation) -----------------------------------------
    def apply(self, message: dict[str, Any], registry: CatalogRegistry | None = None) -> None:
        """Apply one already-validated server message for this surface.

        ``registry`` is only needed for updateComponents, to compute the graph
        metadata of the new components (it re-runs the catalog checkers).
        """
        if "updateComponents" in message:
            body = message["updateComponents"]
            catalog = (registry or default_registry()).get(self.catalog_id)
            if catalog is None:
                raise ValueError(f"Unknown catalog {self.catalog_id!r}.")
            self.put_components(check_components(body, catalog, check_urls=False))
        elif "updateDataModel" in message:
            body = message["updateDataModel"]
            self.set_data(body.get("path", "/"), "value" in body, body.get("value"))
        elif "deleteSurface" in message:
            self.deleted = True
        elif "createSurface" in message:
            raise ValueError("createSurface starts a new state: use SurfaceState.from_create().")
        else:
            raise ValueError("Not a server-to-client message.")

    def put_components(self, entries: list[Entry]) -> None:
        """Upsert checked components (id, component, meta); a later id replaces an earlier."""
        for cid, comp, meta in entries:
            self.components[cid] = comp
            self.meta[cid] = meta

    def set_data(self, path: str, has_value: bool, value: Any = None) -> None:
        """Upsert at ``path`` or, without a value, delete it (raises DataModelError)."""
        if has_value:
            self.data_model = datamodel.upsert(self.data_model, path, value)
        else:
            self.data_model = datamodel.remove(self.data_model, path)

    # -- reading --------------------------------------------------------
    def reachable_ids(self) -> list[str]:
        return reachable_in_order(self.meta, self.components)

    def is_complete(self) -> bool:
        """Root present and every reference of the reachable tree resolves."""
        ids = self.reachable_ids()
        return bool(ids) and all(r in self.components for c in ids for r in self.meta[c][0])

    def snapshot_messages(self) -> list[dict[str, Any]]:
        """Messages recreating this surface: createSurface, updateComponents, updateDataModel.

        Only components reachable from root are sent (root first), so orphans
        left behind by incremental updates disappear and the snapshot passes
        the strict validator whenever :meth:`is_complete`. updateComponents is
        left out while there is no root yet.
        """
        create: dict[str, Any] = {"surfaceId": self.surface_id, "catalogId": self.catalog_id}
        if self.theme is not None:
            create["theme"] = self.theme
        if self.send_data_model:
            create["sendDataModel"] = True
        messages = [{"version": PROTOCOL_VERSION, "createSurface": create}]
        ids = self.reachable_ids()
        if ids:
            messages.append({"version": PROTOCOL_VERSION, "updateComponents": {
                "surfaceId": self.surface_id,
                "components": [self.components[c] for c in ids]}})
        messages.append({"version": PROTOCOL_VERSION, "updateDataModel": {
            "surfaceId": self.surface_id, "path": "/", "value": self.data_model}})
        return messages

    # -- storage --------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (graph metadata included so loading needs no catalog)."""
        return {
            "surfaceId": self.surface_id,
            "catalogId": self.catalog_id,
            "theme": self.theme,
            "sendDataModel": self.send_data_model,
            "components": self.components,
            "dataModel": self.data_model,
            "graph": {cid: [list(m[0]), list(m[1]), m[2]] for cid, m in self.meta.items()},
            "deleted": self.deleted,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], registry: CatalogRegistry | None = None
                  ) -> SurfaceState:
        """Inverse of :meth:`to_dict`; recomputes missing graph metadata via ``registry``."""
        state = cls(surface_id=data["surfaceId"], catalog_id=data["catalogId"],
                    theme=data.get("theme"), send_data_model=bool(data.get("sendDataModel")),
                    components=dict(data.get("components") or {}),
                    data_model=data.get("dataModel", {}), deleted=bool(data.get("deleted")))
        graph = data.get("graph") or {}
        state.meta = {cid: (tuple(m[0]), tuple(m[1]), bool(m[2])) for cid, m in graph.items()}
        if state.components.keys() - state.meta.keys():
            state._recompute_meta(registry)
        return state

    def _recompute_meta(self, registry: CatalogRegistry | None) -> None:
        catalog = (registry or default_registry()).get(self.catalog_id)
        if catalog is None:
            raise ValueError(f"Unknown catalog {self.catalog_id!r}.")
        body = {"surfaceId": self.surface_id, "components": list(self.components.values())}
        self.components = {}
        self.meta = {}
        self.put_components(check_components(body, catalog, check_urls=False))
