/**
 * The AgentSession lifecycle's vocabulary, shared by the reconciler that drives it and by
 * everything that reads it (metrics, the CLI, the node status): the phases and which are active.
 */

export type RestartPolicy = 'Never' | 'OnFailure' | 'Always';

/** The closed phase enum of crds/agentsessions.yaml, in lifecycle order. */
export const PHASES = [
  'Pending',
  'Starting',
  'Running',
  'Stopping',
  'Backoff',
  'Succeeded',
  'Failed',
  'Killed',
  'TimedOut',
] as const;
export type Phase = (typeof PHASES)[number];

export const TERMINAL_PHASES: ReadonlySet<Phase> = new Set(['Succeeded', 'Failed', 'Killed', 'TimedOut']);
/** A run is in progress: its tmux session exists or is being started or stopped. */
export const ACTIVE_PHASES: ReadonlySet<Phase> = new Set(['Starting', 'Running', 'Stopping']);
