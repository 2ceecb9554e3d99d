// Syntax highlighting with highlight.js (core + common languages, bundled as
// `a2ui-vendor/highlight`, see client/vendor/highlight.mjs), loaded on first use. The code is
// shown as plain text at once and highlighted when the bundle is there; an unknown language or a
// failed load leaves the plain text.
//
// highlight.js returns escaped HTML. It is parsed in an inert document (DOMParser: no script
// runs, nothing loads) and copied node by node: text as text nodes, <span> with its hljs-*
// classes only; anything else becomes its text. The copy must read exactly the source, or the
// plain text stays. Nothing assigns innerHTML.

// A bare specifier (resolved by the page's import map) kept in a constant: collectstatic rewrites
// a dynamic import of a string literal to a hashed static path, which a bare specifier is not.
const HIGHLIGHT = 'a2ui-vendor/highlight';
let loading = null;
const parser = new DOMParser();
// hljs-keyword, hljs-title, and sub-scopes such as "function_" / "class_".
const SCOPE = /^(hljs-[a-z][\w-]*|[a-z]+_+)$/;

function load() {
  loading ??= import(HIGHLIGHT).then((module) => module.default, () => null);
  return loading;
}

function copy(from, to) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      to.append(node.data);
    } else if (node.nodeType === Node.ELEMENT_NODE && node.localName === 'span') {
      const span = document.createElement('span');
      const classes = [...node.classList].filter((c) => SCOPE.test(c));
      if (classes.length) span.className = classes.join(' ');
      to.append(copy(node, span));
    } else {
      to.append(node.textContent ?? '');
    }
  }
  return to;
}

/** Highlight `source` as `language` into the <code> element `code`; resolves to true if it did. */
export async function highlightInto(code, source, language) {
  const lang = String(language || '').toLowerCase();
  if (!lang) return false;
  const hljs = await load();
  if (!hljs || !hljs.getLanguage(lang)) return false;
  let html;
  try {
    html = hljs.highlight(source, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return false;
  }
  const doc = parser.parseFromString(`<!DOCTYPE html><body><code>${html}</code>`, 'text/html');
  const frag = copy(doc.body.firstElementChild, document.createDocumentFragment());
  if (frag.textContent !== source || code.textContent !== source) return false;
  code.replaceChildren(frag);
  code.classList.add('hljs');
  code.dataset.highlighted = lang;
  return true;
}

/** Highlight every <pre><code class="language-x"> under `root` (Markdown's fenced blocks). */
export function highlightBlocks(root) {
  for (const code of root.querySelectorAll('pre > code[class^="language-"]')) {
    highlightInto(code, code.textContent, code.className.slice('language-'.length));
  }
}
