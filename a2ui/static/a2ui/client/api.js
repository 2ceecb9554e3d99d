// The client's public API: a host project's own components, without forking the app
// (docs/client.md, "Your own components"). An ES module, mapped in the page's import map as
// `a2ui/client` (a project's module imports registerComponent, h, text... by that name), and
// the same functions on `window.a2ui` for classic scripts:
//
//   registerComponent('rating', (data, ctx) => h('p', {}, text(data.title), ' ', '★'.repeat(data.stars)));
//   registerV09Component('https://example.com/catalogs/shop.json', 'Rating',
//     (props, ctx) => h('p', { class: 'stars' }, '★'.repeat(props.stars ?? 0)));
//
// A seed-000 type must be declared on the server with its schema (A2UI['COMPONENT_TYPES']); a
// v0.9 component must be in a catalog of A2UI['CATALOGS']. A renderer returns a DOM Node (or
// null for nothing); it is called again with the new data on every update. Registering after
// the client started is fine: what is shown of that type is drawn again.
import { h, plain, safeUrl, text } from './dom.js';
import { gettext, interpolate, ngettext } from './i18n.js';

const NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const V09_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const components = new Map(); // seed-000 component type -> render(data, ctx)
const v09 = new Map(); // `${catalogId} ${name}` -> render(props, ctx)
const listeners = new Set();

function changed(change) {
  for (const fn of listeners) {
    try { fn(change); } catch (err) { console.error('a2ui: listener failed', err); }
  }
}

/**
 * Draw seed-000 components of `type` with `render(data, ctx)`: `data` is the component's data
 * as the server validated and sanitized it (strings are HTML-safe text: show them with
 * `text()`, or `h()` children after `text()`); `ctx` has `componentId`, `respond(value)` (sends
 * `user.respond` {request_id: componentId, value} to the agent; a Promise), `navigate(url,
 * newTab)`, `toast({level, title, message})` and `remove()`.
 */
export function registerComponent(type, render) {
  if (typeof type !== 'string' || !NAME.test(type)) throw new TypeError(`a2ui: a component type is lowercase letters, digits, - or _ (got ${type})`);
  if (typeof render !== 'function') throw new TypeError('a2ui: registerComponent needs a render function');
  components.set(type, render);
  changed({ kind: 'component', type });
}

/**
 * Draw the v0.9 component `name` of the catalog `catalogId` (one of A2UI['CATALOGS']) with
 * `render(props, ctx)`: `props` are the component's properties with data bindings resolved
 * (an Action property is a function that sends the action); `ctx` has `id`, `child(ref)` (a
 * DOM element showing a child component) and `surfaceId`.
 */
export function registerV09Component(catalogId, name, render) {
  if (typeof catalogId !== 'string' || !catalogId) throw new TypeError('a2ui: registerV09Component needs a catalog id');
  if (typeof name !== 'string' || !V09_NAME.test(name)) throw new TypeError(`a2ui: a v0.9 component name is a letter then letters, digits or _ (got ${name})`);
  if (typeof render !== 'function') throw new TypeError('a2ui: registerV09Component needs a render function');
  v09.set(`${catalogId} ${name}`, render);
  changed({ kind: 'v09', catalogId, name });
}

export function componentRenderer(type) {
  return components.get(type) || null;
}

export function registeredTypes() {
  return [...components.keys()];
}

export function v09Renderer(catalogId, name) {
  return v09.get(`${catalogId} ${name}`) || null;
}

/** `fn(change)` after each registration (the client draws again what it could not before). */
export function onRegistered(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export { gettext, h, interpolate, ngettext, plain, safeUrl, text };

if (typeof window !== 'undefined' && !window.a2ui) {
  window.a2ui = Object.freeze({
    registerComponent, registerV09Component, h, text, plain, safeUrl, gettext, ngettext, interpolate,
  });
}
