/**
 * `orchctl assess status|history` as a user runs them: the real bin/orchctl against a temp
 * ORCHCTL_HOME whose sessions were assessed by the real assessment reconciler from realistic
 * event logs (Claude Code transcript shape, recorded tool outputs). Text output is compared with
 * golden files (test/golden/assess-*.txt; `npx vitest -u` after an intended change), JSON is
 * checked field by field.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionPolicy } from '../../controller/api/kinds.js';
import type { Resource } from '../../controller/api/types.js';
import { EventRecorder } from '../../controller/client/events.js';
import { assessmentConfig } from '../../controller/reconcilers/assessment/config.js';
import { AssessmentReconciler } from '../../controller/reconcilers/assessment/reconciler.js';
import { EventLog, eventLogPath, type AgentEvent } from '../../controller/store/eventlog.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { toolOutput, TranscriptBuilder } from '../support/assessment-transcript.js';
import { expectAligned, normalize, orchctl, tempHome } from '../support/cli.js';

let home: string;
const HOUR = 3_600_000;
const base = Date.now() - 2 * HOUR;
const at = (ms: number) => new Date(base + ms).toISOString();
const run = (...args: string[]) => orchctl(home, args);
/** Dates and clock times change from run to run: the rest is exact. */
const stable = (s: string) =>
  normalize(s)
    .replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/g, '<DATE>')
    .replace(/\b\d{2}:\d{2}:\d{2}\b/g, '<TIME>');

async function seed(): Promise<void> {
  const store = new SqliteStore(path.join(home, 'state.db'));
  const sent: string[] = [];
  try {
    const policy = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'SessionPolicy',
      metadata: { name: 'default', namespace: 'default' },
      spec: { selector: {}, breaker: { failureThreshold: 4, cooldown: '15m' } },
    };
    const p = (await store.create(policy as Resource)) as SessionPolicy;
    const mk = async (name: string, status: Record<string, unknown>, events: AgentEvent[]) => {
      const o = await store.create({
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        metadata: { name, namespace: 'default' },
        spec: { agentRef: 'claude-code', projectRef: 'webapp', prompt: 'x' },
      } as Resource);
      await store.updateStatus({ ...o, status });
      if (events.length) {
        const log = new EventLog(eventLogPath(home, 'default', name));
        log.append(events.map(({ seq: _s, ...e }) => e as never));
        log.close();
      }
    };
    // A run stuck on failing tests: the breaker opened and sent ApproachPivot.
    const recent = new Date(Date.now() - 6 * 60_000).toISOString(); // a fresh trip is sent; an old one would be stale
    const stuck = new TranscriptBuilder(recent, 20_000).user('Make the pytest suite pass without touching the tests.');
    for (let i = 0; i < 4; i++) stuck.say('Running the tests.').bash('python3 -m pytest -q', toolOutput('pytest-fail'));
    stuck.endTurn('The tests still fail.');
    await mk(
      'fix-tests',
      { phase: 'Running', run: 1, startTime: recent, tmuxSession: 't', workspace: path.join(home, 'ws') },
      stuck.events(),
    );
    // A run with corrections, then praise, a passing build and a commit; ended.
    const rename = new TranscriptBuilder(at(HOUR / 2), 30_000)
      .user('Rename loadConfig to loadSettings everywhere.')
      .edit('src/config.ts')
      .bash('npx tsc --noEmit -p .', toolOutput('tsc-fail'))
      .endTurn('Renamed, one type error left.')
      .user("No, that's not what I asked: keep the old name exported too.")
      .edit('src/config.ts')
      .bash('npx tsc --noEmit -p .', toolOutput('tsc-pass'))
      .bash('git commit -qam "rename loadConfig to loadSettings"', {
        output: '[main 4f5e6d7] rename loadConfig to loadSettings',
        exitCode: 0,
      })
      .endTurn('Done: both names exported, build clean, committed.')
      .user('Perfect, thanks! Next, update the README.')
      .edit('README.md')
      .endTurn('README updated.');
    await mk(
      'rename',
      {
        phase: 'Succeeded',
        run: 1,
        startTime: at(HOUR / 2),
        completionTime: at(HOUR / 2 + 9 * 60_000),
        lastEvaluation: { outcome: 'success', confidence: 0.9, score: 5 },
      },
      rename.events(),
    );
    // Applied, never ran.
    await mk('idle', { phase: 'Pending' }, []);

    const r = new AssessmentReconciler({
      store,
      policies: { list: () => [p] },
      home,
      recorder: new EventRecorder(store, 'orchctl-controller'),
      log: { info: () => {}, warn: () => {}, error: () => {} },
      send: async (_k, text) => {
        sent.push(text);
        return { delivered: true, reason: 'Confirmed', message: 'confirmed by the transcript', retries: 0 };
      },
    });
    for (const n of ['fix-tests', 'rename', 'idle']) await r.reconcile(`default/${n}`);
    expect(sent).toEqual([assessmentConfig(undefined).breaker.texts.ApproachPivot]);
    // Two more events the controller has not taken yet: the consumer lag.
    const log = new EventLog(eventLogPath(home, 'default', 'fix-tests'));
    log.append(
      new TranscriptBuilder(new Date().toISOString(), 1000)
        .user('status?')
        .endTurn('Still working on it.')
        .events({ hooks: false })
        .map(({ seq: _s, ...e }) => e as never),
    );
    log.close();
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  home = tempHome();
  fs.mkdirSync(home, { recursive: true });
  await seed();
});
afterAll(() => fs.rmSync(path.dirname(home), { recursive: true, force: true }));

describe('orchctl assess status', () => {
  it('a table of every session: breaker, EMAs against thresholds, counts, lag (golden)', async () => {
    const r = await run('assess', 'status');
    expect(r.exitCode, r.stderr).toBe(0);
    expectAligned(r.stdout);
    await expect(stable(r.stdout)).toMatchFileSnapshot('../golden/assess-status.txt');
  });

  it('one session in detail (golden)', async () => {
    const r = await run('assess', 'status', 'fix-tests');
    expect(r.exitCode, r.stderr).toBe(0);
    await expect(stable(r.stdout)).toMatchFileSnapshot('../golden/assess-status-fix-tests.txt');
  });

  it('-o json', async () => {
    const r = await run('assess', 'status', 'fix-tests', '-o', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ namespace: 'default', name: 'fix-tests', run: 1, consumer: { lag: 2 } });
    expect(j.breaker).toMatchObject({
      state: 'Open',
      reason: 'ApproachPivot',
      consecutiveFailures: 4,
      interventions: 1,
      thresholds: { failureThreshold: 4, cooldownSeconds: 900 },
    });
    expect(j.breaker.history[0]).toMatchObject({ type: 'ApproachPivot', delivered: true, result: 'Delivered' });
    expect(j.detector.counts).toEqual({ TestFailure: 4 });
    expect(j.condition).toMatchObject({ type: 'BreakerOpen', status: 'True', reason: 'ApproachPivot' });
    const all = JSON.parse((await run('assess', 'status', '-o', 'json')).stdout);
    expect(all.items.map((i: { name: string }) => i.name)).toEqual(['fix-tests', 'idle', 'rename']);
  });

  it('errors are one line, not a stack', async () => {
    const r = await run('assess', 'status', 'nope');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('error: agentsessions "nope" not found in namespace default\n');
    const bad = await run('assess', 'status', '-o', 'yaml');
    expect(bad.stderr).toBe('error: unknown output format "yaml": use -o json\n');
  });
});

describe('orchctl assess history', () => {
  it('recent sessions with outcome, messages and frustration (golden)', async () => {
    const r = await run('assess', 'history');
    expect(r.exitCode, r.stderr).toBe(0);
    await expect(stable(r.stdout)).toMatchFileSnapshot('../golden/assess-history.txt');
  });

  it('one session: frustration sparkline, checkpoint summaries, signals with message indices (golden)', async () => {
    const r = await run('assess', 'history', 'rename', '--since', '7d');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^0\.0 [▁▂▃▄▅▆▇█]+ 1\.0$/m);
    await expect(stable(r.stdout)).toMatchFileSnapshot('../golden/assess-history-rename.txt');
  });

  it('--since leaves out what is older', async () => {
    const r = await run('assess', 'history', '--since', '1h', '-o', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    // rename ended 80 minutes ago
    expect(JSON.parse(r.stdout).items.map((i: { name: string }) => i.name)).toEqual(['idle', 'fix-tests']);
    const j = JSON.parse((await run('assess', 'history', 'rename', '--since', '1m', '-o', 'json')).stdout);
    expect(j.checkpoints).toEqual([]);
    const all = JSON.parse((await run('assess', 'history', 'rename', '-o', 'json')).stdout);
    expect(all.checkpoints.map((c: { trigger: string }) => c.trigger)).toEqual(['git-commit', 'task-boundary']);
    expect(all).toMatchObject({
      outcome: 'success',
      confidence: 0.9,
      signals: { BuildFailure: 1, BuildSuccess: 1, Commit: 1, UserCorrection: 1, Frustration: 1, Satisfaction: 1 },
    });
    expect(all.trajectory.points).toEqual([0.3, 0.21]);
    const bad = await run('assess', 'history', '--since', 'forever');
    expect(bad.stderr).toBe('error: --since must be a duration like 7d, 12h or 30m, got "forever"\n');
  });
});
