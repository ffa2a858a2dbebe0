// The layering of packages/server/src (see the server's design notes), checked by `npm run lint`.
// From top to bottom; a module imports only from its own layer or below, never above, and never in a cycle:
//   1. app.ts, main.ts                          composition root
//   2. features/<name>/                         routes, services and stores of one product area
//   3. tasks/, live/, scheduler/, alerts/,      engines; runners/ (the remote-runner protocol and process) and
//      runners/                                 deps.ts (the bag of engines and ground-floor services the
//                                               composition root hands down) sit here too
//   4. http/                                    generic Fastify plumbing
//   5. audit/, db/, lib/, metrics/, config.ts, paths.ts, ports.ts, version.ts ground floor
// Test files (*.test.ts) may import anything; nothing else in src imports from the test folder.
const src = '^packages/server/src/';
const testFile = '\\.test\\.ts$';

const composition = `${src}(app|main)\\.ts$`;
const features = `${src}features/`;
const engines = `${src}((tasks|live|scheduler|alerts|runners)/|deps\\.ts$)`;
const http = `${src}http/`;
const ground = `${src}((audit|db|lib|metrics)/|(config|paths|ports|version)\\.ts$)`;

/** A rule forbidding modules of one layer (tests excepted) to import from any of the layers above it. */
const layer = (name, from, above) => ({
  name: `layer-${name}`,
  comment: `${name} imports only from its own layer or below`,
  severity: 'error',
  from: { path: from, pathNot: testFile },
  to: { path: above.map((p) => `(${p})`).join('|') },
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules import each other in a cycle; break it by moving the shared part down a layer',
      severity: 'error',
      from: { path: src },
      to: { circular: true },
    },
    {
      name: 'not-to-test',
      comment: 'Only test files import from the test folder',
      severity: 'error',
      from: { path: src, pathNot: testFile },
      to: { path: '^packages/server/test/' },
    },
    layer('features', features, [composition]),
    layer('engines', engines, [composition, features]),
    layer('http', http, [composition, features, engines]),
    layer('ground', ground, [composition, features, engines, http]),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^packages/(web|contracts)/' },
    // Type-only imports count: a layer that names a higher layer's types depends on it all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: require('node:path').join(__dirname, 'packages/server/tsconfig.json') },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
