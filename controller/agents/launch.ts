/**
 * How an agent CLI is started in a tmux pane (pure: no I/O). The argv handed to tmux is
 * executed directly (execvp), never through a shell built from data: the only shell is a
 * constant wrapper script, and the agent's command and arguments reach it as positional
 * parameters ("$0" "$@"), never as code. The wrapper
 *  - redirects the prompt file to stdin for stdin delivery;
 *  - waits for the agent and writes its exit status to $ORCHCTL_WORKSPACE/exit-code, then
 *    signals the controller's tmux channel. tmux's own record (remain-on-exit +
 *    pane_dead_status) stays the second source: tmux 3.3a was seen to leave a pane's process
 *    unreaped (a zombie, no status) now and then, and the run must still end in status.
 * It traps INT and TERM with a handler (not "ignore", which the agent would inherit) so that C-c
 * reaches the agent while the wrapper stays to record its status. It does NOT trap HUP: when
 * tmux kills the session the pty hangs up, the wrapper (the session leader) dies of SIGHUP and
 * the kernel hangs up the agent's process group with it — as with any terminal program.
 *
 * Output logging needs no start gate: the controller attaches pipe-pane in the same tmux
 * command as new-session, and tmux runs a command list before it reads the new pane.
 */
import type { AgentSpec, EnvVar } from '../api/kinds.js';

const WRAP = (run: string) =>
  `trap : INT TERM; ${run}; code=$?; printf '%s\\n' "$code" > "$ORCHCTL_WORKSPACE/exit-code"; tmux wait-for -S orchctl-pane-died 2>/dev/null; exit "$code"`;
export const LAUNCH_SCRIPT = WRAP('"$0" "$@"');
export const LAUNCH_SCRIPT_STDIN = WRAP('"$0" "$@" < "$ORCHCTL_PROMPT_FILE"');

export interface LaunchInput {
  agent: AgentSpec;
  sessionEnv?: EnvVar[];
  prompt: string; // combined system + task prompt (also in the prompt file)
  promptFile: string;
  resultFile: string;
  workspace: string;
  sessionKey: string; // namespace/name
  uid: string;
  run: number;
}

export interface LaunchPlan {
  argv: string[];
  env: Record<string, string>;
}

export function buildLaunch(i: LaunchInput): LaunchPlan {
  const delivery = i.agent.promptDelivery ?? 'paste';
  const command = [...i.agent.command, ...(i.agent.args ?? [])];
  if (delivery === 'argument' && i.prompt) command.push(...(i.agent.promptFlag ? [i.agent.promptFlag] : []), i.prompt);
  const env: Record<string, string> = {};
  for (const e of [...(i.agent.env ?? []), ...(i.sessionEnv ?? [])]) env[e.name] = e.value ?? '';
  Object.assign(env, {
    ORCHCTL_SESSION: i.sessionKey,
    ORCHCTL_SESSION_UID: i.uid,
    ORCHCTL_RUN: String(i.run),
    ORCHCTL_WORKSPACE: i.workspace,
    ORCHCTL_PROMPT_FILE: i.promptFile,
    ORCHCTL_RESULT_FILE: i.resultFile,
  });
  return { argv: ['sh', '-c', delivery === 'stdin' ? LAUNCH_SCRIPT_STDIN : LAUNCH_SCRIPT, ...command], env };
}

/** Seed 004: the persona (system prompt) first, then the task. */
export function composePrompt(systemPrompt: string | undefined, task: string | undefined, extra: string[] = []): string {
  return [systemPrompt?.trim(), ...extra.map((x) => x.trim()), task?.trim()].filter((x): x is string => !!x).join('\n\n') + '\n';
}
