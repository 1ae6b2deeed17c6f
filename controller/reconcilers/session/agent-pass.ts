/**
 * The agent part of a session's plan, pure: fold the events its sources produced (hooks,
 * transcript, pane signals — read by the observer) into status.agent, as a consumer whose log
 * position is written with the same status; derive the agent conditions, the context-window
 * figures, the run's token usage (usage.ts), and whether an opted-in dialog answer is due. The
 * state rules are agent-state.ts's.
 */
import { formatDuration, parseDuration } from '../../api/duration.js';
import { setCondition } from '../../api/conditions.js';
import type { AgentSessionStatus, AgentSpec, SessionAgentStatus, SessionPolicy, UsageStatus } from '../../api/kinds.js';
import type { EventType } from '../../client/events.js';
import { profileFor } from '../../agents/detection.js';
import { driverFor } from '../../agents/drivers.js';
import { type AgentEvent, LOG_START, type LogPosition } from '../../store/eventlog.js';
import { agentState, contextStep, foldEvents, newObservation, type AgentObservation } from './agent-state.js';
import type { AgentFacts } from './observation.js';
import { foldUsage } from './usage.js';

export const DEFAULT_STALLED_AFTER = '10m';
const DEFAULT_CONTEXT_WINDOW = 200_000;

/** status.agent (typed in api/session.ts; the old name kept for existing importers). */
export type AgentStatus = SessionAgentStatus;

export interface FoldInput {
  /** The status being planned: conditions and context are set on it. */
  status: AgentSessionStatus;
  prev: AgentStatus | undefined;
  facts: AgentFacts;
  agent?: AgentSpec;
  policy?: SessionPolicy;
  generation?: number;
  now: number;
  /** The task prompt is not confirmed yet (agent-state.ts: UnrecognisedScreen). */
  promptPending?: boolean;
}

export interface FoldResult {
  agent: AgentStatus;
  /** A dialog to answer automatically (the Agent opted in): its name and keys. */
  autoAnswer?: { dialog: string; keys: string[] };
  /** The reportEvery (10) % context-window steps crossed in this pass, each one (`step`: the highest). */
  contextStep?: { percent: number; step: number; steps: number[]; used: number; window: number };
  /** Conditions of {@link EVENT_ON_TRUE} that turned True in this pass (from False or absent): one Event each. */
  raised: { type: EventType; reason: string; message: string }[];
  /** Look again in this many ms (an unknown screen that may turn into UnrecognisedScreen). */
  recheckInMs?: number;
}

/**
 * The agent conditions whose turning True is an Event, and its type: notifications route Events,
 * never conditions, so a condition without its Event could never reach a person.
 */
export const EVENT_ON_TRUE: Readonly<Record<string, EventType>> = {
  WaitingForInput: 'Normal',
  Stalled: 'Warning',
  QuotaExhausted: 'Warning',
};

/** How the Agent's driver writes a limit into its transcript (agents/driver.ts). */
const limitNotice = (agent: AgentSpec | undefined) => driverFor(agent).transcript?.limitNotice;

/** Whether this run's fold continues from `prev` (same run, a committed position). */
const continues = (prev: AgentStatus | undefined, run: number): boolean =>
  !!(prev && prev.run === run && prev.position);

/** The observation a run's events continue from: the previous status of the same run, else a new one. */
function baseOf(prev: AgentStatus | undefined, run: number): AgentObservation {
  return continues(prev, run) ? prev! : newObservation(run, prev?.position ?? LOG_START);
}

/**
 * status.usage after the events the agent fold consumes: continued only when that fold continues
 * from the committed position the sums were written with, so no event counts twice.
 */
export function foldRunUsage(
  prev: AgentStatus | undefined,
  usage: UsageStatus | undefined,
  run: number,
  events: AgentEvent[],
  agent: AgentSpec | undefined,
): UsageStatus {
  // The ledger of earlier runs goes on; the same run's is only continued with its sums (counted once).
  const carry = usage && usage.run !== run ? usage.hourly : undefined;
  return foldUsage(continues(prev, run) ? usage : undefined, run, events, agent?.pricing, carry);
}

export function foldAgent(i: FoldInput): FoldResult {
  const s = i.status;
  const run = s.run ?? 0;
  const { screen, screenChangedAt } = i.facts;
  const obs = foldEvents(baseOf(i.prev, run), i.facts.events, i.facts.next, limitNotice(i.agent));
  s.usage = foldRunUsage(i.prev, s.usage, run, i.facts.events, i.agent);
  const detector = (i.policy?.spec as { detector?: { stalledAfter?: string } } | undefined)?.detector;
  const stalledAfterMs = parseDuration(detector?.stalledAfter ?? DEFAULT_STALLED_AFTER);
  const startedAt = Date.parse(s.startTime ?? '') || i.now;
  const st = agentState({
    obs,
    screen,
    now: i.now,
    stalledAfterMs,
    screenChangedAt,
    startedAt,
    generation: i.generation,
    promptPending: i.promptPending,
  });
  // Compared with the status as stored (or built so far in this pass): a transition, not a level.
  const wasTrue = new Set(s.conditions!.filter((c) => c.status === 'True').map((c) => c.type));
  for (const c of st.conditions) setCondition(s.conditions!, c);
  const raised = st.conditions
    .filter((c) => c.status === 'True' && EVENT_ON_TRUE[c.type] && !wasTrue.has(c.type))
    .map((c) => ({
      type: EVENT_ON_TRUE[c.type],
      reason: c.type,
      // Stalled's condition counts the seconds; its Event says the threshold, so one recorded again
      // after a crash is the same Event (a count bump), not a second one.
      message:
        c.type === 'Stalled'
          ? `busy with no new events${obs.hooks ? '' : ' or screen change'} for over ${formatDuration(stalledAfterMs)}`
          : (c.message ?? ''),
    }));
  // The fold starts from the previous status of the same run, so sessionId, transcript and
  // autoAnswered carry over with it.
  const out: AgentStatus = { ...obs, state: st.state, source: st.source };
  const result: FoldResult = {
    agent: out,
    raised,
    ...(st.recheckInMs !== undefined ? { recheckInMs: st.recheckInMs } : {}),
  };
  const profile = profileFor(i.agent);

  // Startup dialogs the Agent opted in to answer: once per appearance.
  if (st.state === 'dialog' && screen?.dialog && i.agent?.autoAnswer?.includes(screen.dialog)) {
    const keys = profile?.dialogs.find((d) => d.name === screen.dialog)?.answerKeys;
    if (keys?.length && out.autoAnswered?.dialog !== screen.dialog) result.autoAnswer = { dialog: screen.dialog, keys };
  } else if (
    st.state === 'waiting' &&
    i.agent?.autoAnswer?.includes('permission') &&
    profile?.approveKeys.length &&
    out.autoAnswered?.at !== obs.permission?.since
  ) {
    result.autoAnswer = { dialog: 'permission', keys: profile.approveKeys };
  }
  // Gone: a later appearance may be answered again.
  if (st.state !== 'dialog' && out.autoAnswered && out.autoAnswered.dialog !== 'permission') delete out.autoAnswered;

  // Context window (seed 003): status and an event at every reportEvery (10) % step. The
  // statusline's figure, once seen in the run, wins (context.ts); the rest of status.context stays.
  const ctx = s.context?.run === run ? s.context : undefined;
  if (obs.contextTokens !== undefined && ctx?.source !== 'statusline') {
    const window = profile?.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW;
    const lastStep = ctx?.lastStep;
    const every = i.policy?.spec?.context?.reportEvery;
    const step = contextStep(obs.contextTokens, window, lastStep, every);
    const percent = Math.round((obs.contextTokens / window) * 1000) / 10;
    s.context = {
      ...ctx,
      run,
      usedTokens: obs.contextTokens,
      windowTokens: window,
      percent,
      lastStep: step?.step ?? lastStep ?? 0,
      source: 'transcript',
    };
    if (step) result.contextStep = { ...step, used: obs.contextTokens, window };
  }
  return result;
}

/** After the run ended: its last events folded in; the agent has exited. */
export function settleObservation(
  prev: AgentStatus,
  run: number,
  events: AgentEvent[],
  next: LogPosition,
  agent?: AgentSpec,
): AgentStatus {
  const obs = foldEvents(baseOf(prev, run), events, next, limitNotice(agent));
  return { ...prev, ...obs, state: 'exited', source: obs.ended ? 'hook' : 'process' };
}
