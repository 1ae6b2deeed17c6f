/**
 * `orchctl send SESSION TEXT | -f FILE | --approve | --deny | --keys K...`: text or answer keys
 * into a live session through the verified delivery path (serialised with the controller's own
 * deliveries by the pane's lock). Exit status 0 only when the agent confirmed it. Text for a run
 * that is not on this host's tmux socket goes through the store to the node that runs it
 * (send-remote.ts).
 */
import { SessionReason } from '../../api/event-reasons.js';
import fs from 'node:fs';
import { EventRecorder } from '../../client/events.js';
import { Tmux } from '../../observers/tmux.js';
import { sendToSession, SendError } from '../../agents/send.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { out } from '../output.js';
import { parseDuration } from '../../api/duration.js';
import { runElsewhere, sendThroughStore } from './send-remote.js';

export interface SendOptions {
  namespace?: string;
  file?: string;
  approve?: boolean;
  deny?: boolean;
  keys?: string[];
  force?: boolean;
  tmuxSocket?: string;
  output?: string;
  /** How long to wait for a run on another host to take the text (default 60s). */
  timeout?: string;
}

export async function sendCommand(
  name: string,
  text: string | undefined,
  opts: SendOptions,
  g: GlobalOptions,
): Promise<number> {
  const modes = [
    text !== undefined || opts.file ? 'text' : '',
    opts.approve ? 'approve' : '',
    opts.deny ? 'deny' : '',
    opts.keys?.length ? 'keys' : '',
  ].filter(Boolean);
  if (modes.length !== 1) throw new SendError('give exactly one of TEXT, -f FILE, --approve, --deny or --keys');
  if (text !== undefined && opts.file) throw new SendError('give TEXT or -f FILE, not both');
  let body = text;
  if (opts.file) {
    try {
      body = opts.file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(opts.file, 'utf8');
    } catch (e) {
      throw new SendError(`cannot read ${opts.file}: ${(e as Error).message}`);
    }
  }
  const ctx = openContext(g);
  try {
    const kind = ctx.reg.resolve('agentsession');
    const ns = namespaceFor(kind, opts.namespace);
    const n = name.includes('/') ? name.split('/')[1] : name;
    const tmux = new Tmux(opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl');
    const elsewhere = await runElsewhere(ctx.store, tmux, ns, n);
    if (elsewhere) {
      if (body === undefined)
        throw new SendError(
          `agentsession "${n}" runs ${elsewhere}, not on this host's tmux socket; --approve, --deny and --keys ` +
            'reach only a pane here — run orchctl send on that host, or send text',
        );
      const r = await sendThroughStore(ctx.store, ns, n, body, {
        force: opts.force,
        timeoutMs: parseDuration(opts.timeout ?? '60s'),
      });
      if (opts.output === 'json') out(JSON.stringify(r, null, 2));
      else out(`${r.delivered ? 'delivered' : 'NOT CONFIRMED'}: ${r.message}`);
      return r.delivered ? 0 : 1;
    }
    const r = await sendToSession(ctx.store, tmux, ns, n, {
      text: body,
      approve: opts.approve,
      deny: opts.deny,
      keys: opts.keys,
      force: opts.force,
    });
    const session = await ctx.store.get({ kind: 'AgentSession', namespace: ns, name: n });
    if (session) {
      const what = opts.approve
        ? 'approval'
        : opts.deny
          ? 'denial'
          : opts.keys?.length
            ? `keys ${opts.keys.join(' ')}`
            : `text (${body!.length} characters)`;
      await new EventRecorder(ctx.store, 'orchctl-cli').record(
        session,
        r.delivered ? 'Normal' : 'Warning',
        r.delivered ? SessionReason.MessageSent : SessionReason.MessageNotConfirmed,
        `orchctl send: ${what}: ${r.message}`,
      );
    }
    if (opts.output === 'json') out(JSON.stringify(r, null, 2));
    else out(`${r.delivered ? 'delivered' : 'NOT CONFIRMED'}: ${r.message}`);
    return r.delivered ? 0 : 1;
  } finally {
    await ctx.close();
  }
}
