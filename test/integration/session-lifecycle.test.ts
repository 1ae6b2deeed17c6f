/**
 * The session controller against real tmux (a socket per test), real git repositories and the
 * real database file: run outcomes, restarts with growing backoff and escalation, time boxes,
 * stopping, deletion through the finalizer, a missing working directory, and the handoff
 * workspace. Deadlines here are generous correctness bounds; latency is measured in bench/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { condition, makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const COMMIT = 'git -c user.email=a@b -c user.name=agent commit -qm';

describe('session lifecycle', () => {
  it('a run that exits 0 is Succeeded with exit code 0, git progress, output and result.json', async () => {
    const script = [
      'printf "\\033[32mworking\\033[0m on it\\n"',
      'echo one > a.txt',
      'git add a.txt',
      `${COMMIT} "add a"`,
      'printf "x\\ny\\n" > b.txt',
      'git add b.txt',
      `${COMMIT} "add b"`,
      'echo \'{"status":"done","tests":3}\' > "$ORCHCTL_RESULT_FILE"',
      'echo finished',
    ].join('; ');
    await h.apply([shellSession('ok', script, h.repo)]);
    h.start();
    const s = await h.waitFor('Succeeded', async () => {
      const s = await h.session('ok');
      return phaseOf(s) === 'Succeeded' && s;
    });
    const st = s.status!;
    expect(st.exitCode).toBe(0);
    expect(st.run).toBe(1);
    expect(st.restarts).toBe(0);
    expect(st.git).toMatchObject({ commits: 2, insertions: 3, deletions: 0, filesChanged: 2, branch: 'main' });
    expect(st.git?.lastCommit?.subject).toBe('add b');
    expect(st.headBefore).toMatch(/^[0-9a-f]{40}$/);
    expect(st.lastOutput).toContain('working on it');
    expect(st.lastOutput).toContain('finished');
    expect(st.lastOutput).not.toMatch(/\x1b/);
    expect(st.result).toEqual({ status: 'done', tests: 3 });
    expect(condition(s, 'Succeeded')).toMatchObject({ status: 'True', reason: 'Completed' });
    expect(condition(s, 'Ready')).toMatchObject({ status: 'False' });
    expect(st.observedGeneration).toBe(s.metadata.generation);
    // The handoff workspace of the run.
    const ws = st.workspace!;
    expect(ws).toBe(path.join(h.home, 'sessions', 'default', 'ok', '1'));
    for (const f of ['state.json', 'prompt.md', 'output.log', 'session.log'])
      expect(fs.existsSync(path.join(ws, f)), f).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(ws, 'state.json'), 'utf8'))).toMatchObject({
      status: 'SUCCEEDED',
      exitCode: 0,
      run: 1,
    });
    expect(fs.readFileSync(path.join(ws, 'output.log'), 'utf8')).toContain('finished');
    expect(fs.readFileSync(path.join(ws, 'session.log'), 'utf8')).toMatch(
      /^\[\d{4}-\d\d-\d\dT[^\]]+\] \[INFO\] run 1 started/m,
    );
    expect(fs.statSync(ws).mode & 0o777).toBe(0o700);
    const audit = fs
      .readFileSync(path.join(h.home, 'audit.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(audit.filter((a) => a.name === 'ok').map((a) => a.to)).toEqual(['Starting', 'Running', 'Succeeded']);
    const reasons = (await h.events('ok')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Started', 'Completed']));
    // The finished run's tmux session is cleaned up.
    await h.waitFor('tmux session gone', async () => (await h.tmuxSessions()).length === 0);
  });

  it('the first controller start records no FailedScheduling before its own node registers', async () => {
    await h.apply([shellSession('first', 'exec sleep 600', h.repo)]);
    h.start();
    await h.waitFor('Running', async () => phaseOf(await h.session('first')) === 'Running');
    expect((await h.events('first')).filter((e) => e.reason === 'FailedScheduling')).toEqual([]);
    expect(condition(await h.session('first'), 'Scheduled')).toMatchObject({ status: 'True' });
  }, 60_000);

  it('exit 3 fails, restarts with growing backoff up to maxRestarts, then stays Failed and Escalated', async () => {
    await h.apply([
      shellSession('flaky', 'echo "attempt $ORCHCTL_RUN"; exit 3', h.repo, {
        restartPolicy: 'OnFailure',
        maxRestarts: 3,
        restartBackoff: { initialDelay: '200ms', maxDelay: '5s' },
      }),
    ]);
    h.start();
    const s = await h.waitFor('Escalated', async () => {
      const s = await h.session('flaky');
      return condition(s, 'Escalated')?.status === 'True' && s;
    });
    expect(phaseOf(s)).toBe('Failed');
    expect(s.status).toMatchObject({ exitCode: 3, restarts: 3, run: 4, reason: 'Error' });
    expect(s.status!.lastStart).toMatchObject({
      run: 4,
      reason: 'RestartPolicy',
      message: 'restart 3/3: run 3 exited with code 3',
    });
    expect(s.status!.lastOutput).toContain('attempt 4');
    expect(condition(s, 'Escalated')).toMatchObject({ reason: 'RetryLimitReached' });
    const events = await h.events('flaky');
    const backoffs = events.filter((e) => e.reason === 'BackOff').map((e) => String(e.message));
    expect(backoffs.map((m) => m.match(/in (\S+)$/)?.[1])).toEqual(['200ms', '400ms', '800ms']);
    expect(events.find((e) => e.reason === 'Escalated')).toMatchObject({ type: 'Warning' });
    // The audit trail shows each run failing and coming back.
    const audit = fs
      .readFileSync(path.join(h.home, 'audit.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((a) => a.name === 'flaky');
    expect(audit.filter((a) => a.to === 'Failed')).toHaveLength(4);
    expect(audit.filter((a) => a.to === 'Backoff')).toHaveLength(3);
    // Nothing restarts any more.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await h.session('flaky'))!.status!.run).toBe(4);
  });

  it('a time-boxed run is TimedOut and keeps its last output', async () => {
    await h.apply([
      shellSession('slow', 'echo "last words before the box closes"; sleep 60', h.repo, { maxDuration: '1s' }),
    ]);
    h.start();
    const s = await h.waitFor('TimedOut', async () => {
      const s = await h.session('slow');
      return phaseOf(s) === 'TimedOut' && s;
    });
    expect(s.status!.lastOutput).toContain('last words before the box closes');
    expect(s.status!.reason).toBe('TimedOut');
    expect((await h.events('slow')).map((e) => e.reason)).toContain('TimeBoxExceeded');
    const started = Date.parse(s.status!.startTime!);
    expect(Date.parse(s.status!.completionTime!) - started).toBeGreaterThanOrEqual(1000);
  });

  it('timeoutAction Warn keeps the run going and raises TimeBoxExceeded', async () => {
    await h.apply([shellSession('warned', 'sleep 60', h.repo, { maxDuration: '500ms', timeoutAction: 'Warn' })]);
    h.start();
    const s = await h.waitFor('TimeBoxExceeded', async () => {
      const s = await h.session('warned');
      return condition(s, 'TimeBoxExceeded')?.status === 'True' && s;
    });
    expect(phaseOf(s)).toBe('Running');
  });

  it('desiredState Stopped stops the agent with C-c; one ignoring it is killed after the grace period', async () => {
    await h.apply([
      shellSession('polite', 'echo ready; sleep 60', h.repo),
      shellSession(
        'stubborn',
        `trap '' INT; echo $$ > "$ORCHCTL_WORKSPACE/agent.pid"; echo ignoring; while true; do sleep 1; done`,
        h.repo,
        {},
        { stop: { keys: ['C-c'], gracePeriod: '1s' } },
      ),
    ]);
    h.start();
    await h.waitFor(
      'both running',
      async () =>
        phaseOf(await h.session('polite')) === 'Running' && phaseOf(await h.session('stubborn')) === 'Running',
    );
    for (const name of ['polite', 'stubborn']) {
      const s = (await h.session(name))!;
      await h.store.update({ ...s, spec: { ...s.spec, desiredState: 'Stopped' } });
    }
    const polite = await h.waitFor('polite Killed', async () => {
      const s = await h.session('polite');
      return phaseOf(s) === 'Killed' && s;
    });
    expect(polite.status!.reason).toBe('Stopped');
    const stubborn = await h.waitFor('stubborn Killed', async () => {
      const s = await h.session('stubborn');
      return phaseOf(s) === 'Killed' && s;
    });
    expect(stubborn.status!.reason).toBe('Stopped');
    expect(
      Date.parse(stubborn.status!.completionTime!) - Date.parse(stubborn.status!.stopRequestTime!),
    ).toBeGreaterThanOrEqual(1000);
    expect(fs.readFileSync(path.join(stubborn.status!.workspace!, 'session.log'), 'utf8')).toContain(
      'grace period over',
    );
    // Killing its tmux session takes the agent down too: nothing is left running.
    const pid = Number(fs.readFileSync(path.join(stubborn.status!.workspace!, 'agent.pid'), 'utf8'));
    await h.waitFor(
      'stubborn agent process gone',
      async () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      10_000,
    );
    await h.waitFor('no tmux sessions', async () => (await h.tmuxSessions()).length === 0);
    // desiredState back to Running starts a new run.
    const p = (await h.session('polite'))!;
    await h.store.update({ ...p, spec: { ...p.spec, desiredState: 'Running' } });
    await h.waitFor('polite running again as run 2', async () => {
      const s = await h.session('polite');
      return phaseOf(s) === 'Running' && s?.status?.run === 2;
    });
  });

  it('delete goes through the finalizer: the tmux session is stopped and the outcome recorded', async () => {
    await h.apply([shellSession('doomed', 'echo alive; sleep 60', h.repo)]);
    h.start();
    const s = await h.waitFor('Running', async () => {
      const s = await h.session('doomed');
      return phaseOf(s) === 'Running' && s;
    });
    expect(s.metadata.finalizers).toContain('orchctl.io/session-cleanup');
    expect((await h.tmuxSessions()).map((t) => t.uid)).toEqual([s.metadata.uid]);
    const r = await h.orchctl(['delete', 'agentsession', 'doomed', '--wait', '--timeout', '20s']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await h.session('doomed')).toBeUndefined();
    expect(await h.tmuxSessions()).toEqual([]);
    const audit = fs.readFileSync(path.join(h.home, 'audit.log'), 'utf8');
    expect(audit).toMatch(/"name":"doomed".*"to":"Deleted"/);
  });

  it('a missing working directory: the session waits in Pending with a clear reason, no tmux, no restart', async () => {
    await h.apply([shellSession('lost', 'true', path.join(h.dir, 'does-not-exist'))]);
    h.start();
    const s = await h.waitFor('WorkdirNotFound', async () => {
      const s = await h.session('lost');
      return s?.status?.reason === 'WorkdirNotFound' && s;
    });
    expect(phaseOf(s)).toBe('Pending');
    expect(s.status!.message).toContain('does-not-exist');
    expect(condition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'WorkdirNotFound' });
    expect(s.status!.restarts ?? 0).toBe(0);
    expect(await h.tmuxSessions()).toEqual([]);
  });

  it('a session waits in Pending while its Agent does not exist, and starts when it is applied', async () => {
    await h.apply([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        metadata: { name: 'waiting' },
        spec: { agentRef: 'later', workdir: h.repo },
      },
    ]);
    h.start();
    const s = await h.waitFor('AgentNotFound', async () => {
      const s = await h.session('waiting');
      return s?.status?.reason === 'AgentNotFound' && s;
    });
    expect(phaseOf(s)).toBe('Pending');
    expect(condition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'AgentNotFound' });
    await h.apply([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'Agent',
        metadata: { name: 'later' },
        spec: { command: ['sh', '-c', 'exit 0'], promptDelivery: 'none' },
      },
    ]);
    await h.waitFor('Succeeded', async () => phaseOf(await h.session('waiting')) === 'Succeeded');
  });

  it('admission holds sessions beyond the policy limit in Pending with Admitted=False', async () => {
    await h.apply([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'default' },
        spec: { maxConcurrentSessions: 1 },
      },
      shellSession('first', 'sleep 2', h.repo),
      shellSession('second', 'sleep 2', h.repo),
    ]);
    h.start();
    const waiting = await h.waitFor('one admitted, one waiting', async () => {
      const a = await h.session('first');
      const b = await h.session('second');
      const running = [a, b].filter((s) => phaseOf(s) === 'Running');
      const pending = [a, b].filter((s) => phaseOf(s) === 'Pending' && condition(s, 'Admitted')?.status === 'False');
      return running.length === 1 && pending.length === 1 && pending[0];
    });
    expect(condition(waiting, 'Admitted')).toMatchObject({ reason: 'MaxConcurrentSessions' });
    expect(condition(waiting, 'Admitted')!.message).toContain('maxConcurrentSessions 1');
    await h.waitFor(
      'both Succeeded',
      async () =>
        phaseOf(await h.session('first')) === 'Succeeded' && phaseOf(await h.session('second')) === 'Succeeded',
      30_000,
    );
  });

  it('paste delivery types the prompt into the pane and submits it', async () => {
    await h.apply([
      shellSession(
        'pasted',
        'printf "prompt> "; IFS= read -r line; printf "%s" "$line" > got.txt; echo; echo "got it"',
        h.repo,
        { prompt: 'fix the flaky test in src/app.ts' },
        { promptDelivery: 'paste', readyTimeout: '5s' },
      ),
    ]);
    h.start();
    const s = await h.waitFor('Succeeded', async () => {
      const s = await h.session('pasted');
      return phaseOf(s) === 'Succeeded' && s;
    });
    expect(fs.readFileSync(path.join(h.repo, 'got.txt'), 'utf8')).toBe('fix the flaky test in src/app.ts');
    // The paste runs beside the loop; its outcome lands in status when it has finished.
    const delivered = await h.waitFor('PromptDelivered', async () => {
      const c = condition(await h.session('pasted'), 'PromptDelivered');
      return c?.status !== 'Unknown' && c;
    });
    expect(delivered).toMatchObject({ status: 'True', reason: 'Confirmed' });
    expect(fs.readFileSync(path.join(s.status!.workspace!, 'prompt.md'), 'utf8')).toBe(
      'fix the flaky test in src/app.ts\n',
    );
  });

  it('orchctl logs prints the run output without escape sequences', async () => {
    await h.apply([shellSession('chatty', 'for i in 1 2 3; do printf "\\033[1mline $i\\033[0m\\n"; done', h.repo)]);
    h.start();
    await h.waitFor('Succeeded', async () => phaseOf(await h.session('chatty')) === 'Succeeded');
    const r = await h.orchctl(['logs', 'chatty']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toEqual(['line 1', 'line 2', 'line 3']);
    const tail = await h.orchctl(['logs', 'chatty', '--tail', '1']);
    expect(tail.stdout).toBe('line 3');
    const missing = await h.orchctl(['logs', 'nope']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('not found');
  });
});
