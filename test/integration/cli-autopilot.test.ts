/**
 * The Autopilot's command line on the built bin/orchctl, against a store holding Decisions as an
 * Autopilot leaves them (written here through the store API, status included): approve and reject
 * answer only PendingApproval decisions, each once, by name or with --all / -l, and say which
 * could not be answered (exit 1); restart session stamps the restart annotation; apply refuses a
 * Decision and names the file, line and field of a bad Autopilot; get and describe show them.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type Decision,
  type DecisionPhase,
  type Guardrail,
  RESTARTED_AT_ANNOTATION,
} from '../../controller/api/autopilot.js';
import { API_VERSION } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { cliEnv, orchctl, parseTable, tempHome } from '../support/cli.js';

let home: string;
beforeEach(() => {
  home = tempHome();
});
const run = (...args: string[]) => orchctl(home, args, { env: { ...cliEnv(home), USER: 'ada' } });
const lines = (s: string) => s.trim().split('\n').filter(Boolean);

async function withStore<T>(fn: (s: SqliteStore) => Promise<T>): Promise<T> {
  const s = new SqliteStore(path.join(home, 'state.db'));
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** A Decision as an Autopilot records it: the spec, then the gate's phase in status. */
async function record(
  name: string,
  phase: DecisionPhase,
  opts: { labels?: Record<string, string>; guardrail?: Guardrail; namespace?: string } = {},
) {
  await withStore(async (s) => {
    const created = await s.create({
      apiVersion: API_VERSION,
      kind: 'Decision',
      metadata: {
        name,
        namespace: opts.namespace ?? 'default',
        labels: { 'orchctl.io/autopilot': 'pilot', ...opts.labels },
      },
      spec: {
        autopilot: 'pilot',
        think: 3,
        action: 'stop',
        target: { project: 'webapp', session: 'webapp-1' },
        reason: 'idle for 2h',
        priority: 3,
        planner: 'heuristic',
        level: 'cautious',
        snapshot: { revision: 2, objects: [{ kind: 'AgentSession', name: 'webapp-1', resourceVersion: '2' }] },
      },
    });
    await s.updateStatus({ ...created, status: { phase, ...(opts.guardrail ? { guardrail: opts.guardrail } : {}) } });
  });
}

const get = (name: string, namespace = 'default') =>
  withStore(async (s) => (await s.get({ kind: 'Decision', namespace, name })) as Decision);

async function applyFile(docs: object[]) {
  const file = path.join(path.dirname(home), `m${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(file, docs.map((d) => YAML.stringify(d)).join('---\n'));
  return { file, r: await run('apply', '-f', file) };
}

describe('orchctl approve|reject decision', () => {
  it('answers pending decisions by name, once each; the others are reported and the exit status is 1', async () => {
    await record('pilot-3-1', 'PendingApproval');
    await record('pilot-3-2', 'Executed');
    await record('pilot-3-3', 'Rejected', { guardrail: 'YoungSession' });
    const before = await get('pilot-3-2');
    const started = Date.now();

    const r = await run('approve', 'decision', 'pilot-3-1', 'pilot-3-2', 'pilot-3-1', 'pilot-3-3', 'nope');
    expect(r.exitCode).toBe(1);
    expect(lines(r.stdout)).toEqual(['decision.orchctl.io/pilot-3-1 approved']);
    expect(lines(r.stderr)).toEqual([
      'error: decision "pilot-3-2" is Executed, not PendingApproval: only a pending decision can be approved',
      'error: decision "pilot-3-3" is Rejected, not PendingApproval: only a pending decision can be approved',
      'error: decision "nope" not found in namespace "default"',
    ]);

    const approved = await get('pilot-3-1');
    expect(approved.spec!.approval).toEqual({ verdict: 'Approved', at: expect.any(String), by: 'ada' });
    const at = Date.parse(approved.spec!.approval!.at);
    expect(at).toBeGreaterThanOrEqual(started);
    expect(at).toBeLessThanOrEqual(Date.now());
    // Named twice, written once: one spec change on top of create (generation 2), the gate's status kept.
    expect(approved.metadata.generation).toBe(2);
    expect(approved.status).toEqual({ phase: 'PendingApproval' });
    expect(await get('pilot-3-2')).toEqual(before);
  });

  it('reject -m records why; an answer is never changed afterwards', async () => {
    await record('pilot-3-1', 'PendingApproval');
    const r = await run('reject', 'decision/pilot-3-1', '-m', 'not during the release');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('decision.orchctl.io/pilot-3-1 rejected\n');
    const rejected = await get('pilot-3-1');
    expect(rejected.spec!.approval).toMatchObject({
      verdict: 'Rejected',
      by: 'ada',
      message: 'not during the release',
    });

    const again = await run('reject', 'dec', 'pilot-3-1');
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toBe(
      `decision.orchctl.io/pilot-3-1 unchanged (already rejected by ada at ${rejected.spec!.approval!.at})\n`,
    );
    const flip = await run('approve', 'decisions', 'pilot-3-1');
    expect(flip.exitCode).toBe(1);
    expect(flip.stderr).toBe(
      `error: decision "pilot-3-1" was already rejected by ada at ${rejected.spec!.approval!.at}\n`,
    );
    expect(await get('pilot-3-1')).toEqual(rejected);
  });

  it('--all -l answers the open pending ones the selector matches; --all alone all in the namespace', async () => {
    await record('pilot-4-1', 'PendingApproval', { labels: { tier: 'web' } });
    await record('pilot-4-2', 'PendingApproval', { labels: { tier: 'db' } });
    await record('pilot-4-3', 'Executed', { labels: { tier: 'web' } });
    await record('pilot-4-4', 'PendingApproval', { labels: { tier: 'web' } });
    await record('pilot-4-5', 'PendingApproval', { namespace: 'other' });

    const web = await run('approve', 'decision', '--all', '-l', 'tier=web');
    expect(web.exitCode, web.stderr).toBe(0);
    expect(lines(web.stdout)).toEqual([
      'decision.orchctl.io/pilot-4-1 approved',
      'decision.orchctl.io/pilot-4-4 approved',
    ]);
    expect((await get('pilot-4-3')).spec!.approval).toBeUndefined();

    // The answered ones wait for the controller; --all picks only the open one left here.
    const rest = await run('reject', 'decision', '--all', '-m', 'enough for today');
    expect(rest.exitCode, rest.stderr).toBe(0);
    expect(lines(rest.stdout)).toEqual(['decision.orchctl.io/pilot-4-2 rejected']);
    expect((await get('pilot-4-5', 'other')).spec!.approval).toBeUndefined();

    const none = await run('approve', 'decision', '--all');
    expect(none.exitCode).toBe(0);
    expect(none.stderr).toBe('No pending decisions found in default namespace.\n');

    const other = await run('approve', 'decision', '-l', 'orchctl.io/autopilot=pilot', '-n', 'other');
    expect(lines(other.stdout)).toEqual(['decision.orchctl.io/pilot-4-5 approved']);
  });

  it('refuses names with -l or --all, no target at all, and another kind, writing nothing', async () => {
    await record('pilot-5-1', 'PendingApproval');
    for (const [args, message] of [
      [['pilot-5-1', '--all'], 'names cannot be given together with a label selector (-l) or --all'],
      [['pilot-5-1', '-l', 'a=b'], 'names cannot be given together with a label selector (-l) or --all'],
      [[], 'give the decisions to act on: orchctl approve decision NAME…, -l SELECTOR or --all'],
    ] as const) {
      const r = await run('approve', 'decision', ...args);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toBe(`error: ${message}\n`);
    }
    const wrongKind = await run('approve', 'session', 'x');
    expect(wrongKind.stderr).toBe('error: orchctl approve decision works on decisions, not agentsessions\n');
    expect((await get('pilot-5-1')).metadata.generation).toBe(1);
  });
});

describe('orchctl restart session', () => {
  const session = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, labels },
    spec: { workdir: '.', agent: { command: ['true'] }, prompt: 'x', desiredState: 'Stopped' },
  });
  const annotations = (name: string) =>
    withStore(async (s) => (await s.get({ kind: 'AgentSession', namespace: 'default', name }))!.metadata.annotations);

  it('stamps orchctl.io/restartedAt with the time now, by name or -l; a missing one is an error', async () => {
    const { r: applied } = await applyFile([
      session('a', { team: 'web' }),
      session('b', { team: 'web' }),
      session('c'),
    ]);
    expect(applied.exitCode, applied.stderr).toBe(0);
    const before = Date.now();
    const r = await run('restart', 'session', 'a', 'nope');
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('agentsession.orchctl.io/a restarted\n');
    expect(lines(r.stderr)).toEqual([
      'warning: agentsession "a" has desiredState Stopped: it restarts when it is set to Running',
      'error: agentsession "nope" not found in namespace "default"',
    ]);
    const stamped = (await annotations('a'))![RESTARTED_AT_ANNOTATION];
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(stamped)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(stamped)).toBeLessThanOrEqual(Date.now());

    const sel = await run('restart', 'as', '-l', 'team=web');
    expect(lines(sel.stdout)).toEqual(['agentsession.orchctl.io/a restarted', 'agentsession.orchctl.io/b restarted']);
    const again = (await annotations('a'))![RESTARTED_AT_ANNOTATION];
    expect(Date.parse(again)).toBeGreaterThan(Date.parse(stamped)); // a new value: a new restart
    expect((await annotations('c'))?.[RESTARTED_AT_ANNOTATION]).toBeUndefined();

    // A later apply of the same manifest keeps the annotation (it was never in the applied configuration).
    expect((await applyFile([session('a', { team: 'web' })])).r.exitCode).toBe(0);
    expect((await annotations('a'))![RESTARTED_AT_ANNOTATION]).toBe(again);
  });
});

describe('apply', () => {
  it('refuses a Decision: the controller writes them', async () => {
    const { file, r } = await applyFile([
      {
        apiVersion: API_VERSION,
        kind: 'Decision',
        metadata: { name: 'pilot-1-1' },
        spec: {
          autopilot: 'pilot',
          think: 1,
          action: 'start',
          target: { project: 'webapp' },
          reason: 'stale',
          priority: 1,
          planner: 'heuristic',
          level: 'full',
          snapshot: { revision: 1, objects: [] },
        },
      },
    ]);
    expect(r.exitCode).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `error: ${file}:2:7 (document 1) kind: Decisions are written by the controller ` +
        '(an Autopilot); answer a pending one with `orchctl approve|reject decision NAME`',
      'error: no objects were changed (1 error)',
    ]);
    expect((await run('get', 'decisions', '-A', '-o', 'name')).stdout).toBe('');
  });

  it('names the file, line and field of a bad Autopilot, and writes none of the documents', async () => {
    const file = path.join(path.dirname(home), 'autopilots.yaml');
    fs.writeFileSync(
      file,
      [
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Autopilot',
        'metadata: {name: ok}',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Autopilot',
        'metadata: {name: pilot}',
        'spec:',
        '  autonomyLevel: full',
        '  interval: 1s',
        '  planner: {backend: anthropic}',
        '',
      ].join('\n'),
    );
    const r = await run('apply', '-f', file);
    expect(r.exitCode).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `error: ${file}:10:13 (document 2) spec.interval: must be at least 10s, got 1s`,
      `error: ${file}:11:12 (document 2) spec.planner.model: is required for the anthropic backend`,
      'error: no objects were changed (2 errors)',
    ]);
    expect((await run('get', 'autopilots', '-o', 'name')).stdout).toBe('');
  });
});

describe('LLM endpoints that would carry an API key', () => {
  const write = (name: string, text: string) => {
    const file = path.join(path.dirname(home), name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('refuses plain http:// to another host for a planner, a judge and a digest, naming file:line, field', async () => {
    const file = write(
      'plaintext.yaml',
      [
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Autopilot',
        'metadata: {name: pilot}',
        'spec:',
        '  planner:',
        '    backend: openai',
        '    model: m',
        '    endpoint: http://10.0.0.5:8080/v1',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: SessionPolicy',
        'metadata: {name: judged}',
        'spec:',
        '  judge: {backend: anthropic, model: m, endpoint: "http://llm.example.com"}',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: NotificationPolicy',
        'metadata: {name: digest}',
        'spec:',
        '  route: {channels: [ops]}',
        '  digest:',
        '    llm: {backend: openai, model: m, endpoint: "http://192.168.1.9:11434/v1"}',
        '',
      ].join('\n'),
    );
    const r = await run('apply', '-f', file);
    expect(r.exitCode).toBe(1);
    const why = (host: string) =>
      `plaintext to ${host} is refused (only loopback may be plain http): the API key would travel in clear; ` +
      'use https://';
    expect(lines(r.stderr)).toEqual([
      `error: ${file}:8:15 (document 1) spec.planner.endpoint: ${why('10.0.0.5:8080')}`,
      `error: ${file}:14:51 (document 2) spec.judge.endpoint: ${why('llm.example.com')}`,
      `error: ${file}:22:48 (document 3) spec.digest.llm.endpoint: ${why('192.168.1.9:11434')}`,
      'error: no objects were changed (3 errors)',
    ]);
    expect((await run('get', 'autopilots,sessionpolicies,notificationpolicies', '-o', 'name')).stdout).toBe('');
  });

  it('accepts https:// anywhere and plain http:// to loopback', async () => {
    const file = write(
      'endpoints.yaml',
      [
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Autopilot',
        'metadata: {name: remote}',
        'spec: {planner: {backend: openai, model: m, endpoint: "https://llm.example.com/v1"}}',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Autopilot',
        'metadata: {name: local}',
        'spec: {planner: {backend: openai, model: m, endpoint: "http://127.0.0.1:11434/v1"}}',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: SessionPolicy',
        'metadata: {name: judged}',
        'spec: {selector: {}, judge: {backend: anthropic, model: m, endpoint: "http://[::1]:8080"}}',
        '',
      ].join('\n'),
    );
    const r = await run('apply', '-f', file);
    // Nothing refused, nothing warned (the policy selects every session, of which there is none yet).
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it('refuses a command given to a backend that runs none', async () => {
    const file = write(
      'command.yaml',
      [
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Autopilot',
        'metadata: {name: pilot}',
        'spec:',
        '  planner: {backend: openai, model: m, command: [claude, -p]}',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: SessionPolicy',
        'metadata: {name: judged}',
        'spec:',
        '  judge:',
        '    command: [claude, -p]',
        '',
      ].join('\n'),
    );
    const r = await run('apply', '-f', file);
    expect(r.exitCode).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `error: ${file}:5:49 (document 1) spec.planner.command: is only for the command backend (backend is openai)`,
      `error: ${file}:12:14 (document 2) spec.judge.command: is only for the command backend (backend is heuristic)`,
      'error: no objects were changed (2 errors)',
    ]);
  });
});

describe('get and describe', () => {
  it('lists autopilots and decisions with their columns, and describes them', async () => {
    const { r } = await applyFile([
      { apiVersion: API_VERSION, kind: 'Autopilot', metadata: { name: 'pilot' }, spec: { autonomyLevel: 'cautious' } },
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    await record('pilot-3-1', 'Rejected', { guardrail: 'SameProjectCooldown' });
    await record('pilot-3-2', 'PendingApproval');

    const aps = parseTable((await run('get', 'ap')).stdout);
    expect(aps).toEqual([
      ['NAME', 'LEVEL', 'PLANNER', 'PROJECTS', 'STALE', 'PENDING', 'LAST-THINK', 'AGE'],
      ['pilot', 'cautious', 'heuristic', '<none>', '<none>', '<none>', '<none>', expect.stringMatching(/^\d+s$/)],
    ]);
    const decs = parseTable((await run('get', 'dec', '-o', 'wide')).stdout);
    expect(decs.map((row) => row.slice(0, -1))).toEqual([
      ['NAME', 'ACTION', 'PROJECT', 'SESSION', 'PHASE', 'WHY', 'LEVEL', 'PLANNER'],
      ['pilot-3-1', 'stop', 'webapp', 'webapp-1', 'Rejected', 'SameProjectCooldown', 'cautious', 'heuristic'],
      ['pilot-3-2', 'stop', 'webapp', 'webapp-1', 'PendingApproval', '<none>', 'cautious', 'heuristic'],
    ]);

    const ap = await run('describe', 'autopilot', 'pilot');
    expect(ap.exitCode, ap.stderr).toBe(0);
    expect(ap.stdout).toContain('Level:        cautious\n');
    expect(ap.stdout).toMatch(/^ {2}pilot-3-2 +stop +webapp\/webapp-1 +PendingApproval +<none> +\d+s$/m);
    expect(ap.stdout).toMatch(/^ {2}pilot-3-1 +stop +webapp\/webapp-1 +Rejected +SameProjectCooldown +\d+s$/m);
    const dec = await run('describe', 'decision', 'pilot-3-1');
    expect(dec.stdout).toContain('Reason:       idle for 2h\n');
    expect(dec.stdout).toMatch(/^ {2}AgentSession +webapp-1 +2$/m);
    expect(dec.stdout).toContain('  Guardrail:     SameProjectCooldown\n');
  });
});
