/**
 * `orchctl get agentsessions` as a cold process (new Node process each time, as a person or a
 * script runs it) with 1000 AgentSessions in the store. Goal (issue 2): median ≤ 250 ms.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteStore } from '../../controller/store/sqlite.js';
import type { Resource } from '../../controller/api/types.js';
import { orchctl, stats, tempDir, timeProcess } from '../lib.js';
import type { Bench } from '../types.js';

const OBJECTS = 1000;
const WARMUP = 3;
const RUNS = 30;
const GOAL_MEDIAN_MS = 250;
/** get's cold start over a bare `node -e ''` start-up, both measured in this run (issue 11). */
const GOAL_RATIO = 2.0;

/** A session as the controller leaves it: spec, labels and a realistic status. */
export function sampleSession(i: number): Resource {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: {
      name: `session-${String(i).padStart(4, '0')}`,
      namespace: 'default',
      labels: { team: `team-${i % 7}`, batch: 'bench' },
    },
    spec: {
      agentRef: 'claude-code',
      projectRef: `project-${i % 20}`,
      prompt: `Work item ${i}: fix the failing test in module ${i % 50} and keep the change small.`,
      desiredState: 'Running',
      maxDuration: '45m',
      restartPolicy: 'OnFailure',
    },
  };
}

export async function seedSessions(home: string, n: number): Promise<void> {
  const store = new SqliteStore(path.join(home, 'state.db'));
  try {
    const created = await store.txn(
      Array.from({ length: n }, (_, i) => ({ op: 'create' as const, object: sampleSession(i) })),
    );
    await store.txn(
      created.map((o, i) => ({
        op: 'updateStatus' as const,
        object: {
          ...o,
          status: {
            phase: ['Running', 'Succeeded', 'Failed', 'Pending'][i % 4],
            restarts: i % 3,
            run: 1 + (i % 3),
            tmuxSession: `orchctl-${o.metadata.name}`,
            observedGeneration: 1,
            lastOutput: 'x'.repeat(400),
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'Running',
                message: '',
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        },
      })),
    );
  } finally {
    await store.close();
  }
}

export const cliGetBench: Bench = {
  name: 'cli-get',
  description: `orchctl get agentsessions, cold process, ${OBJECTS} objects in the store`,
  async run() {
    const base = tempDir('cli-get');
    const home = path.join(base, 'home');
    const times: number[] = [];
    const nodeTimes: number[] = [];
    try {
      await seedSessions(home, OBJECTS);
      for (let i = 0; i < WARMUP; i++) orchctl(home, ['get', 'agentsessions']);
      for (let i = 0; i < RUNS; i++) {
        // Interleaved with the baseline, so both see the same machine at the same moment.
        nodeTimes.push(timeProcess(process.execPath, ['-e', '']).ms);
        const r = orchctl(home, ['get', 'agentsessions']);
        const rows = r.stdout.trimEnd().split('\n').length;
        if (rows !== OBJECTS + 1) throw new Error(`expected ${OBJECTS + 1} lines, got ${rows}`);
        times.push(r.ms);
      }
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
    const s = stats(times);
    const node = stats(nodeTimes);
    const ratio = Math.round((s.median / node.median) * 100) / 100;
    return {
      ratioToNodeStartup: ratio,
      goalRatio: GOAL_RATIO,
      objects: OBJECTS,
      warmup: WARMUP,
      wallMs: s,
      goalMedianMs: GOAL_MEDIAN_MS,
      goalMet: s.median <= GOAL_MEDIAN_MS,
      nodeStartupMs: node,
      summary:
        `median ${s.median} ms, p90 ${s.p90} ms, p99 ${s.p99} ms, min ${s.min} ms; ` +
        `bare node start-up ${node.median} ms in the same run: ` +
        `${ratio}× (goal ≤ ${GOAL_RATIO}×: ${ratio <= GOAL_RATIO ? 'met' : 'MISSED'})`,
    };
  },
};
