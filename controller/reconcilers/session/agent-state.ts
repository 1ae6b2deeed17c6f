/**
 * The agent's state, from several sources (pure: events and a screen reading in, status out).
 *
 * Sources in order of trust: the agent's hooks (Claude Code reports prompts, tool calls,
 * permission requests, turn ends and its own exit), the transcript (messages, tool results,
 * interrupt markers, token usage), and the pane's text classified by the Agent's detection
 * patterns — the only source for agents without hooks, and the cross-check for the cases hooks
 * miss: startup dialogs come before any hook, and Esc (deny, interrupt) fires none.
 *
 * The events are folded into {@link AgentObservation} as a consumer of the session's event log;
 * its position is committed in the same status write, so each event counts exactly once.
 */
import type { ConditionInput } from '../../api/conditions.js';
import type { AgentActivity, AgentObservation } from '../../api/session.js';
import type { LimitNotice } from '../../agents/driver.js';
import type { AgentEvent, LogPosition } from '../../store/eventlog.js';
import { parseResetTime } from './reset-time.js';

// status.agent's types live in api/ (the CLI and metrics read them too).
export type { AgentActivity, AgentObservation } from '../../api/session.js';

/** What the pane shows now (the fields of the detection module's ScreenClass this needs). */
export interface ScreenReading {
  state: string; // idle | busy | waiting | dialog | unknown
  dialog?: string;
  prompt?: string;
  quotaExhausted?: boolean;
  /** The lines the limit notice was found in (they may say when it resets). */
  quotaText?: string;
  interrupted?: boolean;
  /** The input box is drawn and empty. */
  inputReady?: boolean;
  /** Epoch ms of the capture. */
  at: number;
}

export const newObservation = (run: number, position: LogPosition): AgentObservation => ({
  run,
  position,
  counts: {},
  hooks: false,
  turns: 0,
});

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** status.agent.quota from the limit's text: when it resets, if the text says (reset-time.ts). */
function quotaOf(text: string, ts: string, notice: LimitNotice | undefined): NonNullable<AgentObservation['quota']> {
  const resets = parseResetTime(text, Date.parse(ts), undefined, notice?.resetEpoch);
  return { since: ts, message: clip(text), ...(resets ? { resetsAt: new Date(resets).toISOString() } : {}) };
}

/**
 * Folds events (already in log order) into the observation. Events of other runs only move the
 * position. `notice`: how the agent's driver writes a limit into its transcript (agents/driver.ts).
 */
export function foldEvents(
  prev: AgentObservation,
  events: AgentEvent[],
  next: LogPosition,
  notice?: LimitNotice,
): AgentObservation {
  const o: AgentObservation = structuredClone(prev);
  for (const e of events) {
    if (e.run !== o.run) continue;
    o.counts[e.type] = (o.counts[e.type] ?? 0) + 1;
    o.lastEventAt = e.ts;
    switch (e.type) {
      case 'hook':
        foldHook(o, e.hook, e.payload, e.ts, notice);
        break;
      case 'user_message':
        if (e.interrupt) {
          o.interrupted = { since: e.ts };
          delete o.permission;
          o.reported = { state: 'idle', since: e.ts, detail: 'interrupted' };
        } else {
          delete o.interrupted;
          delete o.quota;
        }
        break;
      case 'assistant_message':
        o.lastAssistantMessage = clip(e.text, 2000);
        if (e.usage)
          o.contextTokens =
            e.usage.inputTokens +
            (e.usage.cacheReadTokens ?? 0) +
            (e.usage.cacheCreationTokens ?? 0) +
            e.usage.outputTokens;
        if (notice?.message.test(e.text)) o.quota = quotaOf(e.text, e.ts, notice);
        break;
      case 'tool_result':
        if (o.permission) delete o.permission; // answered: the tool ran (or failed)
        break;
      default:
        break;
    }
  }
  o.position = next;
  return o;
}

function foldHook(
  o: AgentObservation,
  hook: string,
  p: Record<string, unknown>,
  ts: string,
  notice: LimitNotice | undefined,
): void {
  o.hooks = true;
  switch (hook) {
    case 'SessionStart':
      o.reported = { state: 'idle', since: ts, detail: 'started' };
      break;
    case 'UserPromptSubmit':
      delete o.interrupted;
      delete o.quota;
      o.reported = { state: 'busy', since: ts, detail: 'prompt' };
      break;
    case 'PreToolUse':
    case 'PostToolUse':
    case 'PostToolUseFailure':
      delete o.permission;
      o.reported = { state: 'busy', since: ts, detail: str(p.tool_name) };
      break;
    case 'PermissionRequest': {
      const input = (p.tool_input ?? {}) as Record<string, unknown>;
      o.permission = {
        tool: str(p.tool_name) ?? 'a tool',
        command: str(input.command) ?? str(input.file_path),
        since: ts,
      };
      o.reported = { state: 'waiting', since: ts, detail: 'permission' };
      break;
    }
    case 'Notification':
      if (p.notification_type === 'permission_prompt' || p.notification_type === 'elicitation_dialog')
        o.reported = { state: 'waiting', since: o.permission?.since ?? ts, detail: str(p.notification_type) };
      break;
    case 'Stop':
      o.turns++;
      delete o.permission;
      if (typeof p.last_assistant_message === 'string') o.lastAssistantMessage = clip(p.last_assistant_message, 2000);
      o.reported = { state: 'idle', since: ts, detail: 'turn-done' };
      break;
    case 'StopFailure': {
      delete o.permission;
      const err = str(p.error) ?? 'error';
      if (/rate.?limit|quota|usage|overloaded/i.test(err))
        o.quota = quotaOf(str(p.last_assistant_message) ?? err, ts, notice);
      o.reported = { state: 'idle', since: ts, detail: `failed:${err}` };
      break;
    }
    case 'SessionEnd':
      // /clear ends the conversation, not the process: Claude Code goes on (SessionStart clear).
      if (p.reason === 'clear') break;
      o.ended = { reason: str(p.reason) ?? 'unknown', at: ts };
      o.reported = { state: 'exited', since: ts, detail: str(p.reason) };
      break;
  }
}

export interface StateInputs {
  obs: AgentObservation;
  screen?: ScreenReading;
  now: number;
  /** Busy with no progress for this long → Stalled. */
  stalledAfterMs: number;
  /** Last time the pane's text changed (agents without hooks make progress only there). */
  screenChangedAt?: number;
  /** The run's start (no progress yet counts from here). */
  startedAt: number;
  generation?: number;
  /** The task prompt is not confirmed yet (PromptDelivered not True): an unknown screen may be what holds it. */
  promptPending?: boolean;
}

export interface AgentStateResult {
  state: AgentActivity;
  /** Why (source and detail), for status.agent. */
  source: 'hook' | 'pane' | 'none';
  conditions: ConditionInput[];
  waiting?: { reason: string; message: string };
  /** An unknown screen that becomes UnrecognisedScreen if it stands this much longer (ms). */
  recheckInMs?: number;
}

/** A hook-reported wait the screen contradicts for this long is over (Esc fires no hook). */
export const SCREEN_OVERRIDES_AFTER_MS = 1500;

/**
 * How long a screen no pattern recognises must stand, while the prompt is unconfirmed, before it
 * is a wait for a person: an agent draws a frame or two (a bare header) on its way to the input box.
 */
export const UNRECOGNISED_AFTER_MS = 3000;

/** The conditions the observation and the screen imply now. Level-triggered: same inputs, same answer. */
export function agentState(i: StateInputs): AgentStateResult {
  const { obs, screen, now } = i;
  let state: AgentActivity = 'starting';
  let source: AgentStateResult['source'] = 'none';
  let waiting: AgentStateResult['waiting'];
  let recheckInMs: number | undefined;
  const screenState = screen?.state;
  // Unknown since (the screen's last change): a screen the patterns do not know, before the prompt
  // got in, may be a dialog of a newer CLI holding it — a hook's "idle" cannot tell.
  const unknownFor = screen && screenState === 'unknown' ? now - (i.screenChangedAt ?? screen.at) : -1;
  const unrecognised = !obs.ended && !!i.promptPending && unknownFor >= UNRECOGNISED_AFTER_MS;
  if (!obs.ended && i.promptPending && unknownFor >= 0 && !unrecognised)
    recheckInMs = UNRECOGNISED_AFTER_MS - unknownFor;

  if (obs.ended) {
    state = 'exited';
    source = 'hook';
  } else if (screenState === 'dialog') {
    // Startup dialogs come before any hook; a dialog on screen wins over everything reported.
    state = 'dialog';
    source = 'pane';
    const name = screen!.dialog ?? 'dialog';
    waiting = {
      reason: 'StartupDialog',
      message: `startup dialog ${name}${screen!.prompt ? `: ${clip(screen!.prompt, 900)}` : ''}`,
    };
  } else if (unrecognised) {
    state = 'waiting';
    source = 'pane';
    waiting = {
      reason: 'UnrecognisedScreen',
      message:
        "the prompt is not confirmed and the screen matches none of the Agent's detection patterns" +
        `${screen!.prompt ? `: ${clip(screen!.prompt, 900)}` : ''}`,
    };
  } else if (obs.hooks && obs.reported) {
    state = obs.reported.state;
    source = 'hook';
    const since = Date.parse(obs.reported.since);
    // The screen was read well after the hook and shows no prompt: answered or Esc'd without a hook.
    if (
      state === 'waiting' &&
      screen &&
      screenState !== 'waiting' &&
      screenState !== 'unknown' &&
      screen.at - since >= SCREEN_OVERRIDES_AFTER_MS
    ) {
      state = screenState === 'busy' ? 'busy' : 'idle';
      source = 'pane';
    }
    if (state === 'waiting') {
      const p = obs.permission;
      const what = p ? `${p.tool}${p.command ? `: ${clip(p.command, 400)}` : ''}` : 'permission';
      waiting = {
        reason: 'PermissionPrompt',
        message:
          `asks permission to run ${what}` +
          `${screen?.state === 'waiting' && screen.prompt ? ` — ${clip(screen.prompt, 600)}` : ''}`,
      };
    }
  } else if (screen && screenState !== 'unknown') {
    state = screenState as AgentActivity;
    source = 'pane';
    if (state === 'waiting')
      waiting = {
        reason: 'Question',
        message: screen.prompt ? clip(screen.prompt, 900) : 'the agent waits for an answer',
      };
  }

  const gen = i.generation;
  const cond = (type: string, status: 'True' | 'False', reason: string, message = ''): ConditionInput => ({
    type,
    status,
    reason,
    message,
    observedGeneration: gen,
  });
  const conditions: ConditionInput[] = [];
  conditions.push(
    state === 'busy'
      ? cond(
          'AgentBusy',
          'True',
          'Working',
          source === 'hook'
            ? `reported by the agent (${obs.reported?.detail ?? 'busy'})`
            : 'the screen shows the agent working',
        )
      : cond('AgentBusy', 'False', reasonFor(state), ''),
  );
  conditions.push(
    waiting
      ? cond('WaitingForInput', 'True', waiting.reason, waiting.message)
      : cond('WaitingForInput', 'False', 'NotWaiting'),
  );

  // Progress: any event, or (agents without hooks) the screen changing.
  const lastProgress = Math.max(
    i.startedAt,
    obs.lastEventAt ? Date.parse(obs.lastEventAt) : 0,
    obs.hooks ? 0 : (i.screenChangedAt ?? 0),
  );
  const idleFor = now - lastProgress;
  if (state === 'busy' && idleFor >= i.stalledAfterMs)
    conditions.push(
      cond(
        'Stalled',
        'True',
        'NoProgress',
        `busy with no new events${obs.hooks ? '' : ' or screen change'} for ${Math.round(idleFor / 1000)}s`,
      ),
    );
  else conditions.push(cond('Stalled', 'False', 'Progressing'));

  if (obs.quota) conditions.push(cond('QuotaExhausted', 'True', 'RateLimited', obs.quota.message));
  else if (screen?.quotaExhausted && state !== 'busy')
    conditions.push(
      cond(
        'QuotaExhausted',
        'True',
        'LimitOnScreen',
        screen.prompt ? clip(screen.prompt) : 'the screen shows a usage limit',
      ),
    );
  else conditions.push(cond('QuotaExhausted', 'False', 'NoLimit'));

  if (obs.interrupted || (screen?.interrupted && state === 'idle' && !obs.hooks))
    conditions.push(
      cond('Interrupted', 'True', 'InterruptedByUser', 'the agent was interrupted and waits for instructions'),
    );
  else conditions.push(cond('Interrupted', 'False', 'NotInterrupted'));
  return { state, source, conditions, waiting, ...(recheckInMs !== undefined ? { recheckInMs } : {}) };
}

function reasonFor(state: AgentActivity): string {
  switch (state) {
    case 'idle':
      return 'Idle';
    case 'waiting':
    case 'dialog':
      return 'WaitingForInput';
    case 'exited':
      return 'Exited';
    default:
      return 'Starting';
  }
}

/**
 * Context-window steps crossed (multiples of `every` %, the policy's reportEvery) since
 * `lastStep`: every one of them, in order (seed 003 reports each 10 % step, so a reading that
 * jumps from 23 % to 56 % crossed 30, 40 and 50), with `step` the highest; undefined when none.
 * `exact`: the percent as the agent reported it (its statusline).
 */
export function contextStep(
  usedTokens: number,
  windowTokens: number,
  lastStep: number | undefined,
  every = 10,
  exact?: number,
): { percent: number; step: number; steps: number[] } | undefined {
  if (windowTokens <= 0 || every <= 0) return undefined;
  const percent = exact ?? Math.round((usedTokens / windowTokens) * 1000) / 10;
  const step = Math.min(100, Math.floor(percent / every) * every);
  const from = lastStep ?? 0;
  if (step <= from || step < every) return undefined;
  const steps: number[] = [];
  // From the first multiple above the last step reported (bounded: at most 100 / every steps).
  for (let k = (Math.floor(from / every) + 1) * every; k <= step; k += every) steps.push(k);
  return { percent, step, steps };
}

/** The ContextWindow Event's text for one step crossed (the figure is the reading that crossed it). */
export const contextStepMessage = (step: number, percent: number, used: number, window: number): string =>
  `context window ${step}% used (${percent === step ? '' : `now ${percent}%: `}${used} of ${window} tokens)`;
