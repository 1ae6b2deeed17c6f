import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentSession } from '../../api/kinds.js';
import { orchctlHome } from '../../config/paths.js';
import { ACTIVE_PHASES } from '../../api/phases.js';
import { outputTail } from '../../observers/output.js';
import { runWorkspace } from '../../observers/workspace.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { out } from '../output.js';

async function sessionOf(name: string, ns: string | undefined, g: GlobalOptions): Promise<AgentSession> {
  const ctx = openContext(g, { readonly: true });
  try {
    const kind = ctx.reg.resolve('agentsession');
    const n = name.includes('/') ? name.split('/')[1] : name;
    const o = await ctx.store.get({ kind: 'AgentSession', namespace: namespaceFor(kind, ns), name: n });
    if (!o) throw new Error(`agentsessions "${n}" not found`);
    return o;
  } finally {
    await ctx.close();
  }
}

export interface LogsOptions {
  namespace?: string;
  follow?: boolean;
  tail?: string;
  run?: string;
  raw?: boolean;
}

/** `orchctl logs SESSION`: the run's output.log, escape sequences stripped unless --raw. */
export async function logsCommand(name: string, opts: LogsOptions, g: GlobalOptions): Promise<void> {
  const s = await sessionOf(name, opts.namespace, g);
  const home = g.home ? path.resolve(g.home) : orchctlHome();
  const run = opts.run ? Number(opts.run) : s.status?.run;
  if (!run) throw new Error(`agentsession "${s.metadata.name}" has not started a run yet`);
  const file = runWorkspace(home, s.metadata.namespace ?? 'default', s.metadata.name, run).outputLog;
  if (!fs.existsSync(file))
    throw new Error(`no output for run ${run} of "${s.metadata.name}" (${file} does not exist)`);
  const tail = opts.tail === undefined ? -1 : Number(opts.tail);
  if (!Number.isInteger(tail)) throw new Error(`--tail must be an integer, got "${opts.tail}"`);
  const render = (raw: string) => (opts.raw ? raw : outputTail(raw, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
  let text = render(fs.readFileSync(file, 'utf8'));
  if (tail >= 0)
    text = text
      .split('\n')
      .slice(-tail || text.length)
      .join('\n');
  if (tail === 0) text = '';
  if (text) out(text.endsWith('\n') ? text : `${text}\n`);
  if (!opts.follow) return;
  let pos = fs.statSync(file).size;
  await new Promise<void>((resolve) => {
    const w = fs.watch(file, () => {
      const size = fs.statSync(file).size;
      if (size <= pos) return;
      const fd = fs.openSync(file, 'r');
      const buf = Buffer.alloc(size - pos);
      fs.readSync(fd, buf, 0, buf.length, pos);
      fs.closeSync(fd);
      pos = size;
      const chunk = opts.raw ? buf.toString('utf8') : render(buf.toString('utf8'));
      if (chunk) out(chunk.endsWith('\n') ? chunk : `${chunk}\n`);
    });
    const stop = () => {
      w.close();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** `orchctl attach SESSION`: tmux attach to the run's session on the controller's tmux socket. */
export async function attachCommand(
  name: string,
  opts: { namespace?: string; tmuxSocket?: string; readOnly?: boolean },
  g: GlobalOptions,
): Promise<void> {
  const s = await sessionOf(name, opts.namespace, g);
  const t = s.status?.tmuxSession;
  if (!t || !ACTIVE_PHASES.has(s.status?.phase ?? 'Pending'))
    throw new Error(`agentsession "${s.metadata.name}" is not running (phase ${s.status?.phase ?? 'Pending'})`);
  if (!process.stdin.isTTY) throw new Error('attach needs a terminal');
  const socket = opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl';
  await execa('tmux', ['-L', socket, 'attach-session', ...(opts.readOnly ? ['-r'] : []), '-t', `=${t}`], {
    stdio: 'inherit',
    reject: false,
  });
}
