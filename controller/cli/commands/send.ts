/**
 * `orchctl send SESSION TEXT | -f FILE | --approve | --deny | --keys K...`: text or answer keys
 * into a live session through the verified delivery path (serialised with the controller's own
 * deliveries by the pane's lock). Exit status 0 only when the agent confirmed it. Text for a run
 * that is not on this host's tmux socket goes through the store to the node that runs it
 * (send-remote.ts).
 */
import fs from 'node:fs';
import { Tmux } from '../../observers/tmux.js';
import { SendError } from '../../agents/send.js';
import { sendAsPerson } from '../../client/send.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { out } from '../output.js';

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
    const namespace = namespaceFor(kind, opts.namespace);
    const n = name.includes('/') ? name.split('/')[1] : name;
    const tmux = new Tmux(opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl');
    const req = { text: body, approve: opts.approve, deny: opts.deny, keys: opts.keys, force: opts.force };
    const r = await sendAsPerson(
      ctx.store,
      tmux,
      { namespace, name: n },
      { ...req, timeout: opts.timeout },
      'orchctl-cli',
    );
    if (opts.output === 'json') out(JSON.stringify(r, null, 2));
    else out(`${r.delivered ? 'delivered' : 'NOT CONFIRMED'}: ${r.message}`);
    return r.delivered ? 0 : 1;
  } finally {
    await ctx.close();
  }
}
