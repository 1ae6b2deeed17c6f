/**
 * Takes the screenshots in docs/img/ that docs/console.md shows: the board, a session waiting at a
 * prompt, the decisions and the digest, each at a phone's and a desktop's width, from a real
 * controller with sim agents and a real headless Chromium. Run after a build:
 *
 *   npm run build && npx tsx test/support/console-screenshots.ts
 */
import path from 'node:path';
import { API_VERSION } from '../../controller/api/types.js';
import { ROOT } from './cli.js';
import { launchChromium, startConsole } from './console.js';
import { condition, makeHarness, shellSession } from './controller-harness.js';

const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } };

const asker = {
  agent: 'sim-asker',
  approveKeys: ['y', 'Enter'],
  denyKeys: ['n', 'Enter'],
  profiles: [
    { versions: ['*'], provenance: 'reconstructed', waiting: [{ regex: '\\[[yY]/[nN]\\]$', region: 'last' }] },
  ],
};

const desk = { type: 'command', command: ['true'] };

async function world() {
  const h = await makeHarness();
  h.start();
  const projects = ['webapp', 'billing', 'docs'];
  // The policy first, so that the notifier routes the runs' Events into the digest's outbox.
  await h.apply([
    { apiVersion: API_VERSION, kind: 'NotificationChannel', metadata: { name: 'desk' }, spec: desk },
    {
      apiVersion: API_VERSION,
      kind: 'NotificationPolicy',
      metadata: { name: 'default' },
      spec: { route: { channels: ['desk'] }, digest: { schedule: '0 7 * * *', timeZone: 'Europe/Paris' } },
    },
  ]);
  await h.apply([
    ...projects.map((name) => ({
      apiVersion: API_VERSION,
      kind: 'Project',
      metadata: { name },
      spec: { path: h.repo },
    })),
    ...Array.from({ length: 8 }, (_, i) =>
      shellSession(`${projects[i % 3]}-${i}`, `echo working on task ${i}; sleep 600`, h.repo, {
        projectRef: projects[i % 3],
        workdir: undefined,
      }),
    ),
    shellSession(
      'webapp-migrate',
      "echo 'Planning the schema migration'; echo 'wrote migrations/0042_orders.sql'; " +
        "printf 'Run: npm test -- migrations? [y/N]'; read a; sleep 600",
      h.repo,
      { projectRef: 'webapp', workdir: undefined },
      { detection: asker },
    ),
  ]);
  const d = await h.store.create({
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: { name: 'pilot-12-1', namespace: 'default' },
    spec: {
      autopilot: 'pilot',
      think: 12,
      action: 'restart',
      target: { project: 'billing', session: 'billing-1' },
      reason: 'stalled for 25m with no commit',
      priority: 2,
      planner: 'heuristic',
      level: 'cautious',
      snapshot: { revision: 2, objects: [] },
    },
  });
  await h.store.updateStatus({ ...d, status: { phase: 'PendingApproval' } });
  await h.waitFor('the asker waits', async () => condition(await h.session('webapp-migrate'), 'WaitingForInput'));
  return h;
}

async function main() {
  const h = await world();
  const con = await startConsole(h);
  const browser = await launchChromium();
  try {
    for (const [size, viewport] of Object.entries(WIDTHS)) {
      const page = await browser.newPage({ viewport });
      await page.goto(con.loginUrl);
      await page.waitForURL(`${con.base}/`);
      await page.locator('#board[data-live="true"]').waitFor();
      const shot = (name: string) =>
        page.screenshot({
          path: path.join(ROOT, 'docs/img', `console-${name}-${size}.png`),
          fullPage: size === 'phone',
        });
      await shot('board');
      await page.goto(`${con.base}/sessions/default/webapp-migrate`);
      await page.locator('#terminal .xterm-rows').getByText('[y/N]').waitFor();
      await shot('session');
      await page.goto(`${con.base}/decisions`);
      await shot('decisions');
      await page.goto(`${con.base}/digest`);
      await shot('digest');
      await page.close();
    }
  } finally {
    await browser.close();
    await con.stop();
    await h.cleanup();
  }
}

await main();
