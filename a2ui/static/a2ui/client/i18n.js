// The client's strings in the person's language: Django's i18n. `{% a2ui_client %}` embeds the
// `djangojs` catalog of the page's language (Django's JSONCatalog shape: {catalog, formats,
// plural}) as `<script type="application/json" id="a2ui-i18n">`, which the CSP allows (no code
// runs); an English page has an empty catalog and every string stays as written. The plural
// rule is Django's C expression, evaluated here by a small parser (the CSP forbids eval).
//
//   (in a client module: gettext as _, ngettext, interpolate imported from this module)
//   _('Send'); interpolate(_('Rejects automatically in %(seconds)s s'), { seconds: 5 });
//   ngettext('%(count)s item', '%(count)s items', count)

let catalog = {};
let pluralIndex = (n) => (n === 1 ? 0 : 1);

/** Read the page's catalog (once, before the client renders; again to reload in tests). */
export function load(doc = document) {
  const el = doc.getElementById('a2ui-i18n');
  catalog = {};
  pluralIndex = (n) => (n === 1 ? 0 : 1);
  if (!el) return;
  let data;
  try { data = JSON.parse(el.textContent || '{}'); } catch { return; }
  if (data && typeof data.catalog === 'object' && data.catalog) catalog = data.catalog;
  if (data && typeof data.plural === 'string' && data.plural) {
    try {
      const rule = compilePlural(data.plural);
      pluralIndex = (n) => Number(rule(n));
    } catch (err) {
      console.warn('a2ui: plural rule not understood:', data.plural, err);
    }
  }
}

export function gettext(msgid) {
  const value = catalog[msgid];
  if (value === undefined || value === null) return msgid;
  return typeof value === 'string' ? value : value[0];
}

export function ngettext(singular, plural, count) {
  const value = catalog[singular];
  if (value === undefined || value === null) return count === 1 ? singular : plural;
  if (typeof value === 'string') return value;
  return value[pluralIndex(count)] ?? value[value.length - 1];
}

export function pgettext(context, msgid) {
  const value = gettext(`${context}\x04${msgid}`);
  return value.includes('\x04') ? msgid : value;
}

/** Python's `%(name)s` formatting, as Django's `interpolate(fmt, obj, true)`. */
export function interpolate(fmt, values) {
  return fmt.replace(/%\(([\w]+)\)s/g, (match, name) => (name in values ? String(values[name]) : match));
}

/** The language of the page (the `lang` of the client's container or the document). */
export function language(el = document.documentElement) {
  return el?.closest?.('[lang]')?.getAttribute('lang') || document.documentElement.lang || 'en';
}

// ---- the plural expression (C syntax: n, integers, ! % * / + - < <= > >= == != && || ?:) ----
const TOKEN = /\s*(\d+|n|==|!=|<=|>=|&&|\|\||[!%*/+\-<>?:()])/y;

export function compilePlural(source) {
  const tokens = [];
  TOKEN.lastIndex = 0;
  const text = source.trim().replace(/;$/, '');
  while (TOKEN.lastIndex < text.length) {
    const m = TOKEN.exec(text);
    if (!m) throw new Error(`unexpected input at ${TOKEN.lastIndex}`);
    tokens.push(m[1]);
  }
  let i = 0;
  const peek = () => tokens[i];
  const take = (t) => { if (tokens[i] !== t) throw new Error(`expected ${t}`); i += 1; };
  const BINARY = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>='], ['+', '-'], ['*', '/', '%']];
  const apply = { '||': (a, b) => +(a || b), '&&': (a, b) => +(a && b), '==': (a, b) => +(a === b), '!=': (a, b) => +(a !== b), '<': (a, b) => +(a < b), '<=': (a, b) => +(a <= b), '>': (a, b) => +(a > b), '>=': (a, b) => +(a >= b), '+': (a, b) => a + b, '-': (a, b) => a - b, '*': (a, b) => a * b, '/': (a, b) => Math.trunc(a / b), '%': (a, b) => a % b };
  const unary = () => {
    const t = peek();
    if (t === '!') { i += 1; const e = unary(); return (n) => +!e(n); }
    if (t === '-') { i += 1; const e = unary(); return (n) => -e(n); }
    if (t === '(') { i += 1; const e = ternary(); take(')'); return e; }
    if (t === 'n') { i += 1; return (n) => n; }
    if (/^\d+$/.test(t || '')) { i += 1; const v = Number(t); return () => v; }
    throw new Error(`unexpected ${t}`);
  };
  const binary = (level) => {
    if (level >= BINARY.length) return unary();
    let left = binary(level + 1);
    while (BINARY[level].includes(peek())) {
      const op = tokens[i++];
      const right = binary(level + 1);
      const l = left;
      left = (n) => apply[op](l(n), right(n));
    }
    return left;
  };
  const ternary = () => {
    const cond = binary(0);
    if (peek() !== '?') return cond;
    i += 1;
    const yes = ternary();
    take(':');
    const no = ternary();
    return (n) => (cond(n) ? yes(n) : no(n));
  };
  const expr = ternary();
  if (i !== tokens.length) throw new Error(`unexpected ${tokens[i]}`);
  return (n) => Number(expr(n));
}

if (typeof document !== 'undefined') load();
