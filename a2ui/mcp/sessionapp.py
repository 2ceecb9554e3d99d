"""The MCP App of the person's ``show_session`` tool (``ui://a2ui/session``). Sans-I/O.

One static document for every session (a template: hosts may fetch it once, before any call,
and cache it): the session comes with the tool's result. The app speaks MCP Apps' JSON-RPC
over ``postMessage`` (SEP-1865, ext-apps 2.x): ``ui/initialize`` and
``ui/notifications/initialized``, then it waits for ``ui/notifications/tool-result`` (the
result of ``show_session``: ``view``), shows its items, and reads the view again every
``refresh_ms`` with the app-only tool ``session_view`` (``tools/call`` through the host). An
open request is answered with the app-only ``answer_request``, a form component is submitted
with ``respond``, a card's link asks the host ``ui/open-link``. A section the person sent is
disabled at once and kept as it is (the answer is taken once, and a repeat is replayed by the
server: ``a2ui.requests.pending.settle``).

The items are HTML built here and by ``a2ui.mcp.render`` (every string escaped, no markup of
the agent's); the app inserts them under the document's strict CSP, where the only script is
``APP_SCRIPT`` (allowed by its hash) and images load from nowhere (an image component shows its
text and a link).
"""

import base64
import hashlib
import json

from a2ui.mcp.render import RENDERERS, STYLE, esc, form_html, request_control

APP_SCRIPT = """(function () {
  'use strict';
  var pending = {}, next = 1, sessionId = null, refreshMs = 0, timer = null, stopped = false;
  var view = document.getElementById('a2ui-view');
  function post(message) { window.parent.postMessage(message, '*'); }
  function rpc(method, params) {
    var id = next++;
    post({jsonrpc: '2.0', id: id, method: method, params: params});
    return new Promise(function (resolve, reject) { pending[id] = [resolve, reject]; });
  }
  function note(text) { document.getElementById('a2ui-app-status').textContent = text; }
  function textOf(result) {
    var first = result && Array.isArray(result.content) ? result.content[0] : null;
    return first && first.type === 'text' ? first.text : '';
  }
  function busy(el) { return el.hasAttribute('data-a2ui-state'); }
  function status(section, text) {
    var s = section.querySelector('.a2ui-status'); if (s) s.textContent = text;
  }
  function disable(section, off) {
    Array.prototype.forEach.call(section.querySelectorAll('button, input, select, textarea'),
      function (c) { if (!c.hasAttribute('data-a2ui-url')) c.disabled = off; });
  }
  function build(item) {
    var holder = document.createElement('div');
    holder.innerHTML = item.html;  // the server's markup: every string escaped
    var el = holder.firstElementChild || document.createElement('section');
    el.setAttribute('data-a2ui-key', item.key);
    el.setAttribute('data-a2ui-digest', String(item.digest));
    return el;
  }
  function render(data) {
    var old = {}, seen = {}, cursor = view.firstElementChild;
    Array.prototype.forEach.call(view.children, function (el) {
      old[el.getAttribute('data-a2ui-key')] = el;
    });
    (Array.isArray(data.items) ? data.items : []).forEach(function (item) {
      if (!item || typeof item.key !== 'string' || typeof item.html !== 'string' ||
          seen[item.key]) return;
      seen[item.key] = true;
      var el = old[item.key];
      if (el && el.getAttribute('data-a2ui-digest') !== String(item.digest) && !busy(el)) {
        var fresh = build(item);
        view.replaceChild(fresh, el);
        if (cursor === el) cursor = fresh;
        el = fresh;
      } else if (!el) {
        el = build(item);
      }
      if (el === cursor) cursor = cursor.nextElementSibling;
      else view.insertBefore(el, cursor);
    });
    Array.prototype.slice.call(view.children).forEach(function (el) {
      if (!seen[el.getAttribute('data-a2ui-key')] && !busy(el)) view.removeChild(el);
    });
    note(view.children.length ? '' : 'Nothing from the agent right now.');
  }
  function schedule() {
    if (stopped || timer || !refreshMs || !sessionId) return;
    timer = setTimeout(function () {
      timer = null;
      rpc('tools/call', {name: 'session_view', arguments: {session_id: sessionId}})
        .then(show, function () { note('Could not refresh; trying again.'); schedule(); });
    }, refreshMs);
  }
  function show(result) {
    var data = result && result.structuredContent;
    if (!data || typeof data !== 'object' || result.isError) {
      note(textOf(result) || 'The session cannot be shown.');
      return;
    }
    if (typeof data.session_id === 'string') sessionId = data.session_id;
    if (typeof data.refresh_ms === 'number' && data.refresh_ms >= 500) refreshMs = data.refresh_ms;
    render(data);
    schedule();
  }
  function stop() { stopped = true; if (timer) clearTimeout(timer); timer = null; }
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === undefined) {
      var waiting = pending[m.id];
      if (!waiting) return;
      delete pending[m.id];
      if (m.error) waiting[1](m.error); else waiting[0](m.result || {});
      return;
    }
    if (m.method === 'ui/notifications/tool-input') {
      var args = (m.params && m.params.arguments) || {};
      if (!sessionId && typeof args.session_id === 'string') sessionId = args.session_id;
    } else if (m.method === 'ui/notifications/tool-result') {
      show(m.params || {});
    } else if (m.method === 'ui/notifications/tool-cancelled') {
      note('The call was cancelled.');
    } else if (m.method === 'ui/resource-teardown' || m.method === 'ping') {
      if (m.method !== 'ping') stop();
      if (m.id !== undefined) post({jsonrpc: '2.0', id: m.id, result: {}});
    } else if (m.id !== undefined) {
      post({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'Method not found'}});
    }
  });
  function answer(section, button) {
    var kind = section.getAttribute('data-a2ui-kind');
    var rid = section.getAttribute('data-a2ui-request');
    if (kind === 'confirm') {
      var args = {session_id: sessionId, request_id: rid,
                  approved: button.getAttribute('data-a2ui-send') === 'approve'};
      var reason = section.querySelector('[data-a2ui-reason]');
      if (reason && reason.value.trim()) args.reason = reason.value.trim();
      return {name: 'answer_request', arguments: args};
    }
    var form = section.querySelector('form');
    if (form && !form.checkValidity()) { status(section, 'Please fix the highlighted fields.'); return null; }
    function read(c) {
      var type = c.getAttribute('data-a2ui-field');
      if (type === 'checkbox') return c.checked;
      if (type === 'number') return c.value === '' ? null : Number(c.value);
      return c.value;
    }
    var controls = section.querySelectorAll('[data-a2ui-field]');
    if (kind === 'input') {
      if (!controls.length) return null;
      return {name: 'answer_request', arguments: {session_id: sessionId, request_id: rid,
                                                  value: read(controls[0])}};
    }
    var value = {};
    Array.prototype.forEach.call(controls, function (c) { value[c.name] = read(c); });
    return {name: 'respond', arguments: {session_id: sessionId,
            request_id: section.getAttribute('data-a2ui-component'), value: value}};
  }
  document.addEventListener('click', function (event) {
    var link = event.target.closest('[data-a2ui-url]');
    if (link) {
      rpc('ui/open-link', {url: link.getAttribute('data-a2ui-url')}).catch(function () {});
      return;
    }
    var button = event.target.closest('button[data-a2ui-send]');
    var section = button && button.closest('[data-a2ui-key]');
    if (!section || button.disabled || busy(section) || !sessionId) return;
    var call = answer(section, button);
    if (!call) return;
    section.setAttribute('data-a2ui-state', 'sending');  // once: the next click finds it busy
    disable(section, true);
    status(section, 'Sending...');
    rpc('tools/call', call).then(function (result) {
      var body = (result && result.structuredContent) || {};
      section.setAttribute('data-a2ui-state', result.isError ? 'closed' : 'sent');
      status(section, !result.isError ? 'Sent.' : body.status === 'answered'
        ? 'Already answered.' : body.status ? 'Closed (' + body.status + ').' : 'Not sent.');
    }, function (error) {
      section.removeAttribute('data-a2ui-state');
      disable(section, false);
      status(section, 'Not sent: ' + ((error && error.message) || 'error'));
    });
  });
  document.addEventListener('submit', function (event) { event.preventDefault(); });
  rpc('ui/initialize', {appInfo: {name: 'a2ui-session', version: '1'}, appCapabilities: {},
                        protocolVersion: '2026-01-26'})
    .then(function () {
      post({jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {}});
      note('Waiting for the session...');
      if (window.ResizeObserver) {
        new ResizeObserver(function () {
          var root = document.documentElement;
          post({jsonrpc: '2.0', method: 'ui/notifications/size-changed',
                params: {width: Math.ceil(root.scrollWidth), height: Math.ceil(root.scrollHeight)}});
        }).observe(document.body);
      }
    }, function () { note('The host did not start the app.'); });
})();"""
APP_SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(APP_SCRIPT.encode()).digest()).decode()

CSP = (f"default-src 'none'; script-src '{APP_SCRIPT_HASH}'; style-src 'unsafe-inline'; "
       "img-src 'none'; form-action 'none'; base-uri 'none'")

APP_STYLE = STYLE + (
    ".a2ui-item{border-top:1px solid #d0d7de;padding:8px 0}"
    ".a2ui-item:first-child{border-top:0}.a2ui-status{color:#57606a;margin:4px 0}"
)


def document():
    """The app's HTML document (the same for every session and person)."""
    return (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>Your session</title><style>{APP_STYLE}</style></head>"
        '<body data-a2ui-type="session-app"><main>'
        '<p id="a2ui-app-status" role="status">Connecting...</p><div id="a2ui-view"></div>'
        f"</main><script>{APP_SCRIPT}</script></body></html>"
    )


def resource_meta():
    """``_meta.ui`` of the app: it connects nowhere and loads nothing (its one script is in the
    document), so every CSP list is empty; it asks for no permission."""
    return {"ui": {"csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [],
                           "baseUriDomains": []},
                   "permissions": {}, "prefersBorder": True}}


def _control_id(request_id):
    """A stable element id per request (the app keeps a section while the person types)."""
    return "a2ui-r-" + hashlib.sha256(str(request_id).encode()).hexdigest()[:16]


def _input_html(params):
    rid, input_type = params.get("request_id"), params.get("input_type")
    cid = _control_id(rid)
    prompt = f'<label for="{cid}"><strong>{esc(params.get("prompt"))}</strong></label> '
    head = (f'<section class="a2ui-item" data-a2ui-kind="input" data-a2ui-request="{esc(rid)}"'
            f' data-a2ui-input-type="{esc(input_type)}">')
    control = request_control(params, cid, app=True)
    if control is None:
        return (f"{head}{prompt}<p>This request takes a {esc(input_type)}: the agent can be "
                "answered with the <code>respond</code> tool.</p></section>")
    return (f"{head}<form>{prompt}{control} <button type=\"button\" data-a2ui-send=\"respond\">"
            'Send</button></form><p class="a2ui-status" role="status"></p></section>')


def _confirm_html(params):
    rid = params.get("request_id")
    severity = params.get("severity") or "info"
    alert = "error" if severity == "critical" else "warning" if severity == "warning" else "info"
    return (f'<section class="a2ui-item" data-a2ui-kind="confirm" data-a2ui-request="{esc(rid)}">'
            f'<div class="a2ui-alert a2ui-alert-{alert}" role="alert"><h2>'
            f"{esc(params.get('title'))}</h2><p>{esc(params.get('description'))}</p></div>"
            f'<label>Reason (optional) <input type="text" data-a2ui-reason maxlength="500">'
            '</label><button type="button" data-a2ui-send="approve">Approve</button>'
            '<button type="button" data-a2ui-send="reject">Reject</button>'
            '<p class="a2ui-status" role="status"></p></section>')


def _image_html(data):
    """No image loads in the app (its CSP is static): the text, and a link to open it."""
    caption = f"<figcaption>{esc(data.get('caption'))}</figcaption>" if data.get("caption") else ""
    return (f"<figure><p>Image: {esc(data.get('alt') or data.get('url'))}</p>{caption}"
            f'<button type="button" data-a2ui-url="{esc(data.get("url"))}">Open the image'
            "</button></figure>")


def _component_html(component):
    kind, data = component["component_type"], component.get("data") or {}
    if kind == "form":
        body = form_html(data, app=True)
    elif kind == "image":
        body = _image_html(data)
    else:
        body = RENDERERS.get(kind, lambda d: f"<pre>{esc(d)}</pre>")(data)
    return (f'<section class="a2ui-item" data-a2ui-kind="{"form" if kind == "form" else "show"}"'
            f' data-a2ui-component="{esc(component["component_id"])}"'
            f' data-a2ui-type="{esc(kind)}">{body}</section>')


def _item(key, html):
    return {"key": key, "digest": hashlib.sha256(html.encode()).hexdigest()[:16], "html": html}


def request_summary(request):
    """What the model is told of one open request (and how it is answered)."""
    params, kind = request.get("params") or {}, request.get("kind")
    out = {"request_id": params.get("request_id"), "kind": kind}
    if kind == "confirm":
        out.update(title=params.get("title"), severity=params.get("severity") or "info",
                   answer_with="approve")
    else:
        out.update(prompt=params.get("prompt"), input_type=params.get("input_type"),
                   answer_with="respond")
        if params.get("options"):
            out["options"] = params["options"]
    return out


def view(session_id, components, requests, refresh_seconds, html=True):
    """The session as the app shows it (``structuredContent`` of ``show_session`` and
    ``session_view``): the open requests (oldest first, above) and the components (render
    order), each summarized for the model; ``items`` (``html``) are what the app inserts,
    keyed (``r:`` + request id, ``c:`` + component id) with a digest of their markup."""
    out = {
        "session_id": str(session_id),
        "requests": [request_summary(r) for r in requests],
        "components": [{"component_id": c["component_id"],
                        "component_type": c["component_type"],
                        "title": (c.get("data") or {}).get("title")} for c in components],
        "refresh_ms": int(refresh_seconds * 1000),
    }
    if html:
        items = []
        for r in requests:
            params = r.get("params") or {}
            body = _confirm_html(params) if r.get("kind") == "confirm" else _input_html(params)
            items.append(_item(f"r:{params.get('request_id')}", body))
        items += [_item(f"c:{c['component_id']}", _component_html(c)) for c in components]
        out["items"] = items
    return out


def summary(found):
    """The text of the result, for the model: the view without its markup."""
    short = {k: v for k, v in found.items() if k not in ("items", "refresh_ms")}
    waiting = len(found["requests"])
    head = (f"The person's session {found['session_id']}: {len(found['components'])} "
            f"component(s) shown, {waiting} open request(s) from the agent")
    return f"{head}. {json.dumps(short)}"
