// The import rules of src/ (`npm run depcruise`, part of `npm run check`). docs/architecture.md draws the layers.
// LAYERS runs from the top (entry points) to the bottom (what everything may use): a module may import modules of
// its own layer's folder and of the layers below it, never one above. Test files (*.test.ts, *.test-helpers.ts) are not checked (they may reach
// anything they exercise); everything else in src/ is, and must sit in one of the layers. Inside data/, DATA_LAYERS
// orders its folders the same way (a level's folders side by side may not import each other either).

/** Each layer: a name and the paths (below src/) it covers. */
const LAYERS = [
  ['cli', ['cli/']],
  ['server', ['server.ts']],
  ['commands', ['commands/']],
  ['app', ['app.ts']],
  ['startup', ['startup.ts', 'startup.queries.ts']],
  ['web', ['web/']],
  ['graphql', ['graphql/']],
  ['status', ['status/']],
  ['mcp', ['mcp/']],
  ['api', ['api/']],
  ['access', ['access/']],
  ['webhooks', ['webhooks/']],
  ['dumps', ['dumps/']],
  ['changes', ['changes/']],
  ['auth', ['auth/']],
  ['metrics', ['metrics/']],
  ['api-keys', ['api-keys/']],
  ['data', ['data/']],
  ['list-filter', ['list-filter/']],
  ['http', ['http/']],
  ['announcements', ['announcements/']],
  ['db', ['db/']],
  ['redis', ['redis.ts']],
  ['geo', ['geo/']],
  ['config', ['config.ts', 'config.values.ts']],
  ['base', ['errors.ts', 'version.ts', 'cores.ts', 'memo.ts', 'memory-budget.ts', 'threads.ts', 'text.ts']],
];

/**
 * The layers inside data/ (docs/architecture.md), from the top down; the folders of one level sit side by side: each
 * may import its own folder and the levels below, never a level above nor a neighbour of its level.
 */
const DATA_LAYERS = [
  [['scheduler', ['data/scheduler/']]],
  [
    ['import', ['data/import/']],
    ['sync', ['data/sync/']],
  ],
  [
    ['github', ['data/github/']],
    ['owasp', ['data/owasp/']],
  ],
  [
    ['geocode', ['data/geocode/']],
    ['snapshots', ['data/snapshots/']],
    ['health', ['data/health/']],
  ],
  [['base', ['data/base/']]],
];

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathsOf = (paths) => `^src/(${paths.map(escapeRegExp).join('|')})`;

const layerRules = LAYERS.slice(1).map(([name, paths], index) => ({
  name: `layer-${name}`,
  severity: 'error',
  comment: `${name} is below ${LAYERS.slice(0, index + 1)
    .map(([above]) => above)
    .join(', ')}: it must not import them.`,
  from: { path: pathsOf(paths) },
  to: { path: pathsOf(LAYERS.slice(0, index + 1).flatMap(([, above]) => above)) },
}));

const dataLayerRules = DATA_LAYERS.flatMap((level, index) =>
  level.map(([name, paths]) => {
    const above = DATA_LAYERS.slice(0, index).flat();
    const beside = level.filter(([other]) => other !== name);
    const forbidden = [...above, ...beside];
    return {
      name: `data-layer-${name}`,
      severity: 'error',
      comment: `data/${name} must not import ${forbidden.map(([other]) => `data/${other}`).join(', ')} (above it or beside it).`,
      from: { path: pathsOf(paths) },
      to: { path: pathsOf(forbidden.flatMap(([, other]) => other)) },
    };
  }),
).filter((rule) => rule.to.path !== pathsOf([]));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A file must not import, directly or through others, a file that imports it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'in-a-layer',
      severity: 'error',
      comment: 'Every source file belongs to a layer of .dependency-cruiser.cjs (add its folder there).',
      from: { path: '^src/', pathNot: [pathsOf(LAYERS.flatMap(([, paths]) => paths)), '\\.test(-helpers)?\\.ts$'] },
      to: {},
    },
    ...layerRules,
    {
      name: 'in-a-data-layer',
      severity: 'error',
      comment: 'Every source file of data/ belongs to a layer of DATA_LAYERS in .dependency-cruiser.cjs.',
      from: {
        path: '^src/data/',
        pathNot: [pathsOf(DATA_LAYERS.flat().flatMap(([, paths]) => paths)), '\\.test(-helpers)?\\.ts$'],
      },
      to: {},
    },
    ...dataLayerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test(-helpers)?\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
