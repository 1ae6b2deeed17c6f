/**
 * The autonomy gate (seed 002 §2.1): what an autonomy level lets a decision do on its own.
 *
 *   level     | start           | stop            | restart  | notify  | skip
 *   observe   | log             | log             | log      | log     | log
 *   cautious  | execute+notify  | approval        | approval | execute | log
 *   moderate  | execute         | execute+notify  | execute  | execute | log
 *   full      | execute         | execute         | execute  | execute | log
 *
 * "log" is a recommendation a person can read (`orchctl get decisions`), nothing more: observe is the
 * dry run (seed 002 §8.3). "approval" waits for `orchctl approve|reject decision`. "+notify" is the
 * seed's "notify after": the execution also records an AutopilotNotice Event for the notifier.
 */
import type { AutonomyLevel, AutopilotAction } from '../../api/autopilot.js';

export type Gate = { result: 'execute' | 'approval' | 'log'; notifyAfter: boolean };

const X: Gate = { result: 'execute', notifyAfter: false };
const XN: Gate = { result: 'execute', notifyAfter: true };
const A: Gate = { result: 'approval', notifyAfter: false };
const L: Gate = { result: 'log', notifyAfter: false };

export const GATE_MATRIX: Record<AutonomyLevel, Record<AutopilotAction, Gate>> = {
  observe: { start: L, stop: L, restart: L, notify: L, skip: L },
  cautious: { start: XN, stop: A, restart: A, notify: X, skip: L },
  moderate: { start: X, stop: XN, restart: X, notify: X, skip: L },
  full: { start: X, stop: X, restart: X, notify: X, skip: L },
};

export function gate(level: AutonomyLevel, action: AutopilotAction): Gate {
  return GATE_MATRIX[level][action];
}
