import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { languageCodes } from './languages';

const here = fileURLToPath(new URL('.', import.meta.url));
const src = join(here, '..');

type Tree = { [key: string]: string | Tree };
// A language is its main file plus, when present, resources/<lang>.json (strings of later screens) and
// errors/<lang>.json (the wording of error codes, fields and things).
const load = (lang: string): Tree => {
  const main = JSON.parse(readFileSync(join(here, `${lang}.json`), 'utf8')) as Tree;
  const parts = ['resources', 'errors'].map((dir) => join(here, dir, `${lang}.json`)).filter(existsSync);
  return Object.assign(main, ...parts.map((part) => JSON.parse(readFileSync(part, 'utf8')) as Tree));
};

function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.set(path, value);
    else for (const [k, v] of flatten(value, path)) out.set(k, v);
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.test.ts') ? [path] : [];
  });
}

const english = flatten(load('en'));

describe('translation catalogue', () => {
  it('has a file for each of the 12 languages', () => {
    const files = readdirSync(here)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.replace('.json', ''));
    expect(files.sort()).toEqual([...languageCodes].sort());
  });

  it.each(languageCodes.filter((l) => l !== 'en'))(
    '%s has every English key, with the same placeholders',
    (lang) => {
      const other = flatten(load(lang));
      const missing = [...english.keys()].filter((k) => !other.get(k)?.trim());
      expect(missing, `${lang} lacks keys`).toEqual([]);
      const extra = [...other.keys()].filter((k) => !english.has(k));
      expect(extra, `${lang} has keys English lacks`).toEqual([]);
      for (const [key, text] of english) {
        expect(placeholders(other.get(key)!), `${lang}: ${key}`).toEqual(placeholders(text));
      }
    },
  );

  it('knows every key the components use', () => {
    const used = new Set<string>();
    for (const file of sourceFiles(src)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bt\(\s*'([a-zA-Z][\w]*\.[\w.]+)'/g)) used.add(m[1]);
      for (const m of text.matchAll(/titleKey: '([\w.]+)'/g)) used.add(m[1]);
    }
    expect([...used].filter((k) => !english.has(k))).toEqual([]);
  });
});

describe('components', () => {
  const labelAttributes = new Set(['label', 'title', 'placeholder', 'aria-label', 'helperText', 'alt']);

  // Parses each component with the TypeScript compiler: JSX text with letters, or a label-like attribute
  // given a plain string, is a user-facing literal that bypasses the catalogue.
  it('show no text outside the catalogue', () => {
    const found: string[] = [];
    for (const file of sourceFiles(src).filter((f) => f.endsWith('.tsx'))) {
      const source = ts.createSourceFile(
        file,
        readFileSync(file, 'utf8'),
        ts.ScriptTarget.Latest,
        true,
        ts.ScriptKind.TSX,
      );
      const visit = (node: ts.Node) => {
        if (ts.isJsxText(node) && /\p{L}/u.test(node.text))
          found.push(`${file.replace(src, '')}: ${node.text.trim()}`);
        if (
          ts.isJsxAttribute(node) &&
          labelAttributes.has(node.name.getText(source)) &&
          node.initializer &&
          ts.isStringLiteral(node.initializer) &&
          /\p{L}/u.test(node.initializer.text)
        )
          found.push(`${file.replace(src, '')}: ${node.name.getText(source)}="${node.initializer.text}"`);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(found).toEqual([]);
  });
});
