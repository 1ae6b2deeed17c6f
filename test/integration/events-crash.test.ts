/**
 * A crash loses no Event (issue 23 item 4): every Event that tells of a status transition — a
 * pipeline's phases (PhaseStarted, PhaseSucceeded, Succeeded) and its sessions' lifecycle (Started,
 * ReportUpdated, ReportComplete, Stopping, the run's end) — is in the store exactly when its
 * transition is, once. With the real controller, SQLite, tmux and an agent whose every step waits
 * for the test (test/support/gated-agent.mjs), a two-phase pipeline runs once without a kill and
 * then once per failpoint with the controller killed -9 there again and again (each process at a
 * later hit of the point, so the kills fall at different steps of the lifecycle); the Events —
 * involved object, reason, count — are the same every time, and `describe pipeline` lists the
 * pipeline's in the same order.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventObject } from '../../controller/api/event.js';
import { ACTIVE_PHASES } from '../../controller/api/phases.js';
import { API_VERSION, type Condition } from '../../controller/api/types.js';
import { eventsFor } from '../../controller/client/events.js';
import type { Failpoint } from '../../controller/runtime/failpoints.js';
import { type Harness, makeHarness } from '../support/controller-harness.js';
import { getPipeline, pipelineOf, pipelineWhen } from '../support/pipeline.js';

const GATED_AGENT = path.join(import.meta.dirname, '../support/gated-agent.mjs');
/** Kills per run: the n-th process dies at the n-th hit of the failpoint, then one runs to the end. */
const KILLS = 6;
const isReady = (c: Condition) => c.type === 'Ready' && c.status === 'True';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** The pipeline's and its sessions' Events, as `Kind/name Reason ×count`, sorted. */
async function eventList(h: Harness): Promise<string[]> {
  const { items } = await h.store.list('Event', { namespace: 'default' });
  return (items as EventObject[])
    .filter((e) => e.involvedObject.kind === 'Pipeline' || e.involvedObject.kind === 'AgentSession')
    .map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason} ×${e.count}`)
    .sort();
}

/** The pipeline's Events as `describe pipeline` lists them (by time): `Reason: message`. */
async function pipelineTimeline(h: Harness): Promise<string[]> {
  const p = await getPipeline(h, 'ev');
  return (await eventsFor(h.store, p!)).map((e) => `${e.reason}: ${e.message}`);
}

/**
 * Runs the pipeline to its end, opening each agent's gates once the controller has the step before
 * in status. With `point`, the controller is killed there, at hit 1, 2, … KILLS of successive
 * processes, and restarted; returns how many kills there were.
 */
async function runPipeline(h: Harness, point?: Failpoint): Promise<number> {
  const pipeline = pipelineOf('ev', h.repo, [
    ['a', 'Task: first'],
    ['b', 'Task: second'],
  ]);
  for (const ph of pipeline.spec.phases) ph.template.agentRef = 'gated';
  const gates = path.join(h.dir, 'gates');
  fs.mkdirSync(gates);
  const agent = {
    apiVersion: API_VERSION,
    kind: 'Agent',
    metadata: { name: 'gated' },
    spec: {
      command: [process.execPath, GATED_AGENT],
      promptDelivery: 'none',
      env: [{ name: 'GATE_DIR', value: gates }],
    },
  };

  let kills = 0;
  let finished = false;
  const loop = (async () => {
    while (!finished) {
      if (point && kills < KILLS) h.env.ORCHCTL_FAILPOINTS = `${point}@${kills + 1}`;
      const proc = h.start();
      delete h.env.ORCHCTL_FAILPOINTS;
      const r = await proc;
      if (r.signal !== 'SIGKILL' || finished) return;
      kills++;
    }
  })();
  // Applied once the controller's node is Ready: a session that came first would be told it waits for
  // one (FailedScheduling), or not, as the race goes.
  await h.waitFor('a Ready node', async () => {
    const { items } = await h.store.list('Node');
    return items.some((n) => (n.status?.conditions as Condition[] | undefined)?.some(isReady));
  });
  await h.apply([agent, pipeline]);

  const reportIs = (session: string, status: string, done: number) =>
    h.waitFor(
      `${session} reporting ${status} ${done}`,
      async () => {
        const r = (await h.session(session))?.status?.report;
        return r?.status === status && r.tasksDone === done;
      },
      60_000,
    );
  for (const phase of ['a', 'b']) {
    const session = `ev-${phase}`;
    await reportIs(session, 'executing', 0);
    fs.writeFileSync(path.join(gates, `${session}.1`), '');
    await reportIs(session, 'executing', 1);
    fs.writeFileSync(path.join(gates, `${session}.2`), '');
    await reportIs(session, 'complete', 3);
    // The pipeline stops a phase that reported complete; the agent goes once Stopping is in status.
    await h.waitFor(
      `${session} Stopping`,
      async () => (await h.session(session))?.status?.phase === 'Stopping',
      60_000,
    );
    fs.writeFileSync(path.join(gates, `${session}.stop`), '');
    await h.waitFor(
      `${session}'s run over`,
      async () => {
        const s = await h.session(session);
        return !!s?.status?.phase && !ACTIVE_PHASES.has(s.status.phase);
      },
      60_000,
    );
  }
  await pipelineWhen(h, 'ev', 'the pipeline Succeeded', (x) => x.status?.phase === 'Succeeded', 60_000);
  finished = true;
  await h.stopController('SIGTERM');
  await loop;
  return kills;
}

describe('Events across controller crashes', () => {
  let reference: string[];
  let timeline: string[];

  beforeAll(async () => {
    const ref = await makeHarness();
    try {
      expect(await runPipeline(ref)).toBe(0);
      reference = await eventList(ref);
      timeline = await pipelineTimeline(ref);
    } finally {
      await ref.cleanup();
    }
    // The transitions told, each once.
    for (const x of [
      'Pipeline/ev PhaseStarted ×1',
      'Pipeline/ev PhaseSucceeded ×1',
      'Pipeline/ev Succeeded ×1',
      'AgentSession/ev-a Started ×1',
      'AgentSession/ev-a ReportUpdated ×1',
      'AgentSession/ev-a ReportComplete ×1',
      'AgentSession/ev-b Stopping ×1',
    ])
      expect(reference).toContain(x);
    // In the order it happened: each phase's end before the start of the next.
    expect(timeline.map((x) => x.replace(/:.*/, ''))).toEqual([
      'PhaseStarted',
      'PhaseSucceeded',
      'PhaseStarted',
      'PhaseSucceeded',
      'Succeeded',
    ]);
  }, 120_000);

  it.each<Failpoint>([
    'pipeline-after-create',
    'pipeline-after-status',
    'session-before-status',
    'session-after-status',
  ])(
    'a kill at any step loses no transition Event and writes none twice (%s)',
    async (point) => {
      const kills = await runPipeline(h, point);
      expect(kills).toBeGreaterThan(0);
      expect(await eventList(h)).toEqual(reference);
      expect(await pipelineTimeline(h)).toEqual(timeline);
    },
    240_000,
  );
});
