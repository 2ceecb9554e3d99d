// One artifact of the session's activity (activity.js): code kept as written (a text node, not
// entity-decoded, bidi controls removed), highlighted by highlight.js. An artifact the agent
// opened with `read_only: false` has an Edit button: a textarea (no contenteditable, no style
// attribute) and "Send to agent", which sends `user.action` {action_type: "artifact_edit",
// component_id: <artifact id>, payload: {content, base_length}} on the JSON-RPC socket. The
// agent's version never replaces an edit in progress: a change of it shows a notice, and the
// person keeps their edit or loads the agent's version (docs/client.md).
import { highlightInto } from './highlight.js';
import { h, isObject, noBidi, plain } from './dom.js';
import { errorSentence } from './errors.js';
import { gettext as _, interpolate } from './i18n.js';

const MAX_HIGHLIGHT = 100000; // longer artifacts stay plain text
export const EDIT_ACTION = 'artifact_edit';

/** A length as the server counts it: characters (code points), not UTF-16 units. */
const chars = (s) => [...s].length;

function languageOf(a) {
  return typeof a.language === 'string' && /^[\w+#.-]{1,32}$/.test(a.language) ? a.language : '';
}

export class ArtifactView {
  /** `request(method, params) -> Promise`: the connection's request. */
  constructor(id, request) {
    this.id = id;
    this.request = request;
    this.artifact = null; // the agent's version, as the model has it
    this.source = '';
    this.editor = null; // while editing: {textarea, base, pending, ...}
    this.el = h('article', { class: 'a2ui-artifact', dataset: { artifactId: id } });
  }

  get editable() {
    return isObject(this.artifact) && this.artifact.read_only === false;
  }

  /** The agent's version (opened, updated, or from a snapshot); `change` its change type. */
  show(a, change) {
    this.artifact = a;
    this.source = noBidi(a.content);
    Object.assign(this.el.dataset, { change, length: this.source.length, editable: this.editable ? '1' : '0' });
    if (this.editor) this.agentChanged();
    else this.draw();
  }

  head() {
    const a = this.artifact;
    const language = languageOf(a);
    const note = this.editor ? _('Editing') : this.editable ? _('Editable') : _('Read-only');
    const copy = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small' }, _('Copy'));
    copy.addEventListener('click', async () => {
      const shown = this.editor ? this.editor.textarea.value : this.source;
      try { await navigator.clipboard.writeText(shown); copy.textContent = _('Copied'); } catch { copy.textContent = _('Copy failed'); }
      setTimeout(() => { copy.textContent = _('Copy'); }, 2000);
    });
    const edit = this.editable && !this.editor
      ? h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small', dataset: { a2uiArtifactEdit: '' } }, _('Edit'))
      : null;
    edit?.addEventListener('click', () => this.startEditing());
    return h('div', { class: 'a2ui-item-head' },
      h('bdi', { class: 'a2ui-artifact-title' }, plain(a.title) || plain(this.id)),
      language ? h('span', { class: 'a2ui-code-lang' }, language) : null,
      h('span', { class: 'a2ui-badge a2ui-badge-muted' }, note), edit, copy);
  }

  label() {
    return `${plain(this.artifact.title) || _('Artifact')} (${languageOf(this.artifact) || _('text')})`;
  }

  /** View mode: the agent's version, highlighted. */
  draw() {
    const language = languageOf(this.artifact);
    const code = h('code', { class: language ? `language-${language}` : null }, this.source);
    if (language && this.source.length <= MAX_HIGHLIGHT) highlightInto(code, this.source, language);
    this.el.replaceChildren(this.head(),
      h('pre', { class: 'a2ui-artifact-pre', tabindex: '0', 'aria-label': this.label() }, code));
  }

  startEditing() {
    const lines = this.source.split('\n').length;
    const textarea = h('textarea', {
      class: 'a2ui-artifact-editor', rows: String(Math.min(Math.max(lines + 1, 6), 30)),
      spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off', wrap: 'off',
      'aria-label': interpolate(_('Edit %(name)s'), { name: this.label() }), dataset: { a2uiArtifactEditor: '' },
    });
    textarea.value = this.source;
    const noticeText = h('span', {}, '');
    const keep = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small' }, _('Keep my edit'));
    const reload = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small' }, _('Load the agent’s version'));
    const notice = h('div', { class: 'a2ui-artifact-notice', role: 'alert', hidden: true, dataset: { a2uiArtifactNotice: '' } },
      noticeText, keep, reload);
    const send = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-primary', dataset: { a2uiArtifactSend: '' } }, _('Send to agent'));
    const close = h('button', { type: 'button', class: 'a2ui-btn' }, _('Close editor'));
    const status = h('p', { class: 'a2ui-artifact-status a2ui-muted', role: 'status' });
    this.editor = { textarea, base: this.source, pending: null, notice, noticeText, keep, send, status };
    keep.addEventListener('click', () => this.resolve(false));
    reload.addEventListener('click', () => this.resolve(true));
    send.addEventListener('click', () => this.sendEdit());
    close.addEventListener('click', () => { this.editor = null; this.draw(); });
    this.el.replaceChildren(this.head(), notice, textarea,
      h('div', { class: 'a2ui-artifact-actions' }, send, close), status);
    textarea.focus();
  }

  /** The agent's version changed while the person edits: never overwrite, ask. */
  agentChanged() {
    const ed = this.editor;
    const head = this.el.querySelector('.a2ui-item-head');
    head?.replaceWith(this.head());
    if (this.source === ed.textarea.value) { // the agent has what the person has (it took the edit)
      ed.base = this.source;
      ed.pending = null;
    } else if (this.source !== ed.base || !this.editable) {
      ed.pending = this.source;
    }
    const open = ed.pending !== null;
    ed.noticeText.textContent = this.editable ? _('The agent changed this file.') : _('The agent made this file read-only.');
    ed.keep.hidden = !this.editable;
    ed.notice.hidden = !open;
    ed.send.disabled = open || !this.editable;
  }

  /** The person's choice after a notice: load the agent's version, or keep their edit. */
  resolve(load) {
    const ed = this.editor;
    if (!ed || ed.pending === null) return;
    if (load) ed.textarea.value = ed.pending;
    ed.base = ed.pending;
    ed.pending = null;
    ed.notice.hidden = true;
    ed.send.disabled = !this.editable;
    ed.status.textContent = load ? _('The agent’s version is loaded.') : '';
    ed.textarea.focus();
  }

  async sendEdit() {
    const ed = this.editor;
    if (!ed || ed.send.disabled) return;
    ed.send.disabled = true;
    ed.status.textContent = _('Sending…');
    const payload = { content: ed.textarea.value, base_length: chars(ed.base) };
    try {
      await this.request('user.action', { action_type: EDIT_ACTION, component_id: this.id, payload });
      if (this.editor === ed) ed.status.textContent = _('Sent to the agent.');
    } catch (err) {
      if (this.editor === ed) ed.status.textContent = interpolate(_('Not sent: %(reason)s'), { reason: errorSentence(err) });
    } finally {
      if (this.editor === ed) ed.send.disabled = ed.pending !== null || !this.editable;
    }
  }
}
