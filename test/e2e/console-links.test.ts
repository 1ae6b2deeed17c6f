/**
 * Signed action links end to end: the real controller (bin/orchctl controller --console-url) routes
 * a pending Decision's DecisionPending Event to a webhook channel (a local receiver), the payload
 * carries approve and reject links to the console (bin/orchctl console), and a real headless
 * Chromium opens them. A link answers once; a second use, an expired link, a forged one and one
 * for a superseded Decision are refused with a page saying why, and nothing changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../controller/api/autopilot.js';
import { API_VERSION, type Resource } from '../../controller/api/types.js';
import { newEvent } from '../../controller/client/events.js';
import { linkCsrf, loadOrCreateLinkKey, mintToken, verifyToken } from '../../controller/notify/action-links.js';
import { launchChromium, startConsole, type ConsoleProcess } from '../support/console.js';
import { makeHarness, type Harness } from '../support/controller-harness.js';
import { closeLoopback, type LoopbackServer, readBody, startLoopback } from '../support/loopback-server.js';

type Payload = { title: string; actions?: { action: string; label: string; url: string }[] };

let h: Harness;
let con: ConsoleProcess;
let hook: LoopbackServer;
const received: Payload[] = [];
let browser: Browser;
let page: Page;

const project: Resource = {
  apiVersion: API_VERSION,
  kind: 'Project',
  metadata: { name: 'webapp', namespace: 'default' },
};

/** A Decision waiting for a person and its DecisionPending Event, as the autopilot writes them. */
async function pendingDecision(name: string, action: 'stop' | 'notify' = 'stop') {
  const d = await h.store.create({
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: { name, namespace: 'default' },
    spec: {
      autopilot: 'pilot',
      think: 1,
      action,
      target: { project: 'webapp', session: `${name}-session` },
      reason: 'idle for 3h',
      priority: 3,
      planner: 'heuristic',
      level: 'cautious',
      snapshot: { revision: 2, objects: [] },
    },
  });
  await h.store.updateStatus({ ...d, status: { phase: 'PendingApproval' } });
  const message = `Decision ${name} waits for you: stop session ${name}-session: idle for 3h.`;
  const now = new Date().toISOString();
  await h.store.create(
    newEvent(project, { name: `${name}.pending`, type: 'Warning', reason: 'DecisionPending', message, now }, 'test'),
  );
}

const decision = async (name: string) =>
  (await h.store.get({ kind: 'Decision', namespace: 'default', name })) as Decision;

/** The link of `action` in the payload the webhook received about decision `name`. */
async function linkFor(name: string, action: 'approve' | 'reject'): Promise<string> {
  const p = await h.waitFor(`the webhook's message about ${name}`, async () =>
    received.find((x) => JSON.stringify(x).includes(`Decision ${name} waits`)),
  );
  const a = p.actions?.find((x) => x.action === action);
  expect(a, JSON.stringify(p)).toBeDefined();
  return a!.url;
}

const linkAudit = () =>
  fs
    .readFileSync(path.join(h.home, 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, string>)
    .filter((r) => r.reason?.startsWith('ConsoleLink'));

beforeAll(async () => {
  h = await makeHarness();
  hook = await startLoopback(async (req, res) => {
    received.push((await readBody(req)).body as Payload);
    res.end('ok');
  });
  h.env.HOOK_URL = `${hook.url}/hook`;
  await h.apply([
    {
      apiVersion: API_VERSION,
      kind: 'NotificationChannel',
      metadata: { name: 'hook' },
      spec: { type: 'webhook', urlFrom: { env: 'HOOK_URL' }, timeout: '5s' },
    },
    // The Decisions' autopilot: it selects no project, so it thinks of nothing itself and only
    // carries out what a person answered.
    {
      apiVersion: API_VERSION,
      kind: 'Autopilot',
      metadata: { name: 'pilot' },
      spec: { projectSelector: { matchLabels: { 'links-test': 'none' } }, autonomyLevel: 'cautious' },
    },
    {
      apiVersion: API_VERSION,
      kind: 'NotificationPolicy',
      metadata: { name: 'default' },
      spec: { route: { channels: ['hook'], tier: 4, routes: [{ matchers: ['reason="DecisionPending"'], tier: 1 }] } },
    },
  ]);
  con = await startConsole(h);
  h.start(['--console-url', con.base]);
  browser = await launchChromium();
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await con?.stop();
  await h?.stopController();
  if (hook) await closeLoopback(hook.server);
  await h?.cleanup();
});

describe('signed action links (real controller, console, webhook and headless Chromium)', () => {
  it('approves a pending decision from the link in its webhook message, and it is executed once', async () => {
    await pendingDecision('pilot-1-1', 'notify');
    const link = await linkFor('pilot-1-1', 'approve');
    expect(new URL(link).origin).toBe(con.base);
    await page.goto(link);
    await expect(page.locator('.decision').textContent()).resolves.toContain('idle for 3h');
    expect((await decision('pilot-1-1')).spec?.approval).toBeUndefined(); // GET changed nothing
    await page.locator('#confirm button').click();
    await expect(page.locator('#done').textContent()).resolves.toBe('decision pilot-1-1 approved');
    const d = await decision('pilot-1-1');
    expect(d.spec?.approval).toMatchObject({ verdict: 'Approved', by: 'link:hook' });
    expect(linkAudit()).toMatchObject([
      { name: 'pilot-1-1', to: 'approve', reason: 'ConsoleLinkAction', by: 'link:hook' },
    ]);
  });

  it('refuses the same link a second time, on the page and on a replayed form, changing nothing', async () => {
    const link = await linkFor('pilot-1-1', 'approve');
    const before = await decision('pilot-1-1');
    await page.goto(link);
    await expect(page.locator('#refused').textContent()).resolves.toContain('this link was used already');
    const t = new URL(link).searchParams.get('t')!;
    const replay = await page.request.post(`${con.base}/link`, {
      form: { t, _csrf: linkCsrf(loadOrCreateLinkKey(h.home), t) },
    });
    expect(replay.status()).toBe(409);
    expect(await replay.text()).toContain('this link was used already');
    expect((await decision('pilot-1-1')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(linkAudit().filter((r) => r.reason === 'ConsoleLinkAction')).toHaveLength(1);
  });

  it("refuses the link's form without its CSRF token or from another origin, changing nothing", async () => {
    await pendingDecision('pilot-3-1');
    const t = new URL(await linkFor('pilot-3-1', 'approve')).searchParams.get('t')!;
    const csrf = linkCsrf(loadOrCreateLinkKey(h.home), t);
    const noCsrf = await page.request.post(`${con.base}/link`, { form: { t } });
    expect(noCsrf.status()).toBe(403);
    expect(await noCsrf.text()).toContain('CSRF token missing or wrong');
    const other = await page.request.post(`${con.base}/link`, {
      form: { t, _csrf: csrf },
      headers: { origin: 'https://evil.example' },
    });
    expect(other.status()).toBe(403);
    expect(await other.text()).toContain('cross-origin request refused');
    expect((await decision('pilot-3-1')).spec?.approval).toBeUndefined();
  });

  it('refuses an expired link', async () => {
    await pendingDecision('pilot-2-1');
    const link = new URL(await linkFor('pilot-2-1', 'approve'));
    const key = loadOrCreateLinkKey(h.home);
    const v = verifyToken(key, link.searchParams.get('t')!, Date.now());
    expect(v.ok).toBe(true);
    // The same claims, expired: as the link would be once --link-ttl has passed.
    const claims = v.ok ? v.claims : undefined;
    link.searchParams.set('t', mintToken(key, { ...claims!, exp: Date.now() - 1000 }));
    await page.goto(link.href);
    await expect(page.locator('#refused').textContent()).resolves.toContain('the link expired at');
    expect((await decision('pilot-2-1')).spec?.approval).toBeUndefined();
  });

  it('refuses a forged link (a changed signature or a changed decision name)', async () => {
    const link = new URL(await linkFor('pilot-2-1', 'approve'));
    const t = link.searchParams.get('t')!;
    const last = t.at(-1) === 'A' ? 'B' : 'A';
    link.searchParams.set('t', `${t.slice(0, -1)}${last}`);
    await page.goto(link.href);
    await expect(page.locator('#refused').textContent()).resolves.toContain('the link is not valid');
    const [v, payload, sig] = t.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, string>;
    const other = Buffer.from(JSON.stringify({ ...claims, n: 'pilot-1-1' })).toString('base64url');
    link.searchParams.set('t', `${v}.${other}.${sig}`);
    await page.goto(link.href);
    await expect(page.locator('#refused').textContent()).resolves.toContain('the link is not valid');
    expect((await decision('pilot-2-1')).spec?.approval).toBeUndefined();
  });

  it('refuses a link for a decision that changed since it was sent (superseded), and says so', async () => {
    const link = await linkFor('pilot-2-1', 'reject');
    const d = await decision('pilot-2-1');
    await h.store.update({ ...d, metadata: { ...d.metadata, labels: { touched: 'yes' } } });
    await page.goto(link);
    await expect(page.locator('#refused').textContent()).resolves.toContain('changed since this link was sent');
    expect((await decision('pilot-2-1')).spec?.approval).toBeUndefined();
  });
});

describe('the controller flags for action links', () => {
  it('refuses a --console-url not https (nor loopback http) or with a path, a --link-ttl out of bounds', async () => {
    const run = (args: string[]) => h.orchctl(['controller', '--once', ...args]);
    const cases: [string[], string][] = [
      [['--console-url', 'http://console.example.org'], 'must be https:// (plain http:// only to loopback)'],
      [['--console-url', 'https://console.example.org/orchctl'], 'must have no path'],
      [['--console-url', 'https://console.example.org', '--link-ttl', '30s'], '--link-ttl 30s: must be 1m to 24h'],
      [['--link-ttl', '10m'], '--link-ttl is for action links: give --console-url too'],
    ];
    for (const [args, why] of cases) {
      const r = await run(args);
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stderr).toContain(why);
    }
  });
});
