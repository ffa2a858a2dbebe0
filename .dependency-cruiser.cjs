// The layering of packages/server/src (see the server's design notes), checked by `npm run lint`.
// From top to bottom; a module imports only from its own layer or below, never above, and never in a cycle:
//   1. app.ts, main.ts                          composition root
//   1b. cli/                                    the remote client commands (signalbox login, run, …): a client of
//                                               a server's REST API, it uses only the ground floor and the
//                                               contracts, and only main.ts uses it
//   2. features/<name>/                         routes, services and stores of one product area; another feature
//                                               only through its public entry (features/<name>/index.ts)
//   2b. access/                                 who a request is and what it may reach: the auth hook, the
//                                               project guard, sessions, tokens, sign-in throttle, shared answers
//   3. tasks/, live/, scheduler/, alerts/,      engines; runners/ (remote runners: the server's side in
//      runners/                                 runners/server/, the runner process in runners/client/) and
//                                               deps.ts (the bag of engines and ground-floor services the
//                                               composition root hands down) sit here too
//   4. http/                                    generic Fastify plumbing
//   5. audit/, db/, lib/, metrics/,             ground floor; runner-protocol/ is the messages and sealing
//      runner-protocol/, config.ts, paths.ts,   both ends of a runner connection speak
//      ports.ts, version.ts
// Test files (*.test.ts) may import anything; nothing else in src imports from the test folder.
const { layer, noCircular, options } = require('./.dependency-cruiser.shared.cjs');

const src = '^packages/server/src/';
const testFile = '\\.test\\.ts$';

const composition = `${src}(app|main)\\.ts$`;
const client = `${src}cli/`;
const features = `${src}features/`;
const access = `${src}access/`;
const engines = `${src}((tasks|live|scheduler|alerts|runners)/|deps\\.ts$)`;
const http = `${src}http/`;
const ground = `${src}((audit|db|lib|metrics|runner-protocol)/|(config|paths|ports|version)\\.ts$)`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    noCircular(src, 'Modules import each other in a cycle; break it by moving the shared part down a layer'),
    {
      name: 'not-to-test',
      comment: 'Only test files import from the test folder',
      severity: 'error',
      from: { path: src, pathNot: testFile },
      to: { path: '^packages/server/test/' },
    },
    layer('client', client, [composition, features, access, engines, http], testFile),
    {
      name: 'client-from-main',
      comment: 'Only main.ts starts the client commands; the server never depends on them',
      severity: 'error',
      from: { path: src, pathNot: [`${src}main\\.ts$`, client, testFile] },
      to: { path: client },
    },
    layer('features', features, [composition], testFile),
    {
      name: 'feature-public-entry',
      comment: "A feature uses another feature only through that feature's index.ts",
      severity: 'error',
      from: { path: `${features}([^/]+)/`, pathNot: testFile },
      to: { path: `${features}[^/]+/`, pathNot: [`${features}$1/`, `${features}[^/]+/index\\.ts$`] },
    },
    layer('access', access, [composition, features], testFile),
    layer('engines', engines, [composition, features, access], testFile),
    layer('http', http, [composition, features, access, engines], testFile),
    layer('ground', ground, [composition, features, access, engines, http], testFile),
  ],
  options: options({
    exclude: '^packages/(web|contracts)/',
    tsconfig: 'packages/server/tsconfig.json',
    extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
  }),
};
