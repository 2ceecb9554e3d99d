"""Seed-000 components as self-contained HTML documents (MCP-UI ``text/html`` and MCP Apps).
Sans-I/O.

The component's data was validated and sanitized when the agent pushed it; here every string is
HTML-escaped again and every attribute quoted, so the document holds no markup of the agent's.
The one script is ours, allowed by its hash in a strict Content-Security-Policy
(``default-src 'none'``; images only from the origins the component names). It reads the
document's data block and, on a click or a form submit, posts an action to the host:

* MCP-UI (``mode: "mcp-ui"``, the ``text/html`` resource), in the host's dialect:

  - @mcp-ui/client 5.x (``UIResourceRenderer``) and hosts of its protocol:
    ``{type: "tool", payload: {toolName: "respond", params: {session_id, request_id, value}},
    messageId}`` for a form, ``{type: "link", payload: {url}, messageId}`` for a link; the
    host's ``ui-message-response`` (``payload.response`` or ``payload.error``) ends it;
  - seed 002: ``{type: "MCP_UI_ACTION", action: {type: "CALL_TOOL", toolName: "respond",
    args: {...}, callbackId}}`` for a form, ``{type: "MCP_UI_ACTION", action: {type:
    "NAVIGATE", url, target}}`` for a link, and reads ``TOOL_RESULT`` answers.

  Which one: at load the document posts MCP-UI's ``ui-request-render-data`` (with a
  ``messageId``; sent again at 150 and 450 ms); a host that answers it, or sends any MCP-UI
  host message (``ui-lifecycle-iframe-render-data``, ``ui-message-received``,
  ``ui-message-response``), speaks MCP-UI; a host silent for a second is taken for seed 002. An
  action taken before then waits for the answer, so a host that answers within the second is
  sent exactly one form of each action. The guess yields to a late MCP-UI message (a host page
  busy past the second): the actions sent in seed 002's form and not answered are sent again in
  MCP-UI's, a tool call under the same id; a ``TOOL_RESULT`` ends the guess.
  ``<html data-a2ui-host>`` says which (``mcp-ui`` or ``seed``).
  An MCP-UI host also gets ``ui-size-change`` with the document's height.
* MCP Apps (``mode: "mcp-app"``): JSON-RPC over postMessage (``ui/initialize``, then
  ``tools/call`` and ``ui/open-link``; ``ui/notifications/size-changed`` with the document's
  height; the host's ``ping`` and ``ui/resource-teardown`` are answered).

The frame's status line says "Sending...", then "Sent." or "Not sent: <the host's error>" (a
thrown or JSON-RPC error's message, or the text of a tool result with ``isError``).

An agent's open ``request_input`` / ``confirm`` is a document too (``request_document``): its
form calls ``respond`` with the field's value, its Approve / Reject buttons ``approve``.
"""

import base64
import hashlib
import html
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

_ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+")

#: The documents' one script (``resource.js`` beside this module), inlined and allowed by its
#: hash in each document's CSP.
SCRIPT = (Path(__file__).with_name("resource.js")).read_text(encoding="utf-8").rstrip("\n")
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()

STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:0;padding:12px;color:#1f2328}"
    "table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px}"
    ".a2ui-alert{padding:8px;border-radius:6px;background:#eef}"
    ".a2ui-alert-error{background:#fee}.a2ui-alert-warning{background:#ffe}"
    ".a2ui-alert-success{background:#efe}pre{white-space:pre-wrap;background:#f6f8fa;padding:8px}"
    "label{display:block;margin:6px 0}button{margin:4px 4px 0 0}"
)


def esc(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        value = json.dumps(value) if isinstance(value, dict | list) else str(value)
    return html.escape(value, quote=True)


def _card(d):
    out = [f"<h2>{esc(d.get('title'))}</h2>"]
    if d.get("description"):
        out.append(f"<p>{esc(d['description'])}</p>")
    sections = d.get("sections") or []
    if sections:
        out.append("<dl>" + "".join(f"<dt>{esc(s.get('label'))}</dt><dd>{esc(s.get('value'))}</dd>"
                                    for s in sections) + "</dl>")
    for action in d.get("actions") or []:
        url = action.get("url")
        if url:
            target = "_blank" if action.get("new_tab", True) else "_self"
            out.append(f'<button type="button" data-a2ui-url="{esc(url)}" '
                       f'data-a2ui-target="{target}">{esc(action.get("label"))}</button>')
        else:
            out.append(f'<button type="button" disabled>{esc(action.get("label"))}</button>')
    return "".join(out)


def _table(d):
    headers = [h if isinstance(h, dict) else {"key": h, "label": h} for h in d.get("headers", [])]
    head = "".join(f"<th>{esc(h.get('label'))}</th>" for h in headers)
    rows = []
    for row in d.get("rows") or []:
        cells = row if isinstance(row, list) else [
            (row or {}).get(h.get("key")) if isinstance(row, dict) else row for h in headers]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def form_html(d, *, app=False):
    """A form component's HTML: for an MCP-UI frame (its script sends the form), or, ``app``,
    for the session app (each control marked ``data-a2ui-field`` with its kind)."""
    def mark(kind):
        return f' data-a2ui-field="{kind}"' if app else ""

    fields = []
    for f in d.get("fields") or []:
        name, kind = esc(f.get("name")), f.get("type")
        required = " required" if f.get("required") else ""
        label = esc(f.get("label") or f.get("name"))
        if kind == "select":
            options = "".join(f'<option value="{esc(o)}">{esc(o)}</option>'
                              for o in f.get("options") or [])
            control = f'<select name="{name}"{mark("select")}{required}>{options}</select>'
        elif kind == "textarea":
            control = f'<textarea name="{name}"{mark("text")}{required}></textarea>'
        else:
            html_type = {"checkbox": "checkbox", "number": "number", "date": "date",
                         "email": "email"}.get(kind, "text")
            extra = "".join(f' {a}="{esc(f[a])}"' for a in ("min", "max", "pattern",
                                                          "placeholder") if f.get(a) is not None)
            control = f'<input type="{html_type}" name="{name}"{mark(html_type)}{extra}{required}>'
        fields.append(f"<label>{label} {control}</label>")
    title = f"<h2>{esc(d['title'])}</h2>" if d.get("title") else ""
    submit, status = (('data-a2ui-send="submit"', 'class="a2ui-status"') if app
                      else ("data-a2ui-submit", 'id="a2ui-status"'))
    return (f"{title}<form>{''.join(fields)}<button type=\"button\" {submit}>"
            f"{esc(d.get('submit_label') or 'Submit')}</button></form>"
            f'<p {status} role="status"></p>')


def _chart(d):
    out = [f"<h3>{esc(d.get('title'))}</h3>"] if d.get("title") else []
    labels = (d.get("x_axis") or {}).get("values") or []
    for series in d.get("series") or []:
        values = series.get("data") or []
        pairs = "".join(f"<tr><td>{esc(labels[i] if i < len(labels) else i)}</td>"
                        f"<td>{esc(v)}</td></tr>" for i, v in enumerate(values))
        out.append(f"<table><caption>{esc(series.get('name'))}</caption>{pairs}</table>")
    return "".join(out)


def _image(d):
    size = "".join(f' {a}="{int(d[a])}"' for a in ("width", "height") if d.get(a))
    caption = f"<figcaption>{esc(d.get('caption'))}</figcaption>" if d.get("caption") else ""
    return f'<figure><img src="{esc(d.get("url"))}" alt="{esc(d.get("alt"))}"{size}>{caption}</figure>'


def _alert(d):
    severity = d.get("severity") or "info"
    return (f'<div class="a2ui-alert a2ui-alert-{esc(severity)}" role="alert">'
            f"<strong>{esc(d.get('title'))}</strong> {esc(d.get('message'))}</div>")


def _steps(d):
    items = "".join(f"<li data-status=\"{esc(s.get('status'))}\"><strong>{esc(s.get('label'))}"
                    f"</strong> ({esc(s.get('status'))}) {esc(s.get('description'))}</li>"
                    for s in d.get("steps") or [])
    return f"<ol>{items}</ol>"


RENDERERS = {
    "card": _card, "table": _table, "form": form_html, "chart": _chart,
    "markdown": lambda d: f"<pre>{esc(d.get('content'))}</pre>",
    "code": lambda d: f"<pre><code>{esc(d.get('code'))}</code></pre>",
    "image": _image, "alert": _alert, "steps": _steps,
}


def image_origins(component_type, data):
    """Origins the document loads images from (the image component's URL), for the CSP."""
    if component_type != "image":
        return []
    parts = urlsplit(str(data.get("url", "")))
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.scheme in ("http", "https") and _ORIGIN.fullmatch(origin):
        return [origin]
    return []


def csp(component_type, data):
    images = " ".join(image_origins(component_type, data)) or "'none'"
    return (f"default-src 'none'; script-src '{SCRIPT_HASH}'; style-src 'unsafe-inline'; "
            f"img-src {images}; form-action 'none'; base-uri 'none'")


def document(session_id, component, mode="mcp-ui"):
    """The HTML document of one component (``component``: component_id, component_type,
    data), for a host of ``mode`` "mcp-ui" or "mcp-app"."""
    kind, data = component["component_type"], component.get("data") or {}
    body = RENDERERS.get(kind, lambda d: f"<pre>{esc(d)}</pre>")(data)
    state = {"mode": mode, "session_id": str(session_id),
             "component_id": component["component_id"],
             "fields": [{"name": f.get("name"), "type": f.get("type")}
                        for f in (data.get("fields") or [])] if kind == "form" else []}
    return _page(kind, data.get("title") or kind, body, state, csp(kind, data))


def _page(kind, title, body, state, policy):
    blob = json.dumps(state).replace("<", "\\u003c").replace(">", "\\u003e").replace(
        "&", "\\u0026")
    return (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head>"
        f'<body data-a2ui-type="{esc(kind)}">{body}'
        f'<script type="application/json" id="a2ui-data">{blob}</script>'
        f"<script>{SCRIPT}</script></body></html>"
    )


#: request_input's input types as the form's control types (a file is answered with the tool).
REQUEST_CONTROLS = {"text": "text", "number": "number", "date": "date", "select": "select"}


def request_control(params, control_id, *, app=False):
    """The control of a ``request_input`` (id ``control_id``), or None for an input type it
    cannot take (a file: answered with the tool). ``app``: marked ``data-a2ui-field`` with its
    kind, for the session app."""
    input_type = params.get("input_type")
    if input_type not in REQUEST_CONTROLS:
        return None
    rules = params.get("validation") if isinstance(params.get("validation"), dict) else {}
    required = " required" if rules.get("required") else ""
    field = f' data-a2ui-field="{REQUEST_CONTROLS[input_type]}"' if app else ""
    if input_type == "select":
        options = "".join(f'<option value="{esc(o)}">{esc(o)}</option>'
                          for o in params.get("options") or [])
        return f'<select id="{control_id}" name="value"{field}{required}>{options}</select>'
    names = {"min": "minlength", "max": "maxlength"} if input_type == "text" else {}
    extra = "".join(f' {names.get(a, a)}="{esc(rules[a])}"'
                    for a in ("min", "max", "pattern") if rules.get(a) is not None
                    and (a != "pattern" or input_type == "text"))
    return (f'<input type="{REQUEST_CONTROLS[input_type]}" id="{control_id}" '
            f'name="value"{field}{extra}{required}>')


def _request_input(params):
    prompt = f'<label for="a2ui-value"><strong>{esc(params.get("prompt"))}</strong></label>'
    control = request_control(params, "a2ui-value")
    if control is None:
        return (f"{prompt}<p>This request takes a {esc(params.get('input_type'))}: answer it "
                "with the <code>respond</code> tool.</p>")
    return (f"<form>{prompt} {control}<button type=\"button\" data-a2ui-submit>Send</button>"
            '</form><p id="a2ui-status" role="status"></p>')


def _confirm(params):
    severity = params.get("severity") or "info"
    alert = "error" if severity == "critical" else "warning" if severity == "warning" else "info"
    return (f'<div class="a2ui-alert a2ui-alert-{alert}" role="alert"><h2>'
            f"{esc(params.get('title'))}</h2><p>{esc(params.get('description'))}</p></div>"
            '<label>Reason (optional) <input type="text" id="a2ui-reason" maxlength="500">'
            '</label><button type="button" data-a2ui-approve="yes">Approve</button>'
            '<button type="button" data-a2ui-approve="no">Reject</button>'
            '<p id="a2ui-status" role="status"></p>')


def request_document(session_id, request, mode="mcp-ui"):
    """The HTML form of an open request (``request``: its ``kind``, input or confirm, and
    ``params``), for a host of ``mode`` "mcp-ui" or "mcp-app": it answers with the person's
    ``respond`` (the field's value) or ``approve`` tool, as the web client's prompt does."""
    params = request.get("params") or {}
    kind = request.get("kind")
    body = _confirm(params) if kind == "confirm" else _request_input(params)
    fields = ([{"name": "value", "type": params.get("input_type")}]
              if kind != "confirm" and params.get("input_type") in REQUEST_CONTROLS else [])
    state = {"mode": mode, "session_id": str(session_id), "component_id": None,
             "request_id": params.get("request_id"), "fields": fields}
    title = params.get("title") if kind == "confirm" else params.get("prompt")
    return _page(f"request-{kind}", title or "Request", body, state, csp(None, {}))


def app_meta(component_type, data):
    """``_meta.ui`` of the MCP Apps variant: its CSP (resource domains) and no permissions."""
    return {"ui": {"csp": {"connectDomains": [], "resourceDomains":
                           image_origins(component_type, data), "frameDomains": [],
                           "baseUriDomains": []},
                   "prefersBorder": True}}
