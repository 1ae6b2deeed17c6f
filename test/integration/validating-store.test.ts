/**
 * The one validating client (client/validating-store.ts) over a real SQLite store: a spec write that
 * its CRD schema or its admission refuses is not written, by any writer — apply's transaction, a
 * command's create, a reconciler's update — and the error names the field; status writes, Events and
 * metadata-only updates of an object stored before a check existed go through.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../controller/api/errors.js';
import type { Resource } from '../../controller/api/types.js';
import { EventRecorder } from '../../controller/client/events.js';
import { ValidatingStore } from '../../controller/client/validating-store.js';
import { SqliteStore } from '../../controller/store/sqlite.js';

let dir: string;
let raw: SqliteStore;
let store: ValidatingStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-validating-'));
  raw = new SqliteStore(path.join(dir, 'store.db'));
  store = new ValidatingStore(raw);
});
afterEach(async () => {
  await raw.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const session = (name: string, spec: Record<string, unknown>): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name, namespace: 'default' },
  spec,
});
const valid = { agentRef: 'claude', workdir: '/tmp', prompt: 'fix the tests' };
const agent = { command: ['sim'], promptDelivery: 'argument' };

async function refusal(write: Promise<unknown>): Promise<ApiError> {
  const e = await write.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
}

describe('validating store', () => {
  it('refuses a create that fails the schema, naming the field, and writes nothing', async () => {
    const e = await refusal(store.create(session('bad', { ...valid, restartPolicy: 'Sometimes' })));
    expect(e.reason).toBe('Invalid');
    expect(e.message).toMatch(/^agentsession "bad" is invalid: spec\.restartPolicy: /);
    expect(e.causes.map((c) => c.field)).toEqual(['spec.restartPolicy']);
    expect((await raw.list('AgentSession')).items).toEqual([]);
  });

  it('refuses a create that passes the schema but not admission (a prompt too long for its command line)', async () => {
    const e = await refusal(store.create(session('long', { agent, workdir: '/tmp', prompt: 'x'.repeat(13_000) })));
    expect(e.reason).toBe('Invalid');
    expect(e.causes).toEqual([{ field: 'spec.prompt', message: expect.stringMatching(/^is 13000 bytes/) }]);
    expect((await raw.list('AgentSession')).items).toEqual([]);
  });

  it('refuses a transaction with one invalid spec write: none of its writes is made', async () => {
    const e = await refusal(
      store.txn([
        { op: 'create', object: session('good', valid) },
        { op: 'create', object: session('bad', { ...valid, maxRestarts: -1 }) },
      ]),
    );
    expect(e.causes.map((c) => c.field)).toEqual(['spec.maxRestarts']);
    expect((await raw.list('AgentSession')).items).toEqual([]);
  });

  it('refuses an update that makes a valid spec invalid', async () => {
    const s = await store.create(session('a', valid));
    const e = await refusal(store.update({ ...s, spec: { ...s.spec, desiredState: 'Paused' } }));
    expect(e.causes.map((c) => c.field)).toEqual(['spec.desiredState']);
    expect((await raw.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }))?.spec).toEqual(valid);
  });

  it('lets metadata-only updates and status writes of an object stored before a check existed through', async () => {
    const old = await raw.create(session('old', { ...valid, restartPolicy: 'Sometimes' }));
    const annotated = await store.update({ ...old, metadata: { ...old.metadata, annotations: { a: 'b' } } });
    expect(annotated.metadata.annotations).toEqual({ a: 'b' });
    const withStatus = await store.updateStatus({ ...annotated, status: { phase: 'Pending' } });
    expect(withStatus.status).toEqual({ phase: 'Pending' });
    const e = await refusal(store.update({ ...withStatus, spec: { ...withStatus.spec, prompt: 'changed' } }));
    expect(e.causes.map((c) => c.field)).toEqual(['spec.restartPolicy']);
  });

  it('admits what only the controller writes (Decisions) and Events, which apply refuses or never sees', async () => {
    const s = await store.create(session('a', valid));
    await new EventRecorder(store, 'test').record(s, 'Normal', 'Started', 'run 1 started');
    expect((await raw.list('Event')).items).toHaveLength(1);
    const decision: Resource = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Decision',
      metadata: { name: 'ap-1', namespace: 'default' },
      spec: {
        autopilot: 'ap',
        think: 1,
        action: 'skip',
        target: {},
        reason: 'nothing to do',
        priority: 3,
        planner: 'heuristic',
        level: 'cautious',
        snapshot: { revision: 1, objects: [] },
      },
    };
    await store.create(decision);
    expect((await raw.list('Decision')).items).toHaveLength(1);
  });
});
