// The client: routes server notifications to the regions, prompts, tasks and toasts.
import { Activity } from './activity.js';
import { componentRenderer, onRegistered, registeredTypes } from './api.js';
import { COMPONENT_TYPES, renderComponent } from './components.js';
import { Connection } from './connection.js';
import { Consents, pausedNote } from './consent.js';
import { h, isObject, safeUrl, text } from './dom.js';
import { describeError } from './errors.js';
import { gettext as _, interpolate } from './i18n.js';
import { Prompts } from './prompts.js';
import { V09Surfaces } from './v09.js';

const PRIORITY_RANK = { high: 0, normal: 1, low: 2 };
const STATE_LABELS = { idle: _('Idle'), connecting: _('Connecting…'), connected: _('Connected'), reconnecting: _('Reconnecting…'), closed: _('Disconnected') };
// While connected: whether the session's agent is there (a2ui.init's agent_status, then the
// a2ui.agent_status notifications; the server pings the agent, so a frozen one shows offline
// within about 12 s). Answers given while it is offline wait for it.
const AGENT_LABELS = { online: _('Assistant connected'), offline: _('Assistant offline — your answers are kept') };
// After the person answers (a prompt, a form), the next new main-region component within this
// time is taken as the agent's reply and shown where they answered, not at the end of the page.
const REPLY_WINDOW_MS = 15000;
// Where replies were placed, per session (sessionStorage), so that a reload (which replays the
// session's components in their order) puts each reply back where the person saw it.
const REPLIES_KEY = 'a2ui.replies';
const MAX_REPLIES = 100;
const CLOSED_LABELS = { timed_out: _('The question’s time ran out.'), answered: _('The question was answered elsewhere.'), cancelled: _('The question was withdrawn.') };

export class App {
  constructor(root) {
    this.root = root;
    const q = (sel) => root.querySelector(sel);
    this.regions = {
      main: q('[data-a2ui-components="main"]'),
      sidebar: q('[data-a2ui-components="sidebar"]'),
      overlay: q('[data-a2ui-components="overlay"]'),
    };
    this.status = q('[data-a2ui-status]');
    this.statusText = q('[data-a2ui-status-text]');
    this.reconnectBtn = q('[data-a2ui-reconnect]');
    this.toasts = q('[data-a2ui-toasts]');
    this.tasks = q('[data-a2ui-tasks]');
    this.empty = q('[data-a2ui-empty]');
    this.components = new Map(); // component_id -> {type, data, metadata, el, ttlTimer}
    this.taskEls = new Map();
    this.sequence = 0;
    this.prompts = new Prompts(q('[data-a2ui-prompts]'), {
      send: (m, p) => this.send(m, p), request: (m, p) => this.request(m, p),
      toast: (t) => this.toast(t), onChange: () => this.updateEmpty(),
      onAnswered: (slot) => this.holdReplySlot(slot),
      onConsentNeeded: (types) => this.consents.markMissing(types),
      showConsents: () => this.consents.reveal(),
      onConsentAnswer: (result) => { if (Array.isArray(result?.consents)) this.consents.set(result.consents); },
    });
    this.consents = new Consents(q('[data-a2ui-consent]'), {
      request: (m, p) => this.request(m, p),
      onChange: (missing) => this.setPaused(missing),
    });
    this.v09 = new V09Surfaces(q('[data-a2ui-surfaces]'), {
      onAction: (action) => this.send('a2ui.v09', { messages: [{ version: 'v0.9', action }] }),
      onError: (message) => this.toast({ level: 'error', title: _('Part of the page could not be shown'), message }),
      onChange: () => this.updateEmpty(),
    });
    this.activity = new Activity(this.tasks, q('[data-a2ui-region="sidebar"]'), {
      request: (m, p) => this.request(m, p),
      onChange: () => this.updateEmpty(),
      chat: root.dataset.chat === '1', // {% a2ui_client chat=True %}
      agentName: root.dataset.agentName || '',
    });
    // A renderer registered after the start (api.js): draw again what it can now draw.
    this.unsubscribe = onRegistered((change) => this.registered(change));
    const ds = root.dataset;
    this.connection = new Connection({
      tokenUrl: ds.tokenUrl || '/api/v4/stream-token',
      agent: ds.agent || '',
      wsPath: ds.wsPath || '/ws/v4/a2ui',
      csrfToken: ds.csrfToken || readCookie('csrftoken'),
      clientInfo: { name: 'a2ui web client', version: ds.clientVersion || '0.1.0' },
      capabilities: {
        supported_components: [...COMPONENT_TYPES, ...registeredTypes()],
        supports_file_upload: true,
        'v0.9': { supportedCatalogIds: V09Surfaces.catalogIds() },
      },
    }, {
      onState: (state, detail) => this.showState(state, detail),
      onMessage: (msg) => this.dispatch(msg),
      onSession: (info) => this.sessionStarted(info),
      onDisconnect: () => this.prompts.markAllStale(),
      onError: (err) => this.rpcError(err),
    });
    this.reconnectBtn.addEventListener('click', () => this.connection.start());
    this.updateEmpty();
  }

  start() {
    // The v0.9 renderer is not fetched here: V09Surfaces loads it on the first a2ui.v09
    // message, so a page without v0.9 surfaces never requests it.
    this.connection.start();
  }

  send(method, params) {
    return this.connection.notify(method, params);
  }

  /** A request to the server: a Promise of its result (rejects with the JSON-RPC error). */
  request(method, params) {
    return this.connection.request(method, params);
  }

  // ---- connection state ----------------------------------------------------------------------
  showState(state, detail) {
    if (state !== 'connected') this.agentStatus = null; // a2ui.init says it again
    this.connectionState = state;
    this.status.dataset.state = state;
    const label = (state === 'connected' && this.agentStatus && AGENT_LABELS[this.agentStatus]) || STATE_LABELS[state] || state;
    this.statusText.textContent = detail ? `${label} — ${detail}` : label;
    this.reconnectBtn.hidden = state !== 'closed';
    this.root.dataset.connection = state;
    if (this.agentStatus) this.status.dataset.agent = this.agentStatus;
    else delete this.status.dataset.agent;
  }

  /** The session's agent is online or offline (null: not known, no agent). */
  setAgentStatus(status) {
    this.agentStatus = status === 'online' || status === 'offline' ? status : null;
    if (this.connectionState === 'connected') this.showState('connected', '');
  }

  sessionStarted({ resumed, result }) {
    this.setAgentStatus(result?.agent_status);
    if (Array.isArray(result?.consents)) this.consents.set(result.consents);
    if (!resumed) {
      // A new session: nothing on screen belongs to it.
      for (const id of [...this.components.keys()]) this.removeComponent(id);
      for (const id of [...this.taskEls.keys()]) this.removeTask(id);
      this.prompts.clear();
      this.v09.clear();
      this.activity.clear();
      this.dropReplySlot();
    } else {
      // The server re-sends pending prompts now; what it does not re-send is no longer pending.
      clearTimeout(this.staleTimer);
      this.staleTimer = setTimeout(() => this.prompts.dropStale(), 5000);
    }
  }

  /** A JSON-RPC error nobody waited for: in human words (errors.js), the code in the console. */
  rpcError(err) {
    console.warn('a2ui: server error', err);
    if (isObject(err) && err.code === -32010 && Array.isArray(err.data?.consent_types)) {
      this.consents.markMissing(err.data.consent_types);
    }
    const { title, message } = describeError(err);
    const el = this.toast({ level: 'error', title, message, duration_ms: 8000 });
    if (isObject(err) && Number.isInteger(err.code)) el.dataset.code = String(err.code);
  }

  /** Questions (prompts, forms) wait while a consent the site asks for is withdrawn. */
  setPaused(missing) {
    const paused = Array.isArray(missing) && missing.length > 0;
    this.paused = paused;
    this.root.dataset.consentMissing = paused ? missing.join(' ') : '';
    // A consent given (here, in the list, or elsewhere): its prompt has nothing left to ask.
    for (const c of this.consents?.items || []) if (c.granted) this.prompts.close(`consent:${c.type}`);
    this.prompts.setPaused(paused);
    for (const entry of this.components.values()) pauseForm(entry.el, paused, () => this.consents.reveal());
  }

  registered(change) {
    if (change.kind !== 'component') return;
    for (const [id, entry] of this.components) {
      if (entry.type !== change.type) continue;
      const el = this.buildFrame(id, entry);
      entry.el.replaceWith(el);
      entry.el = el;
    }
  }

  // ---- dispatch ------------------------------------------------------------------------------
  dispatch(msg) {
    const p = isObject(msg.params) ? msg.params : {};
    try {
      switch (msg.method) {
        case 'ui.render': return this.render(p);
        case 'ui.update': return this.update(p);
        case 'ui.request_input': return this.prompts.requestInput(p);
        case 'ui.confirm': return this.prompts.confirm(p);
        case 'ui.progress': return this.progress(p);
        case 'ui.navigate': return this.navigate(p.url, Boolean(p.new_tab));
        case 'ui.notify': return this.toast(p);
        case 'ui.activity': return this.activity.process(p.kind, p.data);
        case 'a2ui.v09':
          // A snapshot (resume, resync) replaces every surface: one deleted while the socket
          // was away is in no message of it.
          if (p.snapshot === true) this.v09.clear();
          return this.v09.process(Array.isArray(p.messages) ? p.messages : []);
        case 'a2ui.consent_required':
          this.consents.markMissing((Array.isArray(p.consent_types) ? p.consent_types : []).map((c) => (isObject(c) ? c.type : String(c))));
          return this.prompts.consent(p);
        case 'a2ui.consent_changed':
          if (Array.isArray(p.consents)) this.consents.set(p.consents);
          return undefined;
        case 'a2ui.request_closed': return this.requestClosed(p);
        case 'a2ui.agent_status': return this.setAgentStatus(p.status);
        case 'ui.remove': case 'ui.delete': return this.removeComponent(p.component_id);
        default: return console.debug('a2ui: ignored notification', msg.method);
      }
    } catch (err) {
      console.error('a2ui: failed to handle', msg.method, err);
      this.toast({ level: 'error', title: _('Part of the page could not be shown'), message: _('Something the assistant sent could not be shown. Reload the page if something seems missing.') });
    }
    return undefined;
  }

  // ---- components ----------------------------------------------------------------------------
  render(p) {
    const id = p.component_id;
    if (!id || typeof p.component_type !== 'string' || !p.component_type) {
      console.warn('a2ui: ui.render without an id or a type', p);
      return;
    }
    const existing = this.components.get(id);
    const metadata = isObject(p.metadata) ? p.metadata : existing?.metadata || {};
    const entry = { type: p.component_type, data: isObject(p.data) ? p.data : {}, metadata, el: null, ttlTimer: null };
    entry.el = this.buildFrame(id, entry);
    const region = this.regions[metadata.position] || this.regions.main;
    const slot = !existing && region === this.regions.main && this.replySlot?.isConnected ? this.replySlot : null;
    if (existing && (existing.el.parentNode === region || (existing.reply && region === this.regions.main))) {
      existing.el.replaceWith(entry.el);
      entry.reply = existing.reply;
    } else if (slot) {
      slot.replaceWith(entry.el);
      entry.reply = true;
      this.dropReplySlot();
      this.rememberReply(id, entry.el);
    } else if (!existing && region === this.regions.main && this.placeReply(id, entry.el)) {
      entry.reply = true;
    } else {
      existing?.el.remove();
      this.insertByPriority(region, entry.el);
    }
    clearTimeout(existing?.ttlTimer);
    const ttl = Number(metadata.ttl_seconds);
    if (Number.isFinite(ttl) && ttl > 0) entry.ttlTimer = setTimeout(() => this.removeComponent(id), ttl * 1000);
    this.components.set(id, entry);
    this.updateEmpty();
  }

  buildFrame(id, entry) {
    const priority = PRIORITY_RANK[entry.metadata.priority] !== undefined ? entry.metadata.priority : 'normal';
    this.sequence += 1;
    const frame = h('section', {
      class: `a2ui-component a2ui-component-${entry.type} a2ui-priority-${priority}`,
      dataset: { componentId: id, componentType: entry.type, priority, seq: this.sequence },
    });
    if (entry.metadata.position === 'overlay') {
      frame.append(h('button', { type: 'button', class: 'a2ui-btn-close', 'aria-label': _('Close'), on: { click: () => this.removeComponent(id) } }, '×'));
    }
    const ctx = {
      componentId: id,
      send: (m, params) => this.send(m, params),
      // A host project's component (api.js) answers the agent: user.respond keyed by its id.
      respond: (value) => this.request('user.respond', { request_id: id, value }),
      navigate: (url, newTab) => this.navigate(url, newTab),
      toast: (t) => this.toast(t),
      remove: () => this.removeComponent(id),
      answered: () => {
        const current = this.components.get(id)?.el;
        if (current?.parentNode !== this.regions.main) return;
        const slot = h('div', { class: 'a2ui-reply-slot', hidden: true });
        current.after(slot);
        this.holdReplySlot(slot);
      },
    };
    frame.append(COMPONENT_TYPES.includes(entry.type) ? renderComponent(entry.type, entry.data, ctx) : this.renderCustom(entry, ctx));
    if (this.paused) pauseForm(frame, true, () => this.consents.reveal());
    const title = frame.querySelector('h2, h3, caption, figcaption, .a2ui-alert-title');
    if (title) frame.setAttribute('aria-label', title.textContent);
    return frame;
  }

  /** A host project's component type (api.js); until its renderer is registered, a note. */
  renderCustom(entry, ctx) {
    const render = componentRenderer(entry.type);
    if (render) {
      try {
        const node = render(entry.data, ctx);
        if (node instanceof Node) return node;
        if (node !== null && node !== undefined) console.warn(`a2ui: the renderer of ${entry.type} returned no DOM node`);
        return h('div', { class: 'a2ui-custom-empty' });
      } catch (err) {
        console.error(`a2ui: the renderer of ${entry.type} failed`, err);
      }
    }
    return h('p', { class: 'a2ui-muted', dataset: { unsupported: entry.type } },
      interpolate(_('This content cannot be shown on this page (%(type)s).'), { type: text(entry.type) }));
  }

  replies() {
    try {
      const stored = JSON.parse(sessionStorage.getItem(REPLIES_KEY) || 'null');
      const session = sessionStorage.getItem('a2ui.session_id');
      return isObject(stored) && stored.session === session && isObject(stored.places)
        ? stored : { session, places: {} };
    } catch { return { session: null, places: {} }; }
  }

  /** Record where reply `id` was placed: after a component, or in the prompt stack. */
  rememberReply(id, el) {
    let previous = el.previousElementSibling;
    while (previous && !previous.dataset?.componentId) previous = previous.previousElementSibling;
    const place = previous ? { after: previous.dataset.componentId }
      : this.prompts.container.contains(el) ? { prompts: true } : null;
    if (!place) return;
    const stored = this.replies();
    stored.places[id] = place;
    const ids = Object.keys(stored.places);
    for (const old of ids.slice(0, Math.max(0, ids.length - MAX_REPLIES))) delete stored.places[old];
    try { sessionStorage.setItem(REPLIES_KEY, JSON.stringify(stored)); } catch { /* storage off */ }
  }

  /** After a reload: put a remembered reply back in its place; false if it has none. */
  placeReply(id, el) {
    const place = this.replies().places[id];
    if (!isObject(place)) return false;
    if (place.prompts) {
      this.prompts.container.prepend(el);
      return true;
    }
    const anchor = typeof place.after === 'string' ? this.components.get(place.after)?.el : null;
    if (!anchor?.parentNode) return false;
    anchor.after(el);
    return true;
  }

  /** Keep `slot` (placed where the person just answered) for the agent's reply for a while. */
  holdReplySlot(slot) {
    this.dropReplySlot();
    this.replySlot = slot;
    this.replyTimer = setTimeout(() => this.dropReplySlot(), REPLY_WINDOW_MS);
  }

  dropReplySlot() {
    clearTimeout(this.replyTimer);
    this.replySlot?.remove();
    this.replySlot = null;
  }

  insertByPriority(region, el) {
    const rank = PRIORITY_RANK[el.dataset.priority];
    const before = [...region.children].find((child) => PRIORITY_RANK[child.dataset.priority] > rank);
    region.insertBefore(el, before || null);
  }

  update(p) {
    const entry = this.components.get(p.component_id);
    if (!entry) {
      console.debug('a2ui: ui.update for an unknown component', p.component_id);
      return;
    }
    const patch = isObject(p.data) ? p.data : {};
    let data;
    if (p.operation === 'replace') {
      data = patch;
    } else {
      // merge: shallow; append: lists are extended and strings concatenated. Data of the
      // {title, content: {...}} form is patched inside content for keys it does not have itself.
      const put = (obj, key, value) => { obj[key] = p.operation === 'append' ? appendValue(obj[key], value) : value; };
      data = { ...entry.data };
      const wrapped = isObject(data.content);
      if (wrapped) data.content = { ...data.content };
      for (const [key, value] of Object.entries(patch)) {
        if (key === 'content' && wrapped && isObject(value)) {
          for (const [k, v] of Object.entries(value)) put(data.content, k, v);
        } else if (wrapped && !(key in data)) {
          put(data.content, key, value);
        } else {
          put(data, key, value);
        }
      }
    }
    const hadFocus = entry.el.contains(document.activeElement);
    entry.data = data;
    const el = this.buildFrame(p.component_id, entry);
    entry.el.replaceWith(el);
    entry.el = el;
    if (hadFocus) {
      el.setAttribute('tabindex', '-1');
      el.focus();
    }
  }

  removeComponent(id) {
    const entry = this.components.get(id);
    if (!entry) return;
    clearTimeout(entry.ttlTimer);
    entry.el.remove();
    this.components.delete(id);
    this.updateEmpty();
  }

  updateEmpty() {
    if (this.empty) this.empty.hidden = this.components.size > 0 || this.taskEls.size > 0 || this.v09.elements.size > 0 || this.prompts.items.size > 0 || Boolean(this.activity?.hasContent());
  }

  // ---- prompts closed by the server ----------------------------------------------------------
  requestClosed(p) {
    if (!p.request_id) return;
    const wasOpen = this.prompts.close(`req:${p.request_id}`);
    if (wasOpen && p.status !== 'answered') {
      this.toast({ level: 'info', title: p.status === 'timed_out' ? _('Time is up') : _('Question closed'), message: CLOSED_LABELS[p.status] || _('The question is closed.') });
    }
  }

  // ---- ui.progress ---------------------------------------------------------------------------
  progress(p) {
    const taskId = p.task_id;
    if (!taskId) return;
    let t = this.taskEls.get(taskId);
    if (!t) {
      const bar = h('progress', { class: 'a2ui-progress-bar' });
      const label = h('p', { class: 'a2ui-progress-message' });
      const log = h('div', { class: 'a2ui-progress-stream', role: 'log', 'aria-live': 'polite', hidden: true });
      const cancel = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small' }, _('Cancel'));
      const el = h('div', { class: 'a2ui-task', dataset: { taskId } },
        h('div', { class: 'a2ui-task-head' }, label, cancel), bar, log);
      t = { el, bar, label, log, cancel, done: false };
      cancel.addEventListener('click', () => {
        if (this.send('user.cancel', { task_id: taskId, reason: 'User requested cancellation' })) {
          cancel.disabled = true;
          cancel.textContent = _('Cancelling…');
        } else {
          this.toast({ level: 'error', title: _('Not connected'), message: _('The task was not cancelled. Try again when the connection is back.') });
        }
      });
      this.taskEls.set(taskId, t);
      this.tasks.append(el);
      this.updateEmpty();
    }
    const type = ['determinate', 'indeterminate', 'streaming'].includes(p.progress_type) ? p.progress_type : 'indeterminate';
    t.el.dataset.progressType = type;
    const message = p.message !== undefined && p.message !== null ? text(p.message) : '';
    const labelText = interpolate(_('Task %(id)s'), { id: text(taskId) });
    if (type === 'determinate') {
      const total = Number(p.total) > 0 ? Number(p.total) : 100;
      const value = Math.min(Math.max(Number(p.value) || 0, 0), total);
      t.bar.max = total;
      t.bar.value = value;
      const pct = Math.round((value / total) * 100);
      t.bar.setAttribute('aria-label', `${message || labelText}: ${pct}%`);
      t.label.textContent = `${message || labelText} (${pct}%)`;
      if (value >= total) this.finishTask(taskId);
    } else if (type === 'indeterminate') {
      t.bar.removeAttribute('value');
      t.bar.setAttribute('aria-label', message || labelText);
      t.label.textContent = message || interpolate(_('%(task)s: working…'), { task: labelText });
    } else {
      t.bar.removeAttribute('value');
      t.bar.setAttribute('aria-label', labelText);
      t.label.textContent = labelText;
      t.log.hidden = false;
      if (message) t.log.append(message);
    }
  }

  finishTask(taskId) {
    const t = this.taskEls.get(taskId);
    if (!t || t.done) return;
    t.done = true;
    t.cancel.hidden = true;
    t.el.classList.add('a2ui-task-done');
    setTimeout(() => this.removeTask(taskId), 4000);
  }

  removeTask(taskId) {
    this.taskEls.get(taskId)?.el.remove();
    this.taskEls.delete(taskId);
    this.updateEmpty();
  }

  // ---- ui.navigate ---------------------------------------------------------------------------
  navigate(url, newTab) {
    const safe = safeUrl(url);
    if (!safe) {
      this.toast({ level: 'warning', title: _('Link not opened'), message: _('The assistant sent an address this page does not open.') });
      return;
    }
    if (newTab) {
      const win = window.open(safe, '_blank', 'noopener,noreferrer');
      if (!win) this.toast({ level: 'info', title: _('Open link'), message: safe });
    } else {
      window.location.assign(safe);
    }
  }

  // ---- ui.notify -----------------------------------------------------------------------------
  toast(p) {
    const level = ['info', 'success', 'warning', 'error'].includes(p.level) ? p.level : 'info';
    const close = h('button', { type: 'button', class: 'a2ui-btn-close', 'aria-label': _('Dismiss notification') }, '×');
    const el = h('div', { class: `a2ui-toast a2ui-toast-${level}`, role: level === 'error' ? 'alert' : 'status' },
      h('div', { class: 'a2ui-toast-body' },
        h('strong', { class: 'a2ui-toast-title' }, text(p.title || LEVEL_TITLES[level])),
        p.message ? h('p', {}, text(p.message)) : null),
      close);
    const remove = () => { clearTimeout(timer); el.remove(); };
    close.addEventListener('click', remove);
    this.toasts.append(el);
    while (this.toasts.children.length > 5) this.toasts.firstElementChild.remove();
    const duration = Number.isFinite(Number(p.duration_ms)) && p.duration_ms !== null ? Number(p.duration_ms) : 5000;
    const timer = duration > 0 ? setTimeout(remove, duration) : null;
    return el;
  }
}

const LEVEL_TITLES = { info: _('Note'), success: _('Done'), warning: _('Warning'), error: _('Problem') };

/** Disable (or enable again) a form component's controls while a consent is missing. */
function pauseForm(frame, paused, showConsents) {
  const form = frame?.querySelector('form.a2ui-form');
  if (!form) return;
  form.querySelector(':scope > .a2ui-paused-note')?.remove();
  for (const el of form.querySelectorAll('input, select, textarea, button')) {
    if (paused && !el.disabled) { el.disabled = true; el.dataset.a2uiPaused = '1'; }
    if (!paused && el.dataset.a2uiPaused) { el.disabled = false; delete el.dataset.a2uiPaused; }
  }
  form.classList.toggle('a2ui-paused', paused);
  if (paused) form.prepend(pausedNote(showConsents));
}

function appendValue(current, value) {
  if (Array.isArray(current)) return current.concat(Array.isArray(value) ? value : [value]);
  if (typeof current === 'string' && typeof value === 'string') return current + value;
  if (current === undefined && Array.isArray(value)) return value.slice();
  return value;
}

function readCookie(name) {
  const match = document.cookie.split('; ').find((c) => c.startsWith(`${name}=`));
  return match ? decodeURIComponent(match.slice(name.length + 1)) : '';
}
