/**
 * The console's Decisions, freeze/thaw, Pipelines, Silences and Digest pages in a real headless
 * Chromium over a real SQLite store: each button writes what its CLI command writes
 * (spec.approval, the frozen marks, the resume request), with who did it, and the audit log
 * records it; the digest page shows what `orchctl digest` prints. No controller runs: what is
 * checked is the console's write, not what a controller makes of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../controller/api/autopilot.js';
import type { Silence } from '../../controller/api/notification.js';
import { FROZEN_ANNOTATION } from '../../controller/api/freeze.js';
import { RESUME_MESSAGE_ANNOTATION, RESUME_REQUESTED_ANNOTATION } from '../../controller/api/pipeline.js';
import { API_VERSION } from '../../controller/api/types.js';
import { launchChromium, startConsole, type ConsoleProcess } from '../support/console.js';
import { makeHarness, type Harness } from '../support/controller-harness.js';
import { pipelineOf } from '../support/pipeline.js';

let h: Harness;
let con: ConsoleProcess;
let browser: Browser;
let page: Page;

async function decision(name: string, phase: string, createdAt: number, reason = `idle for ${createdAt}h`) {
  const d = await h.store.create({
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: { name, namespace: 'default' },
    spec: {
      autopilot: 'pilot',
      think: createdAt,
      action: 'stop',
      target: { project: 'webapp', session: `webapp-${createdAt}` },
      reason,
      priority: 3,
      planner: 'heuristic',
      level: 'cautious',
      snapshot: { revision: 2, objects: [] },
    },
  });
  await h.store.updateStatus({ ...d, status: { phase } });
}

const deskChannel = { type: 'command', command: ['true'] };

/** A run of `session` that failed, as the session's Event and the notifier's record of it leave it. */
async function failedRun(session: string, message: string) {
  const s = (await h.store.get({ kind: 'AgentSession', namespace: 'default', name: session }))!;
  await h.store.updateStatus({ ...s, status: { ...s.status, phase: 'Failed' } });
  const n = await h.store.create({
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: { name: `default.desk.${session}.failed`, namespace: 'default' },
    spec: {
      policy: 'default',
      channel: 'desk',
      tier: 2,
      source: 'event',
      eventKey: `default/${session}.failed`,
      event: {
        type: 'Warning',
        reason: 'Failed',
        message,
        involvedObject: { kind: 'AgentSession', name: session, namespace: 'default' },
        count: 1,
      },
      title: `Failed: AgentSession default/${session}`,
      body: message,
    },
  });
  await h.store.updateStatus({ ...n, status: { phase: 'Sent' } });
}

const storeRevision = async () => JSON.parse((await h.orchctl(['version', '-o', 'json'])).stdout).store.revision;

const audit = () =>
  fs
    .readFileSync(path.join(h.home, 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, string>);

beforeAll(async () => {
  h = await makeHarness();
  await decision('pilot-1-1', 'Executed', 1);
  await decision('pilot-2-1', 'PendingApproval', 2);
  await decision('pilot-3-1', 'PendingApproval', 3);
  await h.apply([
    { apiVersion: API_VERSION, kind: 'Project', metadata: { name: 'webapp' }, spec: { path: h.repo } },
    {
      apiVersion: API_VERSION,
      kind: 'AgentSession',
      metadata: { name: 'webapp-1' },
      spec: { projectRef: 'webapp', agent: { command: ['true'] }, desiredState: 'Stopped' },
    },
    pipelineOf('release', h.repo, [['build', 'build it']]),
  ]);
  const p = (await h.store.get({ kind: 'Pipeline', namespace: 'default', name: 'release' }))!;
  await h.store.updateStatus({ ...p, status: { phases: [{ name: 'build', state: 'Blocked' }] } });
  con = await startConsole(h);
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(con.loginUrl);
  await page.waitForURL(`${con.base}/`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await con?.stop();
  await h?.cleanup();
});

describe('console pages (headless Chromium)', () => {
  it('lists pending decisions first and approves one with a reason, recorded as who did it', async () => {
    await page.goto(`${con.base}/decisions`);
    const names = await page.locator('#decisions tbody tr td:nth-child(1)').allTextContents();
    expect(names.slice(0, 2).sort()).toEqual(['pilot-2-1', 'pilot-3-1']); // pending first
    expect(names[2]).toBe('pilot-1-1');
    const row = page.locator('#decisions tbody tr', { hasText: 'pilot-2-1' });
    await row.locator('form[action$="/approve"] input[name="reason"]').fill('fine, it is idle');
    await row.getByRole('button', { name: 'Approve' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toBe('decision.orchctl.io/pilot-2-1 approved');
    const d = (await h.store.get({ kind: 'Decision', namespace: 'default', name: 'pilot-2-1' })) as Decision;
    expect(d.spec?.approval).toMatchObject({ verdict: 'Approved', by: 'admin (console)', message: 'fine, it is idle' });
    expect(audit().find((e) => e.name === 'pilot-2-1')).toMatchObject({ to: 'approve', by: 'admin' });
  });

  it('rejects a decision, and refuses to approve it afterwards, saying why', async () => {
    await page.goto(`${con.base}/decisions`);
    const row = page.locator('#decisions tbody tr', { hasText: 'pilot-3-1' });
    await row.getByRole('button', { name: 'Reject' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toBe('decision.orchctl.io/pilot-3-1 rejected');
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const again = await page.request.post(`${con.base}/decisions/default/pilot-3-1/approve`, {
      form: { _csrf: csrf!, reason: '' },
    });
    expect(await again.text()).toContain('failed: decision &quot;pilot-3-1&quot; was already rejected by admin');
  });

  it('freezes a project with its sessions from the board, and thaws them', async () => {
    await page.goto(`${con.base}/`);
    await page.locator('summary', { hasText: 'Freeze / thaw' }).click();
    const form = page.locator('form[action="/freeze"]');
    await form.locator('input[name="target"]').fill('webapp');
    await form.locator('input[name="message"]').fill('deploy freeze');
    await form.getByRole('button', { name: 'Freeze' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toBe('2 of 2 objects frozen, the rest unchanged');
    const mark = async (kind: string, name: string) =>
      (await h.store.get({ kind, namespace: 'default', name }))?.metadata.annotations?.[FROZEN_ANNOTATION];
    expect(await mark('Project', 'webapp')).toMatch(/ by admin \(console\): deploy freeze$/);
    expect(await mark('AgentSession', 'webapp-1')).toBeDefined();
    await page.locator('summary', { hasText: 'Freeze / thaw' }).click();
    const thaw = page.locator('form[action="/thaw"]');
    await thaw.locator('input[name="target"]').fill('webapp');
    await thaw.getByRole('button', { name: 'Thaw' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toBe('2 of 2 objects thawed, the rest unchanged');
    expect(await mark('Project', 'webapp')).toBeUndefined();
    expect(
      audit()
        .filter((e) => e.kind === 'Freeze')
        .map((e) => e.to),
    ).toEqual(['freeze', 'thaw']);
  });

  it('resumes a blocked pipeline with a message', async () => {
    await page.goto(`${con.base}/pipelines`);
    await page.locator('input[name="message"]').fill('the API key is in place now');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toBe('pipeline.orchctl.io/release resume requested');
    const p = await h.store.get({ kind: 'Pipeline', namespace: 'default', name: 'release' });
    expect(p?.metadata.annotations?.[RESUME_MESSAGE_ANNOTATION]).toBe('the API key is in place now');
    expect(p?.metadata.annotations?.[RESUME_REQUESTED_ANNOTATION]).toBeDefined();
  });

  it('creates a silence with the same checks as orchctl silence create, and expires it', async () => {
    await page.goto(`${con.base}/silences`);
    const form = page.locator('form.silence');
    await form.locator('textarea[name="matchers"]').fill('reason=Stalled\ninvolvedObject.name=~"web-.*"');
    await form.locator('input[name="for"]').fill('2h');
    await form.locator('input[name="comment"]').fill('known flaky stall');
    await form.getByRole('button', { name: 'Create silence' }).click();
    const created = await page.locator('.flash').textContent();
    expect(created).toMatch(/^silence\.orchctl\.io\/silence-\d{8}-\d{6}-[0-9a-f]{4} created$/);
    const name = /silence-[\d-]+[0-9a-f]{4}/.exec(created!)![0];
    const s = (await h.store.get({ kind: 'Silence', namespace: 'default', name })) as Silence;
    expect(s.spec).toMatchObject({
      matchers: ['reason=Stalled', 'involvedObject.name=~"web-.*"'],
      createdBy: 'admin (console)',
      comment: 'known flaky stall',
    });
    // Bad input: an error naming the field and its flag, nothing written.
    await form.locator('textarea[name="matchers"]').fill('reason=~"("');
    await form.locator('input[name="for"]').fill('2h');
    await form.getByRole('button', { name: 'Create silence' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toMatch(/^failed: the silence was not created: /);
    expect((await h.store.list('Silence')).items).toHaveLength(1);
    await page.locator('#silences tbody tr', { hasText: name }).getByRole('button', { name: 'Expire' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toBe(`silence.orchctl.io/${name} expired`);
    const ended = (await h.store.get({ kind: 'Silence', namespace: 'default', name })) as Silence;
    expect(Date.parse(ended.spec!.endsAt)).toBeLessThanOrEqual(Date.now());
  });

  it('shows the nodes and the notifications outbox as orchctl get does', async () => {
    await page.goto(`${con.base}/nodes`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Nodes');
    await expect(page.locator('main').textContent()).resolves.toContain('No nodes.');
    await h.store.create({
      apiVersion: API_VERSION,
      kind: 'Node',
      metadata: { name: 'gpu-box' },
      spec: { maxSessions: 4 },
    });
    await page.goto(`${con.base}/nodes`);
    await expect(page.locator('#nodes tbody tr td').first().textContent()).resolves.toBe('gpu-box');
    await page.goto(`${con.base}/notifications`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Notifications');
    await expect(page.locator('main').textContent()).resolves.toContain('No notifications.');
  });

  it('says no digest is configured when the store has no NotificationPolicy', async () => {
    await page.goto(`${con.base}/digest`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Digest');
    await expect(page.locator('main p.empty').textContent()).resolves.toContain(
      'No digest configured: the store has no NotificationPolicy.',
    );
    expect(await page.locator('section.digest').count()).toBe(0);
  });

  it('shows the digest orchctl digest prints for the same store: a failed session, a pending decision', async () => {
    await h.apply([
      { apiVersion: API_VERSION, kind: 'NotificationChannel', metadata: { name: 'desk' }, spec: deskChannel },
      {
        apiVersion: API_VERSION,
        kind: 'NotificationPolicy',
        metadata: { name: 'default' },
        spec: { route: { channels: ['desk'] }, digest: { schedule: '0 7 * * *', timeZone: 'UTC' } },
      },
    ]);
    await decision('pilot-9-1', 'PendingApproval', 9, 'idle for 9h, <b>no</b> commit');
    await failedRun('webapp-1', 'agent exited with code 2');
    // The window ends at the current second (the store stamps whole seconds): let it turn.
    await new Promise((r) => setTimeout(r, 1010 - (Date.now() % 1000)));
    const cli = await h.orchctl(['digest', '--template']);
    expect(cli.exitCode, cli.stderr).toBe(0);
    const before = await storeRevision();
    await page.goto(`${con.base}/digest`);
    const section = page.locator('section.digest[data-policy="default/default"]');
    const shown = (await section.locator('pre.digest').textContent()) ?? '';
    // The same text but for the window's end, which is each one's own now.
    const lines = (s: string) =>
      s
        .trimEnd()
        .split('\n')
        .filter((l) => !/^Since .+ until .+\.$/.test(l));
    expect(lines(shown)).toEqual(lines(cli.stdout));
    expect(shown).toMatch(/^orchctl digest default\/default: \d+ needs? you, 1 failed run\n/);
    expect(shown).toContain('- Decision pilot-9-1 waits for approval: ');
    expect(shown).toContain('- webapp: runs 0 started, 0 succeeded, 1 failed (Failed x1: webapp-1)');
    expect(shown).toContain('idle for 9h, <b>no</b> commit'); // text, not markup
    const summary = await section.locator('dl.summary').textContent();
    expect(summary).toContain('desk (command, 4000 characters)');
    expect(summary).toContain('no digest yet: from a day back');
    expect(summary).toContain('schedule "0 7 * * *"');
    expect(await storeRevision()).toBe(before); // a page load writes nothing
  });
});
