// DOM for the session's activity (activity.js). Display text is HTML-safe text from the server:
// plain() decodes its entities and drops bidi controls, and it is inserted as text. Agent
// messages and plan cards are Markdown (markdown.js: tokens to DOM, no HTML parsed). Artifacts
// are artifactview.js's.
import { highlightBlocks } from './highlight.js';
import { h, isObject, plain } from './dom.js';
import { errorSentence } from './errors.js';
import { gettext as _, interpolate } from './i18n.js';
import { renderMarkdownText } from './markdown.js';

const MAX_JSON = 20000; // characters of a JSON value shown (tool results, parameters, state)
const MAX_INPUT = 16000; // A2UI['ACTIVITY_MAX_MESSAGE_LENGTH']'s default
const ROLE_LABELS = { agent: _('Assistant'), user: _('You'), system: _('System') };
const STATUS_LABELS = {
  PENDING: _('Pending'), RUNNING: _('Running'), COMPLETED: _('Completed'), FAILED: _('Failed'), CANCELLED: _('Cancelled'),
  ACTIVE: _('Active'), ONLINE: _('Online'), BUSY: _('Busy'), IDLE: _('Idle'), OFFLINE: _('Offline'),
};
const TOOL_STATUSES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'];
const PLAN_STATUSES = ['ACTIVE', 'COMPLETED', 'FAILED', 'CANCELLED'];
const AGENT_STATUSES = ['ONLINE', 'BUSY', 'IDLE', 'OFFLINE'];

function oneOf(value, choices, fallback) {
  return choices.includes(value) ? value : fallback;
}

function badge(status) {
  return h('span', { class: `a2ui-badge a2ui-badge-${status.toLowerCase()}` }, STATUS_LABELS[status] || status);
}

function markdown(source) {
  const el = h('div', { class: 'a2ui-markdown' }, renderMarkdownText(plain(source), () => highlightBlocks(el)));
  highlightBlocks(el);
  return el;
}

/** A JSON value as indented text, its strings decoded as display text, cut at MAX_JSON. */
export function jsonText(value) {
  const decoded = (v, depth = 0) => {
    if (typeof v === 'string') return plain(v);
    if (depth > 64 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => decoded(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [plain(k), decoded(x, depth + 1)]));
  };
  const s = JSON.stringify(decoded(value), null, 2) ?? 'null';
  return s.length > MAX_JSON ? `${s.slice(0, MAX_JSON)}\n… ${interpolate(_('(%(count)s more characters)'), { count: s.length - MAX_JSON })}` : s;
}

/** A titled panel whose items go in `list`; hidden until it has some. */
export function panel(cls, title, dataset) {
  const list = h('div', { class: 'a2ui-panel-list' });
  const el = h('section', { class: `a2ui-panel ${cls}`, dataset, hidden: true, 'aria-label': title },
    h('h2', { class: 'a2ui-panel-title' }, title), list);
  return { el, list };
}

// ---- chat ------------------------------------------------------------------------------------
// Who wrote a message, once: the person's own messages are "You"; an agent's are named by the
// sender it gave, or by the page's agent (its display name) when it gave only the generic
// "agent"; a system message says so.
const GENERIC_SENDERS = new Set(['', 'agent', 'assistant', 'ai', 'bot']);

export function senderName(m, role, agentName) {
  if (role === 'user') return ROLE_LABELS.user;
  const sender = plain(m.sender).trim();
  if (role === 'system') return sender && sender.toLowerCase() !== 'system' ? sender : ROLE_LABELS.system;
  return GENERIC_SENDERS.has(sender.toLowerCase()) ? (agentName || ROLE_LABELS.agent) : sender;
}

function message(m, agentName) {
  const role = oneOf(m.role, Object.keys(ROLE_LABELS), 'agent');
  const body = role === 'agent'
    ? markdown(m.content)
    : h('p', { class: 'a2ui-msg-text' }, plain(m.content));
  return h('article', { class: `a2ui-msg a2ui-msg-${role}`, dataset: { messageId: m.message_id, role } },
    h('div', { class: 'a2ui-msg-head' },
      h('bdi', { class: 'a2ui-msg-sender' }, senderName(m, role, agentName))),
    h('div', { class: 'a2ui-msg-body' }, body));
}

export function chatPanel(send, agentName = '') {
  const log = h('div', { class: 'a2ui-transcript', role: 'log', 'aria-live': 'polite', 'aria-label': _('Messages'), dataset: { a2uiTranscript: '' } });
  const to = agentName || ROLE_LABELS.agent;
  const input = h('textarea', { class: 'a2ui-chat-input', name: 'message', rows: '2', maxlength: String(MAX_INPUT), 'aria-label': interpolate(_('Message to %(name)s'), { name: to }), placeholder: _('Write a message…') });
  const button = h('button', { type: 'submit', class: 'a2ui-btn a2ui-btn-primary' }, _('Send'));
  const error = h('p', { class: 'a2ui-field-error', role: 'alert', hidden: true });
  const form = h('form', { class: 'a2ui-chat-form', dataset: { a2uiChatForm: '' } }, input, button);
  const title = agentName ? interpolate(_('Conversation with %(name)s'), { name: agentName }) : _('Conversation');
  const el = h('section', { class: 'a2ui-panel a2ui-chat', hidden: true, 'aria-label': title, dataset: { a2uiChat: '' } },
    h('h2', { class: 'a2ui-panel-title' }, title), log, form, error);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const content = input.value;
    if (!content.trim() || button.disabled) return;
    button.disabled = true;
    error.hidden = true;
    try {
      await send(content);
      input.value = '';
    } catch (err) {
      error.textContent = interpolate(_('Not sent: %(reason)s'), { reason: errorSentence(err) });
      error.hidden = false;
    } finally {
      button.disabled = false;
      input.focus();
    }
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  const atEnd = () => log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  return {
    el,
    show(m) {
      const end = atEnd();
      const li = message(m, agentName);
      const old = [...log.children].find((c) => c.dataset.messageId === m.message_id);
      if (old) old.replaceWith(li); else log.append(li);
      if (end) log.scrollTop = log.scrollHeight;
    },
    prune(map) {
      for (const li of [...log.children]) if (!map.has(li.dataset.messageId)) li.remove();
    },
    replace(map) {
      log.replaceChildren(...[...map.values()].map((m) => message(m, agentName)));
      log.scrollTop = log.scrollHeight;
    },
  };
}

// ---- tool calls and plans --------------------------------------------------------------------
export function toolCall(c) {
  const status = oneOf(c.status, TOOL_STATUSES, 'PENDING');
  const el = h('article', { class: 'a2ui-tool-call', dataset: { callId: c.call_id, status } },
    h('div', { class: 'a2ui-item-head' },
      h('bdi', { class: 'a2ui-tool-name' }, plain(c.tool_name) || plain(c.call_id)), badge(status)));
  const progress = Number(c.progress);
  const working = status === 'PENDING' || status === 'RUNNING';
  if (working && c.progress !== undefined && c.progress !== null && Number.isFinite(progress)) {
    const pct = Math.min(Math.max(progress, 0), 100);
    el.append(h('div', { class: 'a2ui-tool-progress' },
      h('progress', { max: '100', value: String(pct), 'aria-label': `${plain(c.tool_name) || _('Tool')}: ${Math.round(pct)}%` }),
      h('span', { class: 'a2ui-muted' }, `${Math.round(pct)}%`)));
  }
  if (c.message) el.append(h('p', { class: 'a2ui-tool-message' }, plain(c.message)));
  if (isObject(c.parameters) && Object.keys(c.parameters).length) {
    el.append(h('details', { class: 'a2ui-json' }, h('summary', {}, _('Parameters')),
      h('pre', { class: 'a2ui-json-pre', tabindex: '0' }, jsonText(c.parameters))));
  }
  if ('result' in c && c.result !== undefined) {
    el.append(h('details', { class: 'a2ui-json a2ui-tool-result', open: true }, h('summary', {}, _('Result')),
      h('pre', { class: 'a2ui-json-pre', tabindex: '0' }, jsonText(c.result))));
  }
  if (c.error) el.append(h('p', { class: 'a2ui-tool-error', role: 'status' }, plain(c.error)));
  return el;
}

export function planCard(p) {
  const status = oneOf(p.status, PLAN_STATUSES, 'ACTIVE');
  return h('article', { class: 'a2ui-plan', dataset: { planId: p.plan_id, status } },
    h('div', { class: 'a2ui-item-head' }, h('h3', { class: 'a2ui-plan-title' }, plain(p.title)), badge(status)),
    markdown(p.content));
}

// ---- resource tree, roster, state ------------------------------------------------------------
export function resourceTree(root, open) {
  const node = (n, depth) => {
    if (!isObject(n)) return null;
    const name = h('bdi', { class: 'a2ui-tree-name' }, plain(n.name));
    const id = String(n.id);
    const folder = Array.isArray(n.children) || /^(folder|directory|dir)$/i.test(String(n.node_type));
    if (!folder) {
      return h('li', { class: 'a2ui-tree-file', dataset: { nodeId: id } }, name,
        h('span', { class: 'a2ui-tree-type' }, plain(n.node_type)));
    }
    const details = h('details', { open: open.has(id) ? open.get(id) : depth === 0 },
      h('summary', {}, name),
      h('ul', { class: 'a2ui-tree' }, (n.children || []).map((c) => node(c, depth + 1))));
    details.addEventListener('toggle', () => open.set(id, details.open));
    return h('li', { class: 'a2ui-tree-folder', dataset: { nodeId: id } }, details);
  };
  return h('ul', { class: 'a2ui-tree a2ui-tree-root' }, node(root, 0));
}

export function roster(agents) {
  return h('ul', { class: 'a2ui-roster-list' }, agents.filter(isObject).map((a) => {
    const status = oneOf(a.status, AGENT_STATUSES, 'OFFLINE');
    return h('li', { class: 'a2ui-agent', dataset: { agentId: plain(a.id), status } },
      h('span', { class: `a2ui-agent-dot a2ui-agent-${status.toLowerCase()}`, 'aria-hidden': 'true' }),
      h('bdi', { class: 'a2ui-agent-name' }, plain(a.name)),
      h('span', { class: 'a2ui-agent-status' }, STATUS_LABELS[status] || status));
  }));
}

export function statePanel() {
  const pre = h('pre', { class: 'a2ui-json-pre a2ui-state-doc', tabindex: '0' });
  const el = h('details', { class: 'a2ui-panel a2ui-state', hidden: true, dataset: { a2uiState: '' } },
    h('summary', { class: 'a2ui-panel-title' }, _('State')), pre);
  return {
    el,
    show(state) {
      pre.textContent = jsonText(state);
      el.hidden = !isObject(state) || Object.keys(state).length === 0;
    },
  };
}
