// Renderers for the nine seed-000 component types. Each returns a DOM node built from the
// component's data; every server string goes through text() and is inserted as text.
import { renderChart } from './chart.js';
import { h, isObject, safeUrl, text, uid } from './dom.js';
import { errorSentence } from './errors.js';
import { gettext as _, interpolate } from './i18n.js';
import { highlightBlocks, highlightInto } from './highlight.js';
import { renderMarkdown } from './markdown.js';

export const COMPONENT_TYPES = ['card', 'table', 'form', 'chart', 'markdown', 'code', 'image', 'alert', 'steps'];

function heading(title, level = 2) {
  return title ? h(`h${level}`, { class: 'a2ui-heading' }, text(title)) : null;
}

function cellText(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return text(value);
}

// ---- card ---------------------------------------------------------------------------------
function card(data, ctx) {
  const sections = Array.isArray(data.sections) ? data.sections : [];
  const actions = Array.isArray(data.actions) ? data.actions : [];
  return h('div', { class: 'a2ui-card' },
    heading(data.title),
    data.description ? h('p', { class: 'a2ui-card-description' }, text(data.description)) : null,
    isObject(data.content) || typeof data.content === 'string'
      ? h('div', { class: 'a2ui-card-content' }, typeof data.content === 'string' ? text(data.content) : null)
      : null,
    sections.length ? h('dl', { class: 'a2ui-card-sections' }, sections.map((s) => h('div', { class: 'a2ui-card-section' },
      h('dt', {}, text(s?.label ?? '')), h('dd', {}, cellText(s?.value))))) : null,
    actions.length ? h('div', { class: 'a2ui-actions' }, actions.map((a) => cardAction(a, ctx))) : null,
  );
}

function cardAction(action, ctx) {
  const label = text(action?.label || action?.action || _('Open'));
  const url = action?.action === 'navigate' || action?.url ? safeUrl(action.url) : null;
  if (!url) return h('button', { type: 'button', class: 'a2ui-btn', disabled: true, title: _('Unavailable') }, label);
  return h('button', {
    type: 'button', class: 'a2ui-btn',
    on: { click: () => ctx.navigate(url, Boolean(action.new_tab)) },
  }, label);
}

// ---- table --------------------------------------------------------------------------------
function table(data) {
  const rows = Array.isArray(data.rows) ? data.rows.slice() : [];
  let headers = Array.isArray(data.headers) ? data.headers : [];
  headers = headers.map((hd) => (typeof hd === 'string' ? { key: hd, label: hd } : hd || {}));
  if (!headers.length && rows.length && isObject(rows[0])) headers = Object.keys(rows[0]).map((k) => ({ key: k, label: k }));
  const state = { key: null, dir: 'none' };
  const tbody = h('tbody');
  const cell = (row, hd, idx) => (Array.isArray(row) ? row[idx] : row?.[hd.key]);
  const fill = () => {
    let ordered = rows;
    if (state.key !== null) {
      const idx = headers.findIndex((hd) => hd.key === state.key);
      ordered = rows.slice().sort((a, b) => {
        const x = cell(a, headers[idx], idx);
        const y = cell(b, headers[idx], idx);
        const nx = Number(x);
        const ny = Number(y);
        const cmp = x !== '' && y !== '' && Number.isFinite(nx) && Number.isFinite(ny)
          ? nx - ny
          : cellText(x).localeCompare(cellText(y), undefined, { numeric: true, sensitivity: 'base' });
        return state.dir === 'descending' ? -cmp : cmp;
      });
    }
    tbody.replaceChildren(...ordered.map((row) => h('tr', {}, headers.map((hd, i) => h('td', {}, cellText(cell(row, hd, i)))))));
    if (!ordered.length) tbody.append(h('tr', {}, h('td', { colspan: Math.max(headers.length, 1), class: 'a2ui-muted' }, _('No rows'))));
  };
  const ths = headers.map((hd) => {
    const label = text(hd.label ?? hd.key ?? '');
    if (!hd.sortable) return h('th', { scope: 'col' }, label);
    const th = h('th', { scope: 'col', 'aria-sort': 'none', class: 'a2ui-sortable' });
    const btn = h('button', { type: 'button', class: 'a2ui-sort-btn' }, label, h('span', { class: 'a2ui-sort-icon', 'aria-hidden': 'true' }));
    btn.addEventListener('click', () => {
      if (state.key === hd.key) state.dir = state.dir === 'ascending' ? 'descending' : 'ascending';
      else { state.key = hd.key; state.dir = 'ascending'; }
      for (const other of ths) if (other.hasAttribute('aria-sort')) other.setAttribute('aria-sort', 'none');
      th.setAttribute('aria-sort', state.dir);
      fill();
    });
    th.append(btn);
    return th;
  });
  fill();
  return h('div', { class: 'a2ui-table-wrap', tabindex: '0', role: 'region', 'aria-label': text(data.title || _('Table')) },
    h('table', { class: 'a2ui-table' },
      data.title ? h('caption', {}, text(data.title)) : null,
      h('thead', {}, h('tr', {}, ths)), tbody));
}

// ---- form ---------------------------------------------------------------------------------
export function fieldControl(field, id) {
  const type = field.type || 'text';
  const attrs = { id, name: field.name, required: Boolean(field.required) };
  let control;
  if (type === 'select') {
    const options = Array.isArray(field.options) ? field.options : [];
    control = h('select', attrs,
      field.required ? h('option', { value: '' }, _('Choose…')) : h('option', { value: '' }, '—'),
      options.map((opt) => {
        const value = isObject(opt) ? opt.value : opt;
        const label = isObject(opt) ? (opt.label ?? opt.value) : opt;
        return h('option', { value: text(value) }, text(label));
      }));
  } else if (type === 'textarea') {
    control = h('textarea', { ...attrs, rows: field.rows || 4, minlength: field.min_length, maxlength: field.max_length, placeholder: field.placeholder ? text(field.placeholder) : null });
  } else if (type === 'checkbox') {
    control = h('input', { ...attrs, type: 'checkbox' });
  } else {
    const inputType = ['text', 'number', 'date', 'email'].includes(type) ? type : 'text';
    control = h('input', {
      ...attrs, type: inputType,
      min: field.min ?? null, max: field.max ?? null,
      step: inputType === 'number' ? (field.step ?? 'any') : null,
      pattern: field.pattern && inputType !== 'number' ? field.pattern : null,
      minlength: field.min_length ?? null, maxlength: field.max_length ?? null,
      placeholder: field.placeholder ? text(field.placeholder) : null,
    });
  }
  const dflt = field.default ?? field.value;
  if (dflt !== undefined && dflt !== null) {
    if (type === 'checkbox') control.checked = Boolean(dflt);
    else control.value = text(dflt);
    control.defaultValue = control.value;
    if (type === 'checkbox') control.defaultChecked = control.checked;
  }
  if (field.pattern && control.pattern !== undefined) {
    try { new RegExp(field.pattern, 'v'); } catch { control.removeAttribute('pattern'); }
  }
  return control;
}

/** Inline validation message for a control, in plain words; '' when valid. */
export function validationMessage(control, rules = {}) {
  const v = control.validity;
  if (!v || v.valid) return '';
  if (v.valueMissing) return _('This field is required.');
  if (v.rangeUnderflow) return interpolate(_('Must be at least %(n)s.'), { n: control.min });
  if (v.rangeOverflow) return interpolate(_('Must be at most %(n)s.'), { n: control.max });
  if (v.patternMismatch) return rules.pattern_message ? text(rules.pattern_message) : interpolate(_('Must match the pattern %(pattern)s.'), { pattern: control.pattern });
  if (v.typeMismatch) return control.type === 'email' ? _('Enter a valid email address.') : _('Enter a valid value.');
  if (v.tooShort) return interpolate(_('Must be at least %(n)s characters.'), { n: control.minLength });
  if (v.tooLong) return interpolate(_('Must be at most %(n)s characters.'), { n: control.maxLength });
  if (v.badInput) return _('Enter a valid value.');
  if (v.stepMismatch) return _('Enter a valid number.');
  return control.validationMessage || _('Enter a valid value.');
}

export function wireValidation(control, errorEl, rules) {
  const update = () => {
    const msg = validationMessage(control, rules);
    errorEl.textContent = msg;
    errorEl.hidden = !msg;
    control.setAttribute('aria-invalid', msg ? 'true' : 'false');
    return !msg;
  };
  control.addEventListener('blur', (ev) => {
    // Focus moving to a button of the same form (submit, reset): that button's handler
    // validates; showing the message now would shift the layout under the pointer.
    const next = ev.relatedTarget;
    if (next && next.tagName === 'BUTTON' && control.form && next.form === control.form) return;
    if (control.value !== '' || control.dataset.touched) { control.dataset.touched = '1'; update(); }
  });
  control.addEventListener('input', () => { if (control.dataset.touched) update(); });
  control.addEventListener('invalid', (ev) => { ev.preventDefault(); control.dataset.touched = '1'; update(); });
  return update;
}

function form(data, ctx) {
  const fields = Array.isArray(data.fields) ? data.fields : [];
  const formId = uid('form');
  const validators = [];
  const status = h('p', { class: 'a2ui-form-status', role: 'status' });
  const controls = [];
  const rows = fields.filter((f) => f && f.name).map((field) => {
    const id = `${formId}-${String(field.name).replace(/[^\w-]/g, '_')}`;
    const control = fieldControl(field, id);
    const err = h('p', { class: 'a2ui-field-error', id: `${id}-error`, hidden: true });
    control.setAttribute('aria-describedby', `${id}-error`);
    validators.push(wireValidation(control, err, field));
    controls.push([field, control]);
    const label = h('label', { for: id }, text(field.label || field.name), field.required ? h('span', { class: 'a2ui-required', 'aria-hidden': 'true' }, ' *') : null);
    return h('div', { class: `a2ui-field a2ui-field-${field.type || 'text'}` },
      field.type === 'checkbox' ? [control, label] : [label, control],
      field.help ? h('p', { class: 'a2ui-help' }, text(field.help)) : null, err);
  });
  const submit = h('button', { type: 'submit', class: 'a2ui-btn a2ui-btn-primary' }, text(data.submit_label || _('Submit')));
  const el = h('form', { class: 'a2ui-form', novalidate: true, 'aria-labelledby': data.title ? `${formId}-title` : null },
    data.title ? h('h2', { class: 'a2ui-heading', id: `${formId}-title` }, text(data.title)) : null,
    data.description ? h('p', {}, text(data.description)) : null,
    rows,
    h('div', { class: 'a2ui-actions' }, submit,
      h('button', { type: 'reset', class: 'a2ui-btn' }, text(data.cancel_label || _('Reset')))),
    status);
  el.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const ok = validators.map((v) => v()).every(Boolean);
    if (!ok) {
      const bad = controls.find(([, c]) => c.getAttribute('aria-invalid') === 'true');
      bad?.[1].focus();
      status.textContent = _('Please fix the highlighted fields.');
      return;
    }
    const value = {};
    for (const [field, control] of controls) {
      if (field.type === 'checkbox') value[field.name] = control.checked;
      else if (field.type === 'number') value[field.name] = control.value === '' ? null : Number(control.value);
      else value[field.name] = control.value;
    }
    if (submit.disabled) return;
    submit.disabled = true;
    status.textContent = _('Sending…');
    ctx.respond(value).then(() => {
      status.textContent = _('Sent.');
      ctx.answered?.();
    }, (err) => {
      status.textContent = errorSentence(err);
    }).finally(() => { if (!submit.dataset.a2uiPaused) submit.disabled = false; });
  });
  el.addEventListener('reset', () => {
    status.textContent = '';
    setTimeout(() => controls.forEach(([, c]) => {
      delete c.dataset.touched;
      c.setAttribute('aria-invalid', 'false');
      const err = document.getElementById(`${c.id}-error`);
      if (err) { err.textContent = ''; err.hidden = true; }
    }));
  });
  return el;
}

// ---- markdown / code / image / alert / steps / chart ---------------------------------------
function markdown(data) {
  const el = h('div', { class: 'a2ui-markdown' }, heading(data.title),
    renderMarkdown(data.content ?? data.text ?? '', () => highlightBlocks(el)));
  highlightBlocks(el);
  return el;
}

function code(data, ctx) {
  const source = text(data.code ?? data.content ?? '');
  const language = text(data.language || '');
  const copy = h('button', { type: 'button', class: 'a2ui-btn a2ui-btn-small a2ui-copy', 'aria-label': interpolate(_('Copy %(what)s to clipboard'), { what: language || _('code') }) }, _('Copy'));
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(source);
      copy.textContent = _('Copied');
      ctx.toast({ level: 'success', title: _('Copied to clipboard'), duration_ms: 2000 });
    } catch {
      copy.textContent = _('Copy failed');
    }
    setTimeout(() => { copy.textContent = _('Copy'); }, 2000);
  });
  const el = h('code', { class: language ? `language-${language}` : null }, source);
  highlightInto(el, source, language);
  return h('div', { class: 'a2ui-code' },
    h('div', { class: 'a2ui-code-head' },
      h('span', { class: 'a2ui-code-title' }, text(data.title || language || _('Code'))),
      language && data.title ? h('span', { class: 'a2ui-code-lang' }, language) : null, copy),
    h('pre', { tabindex: '0' }, el));
}

function image(data) {
  const src = safeUrl(data.url ?? data.src);
  const alt = text(data.alt || '');
  const img = src
    ? h('img', {
      src, alt, loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer',
      width: Number.isFinite(Number(data.width)) && data.width ? Number(data.width) : null,
      height: Number.isFinite(Number(data.height)) && data.height ? Number(data.height) : null,
    })
    : h('p', { class: 'a2ui-muted' }, alt ? interpolate(_('Image not shown (its address is not allowed): %(alt)s'), { alt }) : _('Image not shown (its address is not allowed)'));
  return h('figure', { class: 'a2ui-image' }, heading(data.title), img, data.caption ? h('figcaption', {}, text(data.caption)) : null);
}

function alert(data, ctx) {
  const severity = ['info', 'success', 'warning', 'error'].includes(data.severity) ? data.severity : 'info';
  const el = h('div', { class: `a2ui-alert a2ui-alert-${severity}`, role: severity === 'error' || severity === 'warning' ? 'alert' : 'status' },
    h('span', { class: 'a2ui-alert-icon', 'aria-hidden': 'true' }, { info: 'ℹ', success: '✓', warning: '!', error: '✕' }[severity]),
    h('div', { class: 'a2ui-alert-body' },
      data.title ? h('strong', { class: 'a2ui-alert-title' }, text(data.title)) : null,
      data.message ? h('p', {}, text(data.message)) : null));
  if (data.dismissible) {
    el.append(h('button', { type: 'button', class: 'a2ui-btn-close', 'aria-label': _('Dismiss alert'), on: { click: () => ctx.remove() } }, '×'));
  }
  return el;
}

function steps(data) {
  const list = Array.isArray(data.steps) ? data.steps : [];
  const current = Number.isInteger(data.current_step) ? data.current_step : list.findIndex((s) => s?.status === 'active');
  const labels = { completed: _('completed'), active: _('in progress'), pending: _('pending'), failed: _('failed'), error: _('failed'), skipped: _('skipped') };
  return h('div', { class: 'a2ui-steps' }, heading(data.title),
    h('ol', {}, list.map((step, i) => {
      const s = typeof step === 'string' ? { label: step } : step || {};
      const status = s.status || (i < current ? 'completed' : i === current ? 'active' : 'pending');
      return h('li', { class: `a2ui-step a2ui-step-${status}`, 'aria-current': i === current ? 'step' : null },
        h('span', { class: 'a2ui-step-marker', 'aria-hidden': 'true' }, status === 'completed' ? '✓' : status === 'failed' || status === 'error' ? '✕' : String(i + 1)),
        h('span', { class: 'a2ui-step-label' }, text(s.label || interpolate(_('Step %(n)s'), { n: i + 1 }))),
        h('span', { class: 'a2ui-visually-hidden' }, ` (${labels[status] || text(status)})`),
        s.description ? h('span', { class: 'a2ui-step-description' }, text(s.description)) : null);
    })));
}

function chart(data) {
  return h('div', { class: 'a2ui-chart-wrap' }, data.title ? heading(data.title) : null, renderChart(data));
}

const RENDERERS = { card, table, form, chart, markdown, code, image, alert, steps };

/** Flatten seed data: {title, content: {...}} and {...} are both accepted. */
export function normalize(data) {
  if (!isObject(data)) return {};
  if (isObject(data.content)) return { ...data.content, ...Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'content')) };
  return data;
}

export function renderComponent(type, data, ctx) {
  const fn = RENDERERS[type];
  if (!fn) return h('p', { class: 'a2ui-muted' }, interpolate(_('This content cannot be shown on this page (%(type)s).'), { type: text(type) }));
  return fn(normalize(data), ctx);
}
