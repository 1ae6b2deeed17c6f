/**
 * What the console's buttons do: each the same operation as its CLI command, through the same
 * shared function in client/ (send, approve/reject, restart, freeze/thaw), and each written to the
 * audit log ($ORCHCTL_HOME/audit.log) with who (the token's name) and from where.
 */
import { SendError } from '../agents/send.js';
import { isApiError } from '../api/errors.js';
import type { AuditLog } from '../observers/audit.js';
import type { Tmux } from '../observers/tmux.js';
import type { Store } from '../store/store.js';
import { answerDecision, VERB, type Verdict } from '../client/decision-answer.js';
import { setDesiredState } from '../client/desired-state.js';
import { EventRecorder } from '../client/events.js';
import { type FreezeOptions, freezeTargets, mark } from '../client/freeze.js';
import { resumePipeline } from '../client/pipeline-resume.js';
import { restartSession } from '../client/restart.js';
import { sendAsPerson } from '../client/send.js';
import { buildSilence, createSilence, expireSilence } from '../client/silence.js';
import { registry } from '../config/crds.js';
import type { Outcome } from '../client/update.js';

export const COMPONENT = 'orchctl-console';
/** Longest text the Send box takes (a task's prompt is bounded alike). */
export const MAX_SEND_CHARS = 64 * 1024;
/** Longest reason or freeze message kept. */
export const MAX_REASON_CHARS = 1000;

export interface Actor {
  store: Store;
  tmux: Tmux;
  audit: AuditLog;
  /** The token's name. */
  who: string;
  /** The client's address. */
  address: string;
}

export interface ActionResult {
  ok: boolean;
  message: string;
}

type Key = { namespace: string; name: string };

function record(a: Actor, kind: string, key: Key, action: string, r: ActionResult): ActionResult {
  a.audit.write({
    kind,
    namespace: key.namespace,
    name: key.name,
    to: action,
    reason: r.ok ? 'ConsoleAction' : 'ConsoleActionFailed',
    message: r.message,
    by: a.who,
    address: a.address,
  });
  return r;
}

function outcome<T>(o: Outcome<T>, what: string, done: string): ActionResult {
  if (o.outcome === 'written') return { ok: true, message: `${what} ${done}` };
  if (o.outcome === 'unchanged') return { ok: true, message: `${what} unchanged (${o.why})` };
  if (o.outcome === 'missing') return { ok: false, message: `${what} not found` };
  return { ok: false, message: o.why };
}

/** Errors a person can act on become the result; anything else (the store down) is thrown. */
async function guarded(f: () => Promise<ActionResult>): Promise<ActionResult> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof SendError || isApiError(e)) return { ok: false, message: (e as Error).message };
    throw e;
  }
}

export type SendMode = { text: string } | { approve: true } | { deny: true };

export async function sendAction(a: Actor, key: Key, mode: SendMode): Promise<ActionResult> {
  if ('text' in mode && !mode.text.trim()) return { ok: false, message: 'nothing to send: the text is empty' };
  if ('text' in mode && mode.text.length > MAX_SEND_CHARS)
    return { ok: false, message: `the text is ${mode.text.length} characters, over ${MAX_SEND_CHARS}` };
  const what = 'text' in mode ? 'send' : 'approve' in mode ? 'approve' : 'deny';
  const r = await guarded(async () => {
    const d = await sendAsPerson(a.store, a.tmux, key, mode, COMPONENT, `console (${a.who})`);
    return { ok: d.delivered, message: `${d.delivered ? 'delivered' : 'NOT CONFIRMED'}: ${d.message}` };
  });
  return record(a, 'AgentSession', key, what, r);
}

export async function restartAction(a: Actor, key: Key): Promise<ActionResult> {
  const r = await guarded(async () =>
    outcome(await restartSession(a.store, key), `agentsession.orchctl.io/${key.name}`, 'restarted'),
  );
  return record(a, 'AgentSession', key, 'restart', r);
}

export async function desiredAction(a: Actor, key: Key, desired: 'Running' | 'Stopped'): Promise<ActionResult> {
  const verb = desired === 'Stopped' ? 'stop' : 'start';
  const r = await guarded(async () =>
    outcome(await setDesiredState(a.store, key, desired), `agentsession.orchctl.io/${key.name}`, `${verb} requested`),
  );
  return record(a, 'AgentSession', key, verb, r);
}

export async function verdictAction(a: Actor, key: Key, verdict: Verdict, reason: string): Promise<ActionResult> {
  const msg = reason.trim().slice(0, MAX_REASON_CHARS) || undefined;
  const by = `${a.who} (console)`;
  const r = await guarded(async () =>
    outcome(await answerDecision(a.store, key, verdict, by, msg), `decision.orchctl.io/${key.name}`, VERB[verdict]),
  );
  return record(a, 'Decision', key, verdict === 'Approved' ? 'approve' : 'reject', r);
}

/** Freezes or thaws projects (with their sessions), a label selection of sessions, or everything of a namespace. */
export async function freezeAction(
  a: Actor,
  verb: 'freeze' | 'thaw',
  namespace: string,
  projects: string[],
  o: FreezeOptions,
): Promise<ActionResult> {
  const r = await guarded(async () => {
    const list = await freezeTargets(a.store, namespace, projects, o, verb);
    if (!list.length) return { ok: true, message: 'nothing matched: no resources found' };
    const why = o.message ? `: ${o.message.replace(/\s+/g, ' ').slice(0, 300)}` : '';
    const value = verb === 'freeze' ? `${new Date().toISOString()} by ${a.who} (console)${why}` : undefined;
    const recorder = new EventRecorder(a.store, COMPONENT);
    let changed = 0;
    for (const t of list) if (await mark(a.store, recorder, t, value, `thawed by ${a.who} (console)`)) changed++;
    const done = verb === 'freeze' ? 'frozen' : 'thawed';
    return { ok: true, message: `${changed} of ${list.length} objects ${done}, the rest unchanged` };
  }).catch((e: Error) => ({ ok: false, message: e.message }));
  const what = o.all ? 'all' : o.selector !== undefined ? `-l ${o.selector}` : projects.join(',');
  return record(a, 'Freeze', { namespace, name: what }, verb, r);
}

export async function resumeAction(a: Actor, key: Key, message: string): Promise<ActionResult> {
  const r = await guarded(async () =>
    outcome(
      await resumePipeline(a.store, key, message.trim() || undefined),
      `pipeline.orchctl.io/${key.name}`,
      'resume requested',
    ),
  ).catch((e: Error) => ({ ok: false, message: e.message }));
  return record(a, 'Pipeline', key, 'resume', r);
}

/** `orchctl silence create MATCHER… --for D --comment C`, created by the token's name. */
export async function silenceCreateAction(
  a: Actor,
  namespace: string,
  matchers: string[],
  o: { for?: string; comment?: string },
): Promise<ActionResult> {
  let name = '';
  const r = await (async () => {
    const kind = registry().resolve('silence');
    const opts = { for: o.for, ...(o.comment ? { comment: o.comment } : {}) };
    const silence = buildSilence(matchers, opts, namespace, Date.now(), `${a.who} (console)`);
    name = silence.metadata.name;
    await createSilence(a.store, silence, kind);
    return { ok: true, message: `silence.orchctl.io/${name} created` };
  })().catch((e: Error) => ({ ok: false, message: e.message }));
  return record(a, 'Silence', { namespace, name: name || '(new)' }, 'create', r);
}

export async function silenceExpireAction(a: Actor, key: Key): Promise<ActionResult> {
  const what = `silence.orchctl.io/${key.name}`;
  const e = await expireSilence(a.store, key.namespace, key.name);
  const r =
    e.outcome === 'expired'
      ? { ok: true, message: `${what} expired` }
      : e.outcome === 'unchanged'
        ? { ok: true, message: `${what} unchanged (expired at ${e.endsAt})` }
        : { ok: false, message: `${what} not found` };
  return record(a, 'Silence', key, 'expire', r);
}
