/**
 * A consumer's place in a session's event log (store/eventlog.ts). It is part of the API because
 * consumers commit it in status (status.agent.position, status.assessment.position) together with
 * what they derived from the events before it.
 */

/** Where a consumer is: the last event it has taken (seq) and the byte offset just after it. */
export type LogPosition = {
  seq: number;
  offset: number;
};

export const LOG_START: LogPosition = { seq: 0, offset: 0 };
