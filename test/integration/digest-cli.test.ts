/**
 * `orchctl digest` on the built bin/orchctl, against a store holding the objects the notifier and
 * the other writers would have left (written here through the store API): the preview (default
 * and --dry-run) counts and lists them, the narrative comes from a local fake OpenAI-compatible
 * server unless --template, a failing one gives the template with the reason, and nothing is
 * written. `--now` with no controller times out cleanly with the request recorded on the policy.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Notification, NotificationStatus } from '../../controller/api/outbox.js';
import { DIGEST_REQUEST_ANNOTATION } from '../../controller/api/outbox.js';
import { API_VERSION, type Resource } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { orchctl, tempHome } from '../support/cli.js';
import { FakeOpenAI, openai } from '../support/fake-openai.js';

let home: string;
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterAll(() => fake.close());
beforeEach(() => {
  home = tempHome();
  fake.server.reset();
});
const run = (...args: string[]) => orchctl(home, args);

const doc = (kind: string, name: string, spec: object) => ({ apiVersion: API_VERSION, kind, metadata: { name }, spec });

async function apply(...docs: object[]) {
  const file = path.join(path.dirname(home), `m${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(file, docs.map((d) => YAML.stringify(d)).join('---\n'));
  const r = await run('apply', '-f', file);
  expect(r.exitCode, r.stderr).toBe(0);
}

const policy = (name: string, digest: object = {}) =>
  doc('NotificationPolicy', name, {
    route: { channels: ['desk'], routes: [{ matchers: ['reason=~"WaitingForInput|Escalated"'], tier: 1 }] },
    digest: { channels: ['desk', 'slack'], ...digest },
  });
const channels = [
  doc('NotificationChannel', 'desk', { type: 'command', command: ['true'] }),
  doc('NotificationChannel', 'slack', { type: 'webhook', format: 'slack', urlFrom: { env: 'SLACK_WEBHOOK_URL' } }),
];

/** Writes through the store API what the notifier would have recorded. */
async function withStore(fn: (s: SqliteStore) => Promise<void>) {
  const s = new SqliteStore(path.join(home, 'state.db'));
  try {
    await fn(s);
  } finally {
    await s.close();
  }
}

let serial = 0;
async function record(s: SqliteStore, reason: string, session: string, status: NotificationStatus, message?: string) {
  const n: Notification = {
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: { name: `default.desk.${++serial}`, namespace: 'default' },
    spec: {
      policy: 'default',
      channel: 'desk',
      tier: 3,
      source: 'event',
      eventKey: `default/${session}.${reason.toLowerCase()}`,
      event: {
        type: 'Warning',
        reason,
        message: message ?? `${reason} on ${session}`,
        involvedObject: { kind: 'AgentSession', name: session, namespace: 'default' },
        count: 1,
      },
      title: `${reason}: AgentSession default/${session}`,
      body: message ?? `${reason} on ${session}`,
    },
  };
  const created = await s.create(n as Resource);
  await s.updateStatus({ ...created, status });
}

async function busyStore() {
  await apply(...channels, policy('default'));
  await withStore(async (s) => {
    await record(s, 'Started', 'a', { phase: 'Suppressed', reason: 'tier4' });
    await record(s, 'Error', 'b', { phase: 'Sent' }, 'Run 1 Failed: agent exited with code 1');
    await record(s, 'Escalated', 'c', { phase: 'Sent' });
    await record(s, 'Completed', 'held1', { phase: 'Digest', reason: 'budget' });
    await record(s, 'Completed', 'held2', { phase: 'Digest', reason: 'budget' });
    const sessionDoc = doc('AgentSession', 'w', { prompt: 'x' });
    const waiting = await s.create({ ...sessionDoc, metadata: { name: 'w', namespace: 'default' } } as Resource);
    const since = new Date().toISOString();
    const cond = {
      type: 'WaitingForInput',
      status: 'True',
      reason: 'Question',
      message: 'Proceed?',
      lastTransitionTime: since,
    };
    await s.updateStatus({ ...waiting, status: { phase: 'Running', conditions: [cond] } });
  });
  // The window ends at the current second (the store stamps whole seconds): let it turn.
  await new Promise((r) => setTimeout(r, 1010 - (Date.now() % 1000)));
}

async function revision(): Promise<number> {
  const r = await run('version', '-o', 'json');
  return JSON.parse(r.stdout).store.revision;
}

describe('orchctl digest (preview)', () => {
  it('prints the template digest of what the store holds, and writes nothing', async () => {
    await busyStore();
    const before = await revision();
    for (const args of [[], ['--dry-run']]) {
      const r = await run('digest', ...args);
      expect(r.exitCode, r.stderr).toBe(0);
      const [title, , ...body] = r.stdout.split('\n');
      expect(title).toBe('orchctl digest default/default: 2 need you, 1 failed run, 2 succeeded, 2 held back');
      const text = body.join('\n');
      expect(text).toContain('Runs: 1 started, 2 succeeded, 1 failed.');
      expect(text).toMatch(/Needs you now \(2\):\n- session default\/w waits for input since /);
      expect(text).toMatch(/runs 1 started, 2 succeeded, 1 failed \(Error x1: b\)/);
      expect(text).toMatch(
        /- \[tier 3\] Completed: AgentSession default\/held1 - past the daily budget, since [\d:]+ \(desk\)/,
      );
      expect(text).toMatch(/- \[tier 3\] Completed: AgentSession default\/held2 - past the daily budget/);
      expect(r.stderr).toMatch(
        /# digest of notificationpolicy default\/default from .* \(since a day ago\), written by the template\n/,
      );
      // The tightest of the digest's channels: Slack's.
      expect(r.stderr).toContain(
        '# for desk (command, 4000 characters), slack (webhook, 2800 characters); at most 2800',
      );
      expect(r.stderr).toContain('2 notifications wait for it');
    }
    expect(await revision()).toBe(before);
  });

  it("writes the LLM's narrative on top, unless --template; a failing LLM gives the template and why", async () => {
    await apply(...channels, policy('default', { llm: { backend: 'openai', endpoint: fake.endpoint, model: 'm1' } }));
    await withStore((s) => record(s, 'Completed', 'held1', { phase: 'Digest', reason: 'budget' }));
    await new Promise((r) => setTimeout(r, 1010 - (Date.now() % 1000)));

    fake.script(openai.answer({ narrative: 'A quiet night; one notification waits below.' }));
    const llm = await run('digest');
    expect(llm.exitCode, llm.stderr).toBe(0);
    expect(llm.stdout.startsWith('orchctl digest default/default: 1 succeeded, 1 held back\n\n')).toBe(true);
    expect(llm.stdout).toContain('\n\nA quiet night; one notification waits below.\n\nSince ');
    expect(llm.stdout).toContain('- [tier 3] Completed: AgentSession default/held1 - past the daily budget');
    expect(llm.stderr).toContain("written by an LLM's narrative (openai fake-judge-1) on the template");
    expect(fake.requests).toHaveLength(1);

    const template = await run('digest', '--template');
    expect(template.exitCode).toBe(0);
    expect(template.stdout).not.toContain('A quiet night');
    expect(template.stdout).toContain('default/held1 - past the daily budget');
    expect(fake.requests).toHaveLength(1);

    fake.script(openai.garbage(), openai.garbage());
    const failing = await run('digest');
    expect(failing.exitCode).toBe(0);
    expect(failing.stdout).toContain('default/held1 - past the daily budget');
    expect(failing.stderr).toMatch(/written by the template \(the LLM failed: bad_output: /);
  });

  it('needs a policy: names the namespace’s policies when it has several', async () => {
    await apply(...channels);
    const none = await run('digest');
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('error: no NotificationPolicy in namespace default');
    await apply(policy('a'), policy('b'));
    const several = await run('digest');
    expect(several.exitCode).toBe(1);
    expect(several.stderr).toContain('has 2 NotificationPolicies (a, b): name one with --policy');
    const named = await run('digest', '--policy', 'b');
    expect(named.exitCode, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/^orchctl digest default\/b: nothing new\n/);
  });
});

describe('orchctl digest --now', () => {
  it('records the request on the policy and, with no controller to answer, times out cleanly', async () => {
    await apply(...channels, policy('default'));
    const t0 = Date.now();
    const r = await run('digest', '--now', '--timeout', '1s');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.exitCode).toBe(1);
    const requested = /digest requested at (\S+)\n/.exec(r.stdout)?.[1];
    expect(requested).toBeDefined();
    expect(r.stderr).toContain('warning: no controller is running on this store');
    expect(r.stderr).toContain(
      `error: timed out after 1s waiting for the digest of notificationpolicy "default" (requested at ${requested}; ` +
        'no digest recorded yet; is the controller running?)',
    );
    const got = await run('get', 'np', 'default', '-o', 'json');
    expect(JSON.parse(got.stdout).metadata.annotations[DIGEST_REQUEST_ANNOTATION]).toBe(requested);
  });

  it('refuses --now with --dry-run or --template', async () => {
    for (const extra of ['--dry-run', '--template']) {
      const r = await run('digest', '--now', extra);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(/^error: --(now|template) /);
    }
  });
});
