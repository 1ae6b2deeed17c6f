/**
 * Manifest validation through the real pipeline apply uses (read YAML → resolve kind →
 * normalise → ajv from the CRDs → locate errors): every good manifest passes, every bad one
 * fails with the field path and file:line:column a person needs to fix it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { registry } from '../../../controller/config/crds.js';
import { readManifests, type ManifestError } from '../../../controller/config/manifest.js';
import { prepareManifests, ValidationFailed } from '../../../controller/client/apply.js';
import { validateObject } from '../../../controller/api/validate.js';
import type { Resource } from '../../../controller/api/types.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const rel = (...p: string[]) => path.relative(process.cwd(), path.join(ROOT, ...p));
const GOOD = rel('test/fixtures/manifests/good');
const BAD = rel('test/fixtures/manifests/bad');

/** Runs the apply pipeline's validation; returns the prepared objects or the located errors. */
function check(target: string) {
  const { docs, errors } = readManifests([target], true);
  if (errors.length) return { errors: errors.map((e) => e.message), objects: [] };
  try {
    return { errors: [] as string[], objects: prepareManifests(docs, registry()) };
  } catch (e) {
    if (e instanceof ValidationFailed) return { errors: e.errors.map((x: ManifestError) => x.message), objects: [] };
    throw e;
  }
}

describe('good manifests validate', () => {
  const files = fs.readdirSync(GOOD).sort();
  it.each(files)('%s', (f) => {
    const r = check(path.join(GOOD, f));
    expect(r.errors).toEqual([]);
    expect(r.objects.length).toBeGreaterThan(0);
  });

  it('examples/basic (the canonical example of issue 2)', () => {
    const r = check(rel('examples/basic'));
    expect(r.errors).toEqual([]);
    expect(r.objects.map((o) => `${o.kind.kind}/${o.manifest.metadata.name}`)).toEqual([
      'Project/webapp',
      'Agent/claude-code',
      'AgentSession/fix-login',
      'SessionPolicy/default',
    ]);
  });

  it('every kind is covered by a good fixture (but the outbox and decisions, which apply refuses)', () => {
    const kinds = new Set(check(GOOD).objects.map((o) => o.kind.kind));
    expect([...kinds].sort()).toEqual(
      registry()
        .kinds.map((k) => k.kind)
        .filter((k) => k !== 'Notification' && k !== 'Decision')
        .sort(),
    );
  });

  it('normalises: default namespace, paths resolved against the manifest folder, status, system fields dropped', () => {
    const objs = check(GOOD).objects;
    const by = (name: string) => objs.find((o) => o.manifest.metadata.name === name)!.manifest;
    const dir = path.join(ROOT, 'test/fixtures/manifests/good');
    expect(by('fix-login').metadata.namespace).toBe('default');
    expect(by('from-json').metadata.namespace).toBe('team-b');
    expect(by('devbox.local').metadata.namespace).toBeUndefined(); // cluster-scoped
    const inline = by('inline-agent').spec as Record<string, any>;
    expect(inline.workdir).toBe(path.resolve(dir, '../workspace'));
    expect(inline.promptFile).toBe(path.join(dir, 'prompts/task.md'));
    expect(inline.agent.systemPromptFile).toBe(path.join(dir, 'persona.md'));
    expect((by('aider').spec as Record<string, any>).systemPromptFile).toBe(path.join(dir, 'personas/reviewer.md'));
    expect((by('webapp.frontend').spec as Record<string, any>).path).toBe(
      path.join(process.env.HOME ?? '', 'src/webapp'),
    );
    const rt = by('roundtrip');
    expect(rt.status).toBeUndefined();
    expect(rt.metadata.uid).toBeUndefined();
    expect(rt.metadata.resourceVersion).toBeUndefined();
    expect(rt.metadata.annotations).toBeUndefined(); // only held the last-applied annotation
    expect(rt.metadata.finalizers).toEqual(['orchctl.io/stop-session']);
  });

  it('fills schema defaults in place, as the API server does', () => {
    const obj: Resource = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 'x', namespace: 'default' },
      spec: { agentRef: 'a', workdir: '/tmp' },
    };
    expect(validateObject(obj, registry().byKind.get('AgentSession')!)).toEqual([]);
    expect(obj.spec).toMatchObject({ desiredState: 'Running', restartPolicy: 'Never' });
  });
});

describe('bad manifests fail with file:line:column, document and JSON path', () => {
  const f = (name: string) => path.join(BAD, name);
  const cases: [string, string[]][] = [
    ['unknown-field.yaml', [`${f('unknown-field.yaml')}:7:3 (document 1) spec.colour: unknown field "spec.colour"`]],
    [
      'bad-duration.yaml',
      [`${f('bad-duration.yaml')}:13:16 (document 2) spec.maxDuration: must be a duration like 45m`],
    ],
    [
      'bad-enum.yaml',
      [
        `${f('bad-enum.yaml')}:7:18 (document 1) spec.restartPolicy: ` +
          'Unsupported value: must be one of "Never", "OnFailure", "Always"',
      ],
    ],
    [
      'bad-name.yaml',
      [
        `${f('bad-name.yaml')}:4:9 (document 1) metadata.name: Invalid value "Fix_Login": ` +
          'must be a lowercase RFC 1123 label: ' +
          "lowercase letters, digits and '-', starting and ending with a letter or digit",
      ],
    ],
    [
      'unknown-kind.yaml',
      [
        `${f('unknown-kind.yaml')}:2:7 (document 1) kind: ` +
          'no kind "AgentSesion" is registered for version "orchctl.io/v1alpha1" ' +
          '(known kinds: Agent, AgentSession, Autopilot, Decision, Evaluation, Event, Node, NotificationChannel, ' +
          'NotificationPolicy, Notification, Pipeline, Project, SessionPolicy, Silence)',
      ],
    ],
    ['missing-required.yaml', [`${f('missing-required.yaml')}:5:3 (document 1) spec.path: Required value`]],
    [
      'invalid-yaml.yaml',
      [
        `${f('invalid-yaml.yaml')}:6:3 (document 1) invalid YAML: ` +
          'Flow sequence in block collection must be sufficiently indented and end with a ]',
      ],
    ],
    ['duplicate-key.yaml', [`${f('duplicate-key.yaml')}:6:3 (document 1) invalid YAML: Map keys must be unique`]],
    [
      'duplicate.yaml',
      [
        `${f('duplicate.yaml')}:9:9 (document 2) metadata.name: ` +
          `duplicate object: agent "claude-code" is also defined in ${f('duplicate.yaml')} (document 1)`,
      ],
    ],
    [
      'agentref-and-agent.yaml',
      [`${f('agentref-and-agent.yaml')}:7:5 (document 1) spec.agent: may not be set together with spec.agentRef`],
    ],
    [
      'no-session-source.yaml',
      [
        `${f('no-session-source.yaml')}:5:3 (document 1) spec: one of spec.agentRef or spec.agent is required`,
        `${f('no-session-source.yaml')}:5:3 (document 1) spec: one of spec.projectRef or spec.workdir is required`,
      ],
    ],
    ['wrong-type.yaml', [`${f('wrong-type.yaml')}:7:16 (document 1) spec.maxRestarts: must be of type integer`]],
    [
      'wrong-api-version.yaml',
      [`${f('wrong-api-version.yaml')}:1:13 (document 1) apiVersion: must be "orchctl.io/v1alpha1"`],
    ],
    [
      'negative-duration.yaml',
      [`${f('negative-duration.yaml')}:5:23 (document 1) spec.maxSessionDuration: must not be negative`],
    ],
    ['duplicate-env.yaml', [`${f('duplicate-env.yaml')}:7:5 (document 1) spec.env: Duplicate value: ["A"]`]],
    [
      'bad-label.yaml',
      [
        `${f('bad-label.yaml')}:6:11 (document 1) metadata.labels.team: Invalid value "web team": ` +
          "must be empty or alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character",
      ],
    ],
    [
      'not-a-mapping.yaml',
      [`${f('not-a-mapping.yaml')}:1:1 (document 1) a manifest must be a mapping with apiVersion, kind, metadata`],
    ],
  ];

  it.each(cases)('%s', (name, expected) => {
    expect(check(f(name)).errors).toEqual(expected);
  });

  it('cluster-scoped kinds refuse a namespace', () => {
    const errs = check(f('cluster-scoped-namespace.yaml')).errors;
    expect(errs.length).toBeGreaterThan(0);
    expect(errs).toContain(
      `${f('cluster-scoped-namespace.yaml')}:5:3 (document 1) ` +
        'metadata.namespace: Node is cluster-scoped and has no namespace',
    );
  });

  it('every bad fixture has a case, and every case fails', () => {
    const named = new Set([...cases.map(([n]) => n), 'cluster-scoped-namespace.yaml']);
    expect(fs.readdirSync(BAD).sort()).toEqual([...named].sort());
  });

  it('a directory of bad files reports every error in reading order, nothing prepared', () => {
    const r = check(BAD);
    expect(r.objects).toEqual([]);
    // YAML errors stop before schema validation; the rest are all reported together, sorted.
    expect(r.errors).toEqual([
      `${f('duplicate-key.yaml')}:6:3 (document 1) invalid YAML: Map keys must be unique`,
      `${f('invalid-yaml.yaml')}:6:3 (document 1) invalid YAML: ` +
        'Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    const schemaErrors = check(path.join(ROOT, 'test/fixtures/manifests/bad/unknown-field.yaml'));
    expect(schemaErrors.errors[0]).toMatch(
      /unknown-field\.yaml:7:3 \(document 1\) spec\.colour: unknown field "spec\.colour"$/,
    );
  });
});

describe('a literal secret', () => {
  const channel = (spec: Record<string, unknown>): Resource => ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'NotificationChannel',
    metadata: { name: 'ops', namespace: 'default' },
    spec,
  });
  const errors = (o: Resource) => validateObject(o, registry().byKind.get(o.kind)!).map((e) => e.message);

  it('beside its reference field says which reference to write', () => {
    expect(errors(channel({ type: 'webhook', url: 'https://hooks.example/T0/B0/secret' }))).toEqual([
      'unknown field "spec.url": secrets are references; did you mean urlFrom: {env: NAME} (or {file: PATH})?',
    ]);
  });

  it('as the value of a reference says a secret is never written in an object', () => {
    expect(errors(channel({ type: 'webhook', urlFrom: { value: 'https://hooks.example/T0/B0/secret' } }))).toEqual([
      expect.stringMatching(/^unknown field "spec.urlFrom.value": a secret is never written in an object; use \{env/),
    ]);
  });

  it('leaves other unknown fields plain', () => {
    const project: Resource = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Project',
      metadata: { name: 'p', namespace: 'default' },
      spec: { path: '/tmp', url: 'https://example.com/repo.git' },
    };
    expect(errors(project)).toEqual(['unknown field "spec.url"']);
  });
});
