// The URL policy of the client: the same rule as the server's (a2ui/protocol/urls.py, used by
// check_url in a2ui/protocol/sanitize.py), applied to every URL that reaches src/href/window.open, whether
// it came as a field, through a v0.9 data binding or from markdown. Test vectors shared with
// the server: tests/protocol/url_cases.json (tests/browser/test_client_policy.py).
//
// Accepted: http(s)://host/... (a host that parses, a bracketed host only as an IPv6 address,
// a port within 0..65535, no user:password@), or a relative URL that does not start with "//"
// and has no ":" in its first segment (where relative URLs are allowed at all). Refused: any
// other scheme, whitespace, control and format characters anywhere, quotes, angle brackets,
// backticks and backslashes, more than 2048 characters, and all of that again after decoding
// HTML entities (up to three rounds: &amp;colon; -> &colon; -> :).

export const MAX_URL_LENGTH = 2048;

const FORBIDDEN = new Set(['"', "'", '<', '>', '`', '\\']);
// Python: str.isspace() or unicodedata.category in (Cc, Cf, Cs, Zl, Zp, Zs).
const INVISIBLE = /[\s\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}]/u;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const ALLOWED_SCHEMES = new Set(['http', 'https']);
const URL_KEY = /(^|_|[a-z])(url|href|src)$/i;

/** Whether values under this object key are URLs (url, href, src, imageUrl, thumbnail_url...). */
export function isUrlKey(key) {
  return typeof key === 'string' && URL_KEY.test(key);
}

let parser = null;
function decodeEntities(value) {
  // Only called on strings without < > " ' ` \ or whitespace: the inert document's text is
  // exactly the entity-decoded string (HTML's text-state rules, like Python's html.unescape).
  parser ||= new DOMParser();
  return parser.parseFromString(`<!DOCTYPE html><body>${value}`, 'text/html').body.textContent ?? '';
}

function validIPv6(host) {
  // Python's ipaddress.IPv6Address: hex groups, "::", an embedded IPv4 tail; no zone id
  // ("%eth0") and no IPvFuture ("v1.x"). The browser's own IPv6 parser checks the grammar.
  if (!/^[0-9a-f:.]+$/i.test(host) || !host.includes(':')) return false;
  try {
    new URL(`http://[${host}]/`);
    return true;
  } catch {
    return false;
  }
}

// The host and port of an authority, as Python's urlsplit reads them (netloc.rpartition('@')).
function hostAndPort(netloc) {
  const info = netloc.slice(netloc.lastIndexOf('@') + 1);
  const open = info.indexOf('[');
  if (open >= 0) {
    const rest = info.slice(open + 1);
    const close = rest.indexOf(']');
    const after = close >= 0 ? rest.slice(close + 1) : '';
    const colon = after.indexOf(':');
    return { host: close >= 0 ? rest.slice(0, close) : rest, port: colon >= 0 ? after.slice(colon + 1) : '' };
  }
  const colon = info.indexOf(':');
  return colon >= 0 ? { host: info.slice(0, colon), port: info.slice(colon + 1) } : { host: info, port: '' };
}

function problemOf(url, allowRelative) {
  for (const ch of url) {
    if (FORBIDDEN.has(ch)) return `character ${JSON.stringify(ch)} is not allowed in a URL`;
    if (INVISIBLE.test(ch)) return 'whitespace and control characters are not allowed in a URL';
  }
  if (url.startsWith('//')) return 'protocol-relative URLs are not allowed';
  const match = SCHEME.exec(url);
  if (!match) {
    if (!allowRelative) return 'only absolute http(s) URLs are allowed here';
    // RFC 3986 path-noscheme: no ":" before the first "/", "?" or "#" ("1javascript:...").
    if (url.split(/[/?#]/, 1)[0].includes(':')) return "a relative URL must not have ':' in its first segment";
    return null;
  }
  if (!ALLOWED_SCHEMES.has(match[1].toLowerCase())) {
    return `URL scheme ${JSON.stringify(match[1].slice(0, 32))} is not allowed (only http and https)`;
  }
  const rest = url.slice(match[0].length);
  if (!rest.startsWith('//')) return 'absolute URLs must have the form http(s)://host/...';
  const netloc = rest.slice(2).split(/[/?#]/, 1)[0];
  const { host, port } = hostAndPort(netloc);
  const invalid = "the URL's host or port is not valid (a bracketed host must be an IPv6 address)";
  if (port && (!/^[0-9]+$/.test(port) || Number(port) > 65535)) return invalid;
  if (netloc.includes('[') || netloc.includes(']')) {
    const bracketed = netloc.slice(netloc.indexOf('[') + 1).split(']', 1)[0];
    if (!netloc.includes('[') || !netloc.includes(']') || !validIPv6(bracketed) || !validIPv6(host)) return invalid;
  }
  if (!host) return 'absolute URLs must have the form http(s)://host/...';
  if (netloc.includes('@')) return 'credentials in URLs are not allowed';
  return null;
}

/**
 * Why `url` may not be used, or null when it may. `allowRelative: false` refuses relative URLs
 * (the server's allow_relative).
 */
export function urlProblem(url, { allowRelative = true } = {}) {
  if (typeof url !== 'string') return 'must be a string URL';
  if (!url) return 'URL must not be empty';
  let length = 0;
  for (const _ of url) { // eslint-disable-line no-unused-vars
    length += 1;
    if (length > MAX_URL_LENGTH) return `URL longer than ${MAX_URL_LENGTH} characters`;
  }
  let candidate = url;
  for (let level = 0; level < 3; level += 1) {
    const problem = problemOf(candidate, allowRelative);
    if (problem) return problem;
    if (!candidate.includes('&')) return null;
    const decoded = decodeEntities(candidate);
    if (decoded === candidate) return null;
    candidate = decoded;
  }
  return 'URL is entity-encoded too deeply';
}

/** `url` unchanged when the policy accepts it, else null. */
export function safeUrl(url, options) {
  return urlProblem(url, options) === null ? url : null;
}
