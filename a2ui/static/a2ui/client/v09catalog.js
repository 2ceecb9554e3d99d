// The basic v0.9 catalog of @a2ui/lit, as the client renders it: the same components and
// functions, with two changes made through the library's own extension points (a Catalog of
// our own, element subclasses and A2uiLitElement.createController):
//
// 1. URLs. Every component whose schema has a URL-like property (url, src, href, *Url, *_url,
//    at any depth: Image, Video, AudioPlayer today) gets a controller that runs the resolved
//    props, including values bound to the data model, through the client's URL policy
//    (urlpolicy.js, the server's rule). A refused URL renders as nothing (no image, no
//    player), with one console warning per refused value. openUrl opens only policy-approved
//    URLs and otherwise does nothing.
// 2. CSP. Two components write a style attribute, which the strict style-src blocks: Text
//    (`style="flex: N"` for its weight) and Image (lit's styleMap for object-fit, which writes
//    the attribute on first render). Here those attributes are never written and the same
//    properties are set through CSSOM (element.style), which CSP allows.
// 3. Labels. TextField renders a <label> not tied to its <input>/<textarea>; here the control
//    gets an id of its own and the label `for` it, so screen readers name the field.
//
// 4. The host project's catalogs (A2UI['CATALOGS'], hostCatalog()): built from their JSON
//    definitions (Catalog.fromSchema), a component drawn by the renderer the host registered
//    (api.js registerV09Component), else by the basic catalog's of the same name; URLs policed.
//
// Loaded lazily by v09.js (its imports need the page's import map).
import { html, nothing, render as litRender } from 'lit';
import { A2uiLitElement, basicCatalog } from '@a2ui/lit/v0_9';
import { A2uiController, Catalog } from '@a2ui/web_core/v0_9';
import { onRegistered, v09Renderer } from './api.js';
import { h } from './dom.js';
import { gettext as _, interpolate } from './i18n.js';
import { isUrlKey, urlProblem } from './urlpolicy.js';

const MAX_DEPTH = 16;

/** Whether a zod schema (as the catalog's component APIs use) has a URL-like key anywhere. */
export function schemaHasUrlKey(schema, depth = 0) {
  const def = schema?._def;
  if (!def || depth > MAX_DEPTH) return false;
  if (typeof def.shape === 'function') {
    for (const [key, value] of Object.entries(def.shape())) {
      if (isUrlKey(key) || schemaHasUrlKey(value, depth + 1)) return true;
    }
    return false;
  }
  const inner = [def.innerType, def.type, def.schema, def.left, def.right, ...(def.options || [])];
  return inner.some((s) => s && s !== schema && schemaHasUrlKey(s, depth + 1));
}

/** A copy of resolved props without refused URLs; `refused` lists what was taken out. */
export function policeProps(value, refused = [], path = '', depth = 0) {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item, i) => {
      const next = policeProps(item, refused, `${path}/${i}`, depth + 1);
      changed ||= next !== item;
      return next;
    });
    return changed ? out : value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let out = value;
  for (const [key, item] of Object.entries(value)) {
    let next = item;
    if (isUrlKey(key) && item !== undefined && item !== null && typeof item !== 'function') {
      const problem = urlProblem(item);
      if (problem) {
        refused.push({ path: `${path}/${key}`, value: String(item).slice(0, 80), problem });
        next = undefined;
      }
    } else {
      next = policeProps(item, refused, `${path}/${key}`, depth + 1);
    }
    if (next !== item) {
      if (out === value) out = { ...value };
      out[key] = next;
    }
  }
  return out;
}

/** A2uiController whose `props` (set by the library on every binding change) are policed. */
class PolicedController extends A2uiController {
  get props() {
    return this.policedProps;
  }

  set props(value) {
    const refused = [];
    this.policedProps = policeProps(value, refused);
    this.refused = refused;
    const key = JSON.stringify(refused);
    if (refused.length && key !== this.warned) {
      const id = this.host?.context?.componentModel?.id;
      console.warn(`a2ui: URL refused in v0.9 component ${id ?? '?'}, not rendered:`, refused);
    }
    this.warned = key;
  }
}

function policedElement(Base) {
  return class extends Base {
    createController() {
      return new PolicedController(this, this.api);
    }

    render() {
      return this.controller?.refused?.length ? nothing : super.render();
    }

    updated(changed) {
      super.updated(changed);
      this.toggleAttribute('data-url-refused', Boolean(this.controller?.refused?.length));
    }
  };
}

function cspImageElement(Base) {
  return class extends policedElement(Base) {
    render() {
      const props = this.controller?.props;
      if (!props || this.controller.refused?.length) return nothing;
      // The library's template, without style=${styleMap(...)}: object-fit is set in updated().
      return html`<img src=${props.url || nothing} alt=${props.description || ''}
        class="a2ui-image ${props.variant || 'default'}" />`;
    }

    updated(changed) {
      super.updated(changed);
      const img = this.querySelector(':scope > img');
      if (img) img.style.objectFit = this.controller?.props?.fit || 'cover';
    }
  };
}

function cspTextElement(Base) {
  return class extends Base {
    render() {
      const controller = this.controller;
      const props = controller?.props;
      if (!props || typeof props.weight !== 'number') return super.render();
      // Render without the weight (so no style attribute); updated() applies it via CSSOM.
      controller.props = { ...props, weight: undefined };
      try {
        return super.render();
      } finally {
        controller.props = props;
      }
    }

    updated(changed) {
      super.updated(changed);
      const span = this.querySelector(':scope > .a2ui-text');
      const weight = this.controller?.props?.weight;
      if (!span) return;
      if (typeof weight === 'number') span.style.flex = String(weight);
      else span.style.removeProperty('flex');
    }
  };
}

let fieldIds = 0;

function labelledElement(Base) {
  return class extends Base {
    updated(changed) {
      super.updated(changed);
      const label = this.querySelector(':scope > label');
      const control = this.querySelector(':scope > input, :scope > textarea');
      if (!label || !control) return;
      this.fieldId ??= `a2ui-v09-field-${++fieldIds}`;
      control.id = this.fieldId;
      label.htmlFor = this.fieldId;
    }
  };
}

function define(api, make) {
  const tag = `a2ui-safe-${api.tagName.replace(/^a2ui-/, '')}`;
  if (!customElements.get(tag)) customElements.define(tag, make(customElements.get(api.tagName)));
  return { ...api, tagName: tag };
}

function openUrl(original) {
  return {
    ...original,
    execute(args) {
      const url = args?.url;
      const problem = urlProblem(url);
      if (problem) {
        console.warn(`a2ui: openUrl refused (${problem}):`, String(url).slice(0, 80));
        return;
      }
      window.open(new URL(url, window.location.href).href, '_blank', 'noopener,noreferrer');
    },
  };
}

let catalog = null;

/** The catalog the client's MessageProcessor uses (same id as the basic catalog). */
export function clientCatalog() {
  if (catalog) return catalog;
  const components = [...basicCatalog.components.values()].map((api) => {
    if (api.name === 'Text') return define(api, cspTextElement);
    if (api.name === 'Image') return define(api, cspImageElement);
    if (api.name === 'TextField') return define(api, labelledElement);
    if (api.tagName && schemaHasUrlKey(api.schema)) return define(api, policedElement);
    return api;
  });
  const functions = [...basicCatalog.functions.values()].map((fn) => (fn.name === 'openUrl' ? openUrl(fn) : fn));
  catalog = new Catalog(basicCatalog.id, components, functions, basicCatalog.themeSchema);
  return catalog;
}

// ---- the host project's catalogs ---------------------------------------------------------------

const hostElements = new Set(); // connected elements of host components (drawn again on registration)
onRegistered((change) => {
  if (change.kind !== 'v09') return;
  for (const el of hostElements) if (el.catalogId === change.catalogId && el.componentName === change.name) el.requestUpdate();
});

let hostTags = 0;

/** The custom element of one host component: calls its registered renderer with the props. */
function hostElement(catalogId, api) {
  const tag = `a2ui-host-${++hostTags}`;
  class HostComponent extends A2uiLitElement {
    constructor() {
      super();
      this.api = api;
      this.catalogId = catalogId;
      this.componentName = api.name;
    }

    createController() {
      return new PolicedController(this, this.api);
    }

    connectedCallback() {
      super.connectedCallback();
      hostElements.add(this);
    }

    disconnectedCallback() {
      super.disconnectedCallback();
      hostElements.delete(this);
    }

    render() {
      const props = this.controller?.props;
      if (!props || this.controller.refused?.length) return nothing;
      const draw = v09Renderer(catalogId, api.name);
      if (!draw) {
        return h('p', { class: 'a2ui-muted', dataset: { unsupported: api.name } },
          interpolate(_('This content cannot be shown on this page (%(type)s).'), { type: api.name }));
      }
      const ctx = {
        id: this.context?.componentModel?.id,
        surfaceId: this.context?.dataContext?.surface?.id,
        child: (ref) => {
          const box = h('div', { class: 'a2ui-v09-child' });
          litRender(this.renderNode(ref), box);
          return box;
        },
      };
      try {
        const node = draw(props, ctx);
        return node instanceof Node ? node : nothing;
      } catch (err) {
        console.error(`a2ui: the renderer of ${api.name} failed`, err);
        return nothing;
      }
    }
  }
  customElements.define(tag, HostComponent);
  return tag;
}

/** The Catalog of a host project's catalog definition (A2UI['CATALOGS'], as the server has it). */
export function hostCatalog(definition) {
  const basic = clientCatalog();
  const schemaOnly = Catalog.fromSchema(definition);
  const components = [...schemaOnly.components.values()].map((api) => {
    const builtIn = basic.components.get(api.name);
    if (builtIn && !v09Renderer(definition.catalogId, api.name)) return builtIn;
    return { ...api, tagName: hostElement(definition.catalogId, api) };
  });
  const functions = [...schemaOnly.functions.values()].map((fn) => basic.functions.get(fn.name) || fn);
  return new Catalog(definition.catalogId, components, functions, schemaOnly.themeSchema);
}
