/**
 * The command channel: any CLI (notify-send, apprise, a script) run with execa, never a shell.
 * The message is JSON on its stdin and its main fields are in ORCHCTL_NOTIFICATION_* variables;
 * `{{title}}`-style placeholders in the arguments become plain arguments (put `--` before them
 * for a program that would read a leading `-` as an option). The exit code decides: 0 delivered,
 * 75 (EX_TEMPFAIL, sysexits' "try again later") retryable, anything else a refusal. The child runs
 * in its own process group, killed whole at the time limit (execa's own timeout kills the child
 * alone, and a grandchild holding its pipes would keep the send waiting).
 */
import type { CommandChannelSpec, NotificationSendResult } from '../api/notification-channel.js';
import { SECRET_NAME } from '../api/redact.js';
import { EnvSourceError, resolveEnv } from '../agents/env.js';
import type { SendContext } from './context.js';
import type { ChannelDriver } from './driver.js';
import { commandArgs, commandEnv, jsonPayload } from './format.js';
import { ChannelConfigError, excerpt, failed, sent } from './result.js';

/** What is kept of the program's output (its tail is quoted in a failure); past it the program is killed. */
const MAX_OUTPUT = 1 << 20;
export const EX_TEMPFAIL = 75;

function extraEnv(spec: CommandChannelSpec, ctx: SendContext): Record<string, string> {
  let vars: { name: string; value?: string }[];
  try {
    vars = resolveEnv(spec.env, ctx.env);
  } catch (e) {
    if (e instanceof EnvSourceError) throw new ChannelConfigError(e.message);
    throw e;
  }
  const out: Record<string, string> = {};
  for (const [i, v] of vars.entries()) {
    if (spec.env?.[i]?.valueFrom || SECRET_NAME.test(v.name)) ctx.secrets.add(v.value);
    out[v.name] = v.value ?? '';
  }
  return out;
}

/** What a command channel runs for one message: its argv, the variables it adds, the JSON on its stdin. */
type CommandRun = { argv: string[]; env: Record<string, string>; stdin: string };

export const commandDriver: ChannelDriver<CommandChannelSpec, CommandRun> = {
  type: 'command',
  fields: ['command', 'env'],
  validate: (spec) => (spec.command?.length && spec.command[0] ? undefined : 'command needs a program'),
  format: (spec, channel, m) => ({
    argv: commandArgs(spec.command, m),
    env: commandEnv(channel, m),
    stdin: JSON.stringify(jsonPayload(channel, m)),
  }),
  send: sendCommand,
};

async function sendCommand(spec: CommandChannelSpec, ctx: SendContext): Promise<NotificationSendResult> {
  const { label, timeoutMs } = ctx;
  if (!spec.command?.length || !spec.command[0]) throw new ChannelConfigError('command is empty');
  const run = commandDriver.format(spec, ctx.name, ctx.message);
  const [file, ...args] = run.argv;
  // Loaded on the first send, not with the driver: apply's admission validates channels without it.
  const { execa } = await import('execa');
  const child = execa(file!, args, {
    input: run.stdin,
    env: { ...extraEnv(spec, ctx), ...run.env },
    reject: false,
    detached: true, // its own process group, so the kill reaches what it started
    maxBuffer: MAX_OUTPUT,
  });
  let timedOut = false;
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  const timer = setTimeout(
    () => {
      timedOut = true;
      killGroup();
    },
    Math.max(1, timeoutMs),
  );
  ctx.signal?.addEventListener('abort', killGroup, { once: true });
  let r: Awaited<typeof child>;
  try {
    r = await child;
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', killGroup);
  }
  if (ctx.signal?.aborted) return failed('cancelled', label, 'the send was cancelled; the program was killed');
  if (timedOut) return failed('timeout', label, `the program did not finish within ${timeoutMs} ms and was killed`);
  const code = (r as { code?: string }).code;
  if (code === 'ENOENT' || code === 'EACCES') return failed('config', label, `cannot run ${file} (${code})`);
  if (r.isMaxBuffer) return failed('rejected', label, `the program printed more than ${MAX_OUTPUT} bytes`);
  const output = String(r.stderr ?? '').trim() || String(r.stdout ?? '').trim();
  const said = output ? `: ${excerpt(output.split('\n').slice(-3).join(' | '), 300)}` : '';
  if (r.exitCode === 0) return sent(label, 'exit 0', 0);
  if (r.exitCode === EX_TEMPFAIL)
    return failed('server_error', label, `the program asks to try later (exit ${EX_TEMPFAIL})${said}`, {
      status: EX_TEMPFAIL,
    });
  if (r.exitCode === undefined)
    // Killed by a signal we did not send (out of memory, a shutdown): the message may go through next time.
    return failed('server_error', label, `the program was killed (${r.signal ?? 'signal'})${said}`);
  return failed('rejected', label, `the program exited with ${r.exitCode}${said}`, { status: r.exitCode });
}
