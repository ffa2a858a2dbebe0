// The layering of packages/web/src, checked by `npm run lint` (the server's is in .dependency-cruiser.cjs).
// From top to bottom; a module imports only from its own layer or below, never above, and never in a cycle:
//   1. main.tsx, app/        the shell: routes, the session root, the drawer, the live-status banner
//   2. features/<name>/      one product area each; another feature only through its public entry (index.ts)
//   3. components/           the UI kit every feature shares: forms, dialogs, tables, page header, states
//   4. api/, i18n/, lib/     the HTTP and socket clients, resource queries; the translations; stored prefs
// Test files (*.test.ts) may import anything.
const { layer, noCircular, options } = require('./.dependency-cruiser.shared.cjs');

const src = '^packages/web/src/';
const testFile = '\\.test\\.tsx?$';

const shell = `${src}(main\\.tsx$|app/)`;
const features = `${src}features/`;
const components = `${src}components/`;
const ground = `${src}(api|i18n|lib)/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    noCircular(src, 'Modules of the web console depend on each other in one direction only'),
    {
      name: 'web-feature-public-entry',
      comment: "A feature uses another feature only through that feature's index.ts",
      severity: 'error',
      from: { path: `${features}([^/]+)/`, pathNot: testFile },
      to: { path: `${features}[^/]+/`, pathNot: [`${features}$1/`, `${features}[^/]+/index\\.tsx?$`] },
    },
    layer('features', features, [shell], testFile),
    layer('components', components, [shell, features], testFile),
    layer('ground', ground, [shell, features, components], testFile),
  ],
  options: options({
    exclude: '^packages/(server|contracts)/',
    tsconfig: 'packages/web/tsconfig.json',
    extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'],
  }),
};
