import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webSourcesDigest } from '../packages/web/sources-digest.mjs';

describe('the web build digest', () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function tree() {
    root = mkdtempSync(join(tmpdir(), 'sb-web-digest-'));
    const web = join(root, 'web');
    mkdirSync(join(web, 'src', 'app'), { recursive: true });
    mkdirSync(join(root, 'contracts', 'src'), { recursive: true });
    writeFileSync(join(web, 'src', 'app', 'App.tsx'), 'export const App = 1;\n');
    writeFileSync(join(web, 'index.html'), '<div id="root"></div>\n');
    writeFileSync(join(root, 'contracts', 'src', 'index.ts'), 'export const x = 1;\n');
    return web;
  }

  it('changes with the content of a source or a contract, not with a test file or a modification time', () => {
    const web = tree();
    const first = webSourcesDigest(web);
    expect(first).toMatch(/^[0-9a-f]{64}$/);

    // An older time on the same content: the build made from it is still current.
    utimesSync(join(web, 'src', 'app', 'App.tsx'), new Date(2000, 0, 1), new Date(2000, 0, 1));
    expect(webSourcesDigest(web)).toBe(first);
    writeFileSync(join(web, 'src', 'app', 'App.test.ts'), 'it("x", () => {});\n');
    expect(webSourcesDigest(web)).toBe(first);

    writeFileSync(join(web, 'src', 'app', 'App.tsx'), 'export const App = 2;\n');
    const second = webSourcesDigest(web);
    expect(second).not.toBe(first);

    writeFileSync(join(root, 'contracts', 'src', 'index.ts'), 'export const x = 2;\n');
    expect(webSourcesDigest(web)).not.toBe(second);
  });

  it('tells a renamed file from the same content under its old name', () => {
    const web = tree();
    const first = webSourcesDigest(web);
    rmSync(join(web, 'src', 'app', 'App.tsx'));
    writeFileSync(join(web, 'src', 'app', 'Shell.tsx'), 'export const App = 1;\n');
    expect(webSourcesDigest(web)).not.toBe(first);
  });
});
