// Layering of controller/ (docs/architecture.md), checked by `npm run lint`:
//   api <- store <- {runtime, observers, agents, llm, notify, client} <- reconcilers <- {metrics, console, cli} <- app
// A folder may import its own layer's folders and any layer below, never one above.

// Fail loudly when swc is missing: depcruise would quietly fall back to acorn's loose parser, which
// guesses its way through TypeScript and can miss imports without a word.
require('@swc/core');

const MID = 'runtime|observers|agents|llm|notify|client';

/** A rule forbidding `folder` to import anything under controller/ except the `allowed` folders. */
function onlyImports(name, folder, allowed, comment) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: `^controller/(${folder})/` },
    to: { path: '^controller/', pathNot: `^controller/(${allowed})/` },
  };
}

module.exports = {
  forbidden: [
    onlyImports(
      'api-imports-only-api',
      'api',
      'api',
      'controller/api/ is the bottom layer (types, schemas, validation, policy vocabulary): it may import only ' +
        'other api/ modules. Move the shared piece down into api/ instead of importing upwards.',
    ),
    onlyImports(
      'store-imports-only-api',
      'store',
      'store|api',
      'controller/store/ may import only store/ and api/. Runtime, reconcilers and the rest build on the store, ' +
        'not the other way round.',
    ),
    onlyImports(
      'middle-layer-stays-below-reconcilers',
      MID,
      `${MID}|store|api`,
      'runtime/, observers/, agents/, llm/, notify/ and client/ may import each other, store/ and api/, but nothing ' +
        'above them (reconcilers/, metrics/, cli/, app/). Move the shared piece down, or pass it in.',
    ),
    onlyImports(
      'reconcilers-stay-below-metrics-cli-app',
      'reconcilers',
      `reconcilers|${MID}|store|api`,
      'controller/reconcilers/ may import runtime/, observers/, agents/, llm/, notify/, client/, store/ and api/, ' +
        'not metrics/, cli/ or app/: those sit on top and wire reconcilers in.',
    ),
    onlyImports(
      'metrics-imports-nothing-from-reconcilers-cli-app',
      'metrics',
      `metrics|${MID}|store|api`,
      'controller/metrics/ reads status through the types in api/ and must not import reconcilers/ (stricter ' +
        'than the layer order), nor cli/ or app/, which start it.',
    ),
    onlyImports(
      'console-imports-only-shared-pieces',
      'console',
      `console|cli/printers|${MID}|store|api`,
      'controller/console/ (the web console) acts through the shared functions of client/ (the same operations as ' +
        'the CLI commands) and renders with the printers of cli/printers/; it imports no reconciler, no other CLI ' +
        'module and not app/.',
    ),
    onlyImports(
      'cli-imports-nothing-from-reconcilers',
      'cli',
      `cli|console|app|metrics|${MID}|store|api`,
      'controller/cli/ must not import reconcilers/ (stricter than the layer order): it starts them through ' +
        'the composition root in app/, and the types it shares with them live in api/.',
    ),
    {
      name: 'controller-folder-has-a-layer',
      comment:
        'Every module under controller/ lives in a layer folder (api, store, runtime, observers, agents, llm, ' +
        'notify, client, reconcilers, metrics, console, cli, app). A new folder needs its layer in .dependency-cruiser.cjs.',
      severity: 'error',
      from: {
        path: '^controller/',
        pathNot: `^controller/(api|store|${MID}|reconcilers|metrics|console|cli|app)/`,
      },
      to: {},
    },
    {
      name: 'controller-imports-no-test-or-bench',
      comment:
        'controller/ must not import test/ or bench/: they exercise the controller, and shipped code that ' +
        'leaned on them would carry test code and turn that direction round.',
      severity: 'error',
      from: { path: '^controller/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-circular',
      comment:
        'This import closes a cycle between controller/ modules (`import type` counts too: a cycle of types is ' +
        'still two modules that cannot be read apart). Move the shared part into a module both can import.',
      severity: 'error',
      from: { path: '^controller/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'This import does not resolve to a file or an installed package. An unresolved import is invisible to ' +
        'the layering rules above, so it fails here.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // swc parses TypeScript itself (TypeScript 7 has no compiler API for depcruise to use). It reads
    // the source as written, so `import type` counts like any import: a type from reconcilers/ in
    // cli/ is the same coupling as a value. It misses inline import('…') types, which Biome forbids
    // in controller/ (scripts/no-inline-import-type.grit).
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    moduleSystems: ['es6', 'cjs'],
    // Resolve package subpath exports (`chrono-node/en`) as Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
