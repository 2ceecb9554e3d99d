// Markdown -> DOM with markdown-it (the vendored bundle, through the import map), loaded on
// the first Markdown the page shows: until it arrives the source is shown as plain text.
// markdown-it only parses: its tokens are turned into DOM nodes here, with text inserted as
// text nodes and only the attributes set below, so no HTML string is ever parsed. Raw HTML
// and linkify are off; links must pass the client's URL policy (urlpolicy.js), otherwise their
// text is shown without a link. Images are never loaded: they become links (see image()).
import { h, text } from './dom.js';
import { gettext as _ } from './i18n.js';
import { safeUrl } from './urlpolicy.js';

// A bare specifier (resolved by the page's import map) kept in a constant: collectstatic rewrites
// a dynamic import of a string literal to a hashed static path, which a bare specifier is not.
const MARKDOWN_IT = 'markdown-it';
let md = null;
let loading = null;

function configure(MarkdownIt) {
  // maxNesting 20 (the commonmark preset's) instead of 100: inline rules look ahead up to that
  // many levels at each "[" or "*", so it bounds the work per character.
  const parser = new MarkdownIt('default', { html: false, linkify: false, typographer: false, maxNesting: 20 });
  // Server strings are HTML-safe text: their entities are decoded once, by text(), before
  // parsing; markdown-it must not decode a second time ("&amp;lt;" stays "&lt;").
  parser.disable('entity');
  // Link and image destinations: the policy sees the destination as written (after markdown's
  // own unescaping) and again after markdown-it normalized it (percent-encoding, punycode).
  const normalizeLink = parser.normalizeLink.bind(parser);
  parser.normalizeLink = (url) => (safeUrl(url) === null ? '' : normalizeLink(url));
  parser.validateLink = (url) => safeUrl(url) !== null;
  return parser;
}

/** Load markdown-it once; resolves when renderMarkdown renders synchronously. */
export function loadMarkdown() {
  loading ??= import(MARKDOWN_IT).then((module) => { md = configure(module.default); return md; });
  return loading;
}

// Elements the walker may create (markdown-it's default preset, nothing else).
const TAGS = new Set([
  'p', 'blockquote', 'ul', 'ol', 'li', 'strong', 'em', 's', 'table', 'thead', 'tbody', 'tr',
  'th', 'td', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
]);
const ALIGN = { 'text-align:left': 'left', 'text-align:center': 'center', 'text-align:right': 'right' };

function open(token) {
  let tag = token.tag;
  // Component headings sit under the page's h1/h2: shift levels down by one (h2..h6).
  if (/^h[1-6]$/.test(tag)) tag = `h${Math.min(6, Number(tag[1]) + 1)}`;
  if (token.type === 'link_open') return link(token.attrGet('href'), token.attrGet('title'));
  if (!TAGS.has(tag)) return document.createElement('span');
  const el = document.createElement(tag);
  if (tag === 'ol') {
    const start = token.attrGet('start');
    if (start !== null && start !== '1') el.setAttribute('start', String(Number(start) || 1));
  }
  // Table alignment as the `align` attribute, not markdown-it's style="text-align:...": the CSP
  // refuses style attributes, and v0.9 Text serializes this DOM into lit's unsafeHTML.
  const align = ALIGN[token.attrGet('style') || ''];
  if (align) el.setAttribute('align', align);
  return el;
}

function link(href, title) {
  const url = safeUrl(href);
  if (!url) return document.createElement('span');
  const a = h('a', { href: url, title: title || null });
  if (a.origin !== location.origin) {
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
  return a;
}

// Images in agent text are never loaded: the agent would choose what the person's browser
// fetches (a relative "x" is a GET to the page's own origin, with the person's cookies). An
// address the URL policy accepts becomes a link to the image, named by its alt text (fetched
// only if the person follows it); any other stays as the alt text.
function image(token) {
  const alt = token.children?.length ? md.renderer.renderInlineAsText(token.children, md.options, {}) : token.content;
  const a = link(token.attrGet('src'), token.attrGet('title'));
  if (a.tagName !== 'A') return document.createTextNode(alt);
  a.className = 'a2ui-md-image';
  a.append(alt || _('image'));
  return a;
}

function code(token, block) {
  const lang = block ? (token.info || '').trim().split(/\s+/, 1)[0] : '';
  const el = h('code', lang && /^[\w+#.-]+$/.test(lang) ? { class: `language-${lang}` } : {}, token.content);
  return block ? h('pre', { class: 'a2ui-md-pre' }, el) : el;
}

// Deeper elements are flattened into their ancestor at this depth: emphasis can nest one
// level per delimiter ("****...a****..."), and building a DOM thousands of levels deep is
// quadratic (every insertion checks the new parent's ancestors).
const MAX_DEPTH = 24;

/** Append DOM for a token stream (block or inline) to `root`. */
function build(tokens, root, depth = 0) {
  const stack = [root];
  for (const token of tokens) {
    const parent = stack[stack.length - 1];
    if (token.nesting === 1) {
      // Tight list paragraphs are hidden; too deep elements are left out (their text stays).
      if (token.hidden || depth + stack.length > MAX_DEPTH) { stack.push(parent); continue; }
      const el = open(token);
      parent.append(el);
      stack.push(el);
    } else if (token.nesting === -1) {
      stack.pop();
    } else if (token.type === 'inline') {
      build(token.children || [], parent, depth + stack.length);
    } else if (token.type === 'text') {
      parent.append(token.content);
    } else if (token.type === 'code_inline') {
      parent.append(code(token, false));
    } else if (token.type === 'code_block' || token.type === 'fence') {
      parent.append(code(token, true));
    } else if (token.type === 'softbreak') {
      parent.append('\n');
    } else if (token.type === 'hardbreak') {
      parent.append(h('br'));
    } else if (token.type === 'hr') {
      parent.append(h('hr'));
    } else if (token.type === 'image') {
      parent.append(image(token));
    } else if (token.content) {
      parent.append(token.content); // anything else (html_* is off): its source, as text
    }
  }
  return root;
}

/**
 * A DocumentFragment for Markdown source (HTML-safe text from the server). Before markdown-it
 * has loaded, the fragment holds the source as text and `late()` is called once it has been
 * replaced by the rendered Markdown (to highlight its code blocks, say).
 */
export function renderMarkdown(source, late = null) {
  return renderMarkdownText(text(source), late);
}

/** A DocumentFragment for Markdown source already decoded to plain text (never decoded again). */
export function renderMarkdownText(source, late = null) {
  if (md) return build(md.parse(source, {}), document.createDocumentFragment());
  // Not loaded yet: the source as text (never parsed as HTML), replaced once markdown-it is.
  const pending = h('span', { class: 'a2ui-md-pending' }, source);
  loadMarkdown().then(() => {
    if (!pending.parentNode) return;
    pending.replaceWith(renderMarkdownText(source));
    late?.();
  }, () => {});
  const fragment = document.createDocumentFragment();
  fragment.append(pending);
  return fragment;
}
