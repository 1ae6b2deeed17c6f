/**
 * Issue 24 item 1 (b), the session plan (pure): a prompt delivery that ends unconfirmed records a
 * Warning Event PromptNotConfirmed once, and the prompt goes in again once the screen has changed
 * to an empty input box. The screens are Claude Code 2.1.330's, recorded (test/support/fixtures),
 * classified with the built-in template's patterns.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { classifyScreen, compileDetection, selectProfile } from '../../../../controller/agents/detection.js';
import type { AgentSession, AgentSessionStatus, AgentSpec } from '../../../../controller/api/kinds.js';
import type { HostSnapshot } from '../../../../controller/observers/host.js';
import type { PaneInfo } from '../../../../controller/observers/tmux.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import type { Effect } from '../../../../controller/reconcilers/session/effects.js';
import { MAX_REDELIVERIES, type Observed, plan } from '../../../../controller/reconcilers/session/plan.js';
import { LOG_START } from '../../../../controller/store/eventlog.js';
import { fixturesDir } from '../../../support/claude-code.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const T0 = Date.parse('2026-11-26T19:00:00Z');
const template = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8'));
const profile = selectProfile(compileDetection(template.spec.detection, 'claude-code.yaml'), '2.1.330');
const screenOf = (file: string, at: number) => ({
  ...classifyScreen(fs.readFileSync(path.join(fixturesDir(), file), 'utf8'), profile),
  at,
});
const agent: AgentSpec = { command: ['claude'], promptDelivery: 'paste' };
const host = { cpu: 2, loadAverage: [0, 0, 0], memoryTotalBytes: 8 << 30, memoryAvailableBytes: 4 << 30 };
const pane = { paneId: '%1', session: 'orchctl-s', dead: false, key: 'default/s#1' } as PaneInfo;
const UNCONFIRMED = {
  delivered: false,
  reason: 'Unconfirmed',
  message: 'pasted and pressed Enter 4 times, but the agent never confirmed the prompt',
  retries: 3,
};

function session(status: Partial<AgentSessionStatus>): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', uid: 'u-1234567890', generation: 1 },
    spec: { prompt: 'do it' },
    status: {
      phase: 'Running',
      run: 1,
      restarts: 0,
      tmuxSession: 'orchctl-s',
      workspace: '/home/ws/run-1',
      workdir: '/work/repo',
      startTime: new Date(T0 - 60_000).toISOString(),
      lifecycle: { runGeneration: 1 },
      conditions: [],
      ...status,
    },
  };
}

function pass(obj: AgentSession, observed: Partial<Observed>, now: number) {
  return plan({
    key: 'default/s',
    obj,
    status: obj.status ?? {},
    observed: {
      pane: { kind: 'alive' },
      paneInfo: pane,
      hasPanes: true,
      retag: [],
      admission: { activeUnderPolicy: 0, host: host as HostSnapshot, nodeUnschedulable: false },
      gitKey: '/work/repo\n',
      ...observed,
    },
    resolved: { agent, workdir: '/work/repo', effective: effective(obj.spec ?? {}, undefined) },
    now,
  });
}

const notConfirmed = (fx: Effect[]) =>
  fx.filter((e) => e.type === 'RecordEvent' && e.reason === 'PromptNotConfirmed') as Extract<
    Effect,
    { type: 'RecordEvent' }
  >[];
const delivers = (fx: Effect[]) => fx.filter((e) => e.type === 'Deliver');
const cond = (s: AgentSessionStatus, type: string) => s.conditions?.find((c) => c.type === type);
const delivering = {
  type: 'PromptDelivered',
  status: 'Unknown',
  reason: 'Delivering',
  message: 'waiting for the agent to be ready before pasting',
  lastTransitionTime: new Date(T0 - 50_000).toISOString(),
} as const;

describe('a prompt that was not confirmed', () => {
  const dialog = (at: number) => ({
    run: 1,
    events: [],
    next: LOG_START,
    screen: screenOf('dialog-auto-mode-opt-in.txt', at),
    screenChangedAt: T0 - 40_000,
  });
  const first = pass(session({ conditions: [{ ...delivering }] }), { delivery: UNCONFIRMED, agent: dialog(T0) }, T0);

  it('is PromptDelivered=False/Unconfirmed with one Warning Event PromptNotConfirmed', () => {
    expect(cond(first.status, 'PromptDelivered')).toMatchObject({ status: 'False', reason: 'Unconfirmed' });
    const ev = notConfirmed(first.effects);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({ eventType: 'Warning' });
    expect(ev[0].message).toContain('never confirmed the prompt');
    expect(delivers(first.effects)).toEqual([]); // the dialog is still there
  });

  it('no second Event and no delivery while the screen stays as it was', () => {
    const again = pass(session(first.status), { agent: dialog(T0 + 5000) }, T0 + 5000);
    expect(notConfirmed(again.effects)).toEqual([]);
    expect(delivers(again.effects)).toEqual([]);
    expect(cond(again.status, 'PromptDelivered')?.status).toBe('False');
  });

  const idle = (changedAt: number) => ({
    run: 1,
    events: [],
    next: LOG_START,
    screen: screenOf('startup-idle.txt', changedAt + 100),
    screenChangedAt: changedAt,
  });

  it('is delivered again once the screen changes to an empty input box, at most MAX_REDELIVERIES times', () => {
    let status = first.status;
    for (let n = 1; n <= MAX_REDELIVERIES; n++) {
      const now = T0 + n * 10_000;
      const out = pass(session(status), { agent: idle(now - 500) }, now);
      expect(delivers(out.effects)).toEqual([
        { type: 'Deliver', run: 1, target: '=orchctl-s:', agent, promptFile: '/home/ws/run-1/prompt.md' },
      ]);
      expect(cond(out.status, 'PromptDelivered')).toMatchObject({ status: 'Unknown', reason: 'Delivering' });
      expect(out.status.promptDelivery?.redeliveries).toBe(n);
      // ... and that one is not confirmed either: the Event again, with the count kept.
      const failed = pass(session(out.status), { delivery: UNCONFIRMED, agent: idle(now - 500) }, now + 1000);
      expect(notConfirmed(failed.effects)).toHaveLength(1);
      expect(failed.status.promptDelivery?.redeliveries).toBe(n);
      status = failed.status;
    }
    const now = T0 + 60_000;
    expect(delivers(pass(session(status), { agent: idle(now - 500) }, now).effects)).toEqual([]);
  });

  it('is not delivered again when the agent took a prompt meanwhile', () => {
    const now = T0 + 10_000;
    const took = session({ ...first.status, agent: { ...first.status.agent!, counts: { user_message: 1 } } });
    expect(delivers(pass(took, { agent: idle(now - 500) }, now).effects)).toEqual([]);
  });
});
