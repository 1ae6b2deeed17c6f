/**
 * The session reconciler's loop with a recording actuator and a scripted observer: no tmux, no
 * agent, but the real store (SQLite in a temp dir) and the real plan. What it asserts: the effects
 * each pass asks for, in order, and what one status write leaves in the store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession, AgentSpec } from '../../../../controller/api/kinds.js';
import type { EventObject } from '../../../../controller/api/event.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import type { Actuator, Effect, Outcome } from '../../../../controller/reconcilers/session/effects.js';
import type { SessionObservation } from '../../../../controller/reconcilers/session/observe.js';
import { gitKey, type Observed } from '../../../../controller/reconcilers/session/plan.js';
import {
  SESSION_FINALIZER,
  SessionReconciler,
  type SessionDeps,
} from '../../../../controller/reconcilers/session/reconciler.js';
import { LOG_START } from '../../../../controller/store/eventlog.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';

const agent: AgentSpec = { command: ['sh'], promptDelivery: 'argument' };

/** Answers effects as the world would for a run that starts, and records every effect. */
class RecordingActuator implements Actuator {
  readonly effects: Effect[] = [];
  /** The finalizers the store held when each Launch was performed. */
  readonly finalizersAtLaunch: (string[] | undefined)[] = [];
  constructor(private readonly store: SqliteStore) {}
  async run(_key: string, obj: AgentSession, effects: Effect[]): Promise<Outcome[]> {
    this.effects.push(...effects);
    const out: Outcome[] = [];
    for (const e of effects) {
      if (e.type === 'PrepareRun')
        out.push({
          type: 'Prepared',
          run: {
            workdir: e.workdir,
            workspace: `/ws/run-${e.run}`,
            promptFile: `/ws/run-${e.run}/prompt.md`,
            outputLog: `/ws/run-${e.run}/output.log`,
            position: LOG_START,
            launch: {
              session: 'orchctl-s',
              cwd: e.workdir,
              argv: ['sh', '-c', 'x'],
              env: {},
              tags: { uid: 'u', key: `k#${e.run}` },
            },
          },
        });
      if (e.type === 'Launch') {
        const key = { kind: 'AgentSession', namespace: 'default', name: obj.metadata.name } as const;
        this.finalizersAtLaunch.push((await this.store.get(key))?.metadata.finalizers);
        const stored = await this.store.updateStatus({ ...obj, status: e.record });
        out.push({ type: 'Launched', obj: stored as AgentSession });
      }
      if (e.type === 'SettleRun') out.push({ type: 'Settled', run: {} });
      if (e.type === 'RemoveFinalizer') {
        const fresh = await this.store.get({ kind: 'AgentSession', namespace: 'default', name: obj.metadata.name });
        if (fresh) await this.store.update({ ...fresh, metadata: { ...fresh.metadata, finalizers: [] } });
      }
    }
    return out;
  }
}

/** The world as a test says it is: the pane's state, nothing running elsewhere. */
class ScriptedObserver implements SessionObservation {
  pane: Observed['pane'] = { kind: 'missing' };
  agentCalls = 0;
  resolve(obj: AgentSession) {
    return { agent, workdir: '/repo', effective: effective(obj.spec ?? {}, undefined) };
  }
  async observe(): Promise<Observed> {
    return { pane: this.pane, hasPanes: this.pane.kind !== 'missing', retag: [] };
  }
  async agent(_k: string, _o: AgentSession, status: AgentSession['status']) {
    this.agentCalls++;
    return { run: status?.run ?? 0, events: [], next: LOG_START };
  }
  async git(status: AgentSession['status']) {
    return { gitKey: gitKey(status ?? {}) };
  }
  admission() {
    const host = {
      cpu: 2,
      loadAverage: [0, 0, 0],
      memoryTotalBytes: 1e10,
      memoryAvailableBytes: 1e10,
      diskTotalBytes: 1e12,
      diskFreeBytes: 1e12,
      uptimeSeconds: 1,
    };
    return { activeUnderPolicy: 0, host: host as never, nodeUnschedulable: false };
  }
  async panesOf() {
    return [];
  }
  projectPath() {
    return undefined;
  }
  forget() {}
}

let dir: string;
let store: SqliteStore;
let actuator: RecordingActuator;
let observer: ScriptedObserver;
let reconciler: SessionReconciler;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-reconciler-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  actuator = new RecordingActuator(store);
  observer = new ScriptedObserver();
  const unused = undefined as never;
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  const deps = { store, log, observer, actuator, recorder: new EventRecorder(store) } as Partial<SessionDeps>;
  reconciler = new SessionReconciler({ ...(deps as SessionDeps), tmux: unused });
  await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default' },
    spec: { prompt: 'hello', restartPolicy: 'OnFailure' },
  });
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const stored = async () => (await store.get({ kind: 'AgentSession', namespace: 'default', name: 's' })) as AgentSession;
const kinds = () => actuator.effects.map((e) => e.type);

describe('the session reconciler with a recording actuator', () => {
  it('adds its finalizer first, then starts run 1 in the same pass and writes Running once', async () => {
    expect(await reconciler.reconcile('default/s')).toBeUndefined(); // nothing falls due while it runs
    expect((await stored()).metadata.finalizers).toEqual([SESSION_FINALIZER]);
    // Stored before the run was launched: a deletion from then on waits for its tmux session to stop.
    expect(actuator.finalizersAtLaunch).toEqual([[SESSION_FINALIZER]]);
    expect(kinds().filter((t) => ['PrepareRun', 'Launch', 'WriteState', 'RecordEvent'].includes(t))).toEqual([
      'PrepareRun',
      'Launch',
      'WriteState',
    ]);
    // The Started Event went with the status write that says Running, not through the actuator.
    const events = (await store.list('Event', { namespace: 'default' })).items as EventObject[];
    expect(events.map((e) => [e.reason, e.count])).toEqual([['Started', 1]]);
    expect(observer.agentCalls).toBe(1); // the new run's agent, observed in the same pass
    const s = await stored();
    expect(s.status).toMatchObject({ phase: 'Running', run: 1, tmuxSession: 'orchctl-s', workspace: '/ws/run-1' });
    expect(s.status?.observedGeneration).toBe(s.metadata.generation);
    expect(s.status?.conditions?.find((c) => c.type === 'PromptDelivered')).toMatchObject({ status: 'True' });
  });

  it('an exit 1 while Running: settled, Failed, and in Backoff with its restart due', async () => {
    await reconciler.reconcile('default/s');
    actuator.effects.length = 0;
    observer.pane = { kind: 'dead', exitCode: 1 };
    const r = await reconciler.reconcile('default/s');
    expect(kinds()).toContain('SettleRun');
    expect(kinds()).not.toContain('PrepareRun');
    expect((await stored()).status).toMatchObject({ phase: 'Backoff', exitCode: 1, reason: 'Error', restarts: 1 });
    expect(r).toEqual({ requeueAfterMs: 10_000 });
  });

  it('a second pass over an unchanged running session asks for nothing', async () => {
    await reconciler.reconcile('default/s');
    observer.pane = { kind: 'alive' };
    actuator.effects.length = 0;
    const before = (await stored()).metadata.resourceVersion;
    expect(await reconciler.reconcile('default/s')).toBeUndefined();
    expect(kinds().filter((t) => t !== 'Watch')).toEqual([]);
    expect((await stored()).metadata.resourceVersion).toBe(before);
  });
});
