/**
 * Admission of Autopilots and Decisions through the pipeline apply uses (schema, then admission):
 * what the CRD cannot say is refused with the field named — durations below their least value,
 * the planner's backend-specific fields, selectors that could never match, reserved labels — and
 * a Decision is refused whatever it holds, pointing at `orchctl approve|reject decision`.
 */
import { describe, expect, it } from 'vitest';
import { registry } from '../../../controller/config/crds.js';
import type { Resource } from '../../../controller/api/types.js';
import { formatPath, validateObject } from '../../../controller/api/validate.js';
import { admissionErrors } from '../../../controller/client/admission.js';

const autopilot = (spec: Record<string, unknown>): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Autopilot',
  metadata: { name: 'pilot', namespace: 'default' },
  spec,
});

/** Schema errors first, as apply reports them; admission only for an object the schema admits. */
function problems(o: Resource): string[] {
  const kind = registry().byKind.get(o.kind)!;
  const schema = validateObject(structuredClone(o), kind);
  const errs = schema.length ? schema : admissionErrors(o, kind);
  return errs.map((e) => `${formatPath(e.path)}: ${e.message}`);
}

describe('Autopilot admission', () => {
  it('admits a full spec, and an empty one (every field has a default)', () => {
    expect(problems(autopilot({}))).toEqual([]);
    expect(
      problems(
        autopilot({
          projectSelector: { matchExpressions: [{ key: 'orchctl.io/tier', operator: 'In', values: ['web'] }] },
          interval: '10s',
          planner: { backend: 'command', command: ['claude', '-p'], timeout: '2m' },
          guardrails: { cooldowns: { sameProject: '0s', sameAction: '24h' }, errorRetryWindow: '1m', stalenessDays: 0 },
          sessionTemplate: { labels: { 'example.com/by': 'pilot' }, maxDuration: '45m' },
          history: { keep: 1000, ttl: '1m' },
        }),
      ),
    ).toEqual([]);
  });

  it.each([
    [{ interval: '9s' }, 'spec.interval: must be at least 10s, got 9s'],
    [{ interval: '25h' }, 'spec.interval: must be at most 24h (a day), got 25h'],
    [{ guardrails: { errorRetryWindow: '59s' } }, 'spec.guardrails.errorRetryWindow: must be at least 1m, got 59s'],
    [
      { guardrails: { errorRetryWindow: '721h' } },
      'spec.guardrails.errorRetryWindow: must be at most 720h (30 days), got 721h',
    ],
    [{ guardrails: { youngSessionWindow: '-1m' } }, 'spec.guardrails.youngSessionWindow: must not be negative'],
    [
      { guardrails: { cooldowns: { sameAction: '25h' } } },
      'spec.guardrails.cooldowns.sameAction: must be at most 24h (a day), got 25h',
    ],
    [{ guardrails: { maxErrorRetries: 21 } }, 'spec.guardrails.maxErrorRetries: must be less than or equal to 20'],
    [{ guardrails: { stalenessDays: 366 } }, 'spec.guardrails.stalenessDays: must be less than or equal to 365'],
    [
      { guardrails: { minFreeMemoryMB: 1048577 } },
      'spec.guardrails.minFreeMemoryMB: must be less than or equal to 1048576',
    ],
    [{ guardrails: { maxActiveSessions: 0 } }, 'spec.guardrails.maxActiveSessions: must be greater than or equal to 1'],
    [
      { guardrails: { maxStartsPerThink: 101 } },
      'spec.guardrails.maxStartsPerThink: must be less than or equal to 100',
    ],
    [
      { guardrails: { actions: ['start', 'deploy'] } },
      'spec.guardrails.actions[1]: Unsupported value: must be one of "start", "stop", "restart", "notify", "skip"',
    ],
    [{ history: { keep: 0 } }, 'spec.history.keep: must be greater than or equal to 1'],
    [{ history: { ttl: '30s' } }, 'spec.history.ttl: must be at least 1m, got 30s'],
    [{ history: { ttl: '8761h' } }, 'spec.history.ttl: must be at most 8760h, got 8761h'],
    [
      { autonomyLevel: 'yolo' },
      'spec.autonomyLevel: Unsupported value: must be one of "observe", "cautious", "moderate", "full"',
    ],
    [{ planner: { backend: 'openai' } }, 'spec.planner.model: is required for the openai backend'],
    [{ planner: { backend: 'anthropic' } }, 'spec.planner.model: is required for the anthropic backend'],
    [{ planner: { backend: 'command' } }, 'spec.planner.command: is required for the command backend'],
    [
      { planner: { backend: 'command', command: ['x'], timeout: '0s' } },
      'spec.planner.timeout: must be a positive duration like 60s',
    ],
    [{ planner: { timeout: '11m' } }, 'spec.planner.timeout: must be at most 10m, got 11m'],
    [{ planner: { maxRetries: 6 } }, 'spec.planner.maxRetries: must be less than or equal to 5'],
    [{ planner: { apiKey: 'sk-123' } }, 'spec.planner.apiKey: unknown field "spec.planner.apiKey"'],
    [
      { projectSelector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } },
      'spec.projectSelector.matchExpressions[0].values: must be non-empty when operator is In',
    ],
    [
      { projectSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['x'] }] } },
      'spec.projectSelector.matchExpressions[0].values: must be empty when operator is Exists',
    ],
    [
      { guardrails: { protectedProjects: { matchLabels: { 'bad key!': 'x' } } } },
      'spec.guardrails.protectedProjects.matchLabels.bad key!: Invalid key "bad key!": name part must be 63 ' +
        "characters or less, alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character",
    ],
    [
      { projectSelector: { matchLabels: { team: 'web team' } } },
      'spec.projectSelector.matchLabels.team: Invalid value "web team": must be empty or alphanumeric, ' +
        "'-', '_' or '.', starting and ending with an alphanumeric character",
    ],
    [
      { sessionTemplate: { labels: { 'orchctl.io/project': 'x' } } },
      'spec.sessionTemplate.labels.orchctl.io/project: is set by the autopilot itself',
    ],
    [
      { sessionTemplate: { maxDuration: '0s' } },
      'spec.sessionTemplate.maxDuration: must be a positive duration like 45m',
    ],
  ])('%j is refused: %s', (spec, message) => {
    expect(problems(autopilot(spec))).toEqual([message]);
  });
});

describe('Decision admission', () => {
  it('refuses any Decision, whatever it holds: the controller writes them', () => {
    const d: Resource = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Decision',
      metadata: { name: 'pilot-1-1', namespace: 'default' },
      spec: {
        autopilot: 'pilot',
        think: 1,
        action: 'start',
        target: { project: 'webapp' },
        reason: 'stale',
        priority: 1,
        planner: 'heuristic',
        level: 'full',
        snapshot: { revision: 1, objects: [] },
      },
    };
    expect(problems(d)).toEqual([
      'kind: Decisions are written by the controller (an Autopilot); answer a pending one with ' +
        '`orchctl approve|reject decision NAME`',
    ]);
  });
});
