/** spec.nodeName and spec.nodeSelector of AgentSessions and Projects: the CRD's bounds, then the label rules. */
import { describe, expect, it } from 'vitest';
import { registry } from '../../../controller/config/crds.js';
import type { Resource } from '../../../controller/api/types.js';
import { formatPath, validateObject } from '../../../controller/api/validate.js';
import { admissionErrors } from '../../../controller/client/admission.js';

const obj = (kind: string, spec: Record<string, unknown>): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind,
  metadata: { name: 'x', namespace: 'default' },
  spec,
});

/** Schema errors first, as apply reports them; admission only for an object the schema admits. */
function problems(o: Resource): string[] {
  const kind = registry().byKind.get(o.kind)!;
  const schema = validateObject(structuredClone(o), kind);
  const errs = schema.length ? schema : admissionErrors(o, kind);
  return errs.map((e) => `${formatPath(e.path)}: ${e.message}`);
}

describe('node placement fields', () => {
  it('admits a pin and selectors with qualified keys', () => {
    const sel = { 'topology.orchctl.io/zone': 'eu-1', gpu: 'yes', empty: '' };
    expect(
      problems(obj('AgentSession', { agentRef: 'sim', workdir: '/tmp', nodeName: 'host-a.lan', nodeSelector: sel })),
    ).toEqual([]);
    expect(problems(obj('Project', { path: '/tmp', nodeSelector: sel }))).toEqual([]);
  });

  it('refuses a node name that is no DNS name, a bad key and a bad value', () => {
    expect(problems(obj('AgentSession', { agentRef: 'sim', workdir: '/tmp', nodeName: 'Host_A' })).join('\n')).toMatch(
      /^spec\.nodeName: /,
    );
    const bad = problems(obj('Project', { path: '/tmp', nodeSelector: { 'a/b/c': 'x' } }));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^spec\.nodeSelector\.a\/b\/c: Invalid key "a\/b\/c"/);
    expect(problems(obj('AgentSession', { agentRef: 'sim', workdir: '/tmp', nodeSelector: { k: '-no' } }))[0]).toMatch(
      /^spec\.nodeSelector\.k: /,
    );
  });
});
