"""The basic-catalog drawing of each seed-000 component type (``component_tree``) and the
pieces a translated surface is made of: the surface ids, markdown-escaped text (``plain``), a
tree of numbered components, the buttons' events. Sans-I/O."""

import json
import re

from a2ui.core.surfaces.errors import PROTOCOL_VERSION

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
