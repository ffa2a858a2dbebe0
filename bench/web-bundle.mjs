#!/usr/bin/env node
// Gzipped size of the JavaScript the browser loads for the sign-in route (/auth/login) of the production
// build: the entry chunk and everything it imports statically, plus the lazily loaded sign-in page chunk
// and its static imports. Other routes are split into their own chunks and are not counted.
//
//   node bench/web-bundle.mjs            # build if needed, print JSON
//   node bench/web-bundle.mjs --build    # always rebuild first
//   node bench/web-bundle.mjs --write    # also append a row to bench/README.md's table
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { addReadmeRows, root } from './lib/bench.mjs';

const dist = join(root, 'packages/web/dist');
const assets = join(dist, 'assets');
const TARGET_KB = 300;

if (process.argv.includes('--build') || !existsSync(join(dist, 'index.html')))
  execSync('npm run build -w @signalbox/web', { cwd: root, stdio: 'inherit' });

const read = (file) => readFileSync(join(assets, file), 'utf8');
const gz = (file) => gzipSync(readFileSync(join(assets, file)), { level: 9 }).length;

/** Static imports of a chunk (`import … from "./x.js"` and bare `import "./x.js"`), as file names. */
function staticImports(file) {
  const code = read(file);
  const found = new Set();
  for (const m of code.matchAll(/(?:^|[;\n}])\s*import\s*(?:[\w*{}\s,$]+from\s*)?["']\.\/([\w.-]+\.js)["']/g))
    found.add(m[1]);
  for (const m of code.matchAll(/\bfrom\s*["']\.\/([\w.-]+\.js)["']/g)) found.add(m[1]);
  return [...found];
}

function closure(start) {
  const seen = new Set();
  const stack = [...start];
  while (stack.length) {
    const file = stack.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...staticImports(file));
  }
  return seen;
}

const html = readFileSync(join(dist, 'index.html'), 'utf8');
const entry = [...html.matchAll(/<script[^>]+src="[^"]*\/assets\/([\w.-]+\.js)"/g)].map((m) => m[1]);
const preloads = [...html.matchAll(/rel="modulepreload"[^>]*href="[^"]*\/assets\/([\w.-]+\.js)"/g)].map(
  (m) => m[1],
);
const files = readdirSync(assets).filter((f) => f.endsWith('.js'));
const loginChunk = files.filter((f) => /^LoginPage-[\w-]+\.js$/.test(f));
if (entry.length === 0 || loginChunk.length !== 1)
  throw new Error('cannot find the entry or the LoginPage chunk');

const loaded = closure([...entry, ...preloads, ...loginChunk]);
const sizes = [...loaded].map((f) => ({ file: f, gzip: gz(f) })).sort((a, b) => b.gzip - a.gzip);
const total = sizes.reduce((n, s) => n + s.gzip, 0);
const all = files.reduce((n, f) => n + gz(f), 0);
const result = {
  date: new Date().toISOString().slice(0, 10),
  sign_in_js_gzip_kb: +(total / 1024).toFixed(1),
  target_kb: TARGET_KB,
  pass: total / 1024 < TARGET_KB,
  chunks_loaded: sizes.length,
  all_js_gzip_kb: +(all / 1024).toFixed(1),
  chunks_total: files.length,
  largest: sizes.slice(0, 5).map((s) => `${basename(s.file)} ${(s.gzip / 1024).toFixed(1)} KB`),
};
console.log(JSON.stringify(result, null, 2));

if (process.argv.includes('--write')) {
  const row = `| ${result.date} | ${result.sign_in_js_gzip_kb} KB | ${result.chunks_loaded} | ${result.all_js_gzip_kb} KB in ${result.chunks_total} chunks | ${result.pass ? 'yes' : 'no'} |`;
  addReadmeRows('<!-- web-bundle results -->', [row]);
}
if (!result.pass) process.exitCode = 1;
