// Prompts: ui.request_input, ui.confirm and a2ui.consent_required as non-modal <dialog>s in the
// prompt stack at the top of the main region. Focus moves into each new prompt.
import { fieldControl, wireValidation } from './components.js';
import { pausedNote } from './consent.js';
import { h, isObject, text, uid } from './dom.js';
import { errorSentence } from './errors.js';
import { gettext as _, interpolate } from './i18n.js';

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
  /**
   * hooks: send(m, p) -> bool (a notification), request(m, p) -> Promise (a request), toast,
   * onChange(), onAnswered(slot), onConsentNeeded(types), showConsents(), consentAnswer(type, granted).
   * Answers are requests: a prompt closes once the server took the answer, and stays open,
   * with the reason in words, when it did not (e.g. a consent withdrawn meanwhile).
   */
  constructor(container, hooks) {
    this.container = container;
    this.hooks = hooks;
    this.send = hooks.send;
    this.request = hooks.request || ((m, p) => (hooks.send(m, p) ? Promise.resolve({}) : Promise.reject({ notConnected: true })));
    this.toast = hooks.toast;
    this.onChange = hooks.onChange || (() => {});
    this.onAnswered = hooks.onAnswered || (() => {});
    this.items = new Map(); // key -> {el, kind, timer, stale}
    this.paused = false;
  }

  open(key, el, kind) {
    this.close(key);
    this.items.set(key, { el, kind, timer: null, stale: false });
    this.container.prepend(el);
    el.show();
    if (this.paused) this.pause(this.items.get(key), true);
    focusInto(el);
    this.onChange();
    return this.items.get(key);
  }

  /** While a consent the assistant needs is withdrawn, questions wait: disabled, with a note. */
  setPaused(paused) {
    this.paused = paused;
    for (const item of this.items.values()) this.pause(item, paused);
  }

  pause(item, paused) {
    if (item.kind === 'consent') return;
    const el = item.el;
    el.querySelector(':scope .a2ui-paused-note')?.remove();
    for (const c of el.querySelectorAll('input, select, textarea, button')) {
      if (paused && !c.disabled) { c.disabled = true; c.dataset.a2uiPaused = '1'; }
      if (!paused && c.dataset.a2uiPaused) { c.disabled = false; delete c.dataset.a2uiPaused; }
    }
    el.classList.toggle('a2ui-paused', paused);
    el.dataset.paused = paused ? '1' : '0';
    if (paused) {
      const note = pausedNote(() => this.hooks.showConsents?.());
      const form = el.querySelector(':scope > form');
      (form || el).prepend(note);
    }
  }

  /** Send an answer; true once the server took it. Otherwise the reason is shown in `where`. */
  async answer(method, params, where) {
    try {
      await this.request(method, params);
      return true;
    } catch (err) {
      if (isObject(err) && err.code === -32010 && Array.isArray(err.data?.consent_types)) {
        this.hooks.onConsentNeeded?.(err.data.consent_types);
      }
      if (where) { where.textContent = errorSentence(err); where.hidden = false; }
      return false;
    }
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
    if (rules.required) hints.push(_('Required.'));
    const n = (value) => ({ n: value });
    if (rules.min !== undefined && rules.min !== null) hints.push(interpolate(type === 'file' ? _('At least %(n)s bytes.') : type === 'text' ? _('At least %(n)s characters.') : _('Minimum %(n)s.'), n(rules.min)));
    if (rules.max !== undefined && rules.max !== null) hints.push(interpolate(type === 'file' ? _('At most %(n)s bytes.') : type === 'text' ? _('At most %(n)s characters.') : _('Maximum %(n)s.'), n(rules.max)));
    if (rules.pattern && type === 'text') hints.push(interpolate(_('Format: %(pattern)s'), { pattern: rules.pattern }));
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
    const submit = h('button', { type: 'submit', class: 'a2ui-btn a2ui-btn-primary' }, _('Send'));
    const form = h('form', { method: 'dialog', novalidate: true },
      h('label', { for: id, id: labelId, class: 'a2ui-prompt-label' }, text(params.prompt || _('The assistant asks for an answer'))),
      control,
      h('p', { class: 'a2ui-help', id: `${id}-hints` }, hints.join(' ')),
      err,
      h('div', { class: 'a2ui-actions' }, submit));
    const el = dialog('input', labelId);
    el.append(form);
    const fileError = (msg) => { err.textContent = msg; err.hidden = false; control.setAttribute('aria-invalid', 'true'); control.focus(); };
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (this.paused || submit.disabled) return;
      if (!validate()) { control.focus(); return; }
      let value;
      if (type === 'file') {
        const file = control.files?.[0];
        if (!file) {
          if (rules.required) return fileError(_('Choose a file.'));
          value = null;
        } else {
          const max = Number.isFinite(Number(rules.max)) && rules.max !== null ? Math.min(Number(rules.max), MAX_FILE_BYTES) : MAX_FILE_BYTES;
          if (file.size > max) return fileError(interpolate(_('The file is too large (%(size)s bytes; at most %(max)s).'), { size: file.size, max }));
          if (rules.min && file.size < Number(rules.min)) return fileError(interpolate(_('The file is too small (at least %(min)s bytes).'), { min: rules.min }));
          submit.disabled = true;
          try {
            value = { name: file.name, type: file.type || 'application/octet-stream', size: file.size, data: await readAsDataUrl(file) };
          } catch {
            submit.disabled = false;
            return fileError(_('The file could not be read.'));
          }
        }
      } else if (type === 'number') {
        value = control.value === '' ? null : Number(control.value);
      } else {
        value = control.value;
      }
      submit.disabled = true;
      err.hidden = true;
      const sent = await this.answer('user.respond', { request_id: requestId, value }, err);
      if (sent) { this.answered(key); return; }
      submit.disabled = this.paused;
      control.setAttribute('aria-invalid', 'false');
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
    const approve = h('button', { type: 'button', class: `a2ui-btn ${severity === 'critical' ? 'a2ui-btn-danger' : 'a2ui-btn-primary'}`, 'data-a2ui-autofocus': severity !== 'critical' ? '' : null }, _('Approve'));
    const reject = h('button', { type: 'button', class: 'a2ui-btn', 'data-a2ui-autofocus': severity === 'critical' ? '' : null }, _('Reject'));
    const problem = h('p', { class: 'a2ui-field-error', role: 'alert', hidden: true });
    const el = dialog('confirm', `${id}-title`, `a2ui-severity-${severity}`);
    el.setAttribute('aria-describedby', `${id}-desc`);
    if (severity === 'critical') el.setAttribute('role', 'alertdialog');
    el.append(
      h('h2', { id: `${id}-title`, class: 'a2ui-prompt-title' },
        h('span', { class: 'a2ui-severity-badge' }, severity === 'info' ? _('Confirm') : severity === 'warning' ? _('Warning') : _('Critical')),
        ' ', text(params.title || _('Confirm'))),
      h('p', { id: `${id}-desc` }, text(params.description || '')),
      h('div', { class: 'a2ui-field' }, h('label', { for: `${id}-reason` }, _('Reason (optional)')), reason),
      h('div', { class: 'a2ui-countdown' }, meter, countdown),
      problem,
      h('div', { class: 'a2ui-actions' }, approve, reject));
    let sending = false;
    const answer = async (approved) => {
      if (this.paused || sending) return;
      const params2 = { request_id: requestId, approved };
      const why = reason.value.trim();
      if (why) params2.reason = why;
      sending = true;
      problem.hidden = true;
      const sent = await this.answer('user.approve', params2, problem);
      sending = false;
      if (sent) this.answered(key);
    };
    approve.addEventListener('click', () => answer(true));
    reject.addEventListener('click', () => answer(false));
    el.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { ev.preventDefault(); answer(false); } });
    const item = this.open(key, el, 'confirm');
    let deadline = 0;
    const tick = () => {
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      countdown.textContent = interpolate(_('Rejects automatically in %(seconds)s s'), { seconds: left });
      meter.value = left;
      if (left <= 0) {
        // The server times the request out authoritatively; here the prompt only closes.
        this.close(key);
        this.toast({ level: 'warning', title: _('Time is up'), message: interpolate(_('%(title)s: rejected automatically.'), { title: text(params.title || _('The question')) }) });
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
      const problem = h('p', { class: 'a2ui-field-error', role: 'alert', hidden: true });
      const answer = async (granted) => {
        problem.hidden = true;
        try {
          const result = await this.request('user.consent', { consent_type: ct.type, granted });
          this.hooks.onConsentAnswer?.(result);
          this.close(key);
        } catch (err) {
          problem.textContent = errorSentence(err);
          problem.hidden = false;
        }
      };
      el.append(
        h('h2', { id: `${id}-title`, class: 'a2ui-prompt-title' }, _('Your consent is needed')),
        h('p', {}, text(ct.description || interpolate(_('The assistant asks for your consent: %(type)s.'), { type: ct.type }))),
        h('p', { class: 'a2ui-help' }, _('You can withdraw it at any time under “Your consent” at the top of the page.')),
        problem,
        h('div', { class: 'a2ui-actions' },
          h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-primary', on: { click: () => answer(true) } }, _('Allow')),
          h('button', { type: 'button', class: 'a2ui-btn', on: { click: () => answer(false) } }, _('Decline'))));
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
