"""Message builders shared by the v0.9 tests."""

from __future__ import annotations

from typing import Any

from a2ui.core.surfaces import BASIC_CATALOG_ID

SID = "s1"


def create(sid: str = SID, **extra: Any) -> dict:
    return {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": BASIC_CATALOG_ID,
                                                  **extra}}


def update(*components: dict, sid: str = SID) -> dict:
    return {"version": "v0.9", "updateComponents": {"surfaceId": sid,
                                                     "components": list(components)}}


def data(path: str | None = None, sid: str = SID, **value: Any) -> dict:
    body: dict[str, Any] = {"surfaceId": sid}
    if path is not None:
        body["path"] = path
    body.update(value)
    return {"version": "v0.9", "updateDataModel": body}


def delete(sid: str = SID) -> dict:
    return {"version": "v0.9", "deleteSurface": {"surfaceId": sid}}


def text(cid: str, value: Any = "hi", **extra: Any) -> dict:
    return {"id": cid, "component": "Text", "text": value, **extra}


def column(cid: str, *children: str, **extra: Any) -> dict:
    return {"id": cid, "component": "Column", "children": list(children), **extra}


def card(cid: str, child: str) -> dict:
    return {"id": cid, "component": "Card", "child": child}
