// The person's consents, in the page: "Your consent" in the bar lists each consent the site
// asks for (A2UI['REQUIRED_CONSENTS'], with its description), whether it is given, and a button
// to withdraw it or give it again (`user.consent`). The state comes from the server: a2ui.init's
// `consents`, the answer to each `user.consent`, and `a2ui.consent_changed` when it changes
// anywhere else (another tab, the REST API, an operator). While one is missing, the open
// questions are paused (App.setPaused) until it is given again.
import { errorSentence } from './errors.js';
import { gettext as _, interpolate } from './i18n.js';
import { h, isObject, plain } from './dom.js';

export class Consents {
  /** `el`: the bar's `[data-a2ui-consent]` (a <details>); hooks: request(m, p), onChange(missing). */
  constructor(el, hooks) {
    this.el = el;
    this.hooks = hooks;
    this.items = []; // [{type, description, granted}]
    if (!el) return;
    this.list = el.querySelector('[data-a2ui-consent-list]');
    this.summary = el.querySelector('summary');
    this.count = el.querySelector('[data-a2ui-consent-count]');
    this.status = el.querySelector('[data-a2ui-consent-status]');
    el.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape' && el.open) { el.open = false; this.summary.focus(); }
    });
    // A popover: a click elsewhere closes it.
    el.ownerDocument.addEventListener('click', (ev) => {
      if (el.open && !el.contains(ev.target)) el.open = false;
    });
  }

  missing() {
    return this.items.filter((c) => !c.granted).map((c) => c.type);
  }

  /** The whole state from the server (a list of {type, description, granted}). */
  set(list) {
    if (!Array.isArray(list)) return;
    this.items = list.filter((c) => isObject(c) && typeof c.type === 'string')
      .map((c) => ({ type: c.type, description: plain(c.description || ''), granted: Boolean(c.granted) }));
    this.draw();
    this.hooks.onChange(this.missing());
  }

  /** Missing types the server named (a2ui.consent_required, or -32010's data). */
  markMissing(types) {
    let changed = false;
    for (const type of types) {
      const item = this.items.find((c) => c.type === type);
      if (item && item.granted) { item.granted = false; changed = true; }
    }
    if (changed) { this.draw(); this.hooks.onChange(this.missing()); }
  }

  /** Open the list and put focus on the first consent's button (a paused question's link). */
  reveal() {
    if (!this.el) return;
    // After the click that asked for it has finished (a click elsewhere closes the list).
    setTimeout(() => {
      this.el.hidden = false;
      this.el.open = true;
      (this.list.querySelector('button') || this.summary).focus();
    });
  }

  async choose(type, granted, button) {
    button.disabled = true;
    this.status.textContent = '';
    try {
      const result = await this.hooks.request('user.consent', { consent_type: type, granted });
      if (Array.isArray(result?.consents)) this.set(result.consents);
      else {
        const item = this.items.find((c) => c.type === type);
        if (item) item.granted = granted;
        this.draw();
        this.hooks.onChange(this.missing());
      }
      this.status.textContent = granted ? _('Consent given.') : _('Consent withdrawn.');
      this.list.querySelector(`[data-consent-type="${CSS.escape(type)}"] button`)?.focus();
    } catch (err) {
      this.status.textContent = errorSentence(err);
      button.disabled = false;
    }
  }

  draw() {
    if (!this.el) return;
    // A redraw keeps the focus on the same consent's button (the server's notice of a change
    // the person just made arrives after its answer).
    const focused = this.list.contains(document.activeElement)
      ? document.activeElement.closest('[data-consent-type]')?.dataset.consentType : null;
    this.el.hidden = this.items.length === 0;
    const missing = this.missing().length;
    this.el.dataset.missing = String(missing);
    this.count.textContent = missing ? interpolate(_('(%(count)s needed)'), { count: missing }) : '';
    this.list.replaceChildren(...this.items.map((c) => {
      const button = h('button', { type: 'button', class: `a2ui-btn a2ui-btn-small${c.granted ? '' : ' a2ui-btn-primary'}` },
        c.granted ? _('Withdraw') : _('Give consent'));
      button.addEventListener('click', () => this.choose(c.type, !c.granted, button));
      return h('li', { class: 'a2ui-consent-item', dataset: { consentType: c.type, granted: c.granted ? '1' : '0' } },
        h('p', { class: 'a2ui-consent-text' }, c.description || c.type),
        h('p', { class: 'a2ui-consent-state' }, c.granted ? _('Given') : _('Not given: the assistant’s questions wait')),
        button);
    }));
    if (focused) this.list.querySelector(`[data-consent-type="${CSS.escape(focused)}"] button`)?.focus();
  }
}

/** The note a paused question (or form) shows, with a way to the consents. */
export function pausedNote(showConsents) {
  const button = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small', dataset: { a2uiKeep: '' } }, _('Review your consent'));
  button.addEventListener('click', showConsents);
  return h('div', { class: 'a2ui-paused-note', role: 'status' },
    h('p', {}, _('Paused: you withdrew a consent this assistant needs. Give it again to answer.')), button);
}
