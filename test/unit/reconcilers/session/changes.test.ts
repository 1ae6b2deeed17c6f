/**
 * The observe tick's filter (changes.ts) on a real run directory and a real git repository: an
 * idle session is queued once, then not again until something it observes changes — its output
 * log, a file created in its run directory, a file rewritten in place, its pane, its repository.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../../controller/api/kinds.js';
import { GitObserver } from '../../../../controller/observers/git.js';
import type { PaneObserver, PaneSnapshot } from '../../../../controller/observers/panes.js';
import type { PaneInfo } from '../../../../controller/observers/tmux.js';
import { ChangeFilter } from '../../../../controller/reconcilers/session/changes.js';

const dirs: string[] = [];
let filter: ChangeFilter | undefined;
afterEach(() => {
  filter?.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const pane = (over: Partial<PaneInfo> = {}): PaneInfo => ({
  session: 's',
  uid: 'u1',
  key: 'default/a#1',
  paneId: '%1',
  pid: 100,
  dead: false,
  created: 1,
  inMode: false,
  currentCommand: 'sleep',
  serverPid: 1,
  store: 'st',
  epoch: '',
  fused: false,
  ...over,
});

/** The panes list-panes would show: what the test sets. */
function panesOf(current: { panes: PaneInfo[] }): Pick<PaneObserver, 'snapshot'> {
  return {
    snapshot: async (): Promise<PaneSnapshot> => ({
      serverRunning: true,
      panes: current.panes,
      takenAt: Date.now(),
      byUid: (u) => current.panes.filter((p) => p.uid === u),
    }),
  };
}

/** Lets inotify's events reach the watcher's callback. */
const settle = () => new Promise((r) => setTimeout(r, 100));

describe('observe tick change filter', () => {
  it('queues an idle session once, then only when its output, run files, pane or repository change', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-changes-'));
    dirs.push(root);
    const ws = path.join(root, 'run');
    const repo = path.join(root, 'repo');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'output.log'), '');
    fs.writeFileSync(path.join(ws, 'status.json'), '{}');
    fs.mkdirSync(repo);
    execFileSync('git', ['init', '-q', repo]);
    const session = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 'a', namespace: 'default', uid: 'u1' },
      status: { phase: 'Running', run: 1, workspace: ws, workdir: repo },
    } as AgentSession;
    const current = { panes: [pane()] };
    filter = new ChangeFilter({
      panes: panesOf(current) as PaneObserver,
      git: new GitObserver(),
      fullLookMs: 3_600_000,
    });
    const tick = async () => {
      await settle();
      return filter!.changed([session]);
    };

    expect(await tick()).toEqual(['default/a']); // first seen
    expect(await tick()).toEqual([]);
    expect(await tick()).toEqual([]);
    fs.appendFileSync(path.join(ws, 'output.log'), 'redrawn\n');
    expect(await tick()).toEqual(['default/a']);
    expect(await tick()).toEqual([]);
    fs.writeFileSync(path.join(ws, 'exit-code'), '0');
    expect(await tick()).toEqual(['default/a']);
    fs.writeFileSync(path.join(ws, 'status.json'), '{"summary":"x"}'); // rewritten in place
    expect(await tick()).toEqual(['default/a']);
    current.panes = [pane({ currentCommand: 'node' })];
    expect(await tick()).toEqual(['default/a']);
    current.panes = [pane({ currentCommand: 'node', dead: true, exitStatus: 0 })];
    expect(await tick()).toEqual(['default/a']);
    expect(await tick()).toEqual([]);
    execFileSync('git', [
      '-C',
      repo,
      '-c',
      'user.email=t@t',
      '-c',
      'user.name=t',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'x',
    ]);
    expect(await tick()).toEqual(['default/a']);
    expect(await tick()).toEqual([]);
  });

  it('queues an unchanged session again once its full look is due, and forgets sessions no longer live', async () => {
    const current = { panes: [pane()] };
    filter = new ChangeFilter({ panes: panesOf(current) as PaneObserver, git: new GitObserver(), fullLookMs: 1000 });
    const s = {
      metadata: { name: 'a', namespace: 'default', uid: 'u1' },
      status: { phase: 'Running', run: 1 },
    } as AgentSession;
    expect(await filter.changed([s], 0)).toEqual(['default/a']);
    expect(await filter.changed([s], 999)).toEqual([]);
    expect(await filter.changed([s], 1000)).toEqual(['default/a']);
    expect(await filter.changed([], 1001)).toEqual([]);
    expect(filter.size).toBe(0);
    expect(await filter.changed([s], 1002)).toEqual(['default/a']); // live again: looked at at once
  });
});
