"""Seed-000 components and pending requests as A2UI v0.9 surfaces of the basic catalog.

Sans-I/O (no Django, no network). A v0.9-only client (the /ws/v09 socket, the SSE surface
stream) is shown what a seed-000 agent renders and asks in the closest basic-catalog form, with
the data a person needs (docs/protocol-v09.md, "What a v0.9 client is shown of each session
event"):

* one surface per component, ``a2ui-component-<component_id>`` (catalog basic): a component
  is updated, expires and is removed on its own, so each maps to one surface that
  ``updateComponents`` re-sends and ``deleteSurface`` removes, and the surfaces keep the order
  the components were rendered in (a renderer lists surfaces in creation order);
* one surface per open request, ``a2ui-request-<request_id>``: its prompt, input field and the
  buttons whose action answers it (``answer_of`` reads the action back).

The data given is what ``a2ui.core.content.components.validate_component`` returned (sanitized:
no markup, entities for ``<>&``); ``Text`` is markdown to a v0.9 renderer, so plain strings are
markdown-escaped (``plain``) and a markdown component's content goes as it is.
"""

from a2ui.core.surfaces.schema import BASIC_CATALOG_ID
from a2ui.core.surfaces.translate.drawing import (  # noqa: F401 (the translation's names)
    APPROVE,
    BUILDERS,
    COMPONENT_PREFIX,
    CONFIRM_ICONS,
    REJECT,
    REQUEST_PREFIX,
    RESPOND,
    SUBMIT,
    V,
    _event,
    _form_field,
    _heading,
    _Tree,
    component_surface_id,
    component_tree,
    plain,
    request_surface_id,
)

# Messages --------------------------------------------------------------------------------------


def _data_message(sid, path, value):
    return {"version": V, "updateDataModel": {"surfaceId": sid, "path": path, "value": value}}


def surface_messages(sid, components, model, previous=None):
    """The messages that show ``components`` (and ``model``) on surface ``sid``, and what the
    client then holds: ``(messages, held)``. ``previous``: what it holds of ``sid`` (None:
    nothing; ``createSurface`` first).

    v0.9 cannot delete a component, and the strict rules allow no orphan: when the new tree
    keeps every component id the client holds (an appended row, a changed value), one
    ``updateComponents`` does, and the surface keeps its place; otherwise the surface is
    deleted and created again. A data model is sent whole on create; later only the fields
    that are new or whose initial value changed (what the person typed in the others stays).
    """
    ids = frozenset(c["id"] for c in components)
    out = []
    if previous is not None and not previous[0] <= ids:
        out.append(delete_message(sid))
        previous = None
    if previous is None:
        out.append({"version": V, "createSurface": {"surfaceId": sid,
                                                    "catalogId": BASIC_CATALOG_ID}})
    out.append({"version": V, "updateComponents": {"surfaceId": sid, "components": components}})
    if model is not None:
        if previous is None or previous[1] is None:
            out.append(_data_message(sid, "/", model))
        else:
            out += [_data_message(sid, "/" + k.replace("~", "~0").replace("/", "~1"), v)
                    for k, v in model.items() if k not in previous[1] or previous[1][k] != v]
    return out, (ids, model)


def component_messages(component_id, component_type, data, previous=None):
    """``surface_messages`` of one seed-000 component's surface."""
    components, model = component_tree(component_type, data)
    return surface_messages(component_surface_id(component_id), components, model, previous)


def delete_message(surface_id):
    return {"version": V, "deleteSurface": {"surfaceId": surface_id}}


def request_tree(kind, params):
    """(components, data model) of an open ``ui.request_input`` / ``ui.confirm``."""
    tree = _Tree()
    if kind == "confirm":
        severity = params.get("severity") or "info"
        texts = _heading(tree, params, variant="h4")
        buttons = tree.row([
            tree.button(params.get("confirm_label") or "Approve", _event(APPROVE), "primary"),
            tree.button(params.get("cancel_label") or "Reject", _event(REJECT))])
        body = tree.column(texts + [buttons])
        row = tree.row([tree.icon(CONFIRM_ICONS.get(severity, "info")), body])
        tree.add({"component": "Card", "child": row}, "root")
        return tree.components, None
    field = {"name": "value", "label": params.get("prompt") or "",
             "type": {"select": "select", "number": "number", "date": "date"}.get(
                 params.get("input_type"), "text"),
             "options": params.get("options"), "default": params.get("default"),
             "required": (params.get("validation") or {}).get("required")}
    if isinstance((params.get("validation") or {}).get("pattern"), str):
        field["pattern"] = params["validation"]["pattern"]
    model = {}
    cid, path = _form_field(tree, field, model)
    children = [cid]
    if params.get("input_type") == "file":
        children.append(tree.text("A file cannot be picked here: give its path or URL.",
                                  "caption"))
    children.append(tree.row([tree.button(params.get("submit_label") or "Send",
                                          _event(RESPOND, {"value": {"path": path}}),
                                          "primary")]))
    col = tree.column(children)
    tree.add({"component": "Card", "child": col}, "root")
    return tree.components, model


def request_messages(kind, params, previous=None):
    """``surface_messages`` of an open request's surface."""
    components, model = request_tree(kind, params)
    return surface_messages(request_surface_id(params["request_id"]), components, model,
                            previous)


# Actions back ----------------------------------------------------------------------------------


def answer_of(action, input_type=None):
    """What a person's ``action`` on a translated surface means, or None (not one of ours).

    ``("form", component_id, values)``: a form component's submit (seed 000's ``user.respond``
    keyed by the component id); ``("input", request_id, value)`` / ``("confirm", request_id,
    {"approved", "reason"})``: the answer to an open request. A ChoicePicker's list is its one
    value for a single-choice input (``input_type`` "select"). An action of another name on
    such a surface is ``("refused", surface_id, reason)``.
    """
    sid, name = action["surfaceId"], action["name"]
    context = action.get("context") or {}
    if sid.startswith(COMPONENT_PREFIX):
        if name != SUBMIT:
            return ("refused", sid, f"A component surface takes only '{SUBMIT}'.")
        return ("form", sid[len(COMPONENT_PREFIX):], context)
    if sid.startswith(REQUEST_PREFIX):
        request_id = sid[len(REQUEST_PREFIX):]
        if name in (APPROVE, REJECT):
            return ("confirm", request_id, {"approved": name == APPROVE, "reason": ""})
        if name == RESPOND:
            if "value" not in context:
                return ("refused", sid, "The answer needs context.value.")
            value = context["value"]
            if input_type == "select" and isinstance(value, list) and len(value) == 1:
                value = value[0]
            return ("input", request_id, value)
        return ("refused", sid, f"A request surface takes '{RESPOND}', '{APPROVE}' or "
                                f"'{REJECT}'.")
    return None


def is_translated(surface_id):
    return isinstance(surface_id, str) and surface_id.startswith((COMPONENT_PREFIX,
                                                                  REQUEST_PREFIX))


class _Answers:
    """What a person's action on a translated surface answers (``surfaces.aclient_messages``'s
    ``answers``): the v0.9 socket's requests and form components."""

    owns = staticmethod(is_translated)
    read = staticmethod(answer_of)

    @staticmethod
    def request_id(surface_id):
        return surface_id[len(REQUEST_PREFIX):] if surface_id.startswith(REQUEST_PREFIX) else None


ANSWERS = _Answers()
