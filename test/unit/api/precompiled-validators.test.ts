/**
 * The validators the build precompiles (ajv standalone code, dist/validators/<Kind>.cjs) stand in for the
 * run-time compile only for the schema they were made from, and say exactly what a run-time compile says.
 * The modules are generated here by the code the build runs, so the test does not depend on a build; each
 * test imports fresh modules, as validators are cached per module instance.
 */
import { Ajv } from 'ajv';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PrecompiledModule, PrecompiledSource } from '../../../controller/api/precompiled.js';
import type { Resource } from '../../../controller/api/types.js';

const API = 'orchctl.io/v1alpha1';

/** Fresh validate/precompiled modules and the built-in registry. */
async function fresh() {
  vi.resetModules();
  const precompiled = await import('../../../controller/api/precompiled.js');
  const { validateObject } = await import('../../../controller/api/validate.js');
  const { registry } = await import('../../../controller/config/crds.js');
  return { ...precompiled, validateObject, reg: registry() };
}

/** Runs generated module code as Node runs a file of dist/validators/ (its requires resolved from this package). */
function load(code: string): PrecompiledModule {
  const module = { exports: {} as PrecompiledModule };
  const wrapped = vm.runInThisContext(`(function (exports, require, module) {${code}\n})`) as (
    e: object,
    r: NodeJS.Require,
    m: object,
  ) => void;
  wrapped(module.exports, createRequire(import.meta.url), module);
  return module.exports;
}

const session = (spec: Record<string, unknown>, extra: Partial<Resource> = {}): Resource => ({
  apiVersion: API,
  kind: 'AgentSession',
  metadata: { name: 'fix-login', namespace: 'default' },
  spec: { agentRef: 'claude-code', projectRef: 'webapp', ...spec },
  ...extra,
});

/** Invalid manifests of several kinds: bounds, list-map keys, formats, unknown fields, secrets hints. */
const INVALID: Resource[] = [
  session({ maxDuration: '800h' }),
  session({ maxDuration: '45 minutes', restartBackoff: { initialDelay: '-1s', maxDelay: '25h' } }),
  session({
    env: [
      { name: 'A', value: '1' },
      { name: 'A', value: '2' },
    ],
    bogus: true,
  }),
  session({}, { status: { startedAt: 'yesterday' } } as Partial<Resource>),
  {
    apiVersion: API,
    kind: 'Agent',
    metadata: { name: 'a' },
    spec: { command: ['x'], readyTimeout: '2h', env: [{ name: 'B' }, { name: 'B' }] },
  },
  {
    apiVersion: API,
    kind: 'Silence',
    metadata: { name: 's', namespace: 'default' },
    spec: { matchers: [], startsAt: 'now', endsAt: '2025-01-31T18:00:00Z' },
  },
  {
    apiVersion: API,
    kind: 'NotificationChannel',
    metadata: { name: 'n' },
    spec: { type: 'pager', timeout: '6m', url: 'https://x', urlFrom: { value: 'y' } },
  },
  { apiVersion: 'v1', kind: 'Project', metadata: { name: 'Bad_Name', labels: { 'a/b/c': 'x' } }, spec: { nope: 1 } },
];

/** The modules the build would write, for the kinds of `m`'s registry, with `change` made to each. */
function generated(
  m: Awaited<ReturnType<typeof fresh>>,
  change: (p: PrecompiledModule) => PrecompiledModule = (p) => p,
): PrecompiledSource {
  const mods = new Map([...m.precompiledModules(m.reg.kinds)].map(([kind, code]) => [kind, change(load(code))]));
  return (kind) => mods.get(kind);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('precompiled validators', () => {
  it('validate a kind whose schema matches its hash without compiling anything', async () => {
    const m = await fresh();
    m.usePrecompiledSource(generated(m));
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    const errors = m.validateObject(session({ maxDuration: '800h' }), m.reg.resolve('AgentSession'));
    expect(errors.map((e) => e.message)).toEqual(['must be at most 720h (30 days), got 800h']);
    expect(compile).not.toHaveBeenCalled();
  });

  it('leave a kind whose schema differs from the precompiled one to the run-time compile', async () => {
    const m = await fresh();
    m.usePrecompiledSource(generated(m));
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    const project = m.reg.resolve('Project');
    const spec = project.schema.properties?.spec ?? {};
    // A registry whose Project has one more field than the one the module was generated from.
    const changed = {
      ...project,
      schema: {
        ...project.schema,
        properties: {
          ...project.schema.properties,
          spec: { ...spec, properties: { ...spec.properties, extra: { type: 'string' } } },
        },
      },
    };
    const obj = { apiVersion: API, kind: 'Project', metadata: { name: 'p' }, spec: { path: '/p', extra: 'x' } };
    expect(m.validateObject(obj, changed)).toEqual([]);
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('are not used from a module of another format (an older build)', async () => {
    const m = await fresh();
    m.usePrecompiledSource(generated(m, (p) => ({ ...p, format: 0 })));
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    m.validateObject(session({}), m.reg.resolve('AgentSession'));
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('give the same errors, and fill the same defaults, as validators compiled at run time', async () => {
    const run = async (precompiled: boolean) => {
      const m = await fresh();
      m.usePrecompiledSource(precompiled ? generated(m) : () => undefined);
      const compile = vi.spyOn(Ajv.prototype, 'compile');
      const objects = structuredClone([...INVALID, session({ restartBackoff: {} })]);
      const errors = objects.map((o) => m.validateObject(o, m.reg.resolve(o.kind)));
      expect(compile).toHaveBeenCalledTimes(precompiled ? 0 : new Set(objects.map((o) => o.kind)).size);
      compile.mockRestore();
      return { errors, objects };
    };
    const compiled = await run(false);
    const precompiled = await run(true);
    expect(precompiled).toEqual(compiled);
    for (const errors of compiled.errors.slice(0, INVALID.length)) expect(errors).not.toEqual([]);
    expect(compiled.errors.flat().map((e) => e.message)).toEqual(
      expect.arrayContaining([
        'must be at most 720h (30 days), got 800h',
        'must not be negative',
        'Duplicate value: ["A"]',
        'must be a duration like 45m',
        'must be a valid date-time',
        'unknown field "spec.bogus"',
        'must have at least 1 item',
        // The hint comes from the error's parent schema (ajv's verbose errors), kept in the generated code.
        'unknown field "spec.url": secrets are references; did you mean urlFrom: {env: NAME} (or {file: PATH})?',
      ]),
    );
  });
});
