/**
 * The pipeline's pure plan: phases start when their dependencies completed (in order, or as a
 * DAG), a complete report or a run that succeeded with no report completes a phase, a blocked
 * report blocks the pipeline until a resume is delivered, a tmux death is recovered once and the
 * second fails the phase, and planning again from what was written changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { RESTARTED_AT_ANNOTATION } from '../../../../controller/api/autopilot.js';
import {
  type Pipeline,
  type PipelinePhaseSpec,
  RECOVERED_RUN_ANNOTATION,
  RESUME_MESSAGE_ANNOTATION,
  RESUME_REQUESTED_ANNOTATION,
} from '../../../../controller/api/pipeline.js';
import type { AgentSession, AgentSessionStatus, ReportStatus } from '../../../../controller/api/session.js';
import { type PipelineEffect, planPipeline } from '../../../../controller/reconcilers/pipeline/plan.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const UID = 'uid-pl';
const template = { agentRef: 'sim', workdir: '/tmp', prompt: 'x' };

function pipeline(phases: PipelinePhaseSpec[] | string[], extra: Partial<Pipeline['metadata']> = {}): Pipeline {
  const list = phases.map((p) => (typeof p === 'string' ? { name: p, template } : p));
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Pipeline',
    metadata: { name: 'pl', namespace: 'default', uid: UID, generation: 1, ...extra },
    spec: { phases: list },
  };
}

function session(phase: string, status: AgentSessionStatus, annotations: Record<string, string> = {}): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: {
      name: `pl-${phase}`,
      namespace: 'default',
      annotations,
      ownerReferences: [
        { apiVersion: 'orchctl.io/v1alpha1', kind: 'Pipeline', name: 'pl', uid: UID, controller: true },
      ],
    },
    spec: { ...template, desiredState: 'Running', restartPolicy: 'Never' },
    status,
  };
}

const report = (status: ReportStatus['status'], extra: Partial<ReportStatus> = {}): ReportStatus => ({
  run: 1,
  status,
  progress: '1/3',
  updatedAt: '2026-01-01T11:59:00Z',
  stamp: '1:1',
  ...extra,
});

/** Plans, then plans again from the status it wrote (as the next reconcile does). */
function plan(p: Pipeline, sessions: Record<string, AgentSession>, now = NOW) {
  return planPipeline({ pipeline: p, sessions: new Map(Object.entries(sessions)), now });
}
const written = (p: Pipeline, r: ReturnType<typeof plan>): Pipeline => ({ ...p, status: r.status });
const kinds = (fx: PipelineEffect[]) => fx.map((e) => (e.type === 'Event' ? `${e.type}:${e.reason}` : e.type));
const states = (r: ReturnType<typeof plan>) => r.status.phases?.map((x) => `${x.name}=${x.state}`);

describe('planPipeline', () => {
  it('in order: only the first phase starts; the next when it reports complete (its session stopped)', () => {
    const p = pipeline(['design', 'build', 'docs']);
    const r1 = plan(p, {});
    expect(r1.effects.filter((e) => e.type === 'Create')).toEqual([{ type: 'Create', phase: 'design', dependsOn: [] }]);
    expect(states(r1)).toEqual(['design=Running', 'build=Pending', 'docs=Pending']);
    expect(r1.status).toMatchObject({ phase: 'Running', current: '1/3', completed: 0, total: 3, active: ['design'] });
    expect(r1.status.phases?.[1].message).toBe('waiting for design');

    const p1 = written(p, r1);
    const running = session('design', { phase: 'Running', run: 1, report: report('executing') });
    const r2 = plan(p1, { design: running });
    expect(r2.effects).toEqual([]); // no Event: the phase was Running already
    expect(r2.status.phases?.[0]).toMatchObject({ state: 'Running', run: 1, message: 'session Running (1/3 tasks)' });
    // Planned again from what it wrote: the same status (no write churn).
    expect(plan(written(p1, r2), { design: running }).status).toEqual(r2.status);

    const done = session('design', { phase: 'Running', run: 1, report: report('complete', { progress: '3/3' }) });
    const r3 = plan(p1, { design: done });
    expect(r3.effects).toEqual([
      { type: 'Create', phase: 'build', dependsOn: ['design'] },
      { type: 'Stop', phase: 'design', session: 'pl-design' },
      {
        type: 'Event',
        eventType: 'Normal',
        reason: 'PhaseSucceeded',
        message: 'phase design completed: the agent reported complete (3/3 tasks)',
      },
      { type: 'Event', eventType: 'Normal', reason: 'PhaseStarted', message: 'phase build started: session pl-build' },
    ]);
    expect(r3.status).toMatchObject({ current: '2/3', completed: 1, active: ['build'] });
    expect(r3.status.phases?.[0]).toMatchObject({ state: 'Succeeded', reason: 'ReportedComplete', run: 1 });
  });

  it('a run that succeeded with no report completes the phase; with a report still executing it fails it', () => {
    const p = written(pipeline(['a', 'b']), plan(pipeline(['a', 'b']), {}));
    const ok = plan(p, { a: session('a', { phase: 'Succeeded', run: 1 }) });
    expect(ok.status.phases?.[0]).toMatchObject({ state: 'Succeeded', reason: 'RunSucceeded' });
    const bad = plan(p, { a: session('a', { phase: 'Succeeded', run: 1, report: report('executing') }) });
    expect(bad.status.phases?.[0]).toMatchObject({ state: 'Failed', reason: 'IncompleteReport' });
    expect(bad.status).toMatchObject({ phase: 'Failed', current: '1/2' });
    expect(kinds(bad.effects)).toEqual(['Event:PhaseFailed', 'Event:Failed']); // and b is not started
    expect(bad.status.phases?.[1]).toMatchObject({ state: 'Pending' });
  });

  it('a phase finishes when its run ended (or its complete report was read), not when the plan saw it', () => {
    const p = written(pipeline(['a', 'b']), plan(pipeline(['a', 'b']), {}));
    const ended = '2026-01-01T11:40:00.123Z';
    const ok = plan(p, { a: session('a', { phase: 'Succeeded', run: 1, completionTime: ended }) });
    expect(ok.status.phases?.[0]).toMatchObject({ state: 'Succeeded', finishedAt: ended });
    const failed = plan(p, { a: session('a', { phase: 'Failed', run: 1, reason: 'Error', completionTime: ended }) });
    expect(failed.status.phases?.[0]).toMatchObject({ state: 'Failed', finishedAt: ended });
    expect(failed.status).toMatchObject({ phase: 'Failed', completionTime: ended });
    // Reported complete while its run goes on: from when the report was read (report.updatedAt).
    const reported = plan(p, { a: session('a', { phase: 'Running', run: 1, report: report('complete') }) });
    expect(reported.status.phases?.[0]).toMatchObject({ state: 'Succeeded', finishedAt: '2026-01-01T11:59:00.000Z' });
    // An end time from a clock ahead of the plan's is not taken: now.
    const ahead = plan(p, { a: session('a', { phase: 'Succeeded', run: 1, completionTime: '2026-01-01T13:00:00Z' }) });
    expect(ahead.status.phases?.[0].finishedAt).toBe(new Date(NOW).toISOString());
  });

  it('a report of an earlier run does not count for the current one', () => {
    const p = written(pipeline(['a']), plan(pipeline(['a']), {}));
    const r = plan(p, { a: session('a', { phase: 'Running', run: 2, report: report('complete') }) });
    expect(r.status.phases?.[0]).toMatchObject({ state: 'Running', run: 2 });
  });

  it('a DAG: independent phases start together, a join waits for all of its dependencies', () => {
    const dag: PipelinePhaseSpec[] = [
      { name: 'a', dependsOn: [], template },
      { name: 'b', dependsOn: ['a'], template },
      { name: 'c', dependsOn: ['a'], template },
      { name: 'd', dependsOn: ['b', 'c'], template },
    ];
    const p = written(pipeline(dag), plan(pipeline(dag), {}));
    const aDone = session('a', { phase: 'Succeeded', run: 1 });
    const r = plan(p, { a: aDone });
    expect(r.effects.filter((e) => e.type === 'Create').map((e) => (e as { phase: string }).phase)).toEqual(['b', 'c']);
    const r2 = plan(written(p, r), {
      a: aDone,
      b: session('b', { phase: 'Succeeded', run: 1 }),
      c: session('c', { phase: 'Running', run: 1 }),
    });
    expect(r2.effects.filter((e) => e.type === 'Create')).toEqual([]);
    expect(r2.status.phases?.[3].message).toBe('waiting for c');
    expect(r2.status.current).toBe('3/4');
  });

  it('blocked: the pipeline is Blocked with the blocker until a resume is delivered after the report', () => {
    const p = written(pipeline(['a', 'b']), plan(pipeline(['a', 'b']), {}));
    const blocked = session('a', {
      phase: 'Running',
      run: 1,
      report: report('blocked', { blocker: 'need the API key' }),
    });
    const r = plan(p, { a: blocked });
    expect(r.status).toMatchObject({ phase: 'Blocked', reason: 'PhaseBlocked', message: 'phase a: need the API key' });
    expect(r.status.conditions?.find((c) => c.type === 'Blocked')).toMatchObject({ status: 'True' });
    expect(kinds(r.effects)).toEqual(['Event:PhaseBlocked']);

    // orchctl pipeline resume: the annotation, answered once, to the live run.
    const asked = {
      ...written(p, r),
      metadata: {
        ...p.metadata,
        annotations: { [RESUME_REQUESTED_ANNOTATION]: 't1', [RESUME_MESSAGE_ANNOTATION]: 'use key K' },
      },
    };
    const r2 = plan(asked, { a: blocked });
    expect(r2.effects).toEqual([
      { type: 'Resume', requested: 't1', message: 'use key K', targets: [{ phase: 'a', session: 'pl-a', live: true }] },
    ]);
    expect(r2.status.resume).toMatchObject({ requested: 't1', state: 'Delivering', phases: ['a'] });

    // Delivered (the reconciler sets resumedAt): the same blocked report no longer blocks.
    const delivered = structuredClone(r2.status);
    delivered.resume = { ...delivered.resume!, state: 'Delivered' };
    delivered.phases![0].resumedAt = '2026-01-01T11:59:30Z';
    const r3 = plan({ ...asked, status: delivered }, { a: blocked });
    expect(r3.status.phases?.[0]).toMatchObject({ state: 'Running' });
    expect(r3.status.phase).toBe('Running');
    expect(r3.effects.filter((e) => e.type === 'Resume')).toEqual([]);
    // Blocked again: a blocked report newer than the resume.
    const again = session('a', {
      phase: 'Running',
      run: 1,
      report: report('blocked', { updatedAt: '2026-01-01T11:59:45Z', blocker: 'still no key' }),
    });
    expect(plan({ ...asked, status: r3.status }, { a: again }).status.phase).toBe('Blocked');
  });

  it('a blocked run that ended is resumed with a new run; a resume with nothing blocked is ignored', () => {
    const p = written(pipeline(['a']), plan(pipeline(['a']), {}));
    const ended = session('a', { phase: 'Succeeded', run: 1, report: report('blocked', { blocker: 'b' }) });
    const blocked = written(p, plan(p, { a: ended }));
    expect(blocked.status?.phase).toBe('Blocked');
    const asked = { ...blocked, metadata: { ...p.metadata, annotations: { [RESUME_REQUESTED_ANNOTATION]: 't1' } } };
    const r = plan(asked, { a: ended });
    expect(r.effects[0]).toMatchObject({ type: 'Resume', targets: [{ phase: 'a', live: false }] });
    expect((r.effects[0] as { message: string }).message).toMatch(/continue/);

    const running = session('a', { phase: 'Running', run: 1 });
    const idle = { ...written(p, plan(p, { a: running })), metadata: asked.metadata };
    const ignored = plan(idle, { a: running });
    expect(ignored.status.resume).toMatchObject({ requested: 't1', state: 'Ignored' });
    expect(kinds(ignored.effects)).toEqual(['Event:ResumeIgnored']);
    expect(plan(written(idle, ignored), { a: running }).effects).toEqual([]);
  });

  it('a resume still Delivering when a pass starts is Unconfirmed, never sent again', () => {
    const p = pipeline(['a']);
    const st = plan(p, {}).status;
    st.resume = { requested: 't1', state: 'Delivering', at: '2026-01-01T11:00:00Z', phases: ['a'] };
    const a = session('a', { phase: 'Running', run: 1 });
    const r = plan(
      { ...p, metadata: { ...p.metadata, annotations: { [RESUME_REQUESTED_ANNOTATION]: 't1' } }, status: st },
      { a },
    );
    expect(r.status.resume?.state).toBe('Unconfirmed');
    expect(kinds(r.effects)).toEqual(['Event:ResumeUnconfirmed']);
  });

  it('posted to the phases: Delivering while their nodes wait (paused), then their answers, once', () => {
    const p = written(pipeline(['a', 'b'], {}), plan(pipeline(['a', 'b']), {}));
    const dag = {
      ...p,
      spec: {
        phases: [
          { name: 'a', template },
          { name: 'b', dependsOn: [], template },
        ],
      },
    };
    const blocked = (phase: string, messageDelivery?: AgentSessionStatus['messageDelivery']) =>
      session(phase, { phase: 'Running', run: 1, report: report('blocked', { blocker: 'key' }), messageDelivery });
    const st = plan(dag, { a: blocked('a'), b: blocked('b') }).status;
    const ask = { [RESUME_REQUESTED_ANNOTATION]: 't1' };
    st.resume = {
      requested: 't1',
      state: 'Delivering',
      at: '2026-01-01T11:59:00Z',
      phases: ['a', 'b'],
      waiting: [
        { phase: 'a', session: 'pl-a', id: 'pipeline-resume/t1' },
        { phase: 'b', session: 'pl-b', id: 'pipeline-resume/t1' },
      ],
      outcomes: [],
    };
    const asked = { ...dag, metadata: { ...dag.metadata, annotations: ask }, status: st };
    const at = '2026-01-01T11:59:40.000Z';
    const waiting = {
      id: 'pipeline-resume/t1',
      state: 'Waiting' as const,
      reason: 'Paused',
      message: 'the run is paused',
      at,
    };
    // a's node holds it (paused), b's has not looked yet: still Delivering, no Event, never Unconfirmed.
    const r1 = plan(asked, { a: blocked('a', waiting), b: blocked('b') });
    expect(r1.status.resume).toMatchObject({
      state: 'Delivering',
      message: 'a: waiting: the run is paused; b: posted to its node',
    });
    expect(r1.effects).toEqual([]);
    expect(r1.status.phase).toBe('Blocked');
    // b delivered: b runs on (answered at its delivery), a still waits.
    const ok = { ...waiting, state: 'Delivered' as const, delivered: true, reason: 'Confirmed', message: 'confirmed' };
    const r2 = plan({ ...asked, status: r1.status }, { a: blocked('a', waiting), b: blocked('b', ok) });
    expect(kinds(r2.effects)).toEqual(['Event:Resumed']);
    expect(r2.status.phases?.find((x) => x.name === 'b')).toMatchObject({ state: 'Running', resumedAt: at });
    expect(r2.status.resume).toMatchObject({ state: 'Delivering', waiting: [{ phase: 'a' }] });
    // A newer resume waits for this one to be answered.
    const newer = { ...asked, metadata: { ...asked.metadata, annotations: { [RESUME_REQUESTED_ANNOTATION]: 't2' } } };
    expect(plan({ ...newer, status: r2.status }, { a: blocked('a', waiting), b: blocked('b', ok) }).effects).toEqual(
      [],
    );
    // a fails: the resume is Failed, with both outcomes.
    const bad = { ...waiting, state: 'Failed' as const, delivered: false, reason: 'NotRunning', message: 'ended' };
    const r3 = plan({ ...asked, status: r2.status }, { a: blocked('a', bad), b: blocked('b', ok) });
    expect(kinds(r3.effects)).toEqual(['Event:ResumeFailed']);
    expect(r3.status.resume).toEqual({
      requested: 't1',
      state: 'Failed',
      at: new Date(NOW).toISOString(),
      phases: ['a', 'b'],
      message: 'b: Confirmed: confirmed; a: NotRunning: ended',
    });
    expect(plan({ ...asked, status: r3.status }, { a: blocked('a', bad), b: blocked('b', ok) }).effects).toEqual([]);
  });

  it('a tmux death is recovered once (a new run through the restart annotation); a second death fails', () => {
    const p = written(pipeline(['a', 'b']), plan(pipeline(['a', 'b']), {}));
    const died = session('a', { phase: 'Killed', run: 1, reason: 'TmuxSessionLost', message: 'gone' });
    const r = plan(p, { a: died });
    expect(r.effects[0]).toMatchObject({ type: 'Recover', phase: 'a', session: 'pl-a', run: 1 });
    expect((r.effects[0] as { note: string }).note).toMatch(/recovery attempt 1 of 1.*handoff/);
    expect(r.status.phases?.[0]).toMatchObject({ state: 'Running', reason: 'Recovering', attempts: 1 });
    expect(r.status.phase).toBe('Running');

    // The recovery asked for, not yet started: no second Recover.
    const asked = session('a', died.status!, { [RESTARTED_AT_ANNOTATION]: 't', [RECOVERED_RUN_ANNOTATION]: '1' });
    expect(plan(written(p, r), { a: asked }).effects).toEqual([]);
    // Run 2 runs, then dies too: the phase and the pipeline fail.
    const run2 = { ...died.status!, lifecycle: { restartedAt: 't' } };
    const second = session(
      'a',
      { ...run2, run: 2 },
      { [RESTARTED_AT_ANNOTATION]: 't', [RECOVERED_RUN_ANNOTATION]: '1' },
    );
    const r2 = plan(written(p, r), { a: second });
    expect(r2.status.phases?.[0]).toMatchObject({ state: 'Failed', reason: 'SessionDied', attempts: 1, run: 2 });
    expect(r2.status.phase).toBe('Failed');
    expect(r2.effects.filter((e) => e.type === 'Recover' || e.type === 'Create')).toEqual([]);
  });

  it('other ends fail the phase; a stopped session is not a death', () => {
    const p = written(pipeline(['a']), plan(pipeline(['a']), {}));
    const failed = plan(p, { a: session('a', { phase: 'Failed', run: 1, reason: 'Error', message: 'exit 1' }) });
    expect(failed.status.phases?.[0]).toMatchObject({ state: 'Failed', reason: 'Error' });
    const stopped = plan(p, { a: session('a', { phase: 'Killed', run: 1, reason: 'Stopped' }) });
    expect(stopped.effects.filter((e) => e.type === 'Recover')).toEqual([]);
    expect(stopped.status.phases?.[0]).toMatchObject({ state: 'Failed', reason: 'Stopped' });
  });

  it('a completed phase stays completed when its session is deleted; a foreign session of the name fails it', () => {
    const p = pipeline(['a', 'b']);
    const done = written(p, plan(written(p, plan(p, {})), { a: session('a', { phase: 'Succeeded', run: 1 }) }));
    const r = plan(done, {});
    expect(r.status.phases?.[0]).toMatchObject({ state: 'Succeeded' });
    expect(r.effects.filter((e) => e.type === 'Create').map((e) => (e as { phase: string }).phase)).toEqual(['b']);

    const foreign = session('a', { phase: 'Running', run: 1 });
    foreign.metadata.ownerReferences = [];
    expect(plan(p, { a: foreign }).status.phases?.[0]).toMatchObject({ state: 'Failed', reason: 'SessionNameTaken' });
  });

  it('suspended: nothing new starts', () => {
    const p = pipeline(['a']);
    p.spec!.suspend = true;
    const r = plan(p, {});
    expect(r.effects).toEqual([]);
    expect(r.status).toMatchObject({ phase: 'Pending', reason: 'Suspended' });
  });

  it('an unusable status.json is one warning on the pipeline; the phase state does not change', () => {
    const p = written(pipeline(['a']), plan(pipeline(['a']), {}));
    const good = plan(p, { a: session('a', { phase: 'Running', run: 1, report: report('executing') }) });
    const bad = session('a', {
      phase: 'Running',
      run: 1,
      report: report('executing', { problem: 'status.json is not valid JSON' }),
    });
    const r = plan(written(p, good), { a: bad });
    expect(kinds(r.effects)).toEqual(['Event:InvalidReport']);
    expect(r.status.phases?.[0]).toMatchObject({ state: 'Running', reportProblem: 'status.json is not valid JSON' });
    expect({ ...r.status, phases: undefined }).toEqual({ ...good.status, phases: undefined });
    expect(plan(written(p, r), { a: bad }).effects).toEqual([]);
  });

  it('an invalid spec (written around admission) starts nothing and says why', () => {
    const r = plan(pipeline([{ name: 'a', dependsOn: ['a'], template }]), {});
    expect(r.effects.filter((e) => e.type === 'Create')).toEqual([]);
    expect(r.status).toMatchObject({ phase: 'Failed', reason: 'InvalidSpec' });
  });

  it('a phase whose session the validating client would refuse fails instead of starting, and stays failed', () => {
    const p = pipeline(['design', 'build']);
    const why = 'agentsession "pl-design" is invalid: spec.prompt: is 13000 bytes';
    const refused = new Map([['design', why]]);
    const r1 = planPipeline({ pipeline: p, sessions: new Map(), now: NOW, refused });
    expect(kinds(r1.effects)).toEqual(['Event:PhaseFailed', 'Event:Failed']);
    expect(r1.status.phases?.[0]).toMatchObject({ state: 'Failed', reason: 'SessionInvalid', message: why });
    expect(states(r1)).toEqual(['design=Failed', 'build=Pending']);
    expect(r1.status.phase).toBe('Failed');
    // Planned again from what was written (no refusal known this time): no session is created, nothing told twice.
    const r2 = plan(written(p, r1), {}, NOW + 1000);
    expect(r2.effects).toEqual([]);
    expect(r2.status).toEqual(r1.status);
  });
});
