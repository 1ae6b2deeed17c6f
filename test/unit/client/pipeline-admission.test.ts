/**
 * Admission of Pipelines through the pipeline apply uses (schema, then admission): the graph's
 * rules with the field named (unique names, known dependencies, no self-dependency, no cycle,
 * session names that fit 63 characters, reserved labels), and each phase's template validated as
 * the AgentSession it will become, its errors pointed at the template's field.
 */
import { describe, expect, it } from 'vitest';
import { registry } from '../../../controller/config/crds.js';
import type { Resource } from '../../../controller/api/types.js';
import { formatPath, validateObject } from '../../../controller/api/validate.js';
import { admissionErrors } from '../../../controller/client/admission.js';
import { resolvePaths } from '../../../controller/client/normalize.js';

const template = { agentRef: 'sim', workdir: '/tmp', prompt: 'do it' };
const pipeline = (phases: unknown[], name = 'pl'): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Pipeline',
  metadata: { name, namespace: 'default' },
  spec: { phases },
});

function problems(o: Resource): string[] {
  const kind = registry().byKind.get(o.kind)!;
  const schema = validateObject(structuredClone(o), kind);
  const errs = schema.length ? schema : admissionErrors(o, kind);
  return errs.map((e) => `${formatPath(e.path)}: ${e.message}`);
}

describe('Pipeline admission', () => {
  it('admits phases in order and a DAG', () => {
    expect(
      problems(
        pipeline([
          { name: 'a', template },
          { name: 'b', template },
        ]),
      ),
    ).toEqual([]);
    expect(
      problems(
        pipeline([
          { name: 'a', dependsOn: [], template },
          { name: 'b', dependsOn: ['a'], template },
          { name: 'c', dependsOn: ['a'], template },
          { name: 'd', dependsOn: ['b', 'c'], template: { ...template, labels: { team: 'x' } } },
        ]),
      ),
    ).toEqual([]);
  });

  it.each([
    [
      [
        { name: 'a', template },
        { name: 'a', template },
      ],
      'spec.phases[1].name: Duplicate value "a": phase 0 has the same name',
    ],
    [
      [{ name: 'a', dependsOn: ['nope'], template }],
      'spec.phases[0].dependsOn[0]: Unsupported value "nope": no phase of this pipeline is named so',
    ],
    [[{ name: 'a', dependsOn: ['a'], template }], 'spec.phases[0].dependsOn[0]: phase "a" cannot depend on itself'],
    [
      [
        { name: 'a', dependsOn: ['c'], template },
        { name: 'b', dependsOn: ['a'], template },
        { name: 'c', dependsOn: ['b'], template },
      ],
      'spec.phases[0].dependsOn: dependency cycle: a → c → b → a',
    ],
    [
      [{ name: 'a', template: { ...template, labels: { 'orchctl.io/phase': 'x' } } }],
      'spec.phases[0].template.labels.orchctl.io/phase: is set by the pipeline on its sessions',
    ],
  ])('refuses %j', (phases, message) => {
    expect(problems(pipeline(phases))).toContain(message);
  });

  it('refuses a session name over 63 characters, naming the phase', () => {
    const long = 'p'.repeat(40);
    expect(problems(pipeline([{ name: 'x'.repeat(30), template }], long))).toEqual([
      `spec.phases[0].name: the phase's session name "${long}-${'x'.repeat(30)}" is 71 characters, over 63: shorten it`,
    ]);
  });

  it('refuses more than 50 phases and a phase name that is not a DNS label (schema)', () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `p${i}`, template }));
    expect(problems(pipeline(many)).join('\n')).toMatch(/spec\.phases: .*50/);
    expect(problems(pipeline([{ name: 'Bad_Name', template }])).join('\n')).toMatch(/spec\.phases\[0\]\.name/);
  });

  it('validates each template as the AgentSession it becomes, the error at the template field', () => {
    // Neither agentRef nor agent: the AgentSession schema requires one.
    const noAgent = problems(pipeline([{ name: 'a', template: { workdir: '/tmp', prompt: 'x' } }]));
    expect(noAgent.length).toBeGreaterThan(0);
    expect(noAgent.every((p) => p.startsWith('spec.phases[0].template'))).toBe(true);
    // The AgentSession admission too: an inline agent's prompt too long for argument delivery.
    const agent = { command: ['sim'], promptDelivery: 'argument' };
    const long = problems(pipeline([{ name: 'a', template: { agent, workdir: '/tmp', prompt: 'x'.repeat(13_000) } }]));
    expect(long).toEqual([expect.stringMatching(/^spec\.phases\[0\]\.template\.prompt: is 13000 bytes/)]);
  });

  it('resolves relative paths of the templates against the manifest directory', () => {
    const o = pipeline([{ name: 'a', template: { agentRef: 'sim', workdir: 'repo', promptFile: 'tasks/a.md' } }]);
    resolvePaths(o, '/base');
    expect((o.spec as { phases: { template: object }[] }).phases[0].template).toEqual({
      agentRef: 'sim',
      workdir: '/base/repo',
      promptFile: '/base/tasks/a.md',
    });
  });
});
