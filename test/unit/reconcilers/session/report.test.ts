/**
 * status.report (controller/reconcilers/session/report.ts): status.json parsed, validated and
 * cleaned; the figures mirrored with an Event on a change only; a file that cannot be used is one
 * warning and a problem, with the last good figures kept. Then through the plan itself.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus, AgentSpec } from '../../../../controller/api/kinds.js';
import type { ReportReading } from '../../../../controller/observers/report.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import { gitKey, type Observed, plan } from '../../../../controller/reconcilers/session/plan.js';
import { applyReport, clean, parseReport } from '../../../../controller/reconcilers/session/report.js';
import { LOG_START } from '../../../../controller/store/eventlog.js';

const MAX = 256 * 1024;
const NOW = '2026-11-24T10:00:00.000Z';
let n = 0;
const reading = (v: unknown): ReportReading => {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return { stamp: `${text.length}:${++n}`, size: text.length, text };
};
const tasks = (...states: string[]) => states.map((state, i) => ({ id: `${i + 1}`, subject: `task ${i + 1}`, state }));

describe('parseReport', () => {
  it('accepts a report with tasks, and ignores fields it does not know', () => {
    const r = parseReport(reading({ status: 'executing', tasks: tasks('done', 'in_progress'), phase: 2 }), MAX);
    expect(r).toMatchObject({ ok: true, report: { status: 'executing' } });
  });

  it('says why a file cannot be used: not JSON, too large, not the schema', () => {
    expect(parseReport(reading('{"status": "exec'), MAX)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^status\.json is not valid JSON: /),
    });
    expect(parseReport({ stamp: 's', size: 300_000 }, MAX)).toEqual({
      ok: false,
      problem: 'status.json is 300000 bytes, over the 256 KiB limit; ignored',
    });
    expect(parseReport(reading({ status: 'done' }), MAX)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('/status must be equal to one of the allowed values'),
    });
    expect(parseReport(reading({ status: 'executing', tasks: tasks(...Array(201).fill('done')) }), MAX)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('/tasks must NOT have more than 200 items'),
    });
    expect(parseReport(reading({ status: 'blocked', blocker: 'b'.repeat(5000) }), MAX)).toMatchObject({ ok: false });
    expect(parseReport(reading([1, 2]), MAX)).toMatchObject({ ok: false });
  });
});

describe('clean', () => {
  it('strips control characters and terminal escapes, and clips', () => {
    expect(clean('a\u001b[31mred\u0007\r\nnext\u0000', 100)).toBe('a [31mred next');
    expect(clean('x'.repeat(50), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

describe('applyReport', () => {
  it('mirrors figures, the current task and the blocker; an Event on each change only', () => {
    const a = applyReport(
      undefined,
      1,
      reading({ status: 'executing', tasks: tasks('done', 'in_progress', 'pending') }),
      MAX,
      NOW,
    );
    expect(a.report).toMatchObject({
      run: 1,
      status: 'executing',
      tasksDone: 1,
      tasksTotal: 3,
      progress: '1/3',
      currentTask: 'task 2',
      updatedAt: NOW,
    });
    expect(a.event).toEqual({
      type: 'Normal',
      reason: 'ReportUpdated',
      message: 'agent reports executing (1/3 tasks done); current: task 2',
    });
    // Rewritten with only notes changed: no Event.
    const same = reading({ status: 'executing', tasks: tasks('done', 'in_progress', 'pending'), notes: 'x' });
    const b = applyReport(a.report, 1, same, MAX, NOW);
    expect(b.event).toBeUndefined();
    expect(b.report.stamp).toBe(same.stamp);

    const blocked = reading({
      status: 'blocked',
      tasks: tasks('done', 'blocked', 'pending'),
      blocker: 'need\u001b[2J a key',
    });
    const c = applyReport(b.report, 1, blocked, MAX, NOW);
    expect(c.report.blocker).toBe('need [2J a key');
    expect(c.event).toEqual({
      type: 'Warning',
      reason: 'ReportBlocked',
      message: 'agent reports blocked (1/3 tasks done): need [2J a key',
    });
    const d = applyReport(c.report, 1, reading({ status: 'complete', tasks: tasks('done', 'done', 'done') }), MAX, NOW);
    expect(d.report).toMatchObject({ status: 'complete', progress: '3/3' });
    expect(d.report.blocker).toBeUndefined();
    expect(d.event).toMatchObject({ type: 'Normal', reason: 'ReportComplete' });
  });

  it('a bad file: one warning and a problem, the last good figures kept; a good one clears it', () => {
    const good = applyReport(undefined, 1, reading({ status: 'executing', tasks: tasks('done', 'pending') }), MAX, NOW);
    const bad = reading('garbage \u001b]0;title\u0007');
    const r = applyReport(good.report, 1, bad, MAX, '2026-11-24T11:00:00.000Z');
    expect(r.report).toEqual({
      ...good.report,
      stamp: bad.stamp,
      problem: expect.stringMatching(/^status\.json is not valid JSON/),
    });
    expect(r.report.problem).not.toMatch(/[\u0000-\u001f]/);
    expect(r.event).toMatchObject({ type: 'Warning', reason: 'InvalidReport' });
    const again = applyReport(r.report, 1, reading({ status: 'executing', tasks: tasks('done', 'pending') }), MAX, NOW);
    expect(again.report.problem).toBeUndefined();
    expect(again.event).toBeUndefined(); // the figures are what they were
  });

  it('starts afresh for a new run', () => {
    const old = applyReport(undefined, 1, reading({ status: 'complete' }), MAX, NOW);
    const r = applyReport(old.report, 2, reading('nope'), MAX, NOW);
    expect(r.report).toEqual({ run: 2, stamp: expect.any(String), problem: expect.any(String) });
  });
});

describe('the plan', () => {
  const agent: AgentSpec = { command: ['sh'], promptDelivery: 'paste' };
  const obj: AgentSession = {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', uid: 'u-1', generation: 1 },
    spec: { prompt: 'do it' },
  };
  const running: AgentSessionStatus = {
    phase: 'Running',
    run: 1,
    workspace: '/ws/1',
    workdir: '/work/repo',
    startTime: NOW,
    conditions: [],
    agent: { run: 1, position: LOG_START, counts: {}, hooks: false, turns: 0 },
  };
  const pass = (status: AgentSessionStatus, report?: ReportReading) => {
    const observed: Observed = {
      pane: { kind: 'alive' },
      hasPanes: true,
      retag: [],
      agent: { run: 1, events: [], next: LOG_START },
      gitKey: gitKey(status),
      ...(report ? { report: { ...report, run: 1 } } : {}),
    };
    const out = plan({
      key: 'default/s',
      obj: { ...obj, status },
      status,
      observed,
      resolved: { agent, workdir: '/work/repo', effective: effective(obj.spec ?? {}, undefined) },
      now: Date.parse(NOW),
    });
    const events = out.effects.flatMap((e) => (e.type === 'RecordEvent' ? [`${e.eventType} ${e.reason}`] : []));
    return { status: out.status, events };
  };

  it('an Event when the report changes, none on passes without a reading; a bad file keeps the figures', () => {
    const one = pass(running, reading({ status: 'executing', tasks: tasks('done', 'pending', 'pending') }));
    expect(one.status.report).toMatchObject({ progress: '1/3', status: 'executing' });
    expect(one.events).toEqual(['Normal ReportUpdated']);
    const idle = pass(one.status);
    expect(idle.events).toEqual([]);
    expect(idle.status.report).toEqual(one.status.report);
    const bad = pass(idle.status, { stamp: 'big', size: 1 << 20 });
    expect(bad.events).toEqual(['Warning InvalidReport']);
    expect(bad.status.report).toMatchObject({ progress: '1/3', status: 'executing', problem: expect.any(String) });
    expect(pass(bad.status).events).toEqual([]);
    const done = pass(bad.status, reading({ status: 'complete', tasks: tasks('done', 'done', 'done') }));
    expect(done.events).toEqual(['Normal ReportComplete']);
    expect(done.status.report).toMatchObject({ progress: '3/3', status: 'complete' });
    expect(done.status.report?.problem).toBeUndefined();
  });

  it('ignores a reading of another run', () => {
    const out = pass({ ...running, run: 2, agent: { ...running.agent!, run: 2 } }, reading({ status: 'complete' }));
    expect(out.status.report).toBeUndefined();
  });
});
