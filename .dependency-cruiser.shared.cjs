// Pieces of the two dependency-cruiser configurations (.dependency-cruiser.cjs for the server,
// .dependency-cruiser.web.cjs for the web console): the layer rule, the cycle rule and the common options.
const { join } = require('node:path');

/** A rule forbidding modules of one layer (test files excepted) to import from any of the layers above it. */
const layer = (name, from, above, testFile) => ({
  name: `layer-${name}`,
  comment: `${name} imports only from its own layer or below`,
  severity: 'error',
  from: { path: from, pathNot: testFile },
  to: { path: above.map((p) => `(${p})`).join('|') },
});

/** A rule forbidding import cycles among the modules under `src`. */
const noCircular = (src, comment) => ({
  name: 'no-circular',
  comment,
  severity: 'error',
  from: { path: src },
  to: { circular: true },
});

/** The options of a cruise of one package: its tsconfig, the file endings it resolves, what it leaves out. */
const options = ({ exclude, tsconfig, extensions }) => ({
  doNotFollow: { path: 'node_modules' },
  exclude: { path: exclude },
  // Type-only imports count: a layer that names a higher layer's types depends on it all the same.
  tsPreCompilationDeps: true,
  tsConfig: { fileName: join(__dirname, tsconfig) },
  enhancedResolveOptions: {
    exportsFields: ['exports'],
    conditionNames: ['import', 'require', 'node', 'default', 'types'],
    extensions,
  },
  reporterOptions: { text: { highlightFocused: true } },
});

module.exports = { layer, noCircular, options };
