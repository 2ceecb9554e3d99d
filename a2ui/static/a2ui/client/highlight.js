// Minimal syntax highlighting: comments, strings, numbers and keywords become <span>s built
// with the DOM (no innerHTML). Good enough for Python, JavaScript/TypeScript, shell, SQL, JSON,
// Go, Rust, Java, C-like code; unknown languages still get strings/comments/numbers.
import { h } from './dom.js';

const KEYWORDS = {
  python: 'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield match case self print',
  javascript: 'async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while with yield',
  sql: 'select from where and or not insert into values update set delete create table drop alter join left right inner outer on group by order having limit offset as distinct null is in like between union all case when then else end primary key',
  shell: 'if then else elif fi for while do done case esac function in export echo return local cd set unset exit',
  go: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false',
  rust: 'as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while',
  java: 'abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch this throw throws true false try void volatile while',
  json: 'true false null',
};
const ALIASES = { py: 'python', js: 'javascript', ts: 'javascript', typescript: 'javascript', jsx: 'javascript', tsx: 'javascript', bash: 'shell', sh: 'shell', zsh: 'shell', console: 'shell', golang: 'go', rs: 'rust', kotlin: 'java', c: 'java', cpp: 'java', csharp: 'java', 'c++': 'java', 'c#': 'java', postgresql: 'sql' };

function keywordSet(language) {
  const lang = String(language || '').toLowerCase();
  const name = ALIASES[lang] || lang;
  const words = KEYWORDS[name];
  if (!words) return { set: new Set(), hash: true, slash: true, ci: false };
  return {
    set: new Set(name === 'sql' ? words.split(' ').map((w) => w.toLowerCase()) : words.split(' ')),
    hash: ['python', 'shell'].includes(name),
    slash: !['python', 'shell', 'sql'].includes(name),
    dash: name === 'sql',
    ci: name === 'sql',
  };
}

export function highlight(code, language) {
  const kw = keywordSet(language);
  const parts = [
    kw.slash ? String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/` : null,
    kw.hash ? String.raw`#[^\n]*` : null,
    kw.dash ? String.raw`--[^\n]*` : null,
    String.raw`"""[\s\S]*?"""|'''[\s\S]*?'''`,
    String.raw`"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*'|\x60(?:\\[\s\S]|[^\x60\\])*\x60`,
    String.raw`\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b|\b0x[\da-fA-F]+\b`,
    String.raw`[A-Za-z_$][\w$]*`,
  ].filter(Boolean);
  const re = new RegExp(parts.join('|'), 'g');
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of code.matchAll(re)) {
    const tok = m[0];
    if (m.index > last) frag.append(code.slice(last, m.index));
    last = m.index + tok.length;
    let cls = null;
    if (/^(\/\/|\/\*|#|--)/.test(tok)) cls = 'comment';
    else if (/^["'`]/.test(tok)) cls = 'string';
    else if (/^\d|^0x/.test(tok)) cls = 'number';
    else if (kw.set.has(kw.ci ? tok.toLowerCase() : tok)) cls = 'keyword';
    frag.append(cls ? h('span', { class: `a2ui-tok-${cls}` }, tok) : tok);
  }
  if (last < code.length) frag.append(code.slice(last));
  return frag;
}
