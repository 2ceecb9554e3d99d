// Prompts: ui.request_input, ui.confirm and a2ui.consent_required as non-modal <dialog>s in the
// prompt stack at the top of the main region. Focus moves into each new prompt.
import { fieldControl, wireValidation } from './components.js';
import { h, isObject, text, uid } from './dom.js';

const MAX_FILE_BYTES = 700 * 1024; // base64 grows by 4/3: stays under the 1 MB message limit

function dialog(kind, labelId, extraClass = '') {
  const el = h('dialog', { class: `a2ui-prompt a2ui-prompt-${kind} ${extraClass}`.trim(), 'aria-labelledby': labelId });
  return el;
}

function focusInto(el) {
  requestAnimationFrame(() => {
    const target = el.querySelector('[data-a2ui-autofocus]') || el.querySelector('input, select, textarea, button');
    (target || el).focus();
  });
}

export class Prompts {
  constructor(container, { send, toast, onChange, onAnswered }) {
    this.container = container;
    this.send = send;
    this.toast = toast;
    this.onChange = onChange || (() => {});
    this.onAnswered = onAnswered || (() => {});
    this.items = new Map(); // key -> {el, kind, timer, stale}
  }

  open(key, el, kind) {
    this.close(key);
    this.items.set(key, { el, kind, timer: null, stale: false });
    this.container.prepend(el);
    el.show();
    focusInto(el);
    this.onChange();
    return this.items.get(key);
  }

  has(key) {
    return this.items.has(key);
  }

  close(key) {
    const item = this.items.get(key);
    if (!item) return false;
    clearInterval(item.timer);
    this.items.delete(key);
    const hadFocus = item.el.contains(document.activeElement);
    item.el.close?.();
    item.el.remove();
    this.onChange();
    if (hadFocus) {
      const next = this.container.querySelector('dialog');
      (next?.querySelector('input, select, textarea, button') || document.querySelector('[data-a2ui-components="main"]'))?.focus?.();
    }
    return true;
  }

  /** Answered: the prompt closes and leaves a (hidden) slot where the agent's reply will go. */
  answered(key) {
    const item = this.items.get(key);
    if (item) {
      const slot = h('div', { class: 'a2ui-reply-slot', hidden: true });
      item.el.before(slot);
      this.onAnswered(slot);
    }
    return this.close(key);
  }

  /** Disconnected: prompts stay visible but are marked stale until the server re-sends them. */
  markAllStale() {
    for (const item of this.items.values()) { item.stale = true; item.el.classList.add('a2ui-stale'); }
  }

  dropStale() {
    for (const [key, item] of [...this.items]) if (item.stale) this.close(key);
  }

  clear() {
    for (const key of [...this.items.keys()]) this.close(key);
  }

  _unstale(key) {
    const item = this.items.get(key);
    if (item) { item.stale = false; item.el.classList.remove('a2ui-stale'); }
    return item;
  }

  // ---- ui.request_input ----------------------------------------------------------------------
  requestInput(params) {
    const requestId = params.request_id;
    if (!requestId) return;
    const key = `req:${requestId}`;
    if (this._unstale(key)) return; // re-sent on resume: keep what the user typed
    const rules = isObject(params.validation) ? params.validation : {};
    const type = ['text', 'select', 'number', 'date', 'file'].includes(params.input_type) ? params.input_type : 'text';
    const id = uid('input');
    const labelId = `${id}-label`;
    const err = h('p', { class: 'a2ui-field-error', id: `${id}-error`, hidden: true });
    const hints = [];
    if (rules.required) hints.push('Required.');
    if (rules.min !== undefined && rules.min !== null) hints.push(type === 'file' ? `At least ${rules.min} bytes.` : type === 'text' ? `At least ${rules.min} characters.` : `Minimum ${rules.min}.`);
    if (rules.max !== undefined && rules.max !== null) hints.push(type === 'file' ? `At most ${rules.max} bytes.` : type === 'text' ? `At most ${rules.max} characters.` : `Maximum ${rules.max}.`);
    if (rules.pattern && type === 'text') hints.push(`Format: ${rules.pattern}`);
    let control;
    if (type === 'file') {
      control = h('input', { type: 'file', id, name: 'value', required: Boolean(rules.required), accept: Array.isArray(params.options) ? params.options.map(text).join(',') : null });
    } else {
      const field = { name: 'value', type, required: Boolean(rules.required), options: params.options, pattern: rules.pattern };
      if (type === 'text') { field.min_length = rules.min; field.max_length = rules.max; } else { field.min = rules.min; field.max = rules.max; }
      control = fieldControl(field, id);
    }
    control.setAttribute('aria-describedby', `${id}-hints ${id}-error`);
    const validate = wireValidation(control, err, rules);
    const submit = h('button', { type: 'submit', class: 'a2ui-btn a2ui-btn-primary' }, 'Send');
    const form = h('form', { method: 'dialog', novalidate: true },
      h('label', { for: id, id: labelId, class: 'a2ui-prompt-label' }, text(params.prompt || 'Input requested')),
      control,
      h('p', { class: 'a2ui-help', id: `${id}-hints` }, hints.join(' ')),
      err,
      h('div', { class: 'a2ui-actions' }, submit));
    const el = dialog('input', labelId);
    el.append(form);
    const fileError = (msg) => { err.textContent = msg; err.hidden = false; control.setAttribute('aria-invalid', 'true'); control.focus(); };
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (!validate()) { control.focus(); return; }
      let value;
      if (type === 'file') {
        const file = control.files?.[0];
        if (!file) {
          if (rules.required) return fileError('Choose a file.');
          value = null;
        } else {
          const max = Number.isFinite(Number(rules.max)) && rules.max !== null ? Math.min(Number(rules.max), MAX_FILE_BYTES) : MAX_FILE_BYTES;
          if (file.size > max) return fileError(`The file is too large (${file.size} bytes; at most ${max}).`);
          if (rules.min && file.size < Number(rules.min)) return fileError(`The file is too small (at least ${rules.min} bytes).`);
          submit.disabled = true;
          try {
            value = { name: file.name, type: file.type || 'application/octet-stream', size: file.size, data: await readAsDataUrl(file) };
          } catch {
            submit.disabled = false;
            return fileError('The file could not be read.');
          }
        }
      } else if (type === 'number') {
        value = control.value === '' ? null : Number(control.value);
      } else {
        value = control.value;
      }
      submit.disabled = false;
      if (this.send('user.respond', { request_id: requestId, value })) this.answered(key);
      else fileError('Not connected: your answer was not sent. Try again when the connection is back.');
    });
    this.open(key, el, 'input');
  }

  // ---- ui.confirm ----------------------------------------------------------------------------
  confirm(params) {
    const requestId = params.request_id;
    if (!requestId) return;
    const key = `req:${requestId}`;
    const timeout = Number.isFinite(Number(params.timeout_seconds)) && params.timeout_seconds !== null ? Math.max(0, Number(params.timeout_seconds)) : 30;
    const existing = this._unstale(key);
    if (existing && existing.kind === 'confirm') { existing.restart?.(timeout); return; }
    const severity = ['info', 'warning', 'critical'].includes(params.severity) ? params.severity : 'info';
    const id = uid('confirm');
    const countdown = h('span', { class: 'a2ui-countdown-text' });
    const meter = h('progress', { class: 'a2ui-countdown-bar', max: String(Math.max(timeout, 1)), value: String(timeout), 'aria-hidden': 'true' });
    const reason = h('input', { type: 'text', id: `${id}-reason`, maxlength: '500', autocomplete: 'off' });
    // Focus goes to the primary action (Reject when critical), not the optional Reason field: on a
    // phone focusing a text field opens the keyboard over the question.
    const approve = h('button', { type: 'button', class: `a2ui-btn ${severity === 'critical' ? 'a2ui-btn-danger' : 'a2ui-btn-primary'}`, 'data-a2ui-autofocus': severity !== 'critical' ? '' : null }, 'Approve');
    const reject = h('button', { type: 'button', class: 'a2ui-btn', 'data-a2ui-autofocus': severity === 'critical' ? '' : null }, 'Reject');
    const el = dialog('confirm', `${id}-title`, `a2ui-severity-${severity}`);
    el.setAttribute('aria-describedby', `${id}-desc`);
    if (severity === 'critical') el.setAttribute('role', 'alertdialog');
    el.append(
      h('h2', { id: `${id}-title`, class: 'a2ui-prompt-title' },
        h('span', { class: 'a2ui-severity-badge' }, severity === 'info' ? 'Confirm' : severity === 'warning' ? 'Warning' : 'Critical'),
        ' ', text(params.title || 'Confirm')),
      h('p', { id: `${id}-desc` }, text(params.description || '')),
      h('div', { class: 'a2ui-field' }, h('label', { for: `${id}-reason` }, 'Reason (optional)'), reason),
      h('div', { class: 'a2ui-countdown' }, meter, countdown),
      h('div', { class: 'a2ui-actions' }, approve, reject));
    const answer = (approved) => {
      const params2 = { request_id: requestId, approved };
      const why = reason.value.trim();
      if (why) params2.reason = why;
      if (this.send('user.approve', params2)) this.answered(key);
      else this.toast({ level: 'error', title: 'Not connected', message: 'Your answer was not sent.' });
    };
    approve.addEventListener('click', () => answer(true));
    reject.addEventListener('click', () => answer(false));
    el.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { ev.preventDefault(); answer(false); } });
    const item = this.open(key, el, 'confirm');
    let deadline = 0;
    const tick = () => {
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      countdown.textContent = `Rejects automatically in ${left} s`;
      meter.value = left;
      if (left <= 0) {
        // The server times the request out authoritatively; here the prompt only closes.
        this.close(key);
        this.toast({ level: 'warning', title: 'Confirmation timed out', message: `${text(params.title || 'Request')}: rejected automatically.` });
      }
    };
    item.restart = (seconds) => {
      clearInterval(item.timer);
      deadline = Date.now() + seconds * 1000;
      meter.max = Math.max(seconds, Number(meter.max) || 1);
      tick();
      if (this.items.get(key) === item) item.timer = setInterval(tick, 250);
    };
    item.restart(timeout);
  }

  // ---- a2ui.consent_required -----------------------------------------------------------------
  consent(params) {
    const types = Array.isArray(params.consent_types) ? params.consent_types : [];
    for (const entry of types) {
      const ct = isObject(entry) ? entry : { type: String(entry) };
      if (!ct.type) continue;
      const key = `consent:${ct.type}`;
      if (this._unstale(key)) continue;
      const id = uid('consent');
      const el = dialog('consent', `${id}-title`);
      const answer = (granted) => {
        if (this.send('user.consent', { consent_type: ct.type, granted })) this.close(key);
        else this.toast({ level: 'error', title: 'Not connected', message: 'Your answer was not sent.' });
      };
      el.append(
        h('h2', { id: `${id}-title`, class: 'a2ui-prompt-title' }, 'Your consent is needed'),
        h('p', {}, text(ct.description || `The agent asks for consent: ${ct.type}.`)),
        h('p', { class: 'a2ui-help' }, `Consent type: ${text(ct.type)}`),
        h('div', { class: 'a2ui-actions' },
          h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-primary', on: { click: () => answer(true) } }, 'Allow'),
          h('button', { type: 'button', class: 'a2ui-btn', on: { click: () => answer(false) } }, 'Decline')));
      this.open(key, el, 'consent');
    }
  }
}

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
