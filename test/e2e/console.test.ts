/**
 * The web console in a real headless Chromium against a real controller, tmux and SQLite store:
 * log in with the URL `orchctl console --print-url` prints, the board shows every session and a
 * new one as soon as it is applied, a sim agent's permission prompt is approved from its session
 * page and the agent goes on, the terminal view shows the agent's output, and requests without
 * the CSRF token or from another origin are refused with nothing changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESTARTED_AT_ANNOTATION } from '../../controller/api/autopilot.js';
import { launchChromium, startConsole, type ConsoleProcess } from '../support/console.js';
import { condition, makeHarness, shellSession, type Harness } from '../support/controller-harness.js';

/** A sim agent that asks before it goes on: the built-in shell Agent's detection reads its [y/N]. */
const ASKER =
  "echo asker-started; printf 'Run the test suite? [y/N]'; read a; " +
  'echo "answer=$a"; echo continuing-after-approval; sleep 600';
const askerDetection = {
  agent: 'sim-asker',
  approveKeys: ['y', 'Enter'],
  denyKeys: ['n', 'Enter'],
  profiles: [
    {
      versions: ['*'],
      provenance: 'reconstructed',
      tailLines: 40,
      waiting: [{ regex: '\\[[yY]/[nN]\\]$', region: 'last' }],
      otherwise: 'busy',
    },
  ],
};

let h: Harness;
let con: ConsoleProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  h = await makeHarness();
  h.start();
  const sims = Array.from({ length: 19 }, (_, i) =>
    shellSession(`sim-${String(i).padStart(2, '0')}`, `echo hello-from-sim-${i}; sleep 600`, h.repo),
  );
  const asker = shellSession('asker', ASKER, h.repo, {}, { detection: askerDetection });
  await h.apply([...sims, asker]);
  con = await startConsole(h);
  browser = await launchChromium();
  context = await browser.newContext();
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await con?.stop();
  await h?.cleanup();
});

const boardRows = () => page.locator('#board tbody tr');

describe('orchctl console (headless Chromium)', () => {
  it('logs in with the printed URL and shows the 20 sessions on the board, live', async () => {
    expect(con.loginUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login#token=/);
    await page.goto(con.loginUrl);
    await page.waitForURL(`${con.base}/`);
    await page.locator('#board[data-live="true"]').waitFor();
    await expect.poll(() => boardRows().count(), { timeout: 10_000 }).toBe(20);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'orchctl_console');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    expect(fs.statSync(path.join(h.home, 'console-token')).mode & 0o777).toBe(0o600);
  });

  it('shows a session applied with orchctl within a second, without a reload', async () => {
    await h.apply([shellSession('newcomer', 'echo newcomer; sleep 600', h.repo)]);
    await page.locator('#board tr[data-key="default/newcomer"]').waitFor({ timeout: 1000 });
    expect(await boardRows().count()).toBe(21);
  });

  it("approves the sim agent's permission prompt from its session page, and the agent goes on", async () => {
    await h.waitFor('asker waits at its prompt', async () => {
      const c = condition(await h.session('asker'), 'WaitingForInput');
      return c?.status === 'True' && c;
    });
    await page.goto(`${con.base}/sessions/default/asker`);
    await expect.poll(() => page.locator('[data-cell="ACTIVITY"]').textContent()).toMatch(/^waiting/);
    await page.getByRole('button', { name: 'Approve prompt' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toMatch(/^delivered/);
    const log = () => fs.readFileSync(path.join(h.home, 'audit.log'), 'utf8');
    await h.waitFor('the agent went on', async () => {
      const out = await h.orchctl(['logs', 'asker']);
      return out.stdout.includes('continuing-after-approval') && out.stdout.includes('answer=y');
    });
    const audited = log()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, string>)
      .find((e) => e.name === 'asker' && e.to === 'approve');
    expect(audited).toMatchObject({ kind: 'AgentSession', by: 'admin', address: '127.0.0.1', reason: 'ConsoleAction' });
    const events = await h.events('asker');
    expect(events.some((e) => e.reason === 'MessageSent' && String(e.message).includes('approval'))).toBe(true);
  });

  it("shows the agent's output in the terminal view", async () => {
    await page.goto(`${con.base}/sessions/default/asker`);
    const rows = page.locator('#terminal .xterm-rows');
    await expect.poll(() => rows.textContent(), { timeout: 10_000 }).toContain('continuing-after-approval');
    expect(await rows.textContent()).toContain('asker-started');
  });

  it('refuses a POST without the CSRF token, and a cross-origin POST, changing nothing', async () => {
    await page.goto(`${con.base}/sessions/default/sim-00`);
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    expect(csrf).toBeTruthy();
    const url = `${con.base}/sessions/default/sim-00/restart`;
    const without = await page.request.post(url, { form: {}, maxRedirects: 0 });
    expect(without.status()).toBe(403);
    expect(await without.text()).toMatch(/CSRF/);
    const crossSite = await page.request.post(url, {
      form: { _csrf: csrf! },
      headers: { origin: 'http://evil.example' },
      maxRedirects: 0,
    });
    expect(crossSite.status()).toBe(403);
    expect(await crossSite.text()).toMatch(/cross-origin/);
    const s = await h.session('sim-00');
    expect(s?.metadata.annotations?.[RESTARTED_AT_ANNOTATION]).toBeUndefined();
    // The same request with the token from the page is the Restart button: it is done.
    const ok = await page.request.post(url, { form: { _csrf: csrf! }, maxRedirects: 0 });
    expect(ok.status()).toBe(303);
    expect((await h.session('sim-00'))?.metadata.annotations?.[RESTARTED_AT_ANNOTATION]).toBeDefined();
  });
});
