// Layering of controller/ (docs/architecture.md), checked by `npm run lint`:
//   api <- config <- store <- {runtime, observers, agents, llm, notify, client} <- reconcilers <- {metrics, console, cli} <- app
// api/ is types and pure rules (no file, process or network I/O); config/ reads and writes the files
// api/ describes (config, manifests, CRDs, paths).
// A folder may import its own layer's folders and any layer below, never one above.

// Fail loudly when swc is missing: depcruise would quietly fall back to acorn's loose parser, which
// guesses its way through TypeScript and can miss imports without a word.
require('@swc/core');

const MID = 'runtime|observers|agents|llm|notify|client';

/** Node's modules that touch files, processes, the network or the host: none of them in api/. */
const IO_MODULES = 'fs|fs/promises|child_process|os|net|tls|http|https|http2|dgram|dns|cluster|worker_threads|readline';

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
    {
      name: 'api-does-no-io',
      comment:
        'controller/api/ is types and pure rules: it may not import Node modules that read or write files, run ' +
        'processes or use the network. Put what does (loading a config, a manifest, the CRDs) in controller/config/.',
      severity: 'error',
      from: { path: '^controller/api/' },
      to: { dependencyTypes: ['core'], path: `^(node:)?(${IO_MODULES})$` },
    },
    onlyImports(
      'config-imports-only-api',
      'config',
      'config|api',
      'controller/config/ (files the api describes: config, manifests, CRDs, paths) may import only config/ and ' +
        'api/; the store and everything above build on it.',
    ),
    onlyImports(
      'store-imports-only-api',
      'store',
      'store|config|api',
      'controller/store/ may import only store/, config/ and api/. Runtime, reconcilers and the rest build on the store, ' +
        'not the other way round.',
    ),
    onlyImports(
      'middle-layer-stays-below-reconcilers',
      MID,
      `${MID}|store|config|api`,
      'runtime/, observers/, agents/, llm/, notify/ and client/ may import each other, store/, config/ and api/, but nothing ' +
        'above them (reconcilers/, metrics/, cli/, app/). Move the shared piece down, or pass it in.',
    ),
    onlyImports(
      'reconcilers-stay-below-metrics-cli-app',
      'reconcilers',
      `reconcilers|${MID}|store|config|api`,
      'controller/reconcilers/ may import runtime/, observers/, agents/, llm/, notify/, client/, store/ and api/, ' +
        'not metrics/, cli/ or app/: those sit on top and wire reconcilers in.',
    ),
    {
      name: 'no-cross-reconciler-imports',
      comment:
        'A reconciler folder (controller/reconcilers/<name>/) must not import another reconciler folder: each ' +
        'owns its kind and reconciles alone, like a controller-runtime controller. Move what two share into a ' +
        'lower layer (a pure rule on api types into api/, an I/O helper into runtime/ or observers/). The shared ' +
        'wiring at the top of reconcilers/ (services.ts, any file directly in reconcilers/) stays allowed.',
      severity: 'error',
      from: { path: '^controller/reconcilers/([^/]+)/' },
      to: { path: '^controller/reconcilers/[^/]+/', pathNot: '^controller/reconcilers/$1/' },
    },
    onlyImports(
      'metrics-imports-nothing-from-reconcilers-cli-app',
      'metrics',
      `metrics|${MID}|store|config|api`,
      'controller/metrics/ reads status through the types in api/ and must not import reconcilers/ (stricter ' +
        'than the layer order), nor cli/ or app/, which start it.',
    ),
    onlyImports(
      'console-imports-only-shared-pieces',
      'console',
      `console|cli/printers|${MID}|store|config|api`,
      'controller/console/ (the web console) acts through the shared functions of client/ (the same operations as ' +
        'the CLI commands) and renders with the printers of cli/printers/; it imports no reconciler, no other CLI ' +
        'module and not app/.',
    ),
    onlyImports(
      'cli-imports-nothing-from-reconcilers',
      'cli',
      `cli|console|app|metrics|${MID}|store|config|api`,
      'controller/cli/ must not import reconcilers/ (stricter than the layer order): it starts them through ' +
        'the composition root in app/, and the types it shares with them live in api/.',
    ),
    {
      name: 'controller-folder-has-a-layer',
      comment:
        'Every module under controller/ lives in a layer folder (api, config, store, runtime, observers, agents, llm, ' +
        'notify, client, reconcilers, metrics, console, cli, app). A new folder needs its layer in .dependency-cruiser.cjs.',
      severity: 'error',
      from: {
        path: '^controller/',
        pathNot: `^controller/(api|config|store|${MID}|reconcilers|metrics|console|cli|app)/`,
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
      name: 'cli-registrations-load-commands-lazily',
      comment:
        'controller/cli/main.ts and the command registrations (cli/commands/*.cmd.ts) load at every start-up: ' +
        "they may import a command's implementation only with await import(), so `orchctl get` never pays " +
        'for ajv or the controller. Put what a registration needs in cli/register.ts.',
      severity: 'error',
      from: { path: '^controller/cli/(main|commands/[^/]+[.]cmd)[.]ts$' },
      to: { path: '^controller/cli/commands/', pathNot: '[.]cmd[.]ts$', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'agent-drivers-only-through-the-registry',
      comment:
        'Knowledge of one agent CLI (Claude Code, Codex, Gemini CLI) stays in controller/agents/: the rest ' +
        'reaches a driver only through agents/drivers.ts (driverFor), never its module. Add what you need to ' +
        'the AgentDriver interface (agents/driver.ts) instead. scripts/check-agent-knowledge.mjs checks names.',
      severity: 'error',
      from: { path: '^controller/', pathNot: '^controller/agents/' },
      to: { path: '^controller/agents/(claude-code|codex|gemini-cli)' },
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
