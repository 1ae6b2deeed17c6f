/**
 * The channel drivers against the CRD: a type is usable exactly when the CRD's enum lists it and a
 * driver is registered for it, and every field a driver reads is one the CRD declares.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CHANNEL_DRIVERS, channelDriver } from '../../../controller/notify/drivers.js';
import { specProblem } from '../../../controller/notify/spec.js';

const crd = YAML.parse(fs.readFileSync('crds/notificationchannels.yaml', 'utf8'));
const specSchema = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;

describe('channel drivers', () => {
  it('one driver for each type the CRD allows, and none more', () => {
    expect(CHANNEL_DRIVERS.map((d) => d.type).sort()).toEqual([...specSchema.properties.type.enum].sort());
  });

  it('each driver reads only fields the CRD declares', () => {
    for (const d of CHANNEL_DRIVERS) for (const f of d.fields) expect(Object.keys(specSchema.properties)).toContain(f);
  });

  it('a type without a driver is refused, naming the types there are', () => {
    expect(channelDriver('pager')).toBeUndefined();
    expect(specProblem({ type: 'pager' } as never)).toBe('type "pager" is not webhook, ntfy, email or command');
  });

  it("the command driver's wire form is the argv, the variables and the JSON on stdin", () => {
    const run = channelDriver('command')!.format({ type: 'command', command: ['notify', '{{title}}'] }, 'ops', {
      idempotencyKey: 'k',
      tier: 2,
      title: 'Stalled',
      body: 'b',
    }) as { argv: string[]; env: Record<string, string>; stdin: string };
    expect(run.argv).toEqual(['notify', 'Stalled']);
    expect(JSON.parse(run.stdin)).toMatchObject({ channel: 'ops', title: 'Stalled' });
    expect(Object.keys(run.env)).toContain('ORCHCTL_NOTIFICATION_TITLE');
  });
});
