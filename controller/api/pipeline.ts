/**
 * The Pipeline kind (issue 15; seed 003's phases; crds/pipelines.yaml is the schema): phases that
 * each run as one AgentSession made from a template, in order, or as a DAG when any phase names
 * `dependsOn`. The pipeline reconciler (reconcilers/pipeline/) creates a phase's session once all
 * its dependencies completed, offers their handoff to it, stops at a phase that reports `blocked`
 * until `orchctl pipeline resume`, and recovers a phase whose tmux session died once.
 *
 * Here: the types, the names and labels it uses, and the checks of a spec that the CRD's schema
 * cannot make (unique names, known dependencies, no cycle), shared by admission and the reconciler.
 */
import type { AgentSessionSpec } from './session.js';
import type { FieldError } from './validate.js';
import { API_VERSION, type Condition, type Resource } from './types.js';

/** Labels on a phase's session: which pipeline, which phase. */
export const PIPELINE_LABEL = 'orchctl.io/pipeline';
export const PHASE_LABEL = 'orchctl.io/phase';
/** `orchctl pipeline resume` sets these on the Pipeline; the reconciler consumes a new value once. */
export const RESUME_REQUESTED_ANNOTATION = 'orchctl.io/resume-requested';
export const RESUME_MESSAGE_ANNOTATION = 'orchctl.io/resume-message';
/**
 * On a phase's session: the run whose death was recovered. Written in the same compare-and-swap
 * update as the restart annotation, so a recovery is decided once even across a controller crash.
 */
export const RECOVERED_RUN_ANNOTATION = 'orchctl.io/recovered-run';

export const MAX_PHASES = 50;
/** Recovery attempts per phase after its tmux session died (seed 003: one). */
export const MAX_RECOVERIES = 1;
/**
 * Bounds of what phases hand to the next (agent-written text going into another agent's prompt):
 * handoff.md bytes over all its dependencies (split evenly), report notes per dependency, and a
 * resume message. Small enough for promptDelivery argument (the command line is capped at 12 KiB).
 */
export const HANDOFF_LIMITS = { handoffBytes: 8 * 1024, notes: 2000, message: 4000 } as const;
/** The message a resume without --message delivers. */
export const DEFAULT_RESUME_MESSAGE = 'The blocker has been dealt with. Please continue where you stopped.';

/**
 * An AgentSession spec without desiredState (the pipeline decides it), plus the session's labels.
 * A phase restarts Never or OnFailure (crds/pipelines.yaml): Always would rerun a finished phase.
 */
export type PhaseTemplate = Omit<AgentSessionSpec, 'desiredState' | 'restartPolicy'> & {
  labels?: Record<string, string>;
  restartPolicy?: 'Never' | 'OnFailure';
};

export type PipelinePhaseSpec = {
  /** A DNS label; the session is `<pipeline>-<phase>`. */
  name: string;
  /** Phases that must complete first. When no phase has it, each phase depends on the one before. */
  dependsOn?: string[];
  template: PhaseTemplate;
};

export type PipelineSpec = {
  phases: PipelinePhaseSpec[];
  /** While true no new phase session is created; those running go on. */
  suspend?: boolean;
};

export const PHASE_STATES = ['Pending', 'Running', 'Succeeded', 'Blocked', 'Failed'] as const;
export type PhaseState = (typeof PHASE_STATES)[number];
export const PIPELINE_PHASES = ['Pending', 'Running', 'Blocked', 'Succeeded', 'Failed'] as const;
export type PipelinePhase = (typeof PIPELINE_PHASES)[number];

export type PhaseStatus = {
  name: string;
  state: PhaseState;
  /** The phase's AgentSession, once created. */
  session?: string;
  run?: number;
  /** Recovery runs after a tmux death (at most MAX_RECOVERIES). */
  attempts?: number;
  startedAt?: string;
  finishedAt?: string;
  reason?: string;
  message?: string;
  /** When a resume was delivered to this phase: a `blocked` report older than this is answered. */
  resumedAt?: string;
  /** Why the phase's status.json could not be used, as the session reported it (a warning only). */
  reportProblem?: string;
};

/** The last `orchctl pipeline resume` the reconciler took up (its annotation value), and how it went. */
export type ResumeStatus = {
  requested: string;
  state: 'Delivering' | 'Delivered' | 'Failed' | 'Ignored' | 'Unconfirmed';
  at: string;
  phases?: string[];
  message?: string;
  /**
   * While Delivering: the messages posted to live blocked phases (api/message.ts) whose nodes have
   * not answered yet. Absent while Delivering: the controller stopped before it posted them.
   */
  waiting?: { phase: string; session: string; id: string }[];
  /** The phases answered so far, and how. */
  outcomes?: ResumeOutcome[];
};

/** How a resume went for one phase (`at`: when it was delivered). */
export type ResumeOutcome = { phase: string; delivered: boolean; how: string; at?: string };

export type PipelineStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  phase?: PipelinePhase;
  /** "2/4": the phase being worked on, counted in completion order (4/4 when all completed). */
  current?: string;
  completed?: number;
  total?: number;
  /** Names of the phases running or blocked now. */
  active?: string[];
  reason?: string;
  message?: string;
  startTime?: string;
  completionTime?: string;
  phases?: PhaseStatus[];
  resume?: ResumeStatus;
};

export type Pipeline = Resource<PipelineSpec, PipelineStatus>;

/** The deterministic session name of a phase: a controller that died after creating it finds it again. */
export const phaseSessionName = (pipeline: string, phase: string) => `${pipeline}-${phase}`;

/** Each phase's dependencies: as written when any phase has dependsOn, else the phase before it. */
export function dependencies(spec: PipelineSpec): Map<string, string[]> {
  const phases = spec.phases ?? [];
  const dag = phases.some((p) => p.dependsOn !== undefined);
  return new Map(phases.map((p, i) => [p.name, dag ? (p.dependsOn ?? []) : i ? [phases[i - 1].name] : []]));
}

/** The first cycle of the dependency graph, as the names along it (first name repeated at the end). */
export function findCycle(deps: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined;
    if (state.get(n) === 'visiting') return [...trail.slice(trail.indexOf(n)), n];
    state.set(n, 'visiting');
    trail.push(n);
    for (const d of deps.get(n) ?? []) {
      if (!deps.has(d)) continue;
      const c = visit(d);
      if (c) return c;
    }
    trail.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of deps.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return undefined;
}

/**
 * What a schema cannot check: phase names unique, dependencies naming phases of this pipeline
 * (not itself), no cycle, and session names (`<pipeline>-<phase>`) that fit a DNS label.
 */
export function pipelineSpecErrors(name: string, spec: PipelineSpec): FieldError[] {
  const errs: FieldError[] = [];
  const phases = spec.phases ?? [];
  if (phases.length > MAX_PHASES)
    errs.push({ path: ['spec', 'phases'], message: `must have at most ${MAX_PHASES} phases, got ${phases.length}` });
  const seen = new Map<string, number>();
  phases.forEach((p, i) => {
    const at = ['spec', 'phases', i];
    const first = seen.get(p.name);
    if (first !== undefined)
      errs.push({ path: [...at, 'name'], message: `Duplicate value "${p.name}": phase ${first} has the same name` });
    else seen.set(p.name, i);
    const session = phaseSessionName(name, p.name);
    if (session.length > 63)
      errs.push({
        path: [...at, 'name'],
        message: `the phase's session name "${session}" is ${session.length} characters, over 63: shorten it`,
      });
  });
  phases.forEach((p, i) => {
    (p.dependsOn ?? []).forEach((d, j) => {
      const at = ['spec', 'phases', i, 'dependsOn', j];
      if (d === p.name) errs.push({ path: at, message: `phase "${p.name}" cannot depend on itself` });
      else if (!seen.has(d))
        errs.push({ path: at, message: `Unsupported value "${d}": no phase of this pipeline is named so` });
    });
  });
  if (errs.length) return errs;
  const cycle = findCycle(dependencies(spec));
  if (cycle) {
    const i = seen.get(cycle[0]) ?? 0;
    errs.push({ path: ['spec', 'phases', i, 'dependsOn'], message: `dependency cycle: ${cycle.join(' → ')}` });
  }
  return errs;
}

/** The labels the pipeline puts on its sessions itself: a template may not set them. */
export const RESERVED_PHASE_LABELS: ReadonlySet<string> = new Set([PIPELINE_LABEL, PHASE_LABEL]);

/**
 * A phase's AgentSession: the template as its spec (restartPolicy Never unless the template says
 * OnFailure: recovery is the pipeline's), owned by the pipeline (deleting the pipeline deletes it),
 * labelled with the pipeline and phase. `prompt` replaces the template's prompt or promptFile
 * (a phase after others gets their handoff added to its task).
 */
export function phaseSession(p: Pipeline, phase: PipelinePhaseSpec, prompt?: string): Resource<AgentSessionSpec> {
  const { labels, ...template } = phase.template;
  const spec: AgentSessionSpec = { ...template, restartPolicy: template.restartPolicy ?? 'Never' };
  if (prompt !== undefined) {
    delete spec.promptFile;
    spec.prompt = prompt;
  }
  spec.desiredState = 'Running';
  return {
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: {
      name: phaseSessionName(p.metadata.name, phase.name),
      namespace: p.metadata.namespace ?? 'default',
      labels: { ...(labels ?? {}), [PIPELINE_LABEL]: p.metadata.name, [PHASE_LABEL]: phase.name },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'Pipeline',
          name: p.metadata.name,
          uid: p.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  };
}

/** The Pipeline that controls a session (its controller ownerReference), if any. */
export function owningPipeline(s: Resource): string | undefined {
  return s.metadata.ownerReferences?.find((r) => r.kind === 'Pipeline' && r.controller)?.name;
}
