/**
 * Store compare-and-swap writes per second on the real SQLite file, one process, sequential:
 * get + update carrying the resourceVersion just read (a spec change each time), and
 * get + updateStatus. Every write is its own transaction (BEGIN IMMEDIATE, WAL).
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteStore } from '../../controller/store/sqlite.js';
import type { Resource } from '../../controller/api/types.js';
import { tempDir } from '../lib.js';
import type { Bench } from '../types.js';
import { sampleSession } from './cli-get.js';

const OBJECTS = 100;
const WRITES = 5000;

async function measure(
  fn: (i: number) => Promise<void>,
  n: number,
): Promise<{ writes: number; seconds: number; perSecond: number }> {
  for (let i = 0; i < 200; i++) await fn(i); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { writes: n, seconds: Math.round(seconds * 1000) / 1000, perSecond: Math.round(n / seconds) };
}

export const storeCasBench: Bench = {
  name: 'store-cas',
  description: `SqliteStore get + compare-and-swap write, sequential, ${OBJECTS} objects, real file`,
  async run() {
    const dir = tempDir('store-cas');
    const store = new SqliteStore(path.join(dir, 'state.db'));
    try {
      const objs: Resource[] = [];
      for (let i = 0; i < OBJECTS; i++) objs.push(await store.create(sampleSession(i)));
      const key = (i: number) => ({
        kind: 'AgentSession',
        namespace: 'default',
        name: objs[i % OBJECTS].metadata.name,
      });
      const update = await measure(async (i) => {
        const cur = (await store.get(key(i)))!;
        await store.update({ ...cur, spec: { ...cur.spec, prompt: `revision ${i}` } });
      }, WRITES);
      const updateStatus = await measure(async (i) => {
        const cur = (await store.get(key(i)))!;
        await store.updateStatus({
          ...cur,
          status: { phase: 'Running', observedGeneration: cur.metadata.generation, heartbeat: i },
        });
      }, WRITES);
      let next = 0; // the warm-up creates too: every create needs a new name
      const creates = await measure(async (i) => {
        await store.create({ ...sampleSession(i), metadata: { name: `new-${next++}`, namespace: 'default' } });
      }, WRITES);
      return {
        objects: OBJECTS,
        casUpdate: update,
        casUpdateStatus: updateStatus,
        create: creates,
        summary: [
          `update ${update.perSecond}/s`,
          `updateStatus ${updateStatus.perSecond}/s`,
          `create ${creates.perSecond}/s`,
        ].join(', '),
      };
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
