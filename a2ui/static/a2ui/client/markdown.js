// A small, safe Markdown renderer: it builds DOM nodes, never HTML strings.
// Supports headings, paragraphs, bold, italic, inline code, fenced/indented code blocks,
// ordered and unordered lists, block quotes, horizontal rules and links (http(s) or relative
// only; anything else is rendered as plain text).
import { h, safeUrl, text } from './dom.js';

export function renderMarkdown(source) {
  const root = document.createDocumentFragment();
  const lines = text(source).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i += 1; continue; }
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)\s*$/);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) { body.push(lines[i]); i += 1; }
      i += 1;
      const code = h('code', fence[2] ? { class: `language-${fence[2]}` } : {}, body.join('\n'));
      root.append(h('pre', { class: 'a2ui-md-pre' }, code));
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      const body = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || !lines[i].trim())) {
        body.push(lines[i].replace(/^( {4}|\t)/, '')); i += 1;
      }
      while (body.length && !body[body.length - 1].trim()) body.pop();
      root.append(h('pre', { class: 'a2ui-md-pre' }, h('code', {}, body.join('\n'))));
      continue;
    }
    const heading = line.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      // Component headings sit under the page's h1/h2: shift levels down by one (h2..h6).
      const level = Math.min(6, heading[1].length + 1);
      root.append(h(`h${level}`, {}, inline(heading[2])));
      i += 1;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { root.append(h('hr')); i += 1; continue; }
    if (/^\s{0,3}>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) { body.push(lines[i].replace(/^\s{0,3}>\s?/, '')); i += 1; }
      root.append(h('blockquote', {}, renderMarkdown(body.join('\n'))));
      continue;
    }
    const listItem = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
    const first = line.match(listItem);
    if (first) {
      const ordered = /\d/.test(first[2]);
      const list = h(ordered ? 'ol' : 'ul');
      if (ordered) {
        const start = parseInt(first[2], 10);
        if (start !== 1) list.setAttribute('start', String(start));
      }
      let item = null;
      while (i < lines.length) {
        const m = lines[i].match(listItem);
        if (m && m[1].length < 2 && /\d/.test(m[2]) === ordered) {
          item = h('li', {}, inline(m[3]));
          list.append(item);
          i += 1;
        } else if (item && lines[i].trim() && /^\s+/.test(lines[i]) && !lines[i].match(listItem)) {
          item.append(' ', inline(lines[i].trim()));
          i += 1;
        } else if (item && lines[i].match(listItem) && lines[i].match(listItem)[1].length >= 2) {
          // Nested list: collect the indented block and render it inside the current item.
          const body = [];
          while (i < lines.length && lines[i].trim() && /^\s{2,}/.test(lines[i])) {
            body.push(lines[i].replace(/^\s{2,4}/, '')); i += 1;
          }
          item.append(renderMarkdown(body.join('\n')));
        } else {
          break;
        }
      }
      root.append(list);
      continue;
    }
    const para = [];
    while (
      i < lines.length && lines[i].trim() && !/^\s*(```|~~~)/.test(lines[i]) &&
      !/^\s{0,3}#{1,6}\s/.test(lines[i]) && !/^\s{0,3}>/.test(lines[i]) &&
      !(para.length && listItem.test(lines[i]))
    ) { para.push(lines[i].trim()); i += 1; }
    const p = h('p');
    para.forEach((chunk, idx) => {
      if (idx) p.append(/ {2}$/.test(lines[i - para.length + idx - 1] || '') ? h('br') : ' ');
      p.append(inline(chunk));
    });
    root.append(p);
  }
  return root;
}

// Inline: `code`, **bold**/__bold__, *italic*/_italic_, [text](url), autolinks <https://...>.
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|\*(?=\S)([\s\S]*?\S)\*|(?<![\w])_(?=\S)([\s\S]*?\S)_(?![\w])|\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"([^"]*)")?\s*\)|<(https?:\/\/[^>\s]+)>|\\([\\`*_{}[\]()#+\-.!>])/;

export function inline(source) {
  const frag = document.createDocumentFragment();
  let rest = source;
  while (rest) {
    const m = rest.match(INLINE);
    if (!m) { frag.append(rest); break; }
    if (m.index) frag.append(rest.slice(0, m.index));
    if (m[1] !== undefined) frag.append(h('code', {}, m[2].trim() ? m[2].replace(/^ (.*) $/, '$1') : m[2]));
    else if (m[3] !== undefined) frag.append(h('strong', {}, inline(m[3])));
    else if (m[4] !== undefined) frag.append(h('strong', {}, inline(m[4])));
    else if (m[5] !== undefined) frag.append(h('em', {}, inline(m[5])));
    else if (m[6] !== undefined) frag.append(h('em', {}, inline(m[6])));
    else if (m[7] !== undefined) frag.append(link(m[7], m[8], m[9]));
    else if (m[10] !== undefined) frag.append(link(m[10], m[10]));
    else if (m[11] !== undefined) frag.append(m[11]);
    rest = rest.slice(m.index + m[0].length);
  }
  return frag;
}

function link(label, href, title) {
  const url = safeUrl(href);
  if (!url) return inline(label);
  const a = h('a', { href: url, title: title || null }, inline(label));
  if (new URL(url).origin !== location.origin) {
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
  return a;
}
