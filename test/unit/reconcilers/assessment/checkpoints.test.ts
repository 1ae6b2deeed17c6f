/**
 * Checkpoints: the triggers on realistic sessions, the offline summariser's output for a
 * segment read back from a real event-log file, and the history file's idempotence.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionPolicy } from '../../../../controller/api/kinds.js';
import { LlmError } from '../../../../controller/llm/backend.js';
import { OfflineSummaryBackend, summariseSegment } from '../../../../controller/llm/offline-summary.js';
import { assessStep, newAssessmentState } from '../../../../controller/reconcilers/assessment/assess.js';
import { segmentEvidence } from '../../../../controller/reconcilers/assessment/checkpoints.js';
import { assessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import {
  appendCheckpoint,
  readCheckpoints,
  type CheckpointRecord,
} from '../../../../controller/reconcilers/assessment/history.js';
import { EventLog, readEventLog, type AgentEvent } from '../../../../controller/store/eventlog.js';
import { toolOutput, TranscriptBuilder } from '../../../support/assessment-transcript.js';

const policy = (spec: Record<string, unknown>): SessionPolicy =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: { name: 'cp', uid: `cp-${JSON.stringify(spec)}`, generation: 1 },
    spec,
  }) as SessionPolicy;

function steps(events: AgentEvent[], spec: Record<string, unknown> = {}) {
  const cfg = assessmentConfig(policy(spec));
  return assessStep(newAssessmentState(), {
    events,
    from: { seq: 0, offset: 0 },
    cfg,
    now: Date.parse(events.at(-1)!.ts),
  });
}

describe('checkpoint triggers', () => {
  it('git-commit: a Bash call that commits closes the segment at its result', () => {
    const t = new TranscriptBuilder()
      .user('Add hello.txt and commit it.')
      .bash('git add hello.txt && git commit -q -m "add hello" && git log --oneline -1', {
        output: '836c8e4 add hello',
        exitCode: 0,
      })
      .endTurn('Committed.');
    const evs = t.events({ hooks: false });
    const r = steps(evs);
    const result = evs.find((e) => e.type === 'tool_result')!;
    expect(r.checkpoints.map((c) => [c.trigger, c.seq, c.fromSeq, c.firstMsg, c.lastMsg])).toEqual([
      ['git-commit', result.seq, 1, 1, 2],
    ]);
    expect(r.state.checkpoints).toMatchObject({
      count: 1,
      segmentStartSeq: result.seq + 1,
      segmentFirstMsg: 3,
      lastSeq: result.seq,
    });
  });

  it('task-boundary: "moving on", "done", "next" in a user message (not in the task prompt)', () => {
    const t = new TranscriptBuilder()
      .user("When you're done, write the changelog.")
      .edit('src/a.ts')
      .endTurn('Edited.')
      .user('Great. Next, the README.')
      .edit('README.md')
      .endTurn('Updated.')
      .user('ok');
    const r = steps(t.events({ hooks: false }), { checkpoints: { onCommit: false } });
    expect(r.checkpoints.map((c) => c.trigger)).toEqual(['task-boundary']);
  });

  it('message-count: every messageThreshold messages (tool calls included)', () => {
    const t = new TranscriptBuilder().user('Refactor.');
    for (let i = 0; i < 12; i++) t.edit(`src/f${i}.ts`);
    const r = steps(t.events({ hooks: false }), { checkpoints: { messageThreshold: 5 } });
    // 1 prompt + 12 edits = 13 messages: checkpoints after 5 and 10.
    expect(r.checkpoints.map((c) => [c.trigger, c.firstMsg, c.lastMsg])).toEqual([
      ['message-count', 1, 5],
      ['message-count', 6, 10],
    ]);
  });

  it('time: the segment is older than the interval (event time)', () => {
    const t = new TranscriptBuilder('2026-11-22T03:00:00.000Z', 60_000).user('Long task.');
    for (let i = 0; i < 8; i++) t.say('still working');
    const r = steps(t.events({ hooks: false }), { checkpoints: { interval: '5m' } });
    expect(r.checkpoints.map((c) => c.trigger)).toEqual(['time']);
  });

  it('session-end: the SessionEnd hook', () => {
    const evs = new TranscriptBuilder().user('Quick question.').endTurn('Answer.').events({ hooks: false });
    const end = {
      seq: evs.length + 1,
      ts: '2026-11-22T03:10:00.000Z',
      run: 1,
      source: 'hook',
      type: 'hook',
      hook: 'SessionEnd',
      payload: { reason: 'prompt_input_exit' },
    } as AgentEvent;
    expect(steps([...evs, end]).checkpoints.map((c) => [c.trigger, c.seq])).toEqual([['session-end', end.seq]]);
  });

  it('disabled: no checkpoints', () => {
    const t = new TranscriptBuilder().user('x').bash('git commit -qam wip', { output: '', exitCode: 0 });
    expect(steps(t.events({ hooks: false }), { checkpoints: { enabled: false } }).checkpoints).toEqual([]);
  });
});

describe('segment summaries', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-cp-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('offline summary of an event-log segment: what was attempted, what failed and passed, the commit', async () => {
    const t = new TranscriptBuilder()
      .user('Fix the failing add() test in src/math.ts.')
      .bash('npx vitest run', toolOutput('vitest-fail'))
      .bash('npx vitest run', toolOutput('vitest-fail'))
      .edit('src/math.ts')
      .bash('npx vitest run', toolOutput('vitest-pass'))
      .bash('git commit -qam "fix add()" && git log --oneline -1', {
        output: '[main 1a2b3c4] fix add()\n 1 file changed, 1 insertion(+), 1 deletion(-)',
        exitCode: 0,
      });
    const log = new EventLog(path.join(dir, 'events.jsonl'));
    log.append(t.events().map(({ seq: _s, ...e }) => e));
    log.close();
    const { events } = readEventLog(path.join(dir, 'events.jsonl'));
    const r = steps(events);
    const due = r.checkpoints[0];
    expect(due.trigger).toBe('git-commit');
    const seg = readEventLog(path.join(dir, 'events.jsonl'), due.from).events.filter(
      (e) => e.seq >= due.fromSeq && e.seq <= due.seq,
    );
    const evidence = segmentEvidence(due, seg, assessmentConfig(undefined).detector);
    expect(evidence).toMatchObject({
      requests: ['Fix the failing add() test in src/math.ts.'],
      tools: { Bash: 4, Edit: 1 },
      signals: { TestFailure: 2, TestSuccess: 1, Commit: 1 },
      failedTools: ['vitest test'],
      passedTools: ['vitest test'],
      commits: ['fix add()'],
    });
    const res = await new OfflineSummaryBackend().complete({
      purpose: 'checkpoint-summary',
      system: '',
      prompt: '',
      schema: {},
      schemaName: 'x',
      evidence,
      timeoutMs: 1000,
    });
    expect(res.value).toEqual({
      title: 'Committed “fix add()”',
      summary:
        'Asked: “Fix the failing add() test in src/math.ts.”. 5 tool calls (Bash 4, Edit 1). ' +
        'failing: vitest test; passing: vitest test. 1 commit: “fix add()”.',
      attempted: ['“Fix the failing add() test in src/math.ts.”'],
      failures: ['2 failing test runs'],
      successes: ['1 passing test run'],
      commits: ['fix add()'],
    });
    // Deterministic.
    expect(summariseSegment(evidence)).toEqual(res.value);
  });

  it('titles a struggle, and refuses requests that are not segment summaries', async () => {
    const s = summariseSegment({
      fromSeq: 1,
      toSeq: 9,
      firstMsg: 1,
      lastMsg: 9,
      requests: [],
      tools: { Bash: 3 },
      signals: { BuildFailure: 3, UserCorrection: 1 },
      failedTools: ['tsc build'],
      passedTools: [],
      commits: [],
    });
    expect(s.title).toBe('Struggled with tsc build');
    expect(s.summary).toContain('Friction: 1 correction.');
    await expect(
      new OfflineSummaryBackend().complete({
        purpose: 'judge',
        system: '',
        prompt: '',
        schema: {},
        schemaName: 'x',
        timeoutMs: 1,
      }),
    ).rejects.toBeInstanceOf(LlmError);
  });
});

describe('checkpoints.jsonl', () => {
  let file: string;
  beforeEach(() => {
    file = path.join(
      fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-cp-')),
      'sessions',
      'default',
      's',
      'checkpoints.jsonl',
    );
  });
  afterEach(() =>
    fs.rmSync(path.dirname(path.dirname(path.dirname(path.dirname(file)))), { recursive: true, force: true }),
  );

  const rec = (seq: number): CheckpointRecord => ({
    seq,
    run: 1,
    trigger: 'message-count',
    time: '2026-11-22T03:00:00.000Z',
    fromSeq: 1,
    firstMsg: 1,
    lastMsg: 5,
    title: `t${seq}`,
    summary: 's',
    backend: 'offline',
  });

  it('appends once per seq (a replay after a crash writes nothing new)', () => {
    expect(appendCheckpoint(file, rec(10))).toBe(true);
    expect(appendCheckpoint(file, rec(10))).toBe(false);
    expect(appendCheckpoint(file, rec(7))).toBe(false);
    expect(appendCheckpoint(file, rec(20))).toBe(true);
    expect(readCheckpoints(file).map((r) => r.seq)).toEqual([10, 20]);
  });

  it('cuts off a torn last line before appending', () => {
    appendCheckpoint(file, rec(10));
    fs.appendFileSync(file, '{"seq":15,"run":1,"trig');
    expect(readCheckpoints(file).map((r) => r.seq)).toEqual([10]);
    expect(appendCheckpoint(file, rec(15))).toBe(true);
    expect(readCheckpoints(file).map((r) => r.seq)).toEqual([10, 15]);
    expect(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
  });
});
