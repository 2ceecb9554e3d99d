(function () {
  var data = JSON.parse(document.getElementById('a2ui-data').textContent);
  var app = data.mode === 'mcp-app';
  var pending = {}, next = 1;
  // An MCP-UI host speaks @mcp-ui/client's messages ('mcp-ui') or seed 002's MCP_UI_ACTION
  // ('seed'): the document asks for MCP-UI render data at load; a host that answers it (or sends
  // any MCP-UI host message) is 'mcp-ui', one silent for PROBE_MS is taken for 'seed'. Actions
  // wait for it. The guess yields to a late MCP-UI host message (a page busy past PROBE_MS): the
  // host is 'mcp-ui' from then on, and the actions it was sent in seed 002's form and has not
  // answered (RESEND at most) are sent again in its own. A seed 002 answer (TOOL_RESULT) ends
  // the guess. <html data-a2ui-host> says which.
  var PROBE_MS = 1000, RESEND = 20, dialect = null, guessed = false, waiting = [], resend = [];
  var MCP_UI_HOST = {'ui-lifecycle-iframe-render-data': 1, 'ui-message-received': 1,
                     'ui-message-response': 1};
  function post(message) { window.parent.postMessage(message, '*'); }
  function status(text) { var s = document.getElementById('a2ui-status'); if (s) s.textContent = text; }
  function settle(id, result) {
    var done = pending[id];
    if (done) { delete pending[id]; done(result); }
  }
  function rpc(method, params) {
    var id = next++;
    post({jsonrpc: '2.0', id: id, method: method, params: params});
    return new Promise(function (resolve) { pending[id] = resolve; });
  }
  function size() {
    var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (app) post({jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: {height: height}});
    else post({type: 'ui-size-change', payload: {height: height}});
  }
  function watchSize() { if (window.ResizeObserver) new ResizeObserver(size).observe(document.documentElement); }
  function decide(which, guess) {
    var late = dialect === 'seed' && guessed && which === 'mcp-ui';
    if (dialect && !late) return;
    dialect = which;
    guessed = !!guess;
    document.documentElement.setAttribute('data-a2ui-host', which);
    if (which === 'mcp-ui') watchSize();
    (late ? resend : waiting).splice(0).forEach(function (then) { then(); });
  }
  function whenDecided(then) { if (dialect) then(); else waiting.push(then); }
  // Posts an action in the host's form; in seed 002's form while that is a guess, the MCP-UI
  // form is kept to be sent if the guess turns out wrong.
  function act(mcpUi, seed) {
    whenDecided(function () {
      if (dialect === 'mcp-ui') { post(mcpUi()); return; }
      post(seed);
      if (guessed) {
        resend.push(function () { var m = mcpUi(); if (m) post(m); });
        if (resend.length > RESEND) resend.shift();
      }
    });
  }
  function callTool(name, args) {
    if (app) return rpc('tools/call', {name: name, arguments: args});
    return new Promise(function (resolve) {
      var id = 'a2ui-' + (next++);
      pending[id] = resolve;
      act(function () {  // none once the seed 002 form was answered
        return pending[id] && {type: 'tool', payload: {toolName: name, params: args}, messageId: id};
      }, {type: 'MCP_UI_ACTION', action: {type: 'CALL_TOOL', toolName: name, args: args, callbackId: id}});
    });
  }
  function openLink(url, target) {
    if (app) { rpc('ui/open-link', {url: url}); return; }
    act(function () { return {type: 'link', payload: {url: url}, messageId: 'a2ui-' + (next++)}; },
        {type: 'MCP_UI_ACTION', action: {type: 'NAVIGATE', url: url, target: target}});
  }
  window.addEventListener('message', function (event) {
    var m = event.data;
    if (event.source !== window.parent || !m || typeof m !== 'object') return;
    if (app) {
      if (m.jsonrpc !== '2.0') return;
      if (m.method === undefined) settle(m.id, m.error ? {error: m.error} : (m.result || {}));
      else if (m.id !== undefined) {  // the host's request: ping and teardown are answered
        post(m.method === 'ping' || m.method === 'ui/resource-teardown'
          ? {jsonrpc: '2.0', id: m.id, result: {}}
          : {jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'Method not found'}});
      }
      return;
    }
    if (MCP_UI_HOST[m.type] === 1) decide('mcp-ui');
    if (m.type === 'ui-message-response') {
      var payload = m.payload || {};
      settle(m.messageId, payload.error ? {error: payload.error} : (payload.response || {}));
    } else if (m.type === 'TOOL_RESULT') {  // a seed 002 host: the guess was right
      if (dialect === 'seed') { guessed = false; resend = []; }
      settle(m.callbackId, m.error ? {error: m.error} : (m.result || {}));
    }
  });
  if (app) {
    rpc('ui/initialize', {appInfo: {name: 'a2ui-component', version: '1'}, appCapabilities: {},
                          protocolVersion: '2026-01-26'})
      .then(function () {
        post({jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {}});
        watchSize();
      });
  } else {
    [0, 150, 450].forEach(function (delay) {
      setTimeout(function () {
        if (!dialect) post({type: 'ui-request-render-data', messageId: 'a2ui-probe-' + delay});
      }, delay);
    });
    setTimeout(function () { decide('seed', true); }, PROBE_MS);
  }
  document.addEventListener('click', function (event) {
    var link = event.target.closest('[data-a2ui-url]');
    if (link) openLink(link.getAttribute('data-a2ui-url'), link.getAttribute('data-a2ui-target') || '_blank');
  });
  function submit(form) {
    if (!form.checkValidity()) { status('Please fix the highlighted fields.'); return; }
    var value = {};
    data.fields.forEach(function (f) {
      var c = form.elements[f.name];
      if (!c) return;
      if (f.type === 'checkbox') value[f.name] = c.checked;
      else if (f.type === 'number') value[f.name] = c.value === '' ? null : Number(c.value);
      else value[f.name] = c.value;
    });
    // An open request_input is answered with its one field's value, a form component with all.
    if (data.request_id) value = value.value;
    send('respond', {session_id: data.session_id, request_id: data.request_id || data.component_id,
                     value: value});
  }
  // The host's error (a thrown error, a JSON-RPC error, a tool result with isError), as text.
  function failure(r) {
    var e = r && r.error;
    if (e) return typeof e === 'string' ? e : String(e.message || 'the host reported an error');
    if (r && r.isError) {
      var text = (r.content || []).filter(function (c) { return c && c.type === 'text'; })[0];
      return text ? String(text.text) : 'the tool failed';
    }
    return '';
  }
  function send(tool, args) {
    status('Sending...');
    callTool(tool, args).then(function (r) {
      var why = failure(r);
      status(why ? 'Not sent: ' + why : 'Sent.');
    });
  }
  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-a2ui-approve]');
    if (!button) return;
    var args = {session_id: data.session_id, request_id: data.request_id,
                approved: button.getAttribute('data-a2ui-approve') === 'yes'};
    var reason = document.getElementById('a2ui-reason');
    if (reason && reason.value.trim()) args.reason = reason.value.trim();
    send('approve', args);
  });
  // A sandboxed frame without allow-forms never fires submit: the button is a plain button.
  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-a2ui-submit]');
    if (button) submit(button.form);
  });
  document.addEventListener('submit', function (event) { event.preventDefault(); submit(event.target); });
})();
