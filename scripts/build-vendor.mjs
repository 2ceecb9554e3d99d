// Bundles the web client's npm dependencies into a2ui/static/a2ui/vendor/ (committed, shipped in
// the wheel): `npm run build` or `make vendor`. Development tool of this repository only; a host
// project needs neither npm nor node_modules.
//
// Output: one ES module per bare specifier the client imports (ENTRIES), shared code split into
// chunks (chunk-<hash>.js), each bundled package's licence under licenses/, and manifest.json
// (the package versions from package-lock.json, the files and their sha256) that the tier-1 test
// tests/core/test_web_client_assets.py checks against package-lock.json.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'a2ui', 'static', 'a2ui', 'vendor');

// Bare specifier (as a2ui/static/a2ui/client/*.js imports it) -> output name (without .js).
// a2ui/web/importmap.py reads this mapping back from manifest.json.
export const ENTRIES = {
  '@a2ui/lit/v0_9': 'a2ui-lit-v0_9',
  '@a2ui/web_core/v0_9': 'a2ui-web_core-v0_9',
  '@lit/context': 'lit-context',
  lit: 'lit',
  'markdown-it': 'markdown-it',
  'a2ui-vendor/chart': 'chart',
  'a2ui-vendor/highlight': 'highlight',
};
// Specifiers whose entry is a module of this repository (client/vendor/) that picks the parts
// of a package the client uses (Chart.js's bar/line/pie, highlight.js's common languages).
const LOCAL_ENTRIES = {
  'a2ui-vendor/chart': 'client/vendor/chart.mjs',
  'a2ui-vendor/highlight': 'client/vendor/highlight.mjs',
};

const LICENSE_FILE = /^licen[cs]e([-.].*)?$/i; // LICENSE, LICENSE.md, LICENSE-MIT.txt, ...

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

const result = await esbuild.build({
  absWorkingDir: ROOT,
  entryPoints: Object.entries(ENTRIES).map(([spec, name]) => ({ in: LOCAL_ENTRIES[spec] || spec, out: name })),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'none', // the licences are copied next to the bundle instead
  chunkNames: 'chunk-[hash]',
  outdir: OUT,
  metafile: true,
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});

// Which packages ended up in the bundle, with the versions package-lock.json pins.
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
const packages = {};
for (const input of Object.keys(result.metafile.inputs)) {
  const match = input.match(/^(?:.*\/)?node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (!match) continue;
  const name = match[1];
  const entry = lock.packages[`node_modules/${name}`];
  if (!entry) throw new Error(`${name} is bundled but not in package-lock.json`);
  packages[name] = entry.version;
}

// Licences next to the bundle: licenses/<package>.txt (scope "/" replaced by "__").
mkdirSync(join(OUT, 'licenses'));
const licenses = {};
for (const name of Object.keys(packages).sort()) {
  const dir = join(ROOT, 'node_modules', name);
  const found = readdirSync(dir).sort().find((f) => LICENSE_FILE.test(f));
  const target = `licenses/${name.replace('/', '__')}.txt`;
  if (found) {
    copyFileSync(join(dir, found), join(OUT, target));
  } else {
    const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    writeFileSync(join(OUT, target), `${name} ${packages[name]}: licence "${meta.license}" (package.json; the package ships no licence file).\n`);
  }
  licenses[name] = target;
}

const files = {};
for (const path of Object.keys(result.metafile.outputs).sort()) {
  const rel = path.slice(path.indexOf('a2ui/static/a2ui/vendor/') + 'a2ui/static/a2ui/vendor/'.length);
  files[rel] = createHash('sha256').update(readFileSync(join(OUT, rel))).digest('hex');
}

const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b)));
const manifest = {
  note: 'Written by scripts/build-vendor.mjs (npm run build); do not edit.',
  esbuild: esbuild.version,
  entries: Object.fromEntries(Object.entries(ENTRIES).map(([spec, name]) => [spec, `${name}.js`])),
  packages: sorted,
  licenses,
  files,
};
writeFileSync(join(OUT, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`vendor: ${Object.keys(files).length} files, ${Object.keys(sorted).length} packages`);
