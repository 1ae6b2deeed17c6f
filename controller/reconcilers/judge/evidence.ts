/**
 * The evidence a judge sees for one run — pure: the session object, what was read from the run's
 * workspace and the session's event log go in, bounded JSON comes out. Seed 000 pitfalls 4/5: a
 * judge needs the facts and a short tail, not the transcript, so every free-text field has a hard
 * limit and the whole object is cut down to {@link MAX_EVIDENCE_BYTES}.
 *
 * Facts (phase, exit code, duration, git numbers, tool and test counts, breaker openings) are
 * ours. Text (output tail, assistant message, commit subject, result.json, commands) comes from
 * the agent and is untrusted: prompt.ts fences it.
 */
import { getCondition } from '../../api/conditions.js';
import { clip } from '../../api/text.js';
import type { AgentSession } from '../../api/kinds.js';
import type { JudgeEvidence, TestSignal } from '../../llm/verdict.js';
import type { AgentEvent, ToolResultEvent, ToolUseEvent } from '../../store/eventlog.js';
import { outputTail } from '../../observers/output.js';

export const MAX_EVIDENCE_BYTES = 6144;
export const LIMITS = {
  task: 500,
  outputLines: 40,
  outputChars: 1500,
  assistant: 600,
  result: 400,
  subject: 120,
  command: 200,
  detectorKeys: 12,
  scalar: 80,
} as const;

export const ENDED_PHASES = new Set(['Succeeded', 'Failed', 'Killed', 'TimedOut']);

export interface EvidenceInput {
  session: AgentSession;
  run: number;
  trigger: JudgeEvidence['trigger'];
  /**
   * For a run that is no longer the session's current one: the final state.json of its
   * workspace (status, exitCode, reason, startTime, completedTime, headBefore, git).
   */
  runState?: Record<string, unknown>;
  /** Raw pane output of the run (output.log tail) when status.lastOutput does not describe it. */
  rawOutput?: string;
  /** result.json of the run, when status.result does not describe it. */
  result?: Record<string, unknown>;
  /** Events of the session's log (any runs; only `run`'s are used), oldest first. */
  events?: AgentEvent[];
  maxDurationMs?: number;
  now?: number;
}

/** The phase a run ended in, from a status that may already be in Backoff/Pending for a restart. */
export function endedPhase(status: AgentSession['status']): string | undefined {
  const st = status ?? {};
  if (st.phase && ENDED_PHASES.has(st.phase)) return st.phase;
  if (!st.completionTime) return undefined;
  const reason = getCondition(st.conditions, 'Succeeded')?.reason ?? st.reason;
  switch (reason) {
    case 'Completed':
      return 'Succeeded';
    case 'TimedOut':
      return 'TimedOut';
    case 'Stopped':
    case 'TmuxSessionLost':
      return 'Killed';
    default:
      return st.exitCode === 0 ? 'Succeeded' : 'Failed';
  }
}

const STATE_PHASE: Record<string, string> = {
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  KILLED: 'Killed',
  TIMEDOUT: 'TimedOut',
  RUNNING: 'Running',
};

/** A test runner's command, at the start or after a shell separator (regex built in parts to keep lines short). */
const TEST_COMMAND = new RegExp(
  String.raw`(^|[\s;&|(])(` +
    [
      String.raw`(npm|pnpm|yarn|bun)\s+(run\s+)?test\b`,
      String.raw`npx\s+(vitest|jest|mocha|playwright)\b`,
      String.raw`vitest\b|jest\b|mocha\b|pytest\b`,
      String.raw`python3?\s+-m\s+(pytest|unittest)\b`,
      String.raw`go\s+test\b`,
      String.raw`cargo\s+(test|nextest)\b`,
      String.raw`make\s+(test|check)\b`,
      String.raw`mvn\s+(-\S+\s+)*test\b`,
      String.raw`gradle\w*\s+test\b`,
      String.raw`rspec\b|phpunit\b|tox\b`,
      String.raw`deno\s+test\b|dotnet\s+test\b|ctest\b`,
    ].join('|') +
    ')',
);

/** Counts on the last test-summary line of a text (vitest, jest, pytest, mocha, cargo, go). */
export function testSummary(text: string): { signal: TestSignal; passed?: number; failed?: number } {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i];
    const passed = /\b(\d+)\s+(?:passed|passing)\b/i.exec(l);
    const failed = /\b(\d+)\s+(?:failed|failing)\b/i.exec(l);
    if (passed || failed) {
      const p = passed ? Number(passed[1]) : undefined;
      const f = failed ? Number(failed[1]) : undefined;
      if ((f ?? 0) > 0) return { signal: 'failing', passed: p, failed: f };
      if ((p ?? 0) > 0) return { signal: 'passing', passed: p, failed: f ?? 0 };
      continue;
    }
    if (/^(FAIL|---\s+FAIL:)\s/.test(l)) return { signal: 'failing' };
    if (/^ok\s+\S+\s+[\d.]+s/.test(l)) return { signal: 'passing' };
  }
  return { signal: 'none' };
}

interface ToolFacts {
  tools?: JudgeEvidence['tools'];
  tests?: JudgeEvidence['tests'];
  lastAssistantMessage?: string;
}

/** Tool failures, the last test run and the last assistant message of one run, from its events. */
export function fromEvents(events: AgentEvent[], run: number): ToolFacts {
  const mine = events.filter((e) => e.run === run);
  if (!mine.length) return {};
  const commands = new Map<string, string>();
  let calls = 0;
  let failuresN = 0;
  let consecutive = 0;
  const failedBy = new Map<string, number>();
  let lastTest: { ok: boolean; command: string; output: string } | undefined;
  let assistant: string | undefined;
  for (const e of mine) {
    if (e.type === 'tool_use') {
      const u = e as ToolUseEvent;
      if (u.toolUseId && u.command) commands.set(u.toolUseId, u.command);
    } else if (e.type === 'tool_result') {
      const r = e as ToolResultEvent;
      calls++;
      const failed = r.isError || (r.exitCode !== undefined && r.exitCode !== 0);
      const command = (r.command ?? (r.toolUseId ? commands.get(r.toolUseId) : undefined) ?? r.tool ?? '').trim();
      if (failed) {
        failuresN++;
        consecutive++;
        if (command) failedBy.set(command, (failedBy.get(command) ?? 0) + 1);
      } else consecutive = 0;
      if (command && TEST_COMMAND.test(command)) lastTest = { ok: !failed, command, output: r.output ?? '' };
    } else if (e.type === 'assistant_message' && e.text?.trim()) assistant = e.text;
  }
  const out: ToolFacts = {};
  if (calls) {
    let repeated: { command: string; count: number } | undefined;
    for (const [command, count] of failedBy)
      if (count >= 2 && (!repeated || count > repeated.count))
        repeated = { command: clip(command, LIMITS.command), count };
    out.tools = {
      calls,
      failures: failuresN,
      consecutiveFailures: consecutive,
      ...(repeated ? { repeatedFailure: repeated } : {}),
    };
  }
  if (lastTest) {
    const counts = testSummary(outputTail(lastTest.output, 200, 20_000));
    // The exit status decides; the counts are detail.
    out.tests = {
      signal: lastTest.ok ? 'passing' : 'failing',
      ...(counts.passed !== undefined ? { passed: counts.passed } : {}),
      ...(counts.failed !== undefined ? { failed: counts.failed } : {}),
      source: `tool:${clip(lastTest.command, 80)}`,
    };
  }
  if (assistant) out.lastAssistantMessage = clip(assistant.trim(), LIMITS.assistant);
  return out;
}

function scalars(o: unknown, maxKeys: number): Record<string, string | number | boolean> | undefined {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return undefined;
  const out: Record<string, string | number | boolean> = {};
  let n = 0;
  for (const [k, v] of Object.entries(o as Record<string, unknown>)) {
    if (n >= maxKeys) break;
    if (typeof v === 'number' && Number.isFinite(v)) out[k] = Math.round(v * 1000) / 1000;
    else if (typeof v === 'boolean') out[k] = v;
    else if (typeof v === 'string') out[k] = clip(v, LIMITS.scalar);
    else continue;
    n++;
  }
  return n ? out : undefined;
}

/** What a breaker status (issue #6, shape not fixed here) says: its state, how often it opened, why. */
export function breakerSummary(session: AgentSession): JudgeEvidence['breaker'] {
  const b = (session.status?.breaker ?? {}) as Record<string, unknown>;
  const open = getCondition(session.status?.conditions, 'BreakerOpen');
  const countKey = ['openings', 'trips', 'timesOpened', 'openCount', 'tripCount', 'opened'].find(
    (k) => typeof b[k] === 'number',
  );
  const openings = countKey ? (b[countKey] as number) : undefined;
  const state = typeof b.state === 'string' ? b.state : open?.status === 'True' ? 'Open' : undefined;
  const lastTrip = b.lastTrip as Record<string, unknown> | undefined;
  const reasonRaw =
    b.reason ??
    b.tripReason ??
    b.lastTripReason ??
    lastTrip?.reason ??
    b.intervention ??
    (open?.status === 'True' ? open.reason : undefined);
  const out: NonNullable<JudgeEvidence['breaker']> = {};
  if (state) out.state = clip(state, 20);
  if (openings !== undefined) out.openings = openings;
  if (typeof reasonRaw === 'string' && reasonRaw) out.reason = clip(reasonRaw, LIMITS.scalar);
  return Object.keys(out).length ? out : undefined;
}

function resultEvidence(r: unknown): JudgeEvidence['result'] {
  if (!r || typeof r !== 'object') return undefined;
  const o = r as Record<string, unknown>;
  const status = typeof o.status === 'string' ? o.status : typeof o.state === 'string' ? o.state : undefined;
  return { ...(status ? { status: clip(status, 40) } : {}), text: clip(JSON.stringify(r), LIMITS.result) };
}

const seconds = (from?: unknown, to?: unknown) => {
  const a = Date.parse(String(from ?? ''));
  const b = Date.parse(String(to ?? ''));
  return Number.isNaN(a) || Number.isNaN(b) ? undefined : Math.max(0, Math.round((b - a) / 1000));
};

export function buildEvidence(i: EvidenceInput): JudgeEvidence {
  const s = i.session;
  const st = s.status ?? {};
  const current = (st.run ?? 0) === i.run && !i.runState;
  const rs = i.runState ?? {};
  const truncated: string[] = [];
  const e: JudgeEvidence = {
    session: `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`,
    run: i.run,
    trigger: i.trigger,
    phase: current ? (endedPhase(st) ?? st.phase ?? 'Pending') : (STATE_PHASE[String(rs.status ?? '')] ?? 'Failed'),
  };
  const reason = current
    ? (getCondition(st.conditions, 'Succeeded')?.reason ?? st.reason)
    : (rs.reason as string | undefined);
  if (reason && (current ? st.completionTime : true)) e.reason = clip(reason, 40);
  const exitCode = current ? st.exitCode : (rs.exitCode as number | null | undefined);
  if (typeof exitCode === 'number') e.exitCode = exitCode;
  const start = current ? st.startTime : rs.startTime;
  const end = current
    ? (st.completionTime ?? (ENDED_PHASES.has(e.phase) ? undefined : new Date(i.now ?? Date.now()).toISOString()))
    : rs.completedTime;
  const dur = seconds(start, end);
  if (dur !== undefined) e.durationSeconds = dur;
  if (i.maxDurationMs) e.maxDurationSeconds = Math.round(i.maxDurationMs / 1000);
  if (st.restarts) e.restarts = st.restarts;
  const task = s.spec?.prompt ?? (s.spec?.promptFile ? `(prompt file ${s.spec.promptFile})` : undefined);
  if (task) {
    e.task = clip(task.trim(), LIMITS.task);
    if (task.trim().length > LIMITS.task) truncated.push('task');
  }

  const git = (current ? st.git : (rs.git as typeof st.git | null | undefined)) ?? undefined;
  const headBefore = (current ? st.headBefore : (rs.headBefore as string | null | undefined)) ?? undefined;
  if (git) {
    e.git = {
      ...(headBefore ? { headBefore } : {}),
      ...(git.head ? { head: git.head } : {}),
      commits: git.commits ?? 0,
      insertions: git.insertions ?? 0,
      deletions: git.deletions ?? 0,
      filesChanged: git.filesChanged ?? 0,
      ...(git.lastCommit?.subject ? { lastCommitSubject: clip(git.lastCommit.subject, LIMITS.subject) } : {}),
    };
  }

  const facts = fromEvents(i.events ?? [], i.run);
  if (facts.tools) e.tools = facts.tools;
  const rawOut = current && st.lastOutput ? st.lastOutput : (i.rawOutput ?? '');
  const tail = outputTail(rawOut, LIMITS.outputLines, LIMITS.outputChars);
  if (tail) {
    e.outputTail = tail;
    if (tail.length < outputTail(rawOut, 10_000, 1_000_000).length) truncated.push('outputTail');
  }
  // Tests: the exit status of the last test command wins over the text of the tail.
  const fromText = tail ? testSummary(tail) : { signal: 'none' as TestSignal };
  if (facts.tests) e.tests = facts.tests;
  else if (fromText.signal !== 'none') e.tests = { ...fromText, source: 'output' };
  if (current) {
    const breaker = breakerSummary(s);
    if (breaker) e.breaker = breaker;
    const detector = scalars(st.detector, LIMITS.detectorKeys);
    if (detector) e.detector = detector;
  }
  const result = resultEvidence(current ? (st.result ?? i.result) : i.result);
  if (result) e.result = result;
  if (facts.lastAssistantMessage) e.lastAssistantMessage = facts.lastAssistantMessage;
  if (truncated.length) e.truncated = truncated;
  return fit(e);
}

/** Halves the longest free-text fields until the JSON fits MAX_EVIDENCE_BYTES. */
export function fit(e: JudgeEvidence): JudgeEvidence {
  const size = () => Buffer.byteLength(JSON.stringify(e), 'utf8');
  const order: ('outputTail' | 'lastAssistantMessage' | 'task')[] = ['outputTail', 'lastAssistantMessage', 'task'];
  for (let guard = 0; size() > MAX_EVIDENCE_BYTES && guard < 40; guard++) {
    const k = order.find((f) => (e[f]?.length ?? 0) > 64);
    if (!k) {
      delete e.detector;
      if (e.result) e.result.text = clip(e.result.text, 100);
      if (size() > MAX_EVIDENCE_BYTES) break;
      continue;
    }
    const v = e[k]!;
    // Keep the end of the output (what happened last), the start of prose.
    e[k] = k === 'outputTail' ? v.slice(Math.floor(v.length / 2)) : clip(v, Math.floor(v.length / 2));
    e.truncated = [...new Set([...(e.truncated ?? []), k])];
  }
  return e;
}
