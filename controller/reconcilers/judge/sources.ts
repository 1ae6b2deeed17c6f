/**
 * Reads what evidence.ts needs for one run from disk: the run's workspace (state.json,
 * output.log tail, result.json) when the run is no longer the session's current one, and the
 * tail of the session's event log. Every read is bounded; a missing file is simply no evidence.
 */
import fs from 'node:fs';
import { parseDuration } from '../../api/duration.js';
import type { AgentSession, SessionPolicy } from '../../api/kinds.js';
import type { JudgeEvidence } from '../../llm/verdict.js';
import { readResult, readTail, runWorkspace } from '../../observers/workspace.js';
import { eventLogEnd, eventLogPath, readEventLog, type AgentEvent } from '../../store/eventlog.js';
import { buildEvidence } from './evidence.js';

/** How much of the end of the event log is read (tool failures are counted within it). */
export const EVENT_LOG_WINDOW = 2 << 20;
const OUTPUT_WINDOW = 16 * 1024;

/**
 * The last events of a session's log. Starting mid-file is safe: the partial first line does not
 * parse (a suffix of a JSON object line is never itself a JSON object) and is passed over.
 */
export function readEventTail(file: string, window = EVENT_LOG_WINDOW): AgentEvent[] {
  // Logical offsets: a log cut by retention counts what it dropped (below its base a read starts at it).
  const size = eventLogEnd(file);
  if (size === undefined) return [];
  const offset = Math.max(0, size - window);
  return readEventLog(file, { seq: 0, offset }).events.filter(
    (e) => e && typeof e === 'object' && typeof e.type === 'string',
  );
}

export function readRunState(home: string, ns: string, name: string, run: number): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(runWorkspace(home, ns, name, run).stateFile, 'utf8')) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function maxDurationMs(session: AgentSession, policy: SessionPolicy | undefined): number | undefined {
  const d = session.spec?.maxDuration ?? policy?.spec?.maxSessionDuration;
  try {
    return d ? parseDuration(d) : undefined;
  } catch {
    return undefined;
  }
}

export function gatherEvidence(
  home: string,
  session: AgentSession,
  run: number,
  trigger: JudgeEvidence['trigger'],
  policy: SessionPolicy | undefined,
  now = Date.now(),
): JudgeEvidence {
  const ns = session.metadata.namespace ?? 'default';
  const name = session.metadata.name;
  const ws = runWorkspace(home, ns, name, run);
  const current = (session.status?.run ?? 0) === run;
  const runState = current ? undefined : readRunState(home, ns, name, run);
  const needOutput = !current || !session.status?.lastOutput;
  return buildEvidence({
    session,
    run,
    trigger,
    runState: runState ?? (current ? undefined : {}),
    rawOutput: needOutput ? readTail(ws.outputLog, OUTPUT_WINDOW) : undefined,
    result: current ? undefined : readResult(ws),
    events: readEventTail(eventLogPath(home, ns, name)),
    maxDurationMs: maxDurationMs(session, policy),
    now,
  });
}
