/**
 * Verified delivery of text (and answer keys) into a live agent pane — the path the task prompt,
 * `orchctl send` and the circuit breaker's interventions all take. "Pasted" is not "delivered":
 * the #1 failure across peer tools is a prompt pasted whose Enter was swallowed. So, per pane and
 * serialised (a lock file in the run's workspace, shared by the controller and the CLI):
 *   wait until the agent's input is ready → leave copy mode → clear the input line → paste through
 *   a uniquely named tmux buffer (bracketed paste) → wait → send the submit keys → confirm the
 *   agent took it (the UserPromptSubmit hook fired, the transcript gained a user line, or the agent's
 *   own prompt records gained this text; for agents with none of these, the screen moved) → if not,
 *   press submit again with backoff.
 */
import fs from 'node:fs';
import stripAnsi from 'strip-ansi';
import type { DeliveryResult } from '../api/session.js';
import path from 'node:path';
import { readLines } from '../observers/agent-feed.js';
import { processAlive } from '../observers/process.js';
import type { Tmux } from '../observers/tmux.js';
import type { PromptRecords } from './driver.js';
import { HOOKS_FILE } from './hook-entry.js';
import { recordTyped } from './typed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a delivery came to (typed in api/: it is recorded in status.promptDelivery). */
export type { DeliveryResult } from '../api/session.js';

export interface PaneTarget {
  tmux: Tmux;
  /** tmux target of the pane (pane id or `=session:`). */
  target: string;
  /** The run's workspace: the lock and the hook file live there. */
  workspace: string;
  /** The agent's transcript, when it has one. */
  transcript?: string;
  /** Whether the agent reports through hooks (then only hooks/transcript confirm, never the screen). */
  hooks: boolean;
  /** Where the agent records the prompts it accepted (then those records confirm, never the screen). */
  records?: PromptRecords;
}

export interface TextDelivery {
  text: string;
  bufferName: string;
  submitKeys: string[];
  /** The agent's input is ready for a paste (from its detection patterns); absent → the pane must settle. */
  ready?: (screen: string) => boolean;
  readyTimeoutMs: number;
  /** How long each confirmation window lasts before submit is pressed again. */
  confirmWindowMs?: number;
  /** Retry delays (backoff) before each extra submit press. */
  backoffMs?: number[];
  /** Keys that clear the input line first. */
  clearKeys?: string[];
}

export interface KeyDelivery {
  keys: string[];
  /** The prompt being answered is still on screen. */
  stillWaiting: (screen: string) => boolean;
  /** Do not press before this (epoch ms): prompts ignore keys in their first moments. */
  notBefore?: number;
}

// ---- serialisation ---------------------------------------------------------------------------

/** Holds `<workspace>/delivery.lock` while `fn` runs; a lock whose holder died is taken over. */
export async function withPaneLock<T>(workspace: string, fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const lock = path.join(workspace, 'delivery.lock');
  const start = Date.now();
  for (;;) {
    try {
      const fd = fs.openSync(lock, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(fs.readFileSync(lock, 'utf8'));
      } catch {
        continue; // released between our attempts
      }
      if (Number.isFinite(holder) && holder > 0 && !processAlive(holder)) {
        fs.rmSync(lock, { force: true }); // its holder died mid-delivery
        continue;
      }
      if (Date.now() - start > timeoutMs)
        throw new Error(
          `another delivery into this pane (pid ${holder}) has held ${lock} for over ${Math.round(timeoutMs / 1000)}s`,
        );
      await sleep(50);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

// ---- confirmation sources -------------------------------------------------------------------

const sizeOf = (f?: string) => {
  if (!f) return 0;
  try {
    return fs.statSync(f).size;
  } catch {
    return 0;
  }
};

/** Whole lines written to `file` after `from` (what the agent reported since the baseline). */
const linesAfter = (file: string | undefined, from: number): string[] =>
  file ? (readLines(file, from)?.lines ?? []) : [];

interface Baseline {
  hooks: number;
  transcript: number;
  /** Size of each prompt-record file before the paste (a file created later starts at 0). */
  records: Map<string, number>;
}

function baseline(t: PaneTarget): Baseline {
  return {
    hooks: sizeOf(path.join(t.workspace, HOOKS_FILE)),
    transcript: sizeOf(t.transcript),
    records: new Map((t.records?.files() ?? []).map((f) => [f, sizeOf(f)])),
  };
}

/** Whitespace-insensitive form, for matching a pasted text against the agent's record of it. */
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The agent's own records gained `text` as a submitted prompt after the baseline. */
function recorded(t: PaneTarget, b: Baseline, text: string | undefined): boolean {
  if (!t.records || text === undefined) return false;
  const want = squash(text);
  for (const file of t.records.files()) {
    for (const line of linesAfter(file, b.records.get(file) ?? 0)) {
      try {
        const o = JSON.parse(line) as unknown;
        if (o && typeof o === 'object' && t.records.texts(o as Record<string, unknown>).some((x) => squash(x) === want))
          return true;
      } catch {
        /* a line being written */
      }
    }
  }
  return false;
}

/** A prompt submission the agent itself reported after the baseline (`text`: the prompt pasted). */
function submitted(t: PaneTarget, b: Baseline, text?: string): 'hook' | 'transcript' | undefined {
  if (recorded(t, b, text)) return 'transcript';
  if (
    linesAfter(path.join(t.workspace, HOOKS_FILE), b.hooks).some((l) =>
      l.includes('"hook_event_name":"UserPromptSubmit"'),
    )
  )
    return 'hook';
  for (const line of linesAfter(t.transcript, b.transcript)) {
    if (!line.includes('"type":"user"')) continue;
    try {
      const o = JSON.parse(line) as { type?: string; message?: { content?: unknown }; isMeta?: boolean };
      if (o.type === 'user' && typeof o.message?.content === 'string' && !o.isMeta) return 'transcript';
    } catch {
      /* a line being written */
    }
  }
  return undefined;
}

/** Hooks that mean a permission prompt was answered. */
function answered(t: PaneTarget, b: Baseline): boolean {
  return linesAfter(path.join(t.workspace, HOOKS_FILE), b.hooks).some((l) =>
    /"hook_event_name":"(PostToolUse|PostToolUseFailure|Stop|StopFailure|PreToolUse|PermissionRequest)"/.test(l),
  );
}

// ---- the deliveries --------------------------------------------------------------------------

/**
 * Polls the pane until `ready` holds on a screen that stayed the same for 300 ms (or, without
 * `ready`, until it settles).
 */
export async function waitReady(
  t: PaneTarget,
  ready: ((s: string) => boolean) | undefined,
  timeoutMs: number,
): Promise<boolean> {
  const start = Date.now();
  let last = '';
  let since = start;
  while (Date.now() - start < timeoutMs) {
    const screen = (await t.tmux.capture(t.target, 60)).trimEnd();
    const now = Date.now();
    if (screen !== last) {
      last = screen;
      since = now;
    } else if (
      ready ? ready(screen) && now - since >= 300 : (screen && now - since >= 300) || (!screen && now - start >= 1500)
    )
      return true;
    await sleep(100);
  }
  return false;
}

/**
 * Text to be pasted, made safe to paste: terminal escape sequences and control characters other
 * than newline and tab are removed (a CR becomes a newline). A raw \x03 in a prompt would reach
 * the agent as C-c — an interrupt, not text; keys are sent with `orchctl send --keys`, never
 * smuggled in a prompt. Returns how many characters went and where the first one was.
 */
export function sanitizePaste(text: string): { text: string; removed: number; firstAt?: number } {
  const unsafe = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]/;
  const first = text.search(unsafe);
  if (first < 0 && !text.includes('\r')) return { text, removed: 0 };
  const noEscapes = text.includes('\x1b') || text.includes('\x9b') ? stripAnsi(text) : text;
  const normalised = noEscapes.replace(/\r\n?/g, '\n');
  const out = normalised.replace(new RegExp(unsafe.source, 'g'), '');
  const removed = text.length - noEscapes.length + (normalised.length - out.length);
  return { text: out, removed, ...(first >= 0 ? { firstAt: first } : {}) };
}

export async function deliverText(t: PaneTarget, d: TextDelivery): Promise<DeliveryResult> {
  // The wait for readiness holds no lock: an answer to a startup dialog (auto or `orchctl send
  // --keys`) must be able to go in while a prompt waits for the input box.
  let ready = await waitReady(t, d.ready, d.readyTimeoutMs);
  return withPaneLock(t.workspace, async () => {
    if (ready) ready = await waitReady(t, d.ready, 3000); // still ready now that we hold the pane
    if (await t.tmux.inMode(t.target))
      await t.tmux.run(['send-keys', '-t', t.target, '-X', 'cancel'], { reject: false });
    await t.tmux.sendKeys(t.target, d.clearKeys ?? ['C-u']);
    // Before the paste: the screen may echo it at once, and its echo is never the agent's own output.
    recordTyped(t.workspace, d.text);
    const b = baseline(t);
    // Without its final newline: the submit keys, not the paste, submit the text.
    const pasted = sanitizePaste(d.text).text.replace(/\n+$/, '');
    await t.tmux.pasteText(t.target, pasted, d.bufferName);
    await sleep(200); // let the program take the paste before the submit key arrives
    const afterPaste = await t.tmux.capture(t.target, 60);
    const backoff = d.backoffMs ?? [300, 600, 1200];
    const window = d.confirmWindowMs ?? 1500;
    for (let attempt = 0; attempt <= backoff.length; attempt++) {
      if (attempt > 0) await sleep(backoff[attempt - 1]);
      await t.tmux.sendKeys(t.target, d.submitKeys);
      const deadline = Date.now() + window;
      while (Date.now() < deadline) {
        await sleep(100);
        const by =
          submitted(t, b, pasted) ??
          (!t.hooks && !t.transcript && !t.records && (await t.tmux.capture(t.target, 60)) !== afterPaste
            ? 'screen'
            : undefined);
        if (by) {
          const how =
            by === 'hook'
              ? 'the UserPromptSubmit hook fired'
              : by === 'transcript'
                ? t.records
                  ? "the agent's own records gained the prompt"
                  : 'the transcript gained the user message'
                : 'the screen moved';
          return {
            delivered: true,
            reason: 'Confirmed',
            message:
              `submitted and confirmed: ${how}` +
              `${attempt ? ` after ${attempt} extra submit press${attempt === 1 ? '' : 'es'}` : ''}` +
              `${ready ? '' : ' (the input never looked ready; pasted after the ready timeout)'}`,
            retries: attempt,
            confirmedBy: by,
          };
        }
      }
    }
    return {
      delivered: false,
      reason: 'Unconfirmed',
      message:
        `pasted and pressed ${d.submitKeys.join(' ')} ${backoff.length + 1} times, but the agent never confirmed ` +
        `the prompt (no UserPromptSubmit hook, no transcript line${t.records ? ', not in its own records' : ''}` +
        `${t.hooks || t.records ? '' : ', no screen change'})`,
      retries: backoff.length,
    };
  });
}

/**
 * Sends answer keys (approve/deny a prompt) and confirms the prompt went away; one retry. The
 * keys wait until the prompt is on screen and has stood for 300 ms: a hook can announce it up to
 * half a second before it is drawn, and Claude Code drops keys in a dialog's first moments.
 */
/** How long a key press has to be seen answered (the prompt gone, or the agent's hook) before one retry. */
const KEY_CONFIRM_MS = 3000;

export async function deliverKeys(t: PaneTarget, d: KeyDelivery): Promise<DeliveryResult> {
  return withPaneLock(t.workspace, async () => {
    if (d.notBefore && Date.now() < d.notBefore) await sleep(d.notBefore - Date.now());
    const start = Date.now();
    let shownSince = 0;
    let shown = false;
    while (Date.now() - start < 5000) {
      if (d.stillWaiting(await t.tmux.capture(t.target, 60))) {
        shownSince ||= Date.now();
        if (Date.now() - shownSince >= 300) {
          shown = true;
          break;
        }
      } else shownSince = 0;
      await sleep(50);
    }
    const b = baseline(t);
    for (let attempt = 0; attempt < 2; attempt++) {
      await t.tmux.sendKeys(t.target, d.keys);
      // 3 s before a second press: a Node TUI (Gemini CLI) on a loaded host took over 1.5 s to redraw, and a
      // press too early is reported unconfirmed (or, worse, lands on whatever the screen shows next).
      const deadline = Date.now() + KEY_CONFIRM_MS;
      while (Date.now() < deadline) {
        await sleep(100);
        const byHook = answered(t, b);
        if (byHook || (shown && !d.stillWaiting(await t.tmux.capture(t.target, 60))))
          return {
            delivered: true,
            reason: 'Answered',
            message: `sent ${d.keys.join(' ')}; the prompt went away`,
            retries: attempt,
            confirmedBy: byHook ? 'hook' : 'screen',
          };
      }
      if (!shown) break; // nothing on screen to tell by: one press, unconfirmed
    }
    return shown
      ? {
          delivered: false,
          reason: 'Unconfirmed',
          message: `sent ${d.keys.join(' ')} twice but the prompt is still on screen`,
          retries: 1,
        }
      : {
          delivered: false,
          reason: 'Unconfirmed',
          message: `sent ${d.keys.join(' ')}, but no prompt was seen on screen and the agent reported no answer`,
          retries: 0,
        };
  });
}
