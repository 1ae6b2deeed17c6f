/**
 * Input that used to pass validation and then break the controller. At apply: every duration and
 * number bounded, sizes bounded, the field named, nothing written. In the controller: an object
 * that slipped past validation (written straight to the store) shows its error on itself and
 * never gets a tmux session without its run in status; a prompt with control characters is
 * pasted without them; YAML that only a parser would love gets file:line errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Resource } from '../../controller/api/types.js';
import { Tmux } from '../../controller/observers/tmux.js';
import { condition, makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const inDefault = (o: object) => {
  const r = o as Resource;
  return { ...r, metadata: { ...r.metadata, namespace: 'default' } };
};
const policy = (spec: object) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'p' },
  spec,
});
const session = (spec: Record<string, unknown>, agent: Record<string, unknown> = {}) =>
  shellSession('s', 'exec sleep 600', '/tmp', spec, agent);

describe('apply refuses out-of-bounds values with the field named and writes nothing', () => {
  const env = (n: number, size = 4) =>
    Array.from({ length: n }, (_, i) => ({ name: `V${i}`, value: 'x'.repeat(size) }));
  it.each<[string, object, string]>([
    [
      'a time box beyond a date',
      session({ maxDuration: '99999999999999999999h' }),
      'spec.maxDuration: must be at most 720h (30 days)',
    ],
    ['a time box over 30 days', session({ maxDuration: '721h' }), 'spec.maxDuration: must be at most 720h'],
    ['a negative time box', session({ maxDuration: '-5m' }), 'spec.maxDuration: must not be negative'],
    ['too many restarts', session({ maxRestarts: 1001 }), 'spec.maxRestarts: must be less than or equal to 1000'],
    [
      'a backoff delay over a day',
      session({ restartBackoff: { initialDelay: '1s', maxDelay: '25h' } }),
      'spec.restartBackoff.maxDelay: must be at most 24h',
    ],
    [
      'initialDelay above maxDelay',
      session({ restartBackoff: { initialDelay: '2h', maxDelay: '1h' } }),
      'spec.restartBackoff.initialDelay: must not exceed spec.restartBackoff.maxDelay',
    ],
    [
      'a grace period over an hour',
      session({}, { stop: { gracePeriod: '2h' } }),
      'spec.agent.stop.gracePeriod: must be at most 1h',
    ],
    [
      'a prompt over 1 MiB',
      session({ prompt: 'p'.repeat(1024 * 1024 + 1) }),
      'spec.prompt: must be no more than 1048576 characters',
    ],
    ['257 env entries', session({ env: env(257) }), 'spec.env: must have at most 256 items'],
    [
      'an env value over 32 KiB',
      session({ env: env(1, 32 * 1024 + 1) }),
      'spec.env[0].value: must be no more than 32768 characters',
    ],
    [
      'a 16,000-byte prompt by argument',
      session({ prompt: 'a'.repeat(16_000) }, { promptDelivery: 'argument' }),
      'spec.prompt: is 16000 bytes: too long for promptDelivery argument',
    ],
    ['a policy cooldown over a day', policy({ cooldown: '25h' }), 'spec.cooldown: must be at most 24h'],
    [
      '5000 concurrent sessions',
      policy({ maxConcurrentSessions: 5000 }),
      'spec.maxConcurrentSessions: must be less than or equal to 1000',
    ],
    [
      'a judge timeout over an hour',
      policy({ judge: { backend: 'heuristic', timeout: '2h' } }),
      'spec.judge.timeout: must be at most 1h',
    ],
  ])('%s', async (_what, bad, message) => {
    const good = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Project',
      metadata: { name: 'fine' },
      spec: { path: h.repo },
    };
    const file = path.join(h.dir, 'bad.json');
    fs.writeFileSync(file, `${JSON.stringify(good)}\n---\n${JSON.stringify(bad)}\n`);
    const r = await h.orchctl(['apply', '-f', file]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`${file}:`);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('no objects were changed');
    expect(await h.store.get({ kind: 'Project', namespace: 'default', name: 'fine' })).toBeUndefined();
  });
});

describe('YAML that only a parser would love', () => {
  it.each<[string, string, RegExp]>([
    ['an empty file', '', /empty\.yaml:1:1 no objects in this file/],
    ['a file of comments', '# nothing here\n', /empty\.yaml:1:1 no objects in this file/],
    [
      'an alias bomb',
      [
        'a: &a [x, x, x, x, x, x, x, x, x, x]',
        ...'bcdefg'.split('').map((c, i) => `${c}: &${c} [${Array(10).fill(`*${'abcdefg'[i]}`).join(', ')}]`),
      ].join('\n'),
      /empty\.yaml:1:1 \(document 1\) invalid YAML: aliases expand too far/,
    ],
    [
      'a list as a mapping key',
      'apiVersion: orchctl.io/v1alpha1\nkind: Project\nmetadata: {name: p}\nspec:\n  path: /tmp\n  ? [a, b]\n  : c\n',
      /empty\.yaml:6:5 \(document 1\) invalid YAML: a mapping key must be a plain value/,
    ],
  ])('%s: a file:line error and nothing else on stderr', async (_what, text, message) => {
    const file = path.join(h.dir, 'empty.yaml');
    fs.writeFileSync(file, text);
    const r = await h.orchctl(['apply', '-f', file]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/Warning|stringified|at .*\.js/);
    for (const line of r.stderr.trim().split('\n')) expect(line).toMatch(/^error: /);
  });
});

describe('the controller, given what validation would have refused', () => {
  it('a reconcile error shows on the object (Reconciled=False, one Warning Event) and nothing runs', async () => {
    // Straight into the store, as an older orchctl (or a hand-edited database) could have left it.
    await h.store.create(inDefault(session({ maxDuration: '99999999999999999999h' })));
    h.start();
    const s = await h.waitFor('Reconciled=False', async () => {
      const x = await h.session('s');
      return condition(x, 'Reconciled')?.status === 'False' && x;
    });
    expect(condition(s, 'Reconciled')).toMatchObject({
      reason: 'ReconcileError',
      message: expect.stringContaining('Invalid time value'),
    });
    // Retries go on with backoff; the Event is not repeated for the same error.
    await new Promise((r) => setTimeout(r, 3000));
    const events = (await h.events('s')).filter((e) => e.reason === 'ReconcileError');
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe('Warning');
    expect(Number(events[0].count ?? 1)).toBe(1);
    expect(await h.tmuxSessions()).toEqual([]);
  }, 60_000);

  it('a run left in Starting whose tmux session never came (a crash in between) ends, not waits forever', async () => {
    const created = await h.store.create(
      inDefault(shellSession('lost', 'exec sleep 600', h.repo, { restartPolicy: 'Never' })),
    );
    const withFinalizer = await h.store.update({
      ...created,
      metadata: { ...created.metadata, finalizers: ['orchctl.io/session'] },
    });
    await h.store.updateStatus({
      ...withFinalizer,
      status: {
        phase: 'Starting',
        run: 1,
        restarts: 0,
        startTime: new Date(Date.now() - 60_000).toISOString(),
        conditions: [],
      },
    });
    h.start();
    const s = await h.waitFor('the lost launch ended', async () => {
      const x = await h.session('lost');
      return phaseOf(x) === 'Killed' && x;
    });
    expect(s.status?.run).toBe(1);
  }, 60_000);

  it('a pasted prompt with \\x03 and an escape sequence does not interrupt the agent', async () => {
    const script =
      'printf "ready> "; IFS= read -r line; printf "%s" "$line" > "$ORCHCTL_WORKSPACE/got"; exec sleep 600';
    await h.apply([
      shellSession('ctl', script, h.repo, { prompt: 'before\x03mid\x1b[31mdle\x7fafter' }, { promptDelivery: 'paste' }),
    ]);
    h.start();
    const s = await h.waitFor('the agent read the prompt', async () => {
      const x = await h.session('ctl');
      const ws = x?.status?.workspace;
      return !!ws && fs.existsSync(path.join(ws, 'got')) && x;
    });
    expect(fs.readFileSync(path.join(s.status!.workspace!, 'got'), 'utf8')).toBe('beforemiddleafter');
    await new Promise((r) => setTimeout(r, 1000));
    expect(phaseOf(await h.session('ctl'))).toBe('Running'); // not exit 130
    const warned = (await h.events('ctl')).find((e) => e.reason === 'PromptSanitized');
    expect(warned?.message).toContain(
      'removed 7 control characters from the prompt before pasting (first at offset 6)',
    );
  }, 60_000);
});

describe('tmux errors', () => {
  it('say why even when tmux never ran (no "undefined")', async () => {
    const t = new Tmux(`orchctl-missing-${process.pid}`, path.join(h.dir, 'no-such-tmux'));
    const e = await t.run(['-f', '/dev/null', 'start-server', ';', 'new-session', '-d']).catch((x: Error) => x);
    expect((e as Error).message).toMatch(/^tmux new-session: .*ENOENT/);
    expect((e as Error).message).not.toContain('undefined');
  });
});
