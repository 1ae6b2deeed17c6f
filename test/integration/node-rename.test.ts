/**
 * A node's name on one host (app/node-home.ts), with the real controller process, real tmux (a
 * socket per test) and the SQLite store: a controller restarted on the same ORCHCTL_HOME and
 * socket under another `--node-name` refuses to start and kills nothing; with `--rename-node` it
 * rebinds the sessions to the new name and adopts their runs — same pane, same run, no restart —
 * and deletes the old Node.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../controller/api/kinds.js';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** An agent that prints a growing count, so its output tells whether anyone still observes it. */
const TICKS = 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.3; done';
const NAMES = ['keep', 'again'];

/** Each orchctl tmux session's pane pid and whether it is dead, by tmux session name. */
async function panes(): Promise<Map<string, { pid: number; dead: boolean }>> {
  const r = await execa(
    'tmux',
    ['-L', h.socket, 'list-panes', '-a', '-F', '#{session_name}\t#{pane_pid}\t#{pane_dead}'],
    {
      reject: false,
    },
  );
  const out = new Map<string, { pid: number; dead: boolean }>();
  for (const l of String(r.stdout).split('\n').filter(Boolean)) {
    const [name, pid, dead] = l.split('\t');
    out.set(name, { pid: Number(pid), dead: dead === '1' });
  }
  return out;
}

const tick = (s: AgentSession | undefined) => Number(/tick (\d+)\s*$/.exec(s?.status?.lastOutput ?? '')?.[1] ?? 0);

/** Starts the controller as node `vm` and waits for both sessions Running with a pane; returns their panes. */
async function runningAsVm(): Promise<Map<string, { pid: number; dead: boolean }>> {
  h.start(['--node-name', 'vm']);
  await h.apply([
    shellSession('keep', TICKS, h.repo, { restartPolicy: 'Never' }),
    shellSession('again', TICKS, h.repo, { restartPolicy: 'OnFailure' }),
  ]);
  for (const n of NAMES)
    await h.waitFor(`${n} Running on vm, observed`, async () => {
      const s = await h.session(n);
      return phaseOf(s) === 'Running' && s?.status?.binding?.nodeName === 'vm' && tick(s) > 0 && s;
    });
  await h.stopController();
  const before = await panes();
  expect(before.size).toBe(2);
  return before;
}

const records = () => fs.readFileSync(path.join(h.home, 'node-name'), 'utf8').trim();

describe('a node name on one host', () => {
  it('a controller restarted under another --node-name exits 1 naming both names and kills no run', async () => {
    const before = await runningAsVm();
    expect(records()).toBe('vm');

    const r = await h.start(['--node-name', 'renamed']);
    expect(r.exitCode).toBe(1);
    const error = h.controllerLog.filter((l) => l.startsWith('error: '));
    expect(error).toHaveLength(1);
    expect(error[0]).toContain('2 runs of node vm');
    expect(error[0]).toContain('starting as node renamed would kill them');
    expect(error[0]).toContain('--rename-node');

    expect(await panes()).toEqual(before);
    for (const n of NAMES) {
      const s = await h.session(n);
      expect(phaseOf(s)).toBe('Running');
      expect(s?.status?.binding?.nodeName).toBe('vm');
    }
    expect(records()).toBe('vm');
    expect(await h.store.get({ kind: 'Node', namespace: '', name: 'renamed' })).toBeUndefined();
  });

  it('--rename-node is refused while an agent of the old name runs, and kills nothing', async () => {
    h.start(['--node-name', 'vm']);
    await h.apply([shellSession('keep', TICKS, h.repo, { restartPolicy: 'Never' })]);
    await h.waitFor('keep Running on vm', async () => {
      const s = await h.session('keep');
      return phaseOf(s) === 'Running' && tick(s) > 0 && s;
    });
    const before = await panes();
    const r = await h.orchctl(['node', '--name', 'renamed', '--rename-node', '--log-format', 'json']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/error: --rename-node: node vm is running \(vm@\S+ holds the lease orchctl-node-vm\)/);
    expect(await panes()).toEqual(before);
    expect((await h.session('keep'))?.status?.binding?.nodeName).toBe('vm');
    expect(records()).toBe('vm');

    const noNode = await h.orchctl(['controller', '--no-node', '--rename-node']);
    expect(noNode.exitCode).toBe(1);
    expect(noNode.stderr).toContain('--rename-node renames the embedded node: not with --no-node');
  });

  it('--rename-node rebinds the sessions to the new name and adopts their runs: same pane, no restart', async () => {
    const before = await runningAsVm();
    const at = new Map<string, number>();
    for (const n of NAMES) at.set(n, tick(await h.session(n)));

    h.start(['--node-name', 'renamed', '--rename-node']);
    for (const n of NAMES)
      await h.waitFor(`${n} observed by node renamed`, async () => {
        const s = await h.session(n);
        return s?.status?.binding?.nodeName === 'renamed' && tick(s) > at.get(n)! && s;
      });
    expect(await panes()).toEqual(before);
    for (const n of NAMES) {
      const s = (await h.session(n))!;
      expect(phaseOf(s)).toBe('Running');
      expect(s.status?.run).toBe(1);
      expect(s.status?.restarts ?? 0).toBe(0);
      expect(s.status?.lifecycle?.nodeName).toBe('renamed');
      expect((await h.events(n)).map((e) => e.reason)).toContain('NodeRenamed');
    }
    expect(await h.store.get({ kind: 'Node', namespace: '', name: 'vm' })).toBeUndefined();
    await h.waitFor('Node renamed registered', () => h.store.get({ kind: 'Node', namespace: '', name: 'renamed' }));
    expect(records()).toBe('renamed');

    // Kept: a restart without a name is node renamed again, and adopts the same runs.
    await h.stopController();
    h.start([]);
    for (const n of NAMES) {
      const seen = tick(await h.session(n));
      await h.waitFor(`${n} observed again`, async () => {
        const s = await h.session(n);
        return tick(s) > seen && s;
      });
    }
    expect(await panes()).toEqual(before);
    expect(h.controllerLog.some((l) => l.includes('killing stale run'))).toBe(false);
  });
});
