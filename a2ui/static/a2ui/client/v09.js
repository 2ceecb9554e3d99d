// A2UI v0.9 surfaces through the official renderer (@a2ui/lit, v0_9 entry), loaded lazily
// (dynamic import through the page's import map, the vendored bundle) on the first a2ui.v09
// message: a page without v0.9 surfaces never fetches it. The catalog is the basic one
// with bound URLs policed and CSP-safe styling (v09catalog.js).
import { h } from './dom.js';
import { gettext as _, interpolate } from './i18n.js';
import { loadMarkdown, renderMarkdown } from './markdown.js';

// A bare specifier (resolved by the page's import map) kept in a constant: collectstatic rewrites
// a dynamic import of a string literal to a hashed static path, which a bare specifier is not.
const WEB_CORE = '@a2ui/web_core/v0_9';
const LIT_CONTEXT = '@lit/context';

/**
 * Markdown for the renderer's Text component. The renderer inserts the string it gets with
 * lit's unsafeHTML, so it gets the serialization of a DOM tree our safe renderer built from
 * text: no markup from the server survives, only the few elements renderMarkdown creates.
 */
function markdownToHtml(value) {
  const box = document.createElement('div');
  box.append(renderMarkdown(String(value ?? '')));
  const only = box.childNodes.length === 1 && box.firstChild.nodeName === 'P' ? box.firstChild : box;
  return only.innerHTML;
}

// The page's font for the renderer's buttons and inputs (browsers give form controls their
// own) and its focus ring: a constructed stylesheet adopted by each surface's shadow root, as
// the renderer's own styles are, which the strict CSP allows.
let controlsSheet = null;
function adoptControlsFont(root) {
  if (!root) return;
  if (!controlsSheet) {
    controlsSheet = new CSSStyleSheet();
    // The page's font, and its visible focus (the page's own rules do not reach a shadow root).
    controlsSheet.replaceSync('button, input, select, textarea { font: inherit; } '
      + ':focus-visible { outline: 3px solid var(--a2ui-accent, #1f6feb) !important; outline-offset: 2px; }');
  }
  if (!root.adoptedStyleSheets.includes(controlsSheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, controlsSheet];
}

const BASIC_CATALOG_ID = 'https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json';

/** The host project's catalogs (A2UI['CATALOGS']), embedded in the page by {% a2ui_client %}. */
export function customCatalogs(doc = document) {
  const el = doc.getElementById('a2ui-catalogs');
  if (!el) return [];
  try {
    const list = JSON.parse(el.textContent || '[]');
    return Array.isArray(list) ? list.filter((c) => c && typeof c.catalogId === 'string') : [];
  } catch {
    return [];
  }
}

export class V09Surfaces {
  constructor(container, { onAction, onError, onChange }) {
    this.onChange = onChange || (() => {});
    this.container = container;
    this.onAction = onAction;
    this.onError = onError;
    this.ready = null;
    this.processor = null;
    this.elements = new Map();
  }

  load() {
    if (!this.ready) {
      this.ready = Promise.all([
        import('./v09catalog.js'), import(WEB_CORE), import(LIT_CONTEXT), loadMarkdown(),
      ]).then(([catalog, core, litContext]) => {
        this.markdownProvider = new litContext.ContextProvider(this.container, {
          context: core.Context.markdown, initialValue: markdownToHtml,
        });
        const catalogs = [catalog.clientCatalog(), ...customCatalogs().flatMap((definition) => {
          try {
            return [catalog.hostCatalog(definition)];
          } catch (err) {
            console.error(`a2ui: the catalog ${definition.catalogId} could not be built`, err);
            return [];
          }
        })];
        this.processor = new core.MessageProcessor(catalogs, (action) => this.onAction(action));
        this.processor.onSurfaceCreated((surface) => this.mount(surface));
        this.processor.onSurfaceDeleted((id) => this.unmount(id));
        return this.processor;
      });
      this.ready.catch((err) => {
        console.error('a2ui: the v0.9 renderer could not be loaded', err);
        this.onError(_('Some of the assistant’s content cannot be shown. Reload the page to try again.'));
      });
    }
    return this.ready;
  }

  mount(surface) {
    this.unmount(surface.id);
    const el = document.createElement('a2ui-surface');
    el.surface = surface;
    const agent = surface.theme?.agentDisplayName;
    const wrap = h('section', { class: 'a2ui-surface', dataset: { surfaceId: surface.id }, 'aria-label': agent ? interpolate(_('From %(name)s'), { name: agent }) : _('From the assistant') }, el);
    // A surface whose root is a Card needs no frame of ours around it (a2ui.css).
    const markRoot = () => wrap.toggleAttribute('data-root-card', surface.componentsModel?.get('root')?.type === 'Card');
    surface.componentsModel?.onCreated?.subscribe(markRoot);
    surface.componentsModel?.onDeleted?.subscribe(markRoot);
    this.elements.set(surface.id, wrap);
    this.container.append(wrap);
    adoptControlsFont(el.shadowRoot);
    el.updateComplete?.then(() => adoptControlsFont(el.shadowRoot));
    this.onChange();
  }

  unmount(id) {
    this.elements.get(id)?.remove();
    if (this.elements.delete(id)) this.onChange();
  }

  /** Feed server messages in order; a bad message is reported and skipped. */
  async process(messages) {
    if (!Array.isArray(messages) || !messages.length) return;
    let processor;
    try { processor = await this.load(); } catch { return; }
    for (const message of messages) {
      try {
        // Surfaces re-sent on resume: replace the old surface instead of failing.
        const create = message?.createSurface;
        if (create?.surfaceId && processor.model.getSurface(create.surfaceId)) {
          processor.processMessages([{ version: message.version || 'v0.9', deleteSurface: { surfaceId: create.surfaceId } }]);
        }
        processor.processMessages([message]);
      } catch (err) {
        console.error('a2ui: a v0.9 message was not applied', err, message);
        this.onError(_('Part of what the assistant sent could not be shown.'));
      }
    }
  }

  clear() {
    if (!this.processor) return;
    for (const id of [...this.processor.model.surfacesMap.keys()]) this.processor.model.deleteSurface(id);
  }

  static get catalogId() {
    return BASIC_CATALOG_ID;
  }

  /** The catalogs this client renders: the basic one and the host project's. */
  static catalogIds() {
    return [BASIC_CATALOG_ID, ...customCatalogs().map((c) => c.catalogId)];
  }
}
