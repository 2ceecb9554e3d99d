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

import json
import re

from a2ui.core.surfaces.errors import PROTOCOL_VERSION
from a2ui.core.surfaces.schema import BASIC_CATALOG_ID

V = PROTOCOL_VERSION
COMPONENT_PREFIX = "a2ui-component-"
REQUEST_PREFIX = "a2ui-request-"

#: The action names the buttons of a translated surface send (``answer_of``).
SUBMIT, RESPOND, APPROVE, REJECT = "submit", "respond", "approve", "reject"

ALERT_ICONS = {"info": "info", "success": "check", "warning": "warning", "error": "error"}
STEP_ICONS = {"pending": "moreHoriz", "active": "arrowForward", "completed": "check",
              "error": "error"}
CONFIRM_ICONS = {"info": "info", "warning": "warning", "critical": "error"}

_MD_INLINE = re.compile(r"([\\`*_\[\]|~<>])")
_MD_LINE_START = re.compile(r"^(\s*)([#>+\-]|\d+\.)", re.MULTILINE)


def component_surface_id(component_id):
    return COMPONENT_PREFIX + component_id


def request_surface_id(request_id):
    return REQUEST_PREFIX + request_id


def plain(value):
    """A value shown as text: a string markdown-escaped, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    value = _MD_INLINE.sub(r"\\\1", value)
    return _MD_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), value)


class _Tree:
    """Components of one surface, ids numbered in order; ``root`` is the root."""

    def __init__(self):
        self.components = []
        self.count = 0

    def add(self, comp, cid=None):
        if cid is None:
            self.count += 1
            cid = f"c{self.count}"
        self.components.append({"id": cid, **comp})
        return cid

    def text(self, value, variant=None):
        comp = {"component": "Text", "text": value}
        if variant:
            comp["variant"] = variant
        return self.add(comp)

    def column(self, children, cid=None):
        return self.add({"component": "Column", "children": list(children)}, cid)

    def row(self, children, cid=None):
        return self.add({"component": "Row", "children": list(children)}, cid)

    def button(self, label, action, variant=None):
        comp = {"component": "Button", "child": self.text(plain(label)), "action": action}
        if variant:
            comp["variant"] = variant
        return self.add(comp)

    def icon(self, name):
        return self.add({"component": "Icon", "name": name})


def _event(name, context=None):
    event = {"name": name}
    if context:
        event["context"] = context
    return {"event": event}


def _view(data):
    """What the seed-000 web client draws of ``{..., content: {...}}``: content's keys under
    the top level's (``a2ui.core.content.components.validate_component`` checks the same)."""
    content = data.get("content")
    if isinstance(content, dict):
        return {**content, **{k: v for k, v in data.items() if k != "content"}}
    return data


def _heading(tree, data, key="title", variant="h3"):
    out = []
    if isinstance(data.get(key), str) and data[key]:
        out.append(tree.text(plain(data[key]), variant))
    if isinstance(data.get("description"), str) and data["description"]:
        out.append(tree.text(plain(data["description"])))
    return out


# The nine component types ----------------------------------------------------------------------


def _card(tree, data, model):
    children = _heading(tree, data)
    for section in data.get("sections") or []:
        label, value = section.get("label", ""), section.get("value")
        children.append(tree.row([tree.text(f"**{plain(label)}**"), tree.text(plain(value))]))
    buttons = []
    for action in data.get("actions") or []:
        url = action.get("url")
        if isinstance(url, str) and url:
            # Card actions open their URL (as the seed-000 web client does); one without a URL
            # does nothing there either, so it is left out.
            buttons.append(tree.button(action.get("label") or action.get("action") or "Open", {
                "functionCall": {"call": "openUrl", "args": {"url": url}}}))
    if buttons:
        children.append(tree.row(buttons))
    col = tree.column(children or [tree.text("")])
    return tree.add({"component": "Card", "child": col}, "root")


def _cell(row, key, index):
    if isinstance(row, list):
        return row[index] if index < len(row) else None
    if isinstance(row, dict):
        return row.get(key)
    return row if index == 0 else None


def _grid(tree, heading, header_labels, rows):
    """A table as a Column of Rows of Text: a header row (bold), then one Row per data row."""
    children = list(heading)
    if header_labels:
        children.append(tree.row([tree.text(f"**{plain(h)}**") for h in header_labels]))
    body = [tree.row([tree.text(plain(v)) for v in cells]) for cells in rows]
    if body:
        children.append(tree.add({"component": "List", "children": body}))
    elif not header_labels:
        children.append(tree.text("(no rows)", "caption"))
    return tree.column(children, "root")


def _table(tree, data, model):
    headers = [h for h in data.get("headers") or [] if isinstance(h, dict)]
    rows = [r for r in data.get("rows") or []]
    heading = _heading(tree, data)
    if isinstance(data.get("caption"), str) and data["caption"]:
        heading.append(tree.text(plain(data["caption"]), "caption"))
    cells = [[_cell(r, h.get("key"), i) for i, h in enumerate(headers)] for r in rows]
    return _grid(tree, heading, [h.get("label") or h.get("key") for h in headers], cells)


def _chart(tree, data, model):
    """A chart as the table of its values: the basic catalog has no chart and nothing to draw
    one with (no canvas, SVG or shapes), and the numbers are what a person needs from it."""
    series = [s for s in data.get("series") or [] if isinstance(s, dict)]
    x_axis = data.get("x_axis") if isinstance(data.get("x_axis"), dict) else {}
    y_axis = data.get("y_axis") if isinstance(data.get("y_axis"), dict) else {}
    xs = list(x_axis.get("values") or [])
    length = max([len(xs)] + [len(s.get("data") or []) for s in series])
    heading = _heading(tree, data)
    kind = data.get("chart_type", "chart")
    note = f"{kind} chart" + (f", {y_axis['label']}" if y_axis.get("label") else "")
    heading.append(tree.text(plain(note), "caption"))
    labels = [x_axis.get("label") or ""] + [s.get("name", "") for s in series]
    rows = []
    for i in range(length):
        x = xs[i] if i < len(xs) else i + 1
        rows.append([x] + [(s.get("data") or [])[i] if i < len(s.get("data") or []) else None
                           for s in series])
    return _grid(tree, heading, labels, rows)


def _form_field(tree, field, model):
    name, kind = field["name"], field.get("type", "text")
    path = "/" + name.replace("~", "~0").replace("/", "~1")
    label = plain(field.get("label") or name) + (" \\*" if field.get("required") else "")
    initial = field.get("value", field.get("default"))
    comp = {"label": label}
    if kind == "checkbox":
        comp.update(component="CheckBox", value={"path": path})
        model[name] = initial if isinstance(initial, bool) else False
    elif kind == "select":
        options = [str(o) for o in field.get("options") or []]
        comp.update(component="ChoicePicker", variant="mutuallyExclusive",
                    options=[{"label": plain(o), "value": o} for o in options],
                    value={"path": path})
        model[name] = [initial] if isinstance(initial, str) and initial in options else []
    elif kind == "date":
        comp.update(component="DateTimeInput", enableDate=True, value={"path": path})
        model[name] = initial if isinstance(initial, str) else ""
    else:
        variant = {"number": "number", "textarea": "longText"}.get(kind, "shortText")
        comp.update(component="TextField", variant=variant, value={"path": path})
        if isinstance(field.get("pattern"), str) and field["pattern"]:
            comp["validationRegexp"] = field["pattern"]
        model[name] = initial if isinstance(initial, str | int | float) and \
            not isinstance(initial, bool) else ""
    if field.get("required"):
        comp["checks"] = [{"condition": {"call": "required", "args": {"value": {"path": path}}},
                           "message": f"{plain(field.get('label') or name)} is required."}]
    return tree.add(comp), path


def _form(tree, data, model):
    children = _heading(tree, data)
    context = {}
    for field in data.get("fields") or []:
        cid, path = _form_field(tree, field, model)
        children.append(cid)
        context[field["name"]] = {"path": path}
    children.append(tree.row([tree.button(data.get("submit_label") or "Submit",
                                          _event(SUBMIT, context), "primary")]))
    return tree.column(children, "root")


def _markdown(tree, data, model):
    return tree.add({"component": "Text", "text": data.get("content") or ""}, "root")


def _fence(code):
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def _code(tree, data, model):
    code = data.get("code") or ""
    fence = _fence(code)
    language = re.sub(r"[^\w+#.-]", "", data.get("language") or "")
    heading = _heading(tree, data, variant="h4")
    return tree.column(heading + [tree.text(f"{fence}{language}\n{code}\n{fence}")], "root")


def _image(tree, data, model):
    image = {"component": "Image", "url": data["url"]}
    if isinstance(data.get("alt"), str) and data["alt"]:
        image["description"] = data["alt"]
    children = [tree.add(image)]
    if isinstance(data.get("caption"), str) and data["caption"]:
        children.append(tree.text(plain(data["caption"]), "caption"))
    return tree.column(children, "root")


def _alert(tree, data, model):
    severity = data.get("severity") or "info"
    texts = []
    if isinstance(data.get("title"), str) and data["title"]:
        texts.append(tree.text(plain(data["title"]), "h4"))
    if isinstance(data.get("message"), str) and data["message"]:
        texts.append(tree.text(plain(data["message"])))
    row = tree.row([tree.icon(ALERT_ICONS.get(severity, "info")), tree.column(texts)])
    return tree.add({"component": "Card", "child": row}, "root")


def _steps(tree, data, model):
    current = data.get("current_step")
    items = []
    for i, step in enumerate(data.get("steps") or []):
        label = plain(step.get("label", ""))
        texts = [tree.text(f"**{label}**" if i == current else label)]
        if isinstance(step.get("description"), str) and step["description"]:
            texts.append(tree.text(plain(step["description"]), "caption"))
        icon = tree.icon(STEP_ICONS.get(step.get("status"), "moreHoriz"))
        items.append(tree.row([icon, tree.column(texts)]))
    children = _heading(tree, data)
    children.append(tree.add({"component": "List", "children": items}))
    return tree.column(children, "root")


def _custom(tree, data, model):
    """A host project's own component type (A2UI['COMPONENT_TYPES']): only the web client
    has its renderer; a v0.9 client is shown its title and description."""
    children = _heading(tree, data) or [tree.text(plain(data.get("label") or ""))]
    tree.column(children, "root")


BUILDERS = {"card": _card, "table": _table, "chart": _chart, "form": _form,
            "markdown": _markdown, "code": _code, "image": _image, "alert": _alert,
            "steps": _steps}


def component_tree(component_type, data):
    """(components, data model or None) of one seed-000 component; the root is ``root``."""
    tree, model = _Tree(), {}
    BUILDERS.get(component_type, _custom)(tree, _view(data), model)
    return tree.components, (model if component_type == "form" else None)


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
