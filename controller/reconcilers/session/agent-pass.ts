/**
 * The agent-observation part of a session reconcile, for a live run: read the pane and classify
 * it, ingest hooks/transcript/pane changes into the event log, fold the new events into
 * status.agent (as a consumer whose position is written with the same status), and derive the
 * agent conditions and the context-window figures. I/O lives in the callers' observers; the
 * decisions are agent-state.ts's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../../api/duration.js';
import { setCondition } from '../../api/conditions.js';
import type { AgentSession, AgentSessionStatus, AgentSpec, SessionPolicy } from '../../api/kinds.js';
import { classifyScreen, detectionFor, type DetectionProfile, type ScreenClass } from '../../agents/detection.js';
import type { AgentFeed } from '../../observers/agent-feed.js';
import type { Tmux } from '../../observers/tmux.js';
import { LOG_START, type EventLog } from '../../store/eventlog.js';
import {
  agentState,
  contextStep,
  foldEvents,
  newObservation,
  type AgentObservation,
  type ScreenReading,
} from './agent-state.js';

export const DEFAULT_STALLED_AFTER = '10m';
const DEFAULT_CONTEXT_WINDOW = 200_000;

/** status.agent: the observation plus where its sources are. */
export interface AgentStatus extends AgentObservation {
  state?: string;
  source?: string;
  /** Claude Code's --session-id for this run and its transcript path. */
  sessionId?: string;
  transcript?: string;
  /** The dialog last answered automatically (so one appearance gets one answer). */
  autoAnswered?: { dialog: string; at: string };
}

export interface AgentPassInput {
  obj: AgentSession;
  status: AgentSessionStatus;
  agent?: AgentSpec;
  policy?: SessionPolicy;
  log: EventLog;
  feed: AgentFeed;
  tmux: Tmux;
  /** Live pane id of the run, if any. */
  paneId?: string;
  now: number;
}

export interface AgentPassResult {
  /** A dialog to answer automatically (the Agent opted in): its name and keys. */
  autoAnswer?: { dialog: string; keys: string[] };
  /** A 10 % context-window step crossed in this pass. */
  contextStep?: { percent: number; step: number; used: number; window: number };
  screen?: ScreenReading;
}

/**
 * Per-session memory between passes (not state: losing it costs one extra capture). The pane's
 * output log only grows when the screen is redrawn, so while it stands still the last reading
 * stands too and no tmux capture is needed.
 */
export class ScreenCache {
  private readonly last = new Map<string, { stamp: string; text: string; cls: ScreenClass; changedAt: number }>();

  async read(
    key: string,
    stamp: string | undefined,
    capture: () => Promise<string>,
    profile: DetectionProfile,
    now: number,
  ): Promise<{ cls: ScreenClass; changedAt: number } | undefined> {
    const prev = this.last.get(key);
    // A blank screen is remembered like any other: an agent that never prints must not cost a
    // capture every tick.
    if (prev && stamp !== undefined && prev.stamp === stamp) return prev.text.trim() ? prev : undefined;
    // Nothing written to the pane yet (its output log is empty): the screen is blank.
    if (stamp?.startsWith('0:')) return undefined;
    const text = await capture();
    if (prev && prev.text === text) {
      prev.stamp = stamp ?? '';
      return text.trim() ? prev : undefined;
    }
    const cls: ScreenClass = text.trim() ? classifyScreen(text, profile) : { state: 'unknown' };
    const entry = { stamp: stamp ?? '', text, cls, changedAt: now };
    this.last.set(key, entry);
    return text.trim() ? entry : undefined;
  }

  forget(key: string): void {
    this.last.delete(key);
  }
}

/** Size and mtime of the run's output log: changes whenever the pane is redrawn. */
function outputStamp(workspace: string | undefined): string | undefined {
  if (!workspace) return undefined;
  try {
    const st = fs.statSync(path.join(workspace, 'output.log'));
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

export function profileFor(agent: AgentSpec | undefined): DetectionProfile | undefined {
  if (!agent) return undefined;
  try {
    return detectionFor(agent);
  } catch {
    return undefined; // invalid detection data is rejected at apply; an old object just goes without
  }
}

export async function observeAgent(i: AgentPassInput, screens: ScreenCache, key: string): Promise<AgentPassResult> {
  const s = i.status;
  const run = s.run ?? 0;
  const prev = (s.agent ?? {}) as AgentStatus;
  const profile = profileFor(i.agent);
  let screen: ScreenReading | undefined;
  let screenChangedAt: number | undefined;
  if (i.paneId && profile) {
    const paneId = i.paneId;
    const r = await screens.read(key, outputStamp(s.workspace), () => i.tmux.capture(paneId, 60), profile, i.now);
    if (r) {
      screen = { ...r.cls, at: i.now };
      screenChangedAt = r.changedAt;
    }
  }
  if (s.workspace) {
    i.feed.ingest(i.log, {
      run,
      workspace: s.workspace,
      transcript: prev.transcript,
      ...(screen && screen.state !== 'unknown' ? { pane: { state: screen.state, detail: screen.dialog } } : {}),
    });
  }
  const base: AgentObservation =
    prev.run === run && prev.position ? prev : newObservation(run, prev.position ?? LOG_START);
  const { events, next } = i.log.read(base.position, 5000);
  const obs = foldEvents(base, events, next);
  const stalledAfterMs = parseDuration(
    (i.policy?.spec as { detector?: { stalledAfter?: string } } | undefined)?.detector?.stalledAfter ??
      DEFAULT_STALLED_AFTER,
  );
  const startedAt = Date.parse(s.startTime ?? '') || i.now;
  const st = agentState({
    obs,
    screen,
    now: i.now,
    stalledAfterMs,
    screenChangedAt,
    startedAt,
    generation: i.obj.metadata.generation,
  });
  for (const c of st.conditions) setCondition(s.conditions!, c);
  // The fold starts from the previous status of the same run, so sessionId, transcript and
  // autoAnswered carry over with it.
  const out: AgentStatus = { ...obs, state: st.state, source: st.source };
  const result: AgentPassResult = { screen };

  // Startup dialogs the Agent opted in to answer: once per appearance.
  if (st.state === 'dialog' && screen?.dialog && i.agent?.autoAnswer?.includes(screen.dialog)) {
    const keys = profile?.dialogs.find((d) => d.name === screen!.dialog)?.answerKeys;
    if (keys?.length && out.autoAnswered?.dialog !== screen.dialog) result.autoAnswer = { dialog: screen.dialog, keys };
  } else if (
    st.state === 'waiting' &&
    i.agent?.autoAnswer?.includes('permission') &&
    profile?.approveKeys.length &&
    out.autoAnswered?.at !== obs.permission?.since
  ) {
    result.autoAnswer = { dialog: 'permission', keys: profile.approveKeys };
  }
  if (st.state !== 'dialog' && out.autoAnswered && out.autoAnswered.dialog !== 'permission') delete out.autoAnswered; // gone: a later appearance may be answered again

  // Context window (seed 003): status and an event at every 10 % step.
  if (obs.contextTokens !== undefined) {
    const window = profile?.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW;
    const ctx = (s.context ?? {}) as { lastStep?: number; run?: number };
    const lastStep = ctx.run === run ? ctx.lastStep : undefined;
    const step = contextStep(obs.contextTokens, window, lastStep);
    const percent = Math.round((obs.contextTokens / window) * 1000) / 10;
    s.context = {
      run,
      usedTokens: obs.contextTokens,
      windowTokens: window,
      percent,
      lastStep: step?.step ?? lastStep ?? 0,
    };
    if (step) result.contextStep = { ...step, used: obs.contextTokens, window };
  }
  s.agent = out as unknown as Record<string, unknown>;
  return result;
}

/** After the run ended: take the last events in and settle the agent conditions. */
export function settleAgent(i: Omit<AgentPassInput, 'tmux' | 'paneId'>): void {
  const s = i.status;
  const run = s.run ?? 0;
  const prev = (s.agent ?? {}) as AgentStatus;
  if (s.workspace && fs.existsSync(s.workspace))
    i.feed.ingest(i.log, { run, workspace: s.workspace, transcript: prev.transcript });
  const base: AgentObservation =
    prev.run === run && prev.position ? prev : newObservation(run, prev.position ?? LOG_START);
  const { events, next } = i.log.read(base.position, 100_000);
  const obs = foldEvents(base, events, next);
  i.feed.forget(i.log, run);
  const gen = i.obj.metadata.generation;
  setCondition(s.conditions!, {
    type: 'AgentBusy',
    status: 'False',
    reason: 'Exited',
    message: '',
    observedGeneration: gen,
  });
  setCondition(s.conditions!, {
    type: 'WaitingForInput',
    status: 'False',
    reason: 'Exited',
    message: '',
    observedGeneration: gen,
  });
  setCondition(s.conditions!, {
    type: 'Stalled',
    status: 'False',
    reason: 'Exited',
    message: '',
    observedGeneration: gen,
  });
  s.agent = { ...prev, ...obs, state: 'exited', source: obs.ended ? 'hook' : 'process' } as unknown as Record<
    string,
    unknown
  >;
}
