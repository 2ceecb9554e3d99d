// DOM helpers. Server strings are "HTML-safe text" (tags stripped by the server, entities
// kept): their entities are decoded with DOMParser (an inert document: no script runs, nothing
// loads) and they are only ever inserted as text. Nothing in this client assigns innerHTML.

const parser = new DOMParser();

/**
 * Decode HTML entities (&lt; &amp; &#39; ...) of a server string into plain text. A "<" is
 * escaped before parsing, so the inert document never sees a tag (no attribute of a would-be
 * element is even looked at: Chromium reports an inline handler in parsed markup as a CSP
 * violation) and markup in a raw string stays visible as text.
 */
export function text(value) {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : String(value);
  if (!s.includes('&')) return s;
  const doc = parser.parseFromString(`<!DOCTYPE html><body>${s.replace(/</g, '&lt;')}`, 'text/html');
  return doc.body.textContent ?? '';
}

// Bidirectional controls (embeddings, overrides, isolates, marks): the server removes them from
// display text; plain() removes them again after entities are decoded ("&#x202e;").
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A server string as plain display text: entities decoded, bidi controls removed. */
export function plain(value) {
  return text(value).replace(BIDI, '');
}

/** Bidi controls removed from a string that is not HTML-safe text (code, kept as written). */
export function noBidi(value) {
  return typeof value === 'string' ? value.replace(BIDI, '') : '';
}

/**
 * Build an element. attrs: plain attributes (false/null/undefined skipped, true -> ""), plus
 * `class`, `dataset` (object), `on` (object of listeners), `props` (object of properties).
 * children: strings (inserted as text nodes, never parsed) or Nodes, nested arrays allowed.
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  applyAttrs(node, attrs);
  append(node, children);
  return node;
}

function applyAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key === 'on') {
      for (const [evt, fn] of Object.entries(value)) node.addEventListener(evt, fn);
    } else if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) node.dataset[k] = String(v);
    } else if (key === 'props') {
      Object.assign(node, value);
    } else {
      node.setAttribute(key, value === true ? '' : String(value));
    }
  }
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// URLs: one policy for the whole client, the server's (urlpolicy.js).
export { safeUrl } from './urlpolicy.js';

let idCounter = 0;
export function uid(prefix = 'a2ui') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

export function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
