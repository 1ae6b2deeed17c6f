/**
 * Issue 24 item 7: a known startup failure text is a reason, not a bare exit code. The text is
 * Claude Code 2.1.330's, recorded (fixture exited-cannot-connect.txt: a fresh HOME with only
 * ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY); the reason comes from the built-in template's
 * `failures` data.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  classifyFailure,
  compileDetection,
  selectProfile,
  validateDetection,
} from '../../../../controller/agents/detection.js';
import type { AgentSession, AgentSpec } from '../../../../controller/api/kinds.js';
import type { HostSnapshot } from '../../../../controller/observers/host.js';
import { outputTail } from '../../../../controller/observers/output.js';
import type { PaneInfo } from '../../../../controller/observers/tmux.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import type { Outcome } from '../../../../controller/reconcilers/session/effects.js';
import { type Observed, type PlanInput, plan } from '../../../../controller/reconcilers/session/plan.js';
import { LOG_START } from '../../../../controller/store/eventlog.js';
import { fixturesDir } from '../../../support/claude-code.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const T0 = Date.parse('2026-11-26T19:30:00Z');
const template = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8'));
const agent: AgentSpec = { ...template.spec, command: ['claude'] };
const recorded = fs.readFileSync(path.join(fixturesDir(), 'exited-cannot-connect.txt'), 'utf8');

describe('a startup failure text in the detection data', () => {
  const profile = selectProfile(compileDetection(template.spec.detection, 'claude-code.yaml'), '2.1.330');

  it('the recorded "Unable to connect" exit is AgentCannotConnect, with what the agent said', () => {
    const f = classifyFailure(outputTail(recorded), profile);
    expect(f?.reason).toBe('AgentCannotConnect');
    expect(f?.message).toContain('Failed to connect to api.anthropic.com: ENOTFOUND');
    expect(f?.message).toContain('onboarding');
  });

  it('another exit text is not', () => {
    expect(classifyFailure(fs.readFileSync(path.join(fixturesDir(), 'exited.txt'), 'utf8'), profile)).toBeUndefined();
  });

  it('bad failures data is refused at apply, naming the field', () => {
    const errs = validateDetection(
      { profiles: [{ versions: ['1'], failures: [{ reason: 'lower case', regex: '(' }] }] },
      'spec.detection',
    );
    expect(errs.map((e) => e.path)).toEqual([
      'spec.detection.profiles[0].failures[0].reason',
      'spec.detection.profiles[0].failures[0].regex',
    ]);
  });
});

describe('a run that exits with a known failure text', () => {
  it('ends Failed with reason AgentCannotConnect instead of Error "exit code 1"', () => {
    const pane = { paneId: '%1', session: 'orchctl-s', dead: true, key: 'default/s#1' } as PaneInfo;
    const obj: AgentSession = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 's', namespace: 'default', uid: 'u-1234567890', generation: 1 },
      spec: { prompt: 'do it', restartPolicy: 'Never' },
      status: {
        phase: 'Running',
        run: 1,
        restarts: 0,
        tmuxSession: 'orchctl-s',
        workspace: '/home/ws/run-1',
        workdir: '/work/repo',
        startTime: new Date(T0 - 10_000).toISOString(),
        lifecycle: { runGeneration: 1 },
        conditions: [],
      },
    };
    const host = { cpu: 2, loadAverage: [0, 0, 0], memoryTotalBytes: 8 << 30, memoryAvailableBytes: 4 << 30 };
    const observed: Observed = {
      pane: { kind: 'dead', exitCode: 1 },
      paneInfo: pane,
      hasPanes: true,
      retag: [],
      admission: { activeUnderPolicy: 0, host: host as HostSnapshot, nodeUnschedulable: false },
    };
    const input = (extra: Partial<PlanInput>): PlanInput => ({
      key: 'default/s',
      obj,
      status: obj.status ?? {},
      observed,
      resolved: { agent, workdir: '/work/repo', effective: effective(obj.spec ?? {}, undefined) },
      now: T0,
      ...extra,
    });
    const out = plan(input({}));
    const settled: Outcome = {
      type: 'Settled',
      run: { lastOutput: outputTail(recorded), events: [], next: LOG_START },
    };
    const next = plan(
      input({ status: out.status, observed: out.observed, continuation: out.continuation, outcomes: [settled] }),
    );
    expect(next.status).toMatchObject({ phase: 'Failed', exitCode: 1, reason: 'AgentCannotConnect' });
    expect(next.status.message).toMatch(/could not reach the API at start-up.*\(exit code 1\)$/s);
  });
});
