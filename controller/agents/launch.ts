/**
 * How an agent CLI is started in a tmux pane (pure: no I/O). The argv handed to tmux is
 * executed directly (execvp), never through a shell built from data. The only shell involved
 * is a constant script — needed because tmux hands a *single* argument to `sh -c`, and for
 * stdin delivery to redirect the prompt file; the agent's command and arguments reach it as
 * positional parameters ("$0" "$@"), never as code.
 *
 * Output logging needs no start gate: the controller attaches pipe-pane in the same tmux
 * command as new-session, and tmux runs a command list before it reads the new pane.
 */
import type { AgentSpec, EnvVar } from '../api/kinds.js';

export const LAUNCH_SCRIPT = 'exec "$0" "$@"';
export const LAUNCH_SCRIPT_STDIN = 'exec "$0" "$@" < "$ORCHCTL_PROMPT_FILE"';

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
