/**
 * `orchctl freeze` with the real Claude Code CLI (pinned, test/.cache) under the real controller,
 * against the scripted fake Messages API: frozen while it waits for the model's answer, Claude
 * Code takes no step even when the answer arrives — its processes stopped, no Stop hook, no turn —
 * across a controller kill -9 and restart; after `orchctl thaw` it reads the answer and ends its
 * turn as if nothing happened.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../controller/api/node.js';
import { agentOf, startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import { textTurn } from '../support/fake-anthropic.js';

let sc: ClaudeScenario;
let release: () => void = () => {};
const answered = new Promise<void>((r) => {
  release = r;
});

beforeAll(async () => {
  sc = await startClaudeScenario();
  // The first answer waits for the test: Claude Code is mid-turn, waiting on the API, when frozen.
  sc.fake.script(async () => {
    await answered;
    return textTurn('All done.');
  });
  await sc.startSession('cc', 'Say that you are done.');
}, 15 * 60_000);

afterAll(async () => {
  release();
  await sc?.cleanup();
});

/** Every live process of the run but the pane's leader (the launch wrapper) — their state letters. */
function runStates(leader: number): string[] {
  const out: string[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === leader) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === leader) out.push(f[0]);
    } catch {
      /* gone */
    }
  }
  return out;
}

const heartbeat = async () =>
  ((await sc.h.store.list('Node')).items as Node[]).map((n) => n.status?.heartbeatTime ?? '').sort()[0] ?? '';

describe('Claude Code frozen and thawed', () => {
  it(
    'takes no step while frozen, across a controller restart, and ends its turn after the thaw',
    async () => {
      const h = sc.h;
      // (The fake tells of a request once it is answered: look at what it received instead.)
      await h.waitFor('the first model request', async () => sc.fake.requests.some((r) => r.mainIndex === 1), 60_000);
      const run = await h.waitFor('the run', async () => {
        const s = await h.session('cc');
        return s?.status?.tmuxSession ? s : undefined;
      });
      const target = `=${run.status!.tmuxSession}:`;
      const leader = Number(
        (await execa('tmux', ['-L', h.socket, 'list-panes', '-t', target, '-F', '#{pane_pid}'])).stdout.trim(),
      );
      const freeze = await h.orchctl(['freeze', '--all']);
      expect(freeze.exitCode).toBe(0);
      await h.waitFor('frozen, its processes stopped', async () => {
        const s = await h.session('cc');
        const states = runStates(leader);
        return s?.status?.frozen?.stopped && states.length > 0 && states.every((x) => x === 'T');
      });

      // The model answers now; a stopped Claude Code cannot read it.
      release();
      await h.waitFor('the answer sent', async () => sc.fake.requests.find((r) => r.mainIndex === 1)?.answeredWith);
      const beat = await heartbeat();
      await h.stopController('SIGKILL');
      h.start();
      await h.waitFor('the new controller at work', async () => (await heartbeat()) > beat, 60_000);
      const held = await h.waitFor('still frozen', async () => {
        const s = await h.session('cc');
        return s?.status?.frozen ? s : undefined;
      });
      expect(agentOf(held).lastAssistantMessage).toBeUndefined();
      expect(sc.events('cc').filter((e) => e.type === 'hook' && e.hook === 'Stop')).toEqual([]);
      expect(runStates(leader).every((x) => x === 'T')).toBe(true);
      expect(held.status?.conditions?.find((c) => c.type === 'Stalled')?.status).not.toBe('True');

      const thaw = await h.orchctl(['thaw', '--all']);
      expect(thaw.exitCode).toBe(0);
      const done = await h.waitFor(
        'the turn ended after the thaw',
        async () => {
          const s = await h.session('cc');
          return agentOf(s).lastAssistantMessage === 'All done.' && s;
        },
        60_000,
      );
      expect(done.status?.frozen).toBeUndefined();
      expect(done.status?.run).toBe(1);
      expect(runStates(leader).some((x) => x === 'T')).toBe(false);
    },
    5 * 60_000,
  );
});
