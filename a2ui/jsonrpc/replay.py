"""A replayed screen (``a2ui.core.replay.Screen``) as the web client's JSON-RPC notifications,
in the order a resuming socket is sent them: ``ui.render`` per component, ``ui.confirm`` /
``ui.request_input`` per open request, one ``a2ui.v09`` snapshot (when there are surfaces), one
``ui.activity`` snapshot, ``a2ui.consent_required``. The admin's replay frame draws them with
the client's own renderer and no connection. Sans-I/O."""

from a2ui.core import state as S
from a2ui.rpc import jsonrpc

_REQUEST_METHODS = {"confirm": "ui.confirm", "input": "ui.request_input"}


def messages(screen):
    """The web client's notifications that draw ``screen`` on an empty page, in order."""
    snap = S.snapshot(screen.state)
    out = []
    for c in snap["components"]:
        params = {k: c[k] for k in ("component_id", "component_type", "data")}
        if c["metadata"]:
            params["metadata"] = c["metadata"]
        out.append(jsonrpc.notification("ui.render", params))
    for r in snap["requests"]:
        out.append(jsonrpc.notification(_REQUEST_METHODS.get(r["kind"], "ui.request_input"),
                                         r["params"]))
    surfaces = [m for surface in screen.state.surfaces.values()
                for m in surface.snapshot_messages()]
    if surfaces:  # the client loads its v0.9 renderer on the first a2ui.v09 message only
        out.append(jsonrpc.notification("a2ui.v09", {"messages": surfaces, "snapshot": True}))
    if any(snap["activity"].values()):
        out.append(jsonrpc.notification("ui.activity",
                                        {"kind": "snapshot", "data": snap["activity"]}))
    if screen.consent:
        out.append(jsonrpc.notification("a2ui.consent_required",
                                         {"consent_types": list(screen.consent)}))
    return out
