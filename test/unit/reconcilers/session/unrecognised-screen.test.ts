/**
 * Issue 24 item 1 (a): an unknown screen while the prompt is unconfirmed is never silent. The
 * screen is the one recorded from Claude Code 2.1.330 ("Make auto mode your default permission
 * mode?"), classified with the template's patterns minus that dialog — the pattern set orchctl had
 * when a person met it: a dialog of a newer CLI looks like this to a profile that predates it.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { classifyScreen, compileDetection, selectProfile } from '../../../../controller/agents/detection.js';
import {
  agentState,
  foldEvents,
  newObservation,
  UNRECOGNISED_AFTER_MS,
} from '../../../../controller/reconcilers/session/agent-state.js';
import { LOG_START, type AgentEvent } from '../../../../controller/store/eventlog.js';
import { fixturesDir } from '../../../support/claude-code.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const T0 = Date.parse('2026-11-26T19:00:00Z');
const template = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8'));
const full = selectProfile(compileDetection(template.spec.detection, 'claude-code.yaml'), '2.1.330');
const older = { ...full, dialogPatterns: full.dialogPatterns.filter((d) => d.name !== 'auto-mode-opt-in') };
const recorded = fs.readFileSync(path.join(fixturesDir(), 'dialog-auto-mode-opt-in.txt'), 'utf8');

/** SessionStart's hook: Claude Code reports idle before any dialog is answered. */
const started: AgentEvent = {
  seq: 1,
  ts: new Date(T0).toISOString(),
  run: 1,
  source: 'hook',
  type: 'hook',
  hook: 'SessionStart',
  payload: { hook_event_name: 'SessionStart', source: 'startup' },
};
const obs = foldEvents(newObservation(1, LOG_START), [started], { seq: 1, offset: 0 });
const waitingFor = (r: ReturnType<typeof agentState>) => r.conditions.find((c) => c.type === 'WaitingForInput')!;
const base = { obs, stalledAfterMs: 600_000, startedAt: T0, screenChangedAt: T0 + 500 };

describe('an unrecognised screen while the prompt is not confirmed', () => {
  const cls = classifyScreen(recorded, older);
  const screen = { ...cls, at: T0 + 500 + UNRECOGNISED_AFTER_MS };

  it('the recorded dialog is unknown to the older pattern set, which still gives its text', () => {
    expect(cls.state).toBe('unknown');
    expect(cls.prompt).toContain('Make auto mode your default permission mode?');
    expect(cls.prompt).toContain('No, keep manual mode');
  });

  it('is WaitingForInput=True/UnrecognisedScreen with the screen text, over the hook-reported idle', () => {
    expect(obs.reported?.state).toBe('idle');
    const r = agentState({ ...base, screen, now: screen.at, promptPending: true });
    expect(r.state).toBe('waiting');
    expect(r.source).toBe('pane');
    expect(waitingFor(r)).toMatchObject({ status: 'True', reason: 'UnrecognisedScreen' });
    expect(waitingFor(r).message).toContain('Make auto mode your default permission mode?');
  });

  it('a screen that just appeared is given time (an agent draws a frame or two first) and a recheck', () => {
    const now = T0 + 500 + UNRECOGNISED_AFTER_MS - 1000;
    const r = agentState({ ...base, screen: { ...screen, at: now }, now, promptPending: true });
    expect(waitingFor(r).status).toBe('False');
    expect(r.recheckInMs).toBe(1000);
  });

  it('once the prompt is confirmed an unknown screen is no wait, and the hooks speak again', () => {
    const r = agentState({ ...base, screen, now: screen.at, promptPending: false });
    expect(waitingFor(r).status).toBe('False');
    expect(r.state).toBe('idle');
    expect(r.recheckInMs).toBeUndefined();
  });

  it('the template, which knows the dialog, names it instead', () => {
    const known = classifyScreen(recorded, full);
    const r = agentState({ ...base, screen: { ...known, at: screen.at }, now: screen.at, promptPending: true });
    expect(waitingFor(r)).toMatchObject({ status: 'True', reason: 'StartupDialog' });
    expect(waitingFor(r).message).toMatch(/^startup dialog auto-mode-opt-in: /);
  });
});
