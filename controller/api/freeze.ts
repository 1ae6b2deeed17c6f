/**
 * The emergency stop (`orchctl freeze` / `orchctl thaw`, docs/freeze.md): what a person marks and
 * how a frozen session reads. The mark is an annotation in the store — on an AgentSession, on a
 * Project (all its sessions, and the autopilot leaves it alone) or on an Autopilot (it does not
 * think) — so that it outlives any controller; the session reconciler holds a frozen run
 * (SIGSTOP of its process group) and records status.frozen, and thaws it when the mark is gone.
 */
import type { Resource } from './types.js';

/** The freeze mark: its value is when and why (`2026-11-26T22:40:00Z by orchctl freeze --all`). */
export const FROZEN_ANNOTATION = 'orchctl.io/frozen';

/** status.frozen: the session is held by a freeze (the run, if one was alive, is stopped with SIGSTOP). */
export type FreezeStatus = {
  /** When the freeze took hold. */
  since: string;
  /** The run held (0: none had started). */
  run: number;
  /** Whether a live run's process group was stopped (SIGSTOP); thaw continues it (SIGCONT). */
  stopped: boolean;
  /** The freeze mark's value, and whose it is (the session's own or its project's). */
  message: string;
};

/** The freeze mark on the object, if any. */
export const frozenMark = (o: Resource | undefined): string | undefined => o?.metadata.annotations?.[FROZEN_ANNOTATION];
