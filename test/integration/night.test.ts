/**
 * Must show of issue 25: a recorded night. A real controller, sim agents in real tmux, a local
 * webhook receiver, the shipped routing (manifests/notifications/policy.yaml) pointed at it with
 * quiet hours in force now, the autopilot at cautious: a transient failure (its recovery waits for
 * approval), an auth failure (the autopilot gives up), a pipeline phase whose agent reports blocked,
 * a session whose turn crosses its SessionPolicy's token budget (action Stop: the run ends).
 * The receiver gets exactly the messages the routing table (api/event-routing.ts) makes tier 1,
 * each within 1 s of its Event by the recorded times (the Event's and the delivery's, not the test's
 * clock); tier 3 never goes out on its own; the morning digest lists every item of "needs you now".
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import YAML from 'yaml';
import type { Decision } from '../../controller/api/autopilot.js';
import type { EventObject } from '../../controller/api/event.js';
import { REASON_ROUTES } from '../../controller/api/event-routing.js';
import type { EventReason } from '../../controller/api/event-reasons.js';
import type { Notification } from '../../controller/api/outbox.js';
import { API_VERSION } from '../../controller/api/types.js';
import { ROOT } from '../support/cli.js';
import { git, type Harness, makeHarness, shellSession } from '../support/controller-harness.js';
import { TranscriptBuilder } from '../support/assessment-transcript.js';
import { ScriptedServer } from '../support/fake-judge-server.js';
import { pipelineOf, simAgent } from '../support/pipeline.js';

/** A stand-in for Claude Code that writes its transcript, usage on every answer (budget-pause.test.ts). */
const FAKE_AGENT = path.resolve(import.meta.dirname, '../fixtures/assessment/fake-agent.mjs');

let http: ScriptedServer;
let h: Harness;
beforeAll(async () => {
  http = await ScriptedServer.start(() => ({ kind: 'raw', status: 200, text: 'ok' }));
});
afterAll(() => http.close());
beforeEach(async () => {
  http.reset();
  h = await makeHarness();
  h.env.NIGHT_WEBHOOK = `${http.url}/night`;
});
afterEach(() => h.cleanup());

const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);

/** The shipped policy, its channel the receiver, quiet from an hour ago to two hours from now (UTC). */
function shippedPolicy(now: number) {
  const p = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/notifications/policy.yaml'), 'utf8'));
  p.spec.route.channels = ['night'];
  p.spec.quietHours = [{ start: hhmm(now - 3600_000), end: hhmm(now + 2 * 3600_000) }];
  p.spec.digest = { channels: ['night'] };
  return p;
}

async function repo(name: string): Promise<string> {
  const dir = path.join(h.dir, name);
  fs.mkdirSync(dir);
  await git(dir, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(dir, 'README.md'), `# ${name}\n`);
  await git(dir, ['add', '.']);
  await git(dir, ['commit', '-qm', 'initial']);
  return dir;
}

const ns = 'default';
const list = async <T>(kind: string) => (await h.store.list(kind, { namespace: ns })).items as T[];
const tierOf = (e: EventObject) => {
  const row = REASON_ROUTES[e.reason as EventReason];
  return e.type === 'Warning' ? (row?.warningTier ?? row?.tier) : row?.tier;
};
const about = (e: { reason: string; involvedObject: { name: string } }) => `${e.reason} ${e.involvedObject.name}`;

it('a night: tier 1 reaches the receiver as the routing table says, within 1 s; the digest lists it all', async () => {
  const flaky = await repo('flaky');
  const keys = await repo('keys');
  const project = (name: string, dir: string) => ({
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name },
    spec: { path: dir },
  });
  const session = (name: string, projectRef: string, prompt: string) => ({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name },
    spec: { agentRef: 'sim', projectRef, prompt },
  });
  // One turn of an agent that reports token usage, past a budget with action Stop: stopped at its idle point.
  const turn = new TranscriptBuilder(new Date().toISOString(), 200)
    .user('Migrate the schema.')
    .say('Reading the migrations.')
    .endTurn('Done.');
  const script = path.join(h.dir, 'spend.script');
  fs.writeFileSync(script, turn.agentScript());
  // Its own repository: the pipeline's commits in h.repo would be counted in its run's message.
  const spend = shellSession(
    'spend',
    '',
    await repo('spend'),
    {},
    { command: [process.execPath, FAKE_AGENT, script, '50', '50'] },
  );
  (spend as { metadata: Record<string, unknown> }).metadata.labels = { team: 'night' };
  await h.apply([
    {
      apiVersion: API_VERSION,
      kind: 'SessionPolicy',
      metadata: { name: 'night-budget' },
      spec: {
        selector: { matchLabels: { team: 'night' } },
        budget: { maxTokens: 100, window: '24h', action: 'Stop' },
      },
    },
    spend,
    {
      apiVersion: API_VERSION,
      kind: 'NotificationChannel',
      metadata: { name: 'night' },
      spec: { type: 'webhook', urlFrom: { env: 'NIGHT_WEBHOOK' } },
    },
    shippedPolicy(Date.now()),
    simAgent,
    project('flaky', flaky),
    project('keys', keys),
    session('flaky-1', 'flaky', 'Add a retry() helper. [error:transient:1]'),
    session('keys-1', 'keys', 'Rotate the API client. [error:auth]'),
    pipelineOf('release', h.repo, [
      ['build', 'Build it. [report]'],
      ['test', 'Test it. [report] [block:which database should the tests use?]'],
    ]),
    {
      apiVersion: API_VERSION,
      kind: 'Autopilot',
      metadata: { name: 'pilot' },
      spec: {
        autonomyLevel: 'cautious',
        projectSelector: {},
        interval: '10s',
        planner: { backend: 'heuristic' },
        guardrails: { cooldowns: { sameProject: '0s', sameAction: '0s' } },
        sessionTemplate: { agentRef: 'sim' },
      },
    },
  ]);
  h.start();

  // The night's four needs-a-person moments.
  await h.waitFor(
    'the pending recovery, the auth give-up, the blocked phase and the budget stop',
    async () => {
      const events = await list<EventObject>('Event');
      const seen = new Set(events.map((e) => e.reason));
      const want = ['DecisionPending', 'AutopilotNotice', 'PhaseBlocked', 'BudgetStopped'];
      return want.every((r) => seen.has(r)) && events;
    },
    45_000,
  );
  // Routed and delivered: every Event the table makes tier 1 has its Notification Sent.
  const urgentEvents = async () =>
    (await list<EventObject>('Event')).filter((e) => tierOf(e) === 1 && e.reason !== 'WaitingForInput');
  const sent = await h.waitFor(
    'every tier-1 Event delivered',
    async () => {
      const outbox = (await list<Notification>('Notification')).filter((n) => n.spec?.source === 'event');
      const urgent = outbox.filter((n) => n.spec!.tier === 1 && n.spec!.event!.reason !== 'WaitingForInput');
      const done = new Set(urgent.filter((n) => n.status?.phase === 'Sent').map((n) => about(n.spec!.event!)));
      const all = (await urgentEvents()).every((e) => done.has(about(e)));
      return all && urgent.every((n) => n.status?.phase === 'Sent') && urgent;
    },
    20_000,
  );
  const expected = (await urgentEvents()).map(about).sort();
  const received = http.requests
    .map((r) => r.body as { tier: number; events: { reason: string; involvedObject: { name: string } }[] })
    .filter((b) => Array.isArray(b.events));
  // Only tier 1 goes out tonight: tier 2 waits for the end of quiet hours, tier 3 for its batch.
  expect(received.map((b) => b.tier)).toEqual(received.map(() => 1));
  expect(received.map((b) => about(b.events[0])).sort()).toEqual(expected);
  expect(expected).toEqual(
    expect.arrayContaining(['AutopilotNotice keys', 'PhaseBlocked release', 'BudgetStopped spend']),
  );
  expect(expected.some((x) => x.startsWith('DecisionPending '))).toBe(true);
  // Within a second of its Event, by the times recorded (the Event's last occurrence, the send).
  for (const n of sent) {
    const lag = Date.parse(n.status!.sentAt!) - Date.parse(n.spec!.event!.lastTimestamp!);
    expect(lag, `${about(n.spec!.event!)}`).toBeLessThanOrEqual(1000);
  }
  // The failed runs are tier 3: never a message of their own — in the batch, or taken along by a tier-1 one.
  const outbox = await list<Notification>('Notification');
  const carriers = new Set(outbox.filter((n) => n.spec?.tier === 1).map((n) => n.metadata.name));
  const runs = outbox.filter((n) => n.spec?.event?.reason === 'Error');
  expect(runs.length).toBeGreaterThan(0);
  for (const n of runs)
    expect(n.status?.phase === 'Batched' || carriers.has(n.status?.sentWith ?? ''), n.metadata.name).toBe(true);

  // The morning digest (previewed from the store) lists every item of "needs you now".
  const pending = (await list<Decision>('Decision')).filter((d) => d.status?.phase === 'PendingApproval');
  expect(pending.length).toBeGreaterThan(0);
  const digest = await h.orchctl(['digest', '--template']);
  expect(digest.exitCode, digest.stderr).toBe(0);
  const needs = digest.stdout.slice(digest.stdout.indexOf('Needs you now ('));
  for (const d of pending) expect(needs).toContain(`orchctl approve decision ${d.metadata.name}`);
  expect(needs).toMatch(
    /- pipeline default\/release phase test is blocked[^\n]*: which database should the tests use\?/,
  );
  expect(needs).toMatch(/- project default\/keys escalated[^\n]*401 Unauthorized/);
  expect(needs).toMatch(/- session default\/spend is blocked[^\n]*SessionPolicy "night-budget" budget exceeded/);
  // The crossing in the cost section: the session's tokens, the policy's budget used and exceeded.
  const cost = digest.stdout.slice(digest.stdout.indexOf('Cost ('));
  expect(cost).toMatch(/\n {2}- default\/spend: \S+ tokens, /);
  expect(cost).toMatch(/\n- budget default\/night-budget: \S+\/100 used \(exceeded\)/);
  // Its tier-2 BudgetExceeded Events wait for the end of quiet hours: held back, told in the digest.
  expect(cost).toMatch(/- \[tier 2\] BudgetExceeded: AgentSession default\/spend - held for quietHours/);
  const section = needs.slice(0, needs.indexOf('\n\n'));
  const normalized = section
    .replace(/\d{2}-\d{2} \d{2}:\d{2}|\b\d{2}:\d{2}\b/g, 'HH:MM')
    .replace(/pilot-\d+-\d+/g, 'pilot-N-N')
    // The figures when the stop was written: the policy may not have summed the whole turn yet.
    .replace(/\(\S+\/100 in 24h\)/, '(N/100 in 24h)');
  await expect(`${normalized}\n`).toMatchFileSnapshot('../golden/digest-night-needs-you.txt');
}, 120_000);
