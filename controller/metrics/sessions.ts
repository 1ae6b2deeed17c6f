/**
 * AgentSession object metrics in kube-state-metrics style (kube_pod_* is the model): one family
 * per fact, labelled {namespace, agentsession}; dynamic state as StateSets (one series per
 * possible value, 1 for the current one); static facts in an _info metric. Only bounded values
 * become labels — names, the closed phase enum, condition types and statuses — never prompts,
 * messages or output.
 */
import type { Registry } from 'prom-client';
import type { AgentSession } from '../api/kinds.js';
import { PHASES, type Phase } from '../api/phases.js';
import { ScrapeFamily, unixSeconds, type Emit } from './family.js';

/** The closed phase enum (crds/agentsessions.yaml): every phase gets its series. */
export const SESSION_PHASES: readonly Phase[] = PHASES;
const CONDITION_STATUSES = [
  ['true', 'True'],
  ['false', 'False'],
  ['unknown', 'Unknown'],
] as const;

const TOKEN_TYPES = [
  ['input', 'inputTokens'],
  ['output', 'outputTokens'],
  ['cache_read', 'cacheReadTokens'],
  ['cache_write', 'cacheCreationTokens'],
] as const;
const NO_LABELS: readonly string[] = [];
const PHASE_LABELS = SESSION_PHASES.map((p) => [p] as const);

type PerSession = (s: AgentSession, emit: Emit) => void;
const id = (s: AgentSession) => [s.metadata.namespace ?? '', s.metadata.name];

export function registerSessionMetrics(registry: Registry, sessions: () => AgentSession[]): void {
  const family = (
    name: string,
    help: string,
    extra: readonly string[],
    series: PerSession,
    type: 'gauge' | 'counter' = 'gauge',
  ) =>
    new ScrapeFamily(registry, {
      name,
      help,
      type,
      labelNames: ['namespace', 'agentsession', ...extra],
      objects: sessions,
      id,
      series,
    });
  const value = (
    name: string,
    help: string,
    get: (s: AgentSession) => number | undefined,
    type: 'gauge' | 'counter' = 'gauge',
  ) =>
    family(
      name,
      help,
      [],
      (s, emit) => {
        const v = get(s);
        if (typeof v === 'number' && Number.isFinite(v)) emit(NO_LABELS, v);
      },
      type,
    );

  family(
    'orchctl_agentsession_info',
    'Information about an AgentSession: its Agent and Project references ("" when inline or a workdir) and uid.',
    ['agent', 'project', 'uid'],
    (s, emit) => emit([s.spec?.agentRef ?? '', s.spec?.projectRef ?? '', s.metadata.uid ?? ''], 1),
  );
  // Like kube_pod_status_phase: every phase is emitted, 1 for the current one; nothing before
  // the controller has written a phase.
  family(
    'orchctl_agentsession_status_phase',
    "The AgentSession's current lifecycle phase (StateSet: 1 for the current phase, 0 for the others).",
    ['phase'],
    (s, emit) => {
      const current = s.status?.phase;
      if (!current) return;
      for (const lv of PHASE_LABELS) emit(lv, lv[0] === current ? 1 : 0);
    },
  );
  family(
    'orchctl_agentsession_status_condition',
    "The AgentSession's conditions (StateSet over status true/false/unknown, one set per condition type present).",
    ['condition', 'status'],
    (s, emit) => {
      for (const c of s.status?.conditions ?? [])
        for (const [label, value] of CONDITION_STATUSES) emit([c.type, label], c.status === value ? 1 : 0);
    },
  );
  // A counter read from status, as kube-state-metrics does for
  // kube_pod_container_status_restarts_total: the object is the source of truth, so the value
  // survives a controller restart, and the drop when a new run resets it is an ordinary counter
  // reset to rate()/increase().
  value(
    'orchctl_agentsession_restarts_total',
    'Restarts of the AgentSession since its current spec was first run (status.restarts).',
    (s) => s.status?.restarts ?? 0,
    'counter',
  );
  value(
    'orchctl_agentsession_run',
    "Number of the AgentSession's current (or last) run; 0 before the first.",
    (s) => s.status?.run ?? 0,
  );
  value(
    'orchctl_agentsession_start_time_seconds',
    "Start time of the AgentSession's current (or last) run in Unix seconds.",
    (s) => unixSeconds(s.status?.startTime),
  );
  value(
    'orchctl_agentsession_completion_time_seconds',
    "End time of the AgentSession's last run in Unix seconds, while it is ended.",
    (s) => unixSeconds(s.status?.completionTime),
  );
  value(
    'orchctl_agentsession_git_commits',
    'Commits made in the working directory since the current run started.',
    (s) => s.status?.git?.commits,
  );
  value(
    'orchctl_agentsession_git_lines_added',
    'Lines added by the commits of the current run.',
    (s) => s.status?.git?.insertions,
  );
  value(
    'orchctl_agentsession_git_lines_removed',
    'Lines removed by the commits of the current run.',
    (s) => s.status?.git?.deletions,
  );
  // From status.usage (the run's sums, committed with the log position): a scrape reads, never counts.
  family(
    'orchctl_agentsession_tokens',
    'Tokens the agent used in the current run, by type (input, output, cache_read, cache_write; status.usage).',
    ['type'],
    (s, emit) => {
      const u = s.status?.usage;
      if (!u) return;
      for (const [label, v] of TOKEN_TYPES) emit([label], u[v]);
    },
  );
  value(
    'orchctl_agentsession_estimated_cost_usd',
    "Estimated USD cost of the current run from the Agent's spec.pricing, when every model it used is priced.",
    (s) => s.status?.usage?.costUSD,
  );
  value(
    'orchctl_agentsession_metadata_generation',
    "Sequence number of the AgentSession's desired state (metadata.generation).",
    (s) => s.metadata.generation,
  );
  value(
    'orchctl_agentsession_status_observed_generation',
    'The generation the controller last acted on (status.observedGeneration); ' +
      'behind metadata_generation while the controller catches up.',
    (s) => s.status?.observedGeneration,
  );
}
