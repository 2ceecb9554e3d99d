// The session's AG-UI-native activity (`ui.activity {kind, data}`, docs/protocol-jsonrpc.md):
// chat transcript, tool calls, plan cards, artifacts in the main region; the agent roster, the
// resource tree and the state document in the sidebar. The model folds the events as the server
// does (a2ui/core/activity.py); a `snapshot` replaces it whole (resume, resync). Each change
// redraws only what it touched (activityviews.js builds the DOM: text as text, never innerHTML).
import { h, isObject } from './dom.js';
import { gettext as _ } from './i18n.js';
import * as V from './activityviews.js';
import { ArtifactView } from './artifactview.js';

// Client-side bounds (the server's are lower: A2UI['ACTIVITY_*']); the oldest go first.
const MAX = { transcript: 500, tool_calls: 200, plans: 100, artifacts: 50 };
const KEYS = { transcript: 'message_id', tool_calls: 'call_id', plans: 'plan_id', artifacts: 'artifact_id' };
const ARTIFACT_FIELDS = ['title', 'content_type', 'read_only', 'language'];

function empty() {
  return { state: {}, transcript: new Map(), tool_calls: new Map(), plans: new Map(), resources: null, roster: null, artifacts: new Map() };
}

function keyed(list, key) {
  const map = new Map();
  for (const item of Array.isArray(list) ? list : []) {
    if (isObject(item) && typeof item[key] === 'string') map.set(item[key], item);
  }
  return map;
}

function trim(map, limit) {
  while (map.size > limit) map.delete(map.keys().next().value);
}

/** The state document with `value` at the dot `path` (objects created on the way) or removed. */
export function setPath(doc, path, value, removed) {
  const segments = String(path).split('.');
  const root = { ...doc };
  let node = root;
  for (const segment of segments.slice(0, -1)) {
    node[segment] = isObject(node[segment]) ? { ...node[segment] } : {};
    node = node[segment];
  }
  const last = segments[segments.length - 1];
  if (removed) delete node[last]; else node[last] = value;
  return root;
}

export class Activity {
  /** `after`: the main region's element the main panels follow; `sidebar`: the sidebar region. */
  constructor(after, sidebar, hooks) {
    this.hooks = hooks; // {request(method, params) -> Promise, onChange(), chat?}
    this.model = empty();
    this.active = false; // an agent spoke AG-UI-native: the chat is shown from then on
    this.chatAlways = Boolean(hooks.chat); // {% a2ui_client chat=True %}: shown from the start
    this.views = new Map(); // artifact id -> ArtifactView (an edit in progress survives updates)
    this.chat = V.chatPanel((content) => this.hooks.request('user.message', { content }), hooks.agentName || '');
    this.tools = V.panel('a2ui-tool-calls', _('Tool calls'), { a2uiToolCalls: '' });
    this.plans = V.panel('a2ui-plans', _('Plan'), { a2uiPlans: '' });
    this.artifacts = V.panel('a2ui-artifacts', _('Artifacts'), { a2uiArtifacts: '' });
    this.roster = V.panel('a2ui-roster', _('Agents'), { a2uiRoster: '' });
    this.resources = V.panel('a2ui-resources', _('Resources'), { a2uiResources: '' });
    this.state = V.statePanel();
    this.mainEl = h('div', { class: 'a2ui-activity', dataset: { a2uiActivity: 'main' } },
      this.plans.el, this.tools.el, this.artifacts.el, this.chat.el);
    this.sideEl = h('div', { class: 'a2ui-activity', dataset: { a2uiActivity: 'sidebar' } },
      this.roster.el, this.resources.el, this.state.el);
    after.after(this.mainEl);
    sidebar.prepend(this.sideEl);
    this.openFolders = new Map(); // folder id -> open, as the person left it
    this.chat.el.hidden = !this.chatAlways;
  }

  hasContent() {
    return this.active;
  }

  clear() {
    this.model = empty();
    this.active = false;
    this.views.clear();
    this.redrawAll();
  }

  /** One `ui.activity` notification. */
  process(kind, data) {
    if (!isObject(data)) return;
    const m = this.model;
    this.active = true;
    switch (kind) {
      case 'snapshot': {
        this.model = {
          state: isObject(data.state) ? data.state : {},
          transcript: keyed(data.transcript, KEYS.transcript),
          tool_calls: keyed(data.tool_calls, KEYS.tool_calls),
          plans: keyed(data.plans, KEYS.plans),
          resources: isObject(data.resources) ? data.resources : null,
          roster: Array.isArray(data.roster) ? data.roster : null,
          artifacts: keyed(data.artifacts, KEYS.artifacts),
        };
        this.redrawAll();
        break;
      }
      case 'message':
        if (!this.put('transcript', data)) return;
        this.chat.show(data);
        this.chat.prune(m.transcript);
        break;
      case 'message.batch':  // several messages at once (a person's AG-UI 1.0 run)
        for (const one of Array.isArray(data.messages) ? data.messages : []) {
          if (isObject(one)) this.process('message', one);
        }
        break;
      case 'tool_call': {
        const id = data.call_id;
        if (typeof id !== 'string') return;
        const fields = { ...data };
        delete fields.phase;
        if (data.phase === 'requested') {
          m.tool_calls.delete(id);
          m.tool_calls.set(id, fields);
        } else {
          m.tool_calls.set(id, { ...(m.tool_calls.get(id) || {}), ...fields });
        }
        trim(m.tool_calls, MAX.tool_calls);
        this.drawItem(this.tools, id, V.toolCall(m.tool_calls.get(id)), m.tool_calls, data.phase === 'requested');
        break;
      }
      case 'plan':
        if (!this.put('plans', data)) return;
        this.drawItem(this.plans, data.plan_id, V.planCard(data), m.plans);
        break;
      case 'state.delta':
        if (typeof data.path !== 'string') return;
        m.state = setPath(m.state, data.path, data.new_value ?? null, Boolean(data.removed));
        this.state.show(m.state);
        break;
      case 'resources':
        m.resources = isObject(data.root) ? data.root : null;
        this.drawResources();
        break;
      case 'roster':
        m.roster = Array.isArray(data.agents) ? data.agents : null;
        this.drawRoster();
        break;
      case 'artifact':
        this.artifact(data);
        break;
      default:
        console.debug('a2ui: ignored activity kind', kind);
        return;
    }
    this.chat.el.hidden = !(this.active || this.chatAlways);
    this.hooks.onChange();
  }

  put(part, data) {
    const id = data[KEYS[part]];
    if (typeof id !== 'string') return false;
    this.model[part].set(id, data);
    trim(this.model[part], MAX[part]);
    return true;
  }

  artifact(data) {
    const m = this.model;
    const id = data.artifact_id;
    if (typeof id !== 'string') return;
    const current = m.artifacts.get(id);
    const fields = Object.fromEntries(ARTIFACT_FIELDS.filter((k) => k in data).map((k) => [k, data[k]]));
    let content;
    if (data.phase === 'opened') {
      m.artifacts.delete(id);
      m.artifacts.set(id, { artifact_id: id, ...fields, content: String(data.content ?? '') });
      trim(m.artifacts, MAX.artifacts);
    } else {
      if (!current) {
        console.debug('a2ui: update of an unknown artifact', id);
        return;
      }
      const piece = String(data.content ?? '');
      if (data.change_type === 'full_replace') content = piece;
      else if (data.change_type === 'partial') content = current.content + piece;
      else if (typeof data.full_content === 'string') content = data.full_content; // diff: the server's result
      else return;
      m.artifacts.set(id, { ...current, ...fields, content });
    }
    this.drawItem(this.artifacts, id, this.artifactView(m.artifacts.get(id), data.change_type || 'opened'), m.artifacts);
  }

  /** The artifact's view (kept while the model has it), showing the agent's version `a`. */
  artifactView(a, change) {
    const id = a.artifact_id;
    for (const key of [...this.views.keys()]) if (!this.model.artifacts.has(key)) this.views.delete(key);
    if (!this.views.has(id)) this.views.set(id, new ArtifactView(id, (m, p) => this.hooks.request(m, p)));
    const view = this.views.get(id);
    view.show(a, change);
    return view.el;
  }

  /** Replace (or add) one item of a panel's list, dropping items the model no longer has. */
  drawItem(panel, id, el, map, last = false) {
    const old = [...panel.list.children].find((c) => c.dataset.id === id);
    el.dataset.id = id;
    if (last || !old) { old?.remove(); panel.list.append(el); }
    else if (old !== el) old.replaceWith(el); // the same element stays put (an editor keeps its focus)
    for (const child of [...panel.list.children]) if (!map.has(child.dataset.id)) child.remove();
    panel.el.hidden = map.size === 0;
  }

  drawList(panel, map, build) {
    panel.list.replaceChildren(...[...map.entries()].map(([id, item]) => {
      const el = build(item);
      el.dataset.id = id;
      return el;
    }));
    panel.el.hidden = map.size === 0;
  }

  drawResources() {
    const root = this.model.resources;
    this.resources.list.replaceChildren(root ? V.resourceTree(root, this.openFolders) : '');
    this.resources.el.hidden = !root;
  }

  drawRoster() {
    const agents = this.model.roster;
    this.roster.list.replaceChildren(agents ? V.roster(agents) : '');
    this.roster.el.hidden = !agents;
  }

  redrawAll() {
    const m = this.model;
    this.chat.replace(m.transcript);
    this.drawList(this.tools, m.tool_calls, V.toolCall);
    this.drawList(this.plans, m.plans, V.planCard);
    this.drawList(this.artifacts, m.artifacts, (a) => this.artifactView(a, 'opened'));
    this.drawResources();
    this.drawRoster();
    this.state.show(m.state);
    this.chat.el.hidden = !(this.active || this.chatAlways);
    this.hooks.onChange();
  }
}
