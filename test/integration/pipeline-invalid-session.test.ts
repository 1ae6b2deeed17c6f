/**
 * A phase session the AgentSession CRD or its admission refuses is never written (issue 27, one
 * validating client): `orchctl apply` refuses a pipeline whose template would make one, naming the
 * file and the template's field; a pipeline already in the store with such a template (stored before
 * a check existed, or written around apply) is run by the real controller, which writes no session:
 * the phase fails with the reason in the pipeline's status and a Warning Event.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../controller/api/types.js';
import { makeHarness, type Harness } from '../support/controller-harness.js';
import { phaseOfPipeline, pipelineEvents, pipelineWhen, SIM_AGENT } from '../support/pipeline.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** A prompt passed as an argument may make the command line at most 12 KiB: this one is 13,000 bytes. */
const pipeline = (repo: string) => ({
  apiVersion: API_VERSION,
  kind: 'Pipeline',
  metadata: { name: 'big', namespace: 'default' },
  spec: {
    phases: [
      {
        name: 'design',
        template: {
          agent: { command: [process.execPath, SIM_AGENT], promptDelivery: 'argument' },
          workdir: repo,
          prompt: 'x'.repeat(13_000),
        },
      },
    ],
  },
});

describe('a phase session that would be invalid', () => {
  it('is refused with its pipeline at apply, naming the file and the field, and nothing is written', async () => {
    const file = path.join(h.dir, 'big.yaml');
    fs.writeFileSync(file, YAML.stringify(pipeline(h.repo)));
    const r = await h.orchctl(['apply', '-f', file]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(
      /spec\.phases\[0\]\.template\.prompt: is 13000 bytes: too long for promptDelivery argument/,
    );
    expect((await h.store.list('Pipeline')).items).toEqual([]);
    expect((await h.store.list('AgentSession')).items).toEqual([]);
  });

  it('is never written by the pipeline reconciler: the phase fails, the reason in status and an Event', async () => {
    await h.store.create(pipeline(h.repo)); // around apply: the store itself takes any object
    h.start();
    const p = await pipelineWhen(h, 'big', 'the pipeline Failed', (x) => x.status?.phase === 'Failed');
    expect(phaseOfPipeline(p, 'design')).toMatchObject({
      state: 'Failed',
      reason: 'SessionInvalid',
      message: expect.stringMatching(/^agentsession "big-design" is invalid: spec\.prompt: is 13000 bytes/),
    });
    expect(p.status?.reason).toBe('PhaseFailed');
    expect((await h.store.list('AgentSession')).items).toEqual([]);
    const failed = (await pipelineEvents(h, 'big')).filter((e) => e.reason === 'PhaseFailed');
    expect(failed.map((e) => [e.type, e.message])).toEqual([
      ['Warning', expect.stringMatching(/^phase design failed: SessionInvalid: agentsession "big-design" is invalid/)],
    ]);
  });
});
