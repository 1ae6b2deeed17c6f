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
 * The agent's environment is built here, not inherited (docs/agents.md): tmux's server starts
 * with a clean one (observers/tmux.ts), and each launch passes the base (api/environment.ts) and
 * orchctl's own ORCHCTL_* variables (paths and names, no secrets) to tmux. Every other value — the
 * variables `inheritEnv` names, the Agent's and the session's env — never goes on a command line,
 * where `ps` shows it to every local user: the controller writes each to a file of its own in a
 * private directory ($ORCHCTL_ENV_DIR, 0700, files 0600, named for the variable), and the wrapper
 * exports them — value read with cat, never evaluated — and removes the directory before the
 * agent starts.
 *
 * Output logging needs no start gate: the controller attaches pipe-pane in the same tmux
 * command as new-session, and tmux runs a command list before it reads the new pane.
 *
 * The wrapper has no loop of its own: in multi-node mode one watchdog per node guards every run on
 * its socket (app/watchdog.ts), not one per run.
 */
import type { AgentSpec, EnvVar } from '../api/kinds.js';

const LOAD_ENV =
  'if [ -n "$ORCHCTL_ENV_DIR" ]; then for f in "$ORCHCTL_ENV_DIR"/*; do [ -f "$f" ] || continue; ' +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh parameter expansions, run by the wrapper's shell
  'v=$(cat "$f"; printf x); export "${f##*/}=${v%x}"; done; ' +
  'rm -rf "$ORCHCTL_ENV_DIR"; unset ORCHCTL_ENV_DIR; unset f v; fi; ';
// ORCHCTL_TAGS and ORCHCTL_OUTPUT_LOG are tmux's (the session's tags, the log pipe-pane opens:
// observers/tmux.ts), not the agent's: a tmux server the agent starts must not inherit them.
const WRAP = (run: string) =>
  `unset ORCHCTL_TAGS ORCHCTL_OUTPUT_LOG; ${LOAD_ENV}trap : INT TERM; ${run}; code=$?; ` +
  `printf '%s\\n' "$code" > "$ORCHCTL_WORKSPACE/exit-code"; ` +
  'tmux wait-for -S orchctl-pane-died 2>/dev/null; exit "$code"';
export const LAUNCH_SCRIPT = WRAP('"$0" "$@"');
export const LAUNCH_SCRIPT_STDIN = WRAP('"$0" "$@" < "$ORCHCTL_PROMPT_FILE"');

export interface LaunchInput {
  agent: AgentSpec;
  sessionEnv?: EnvVar[];
  /** The base variables (names and paths, no secrets): passed to tmux. */
  baseEnv?: Record<string, string>;
  /** The controller's variables that `inheritEnv` names: delivered privately, like env. */
  inheritedEnv?: Record<string, string>;
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
  /** The agent's whole environment (but for what tmux adds: TERM, TMUX, TMUX_PANE…). */
  env: Record<string, string>;
  /** The base and orchctl's own variables: names and paths only, safe on tmux's command line. */
  tmuxEnv: Record<string, string>;
  /** Inherited, the Agent's and the session's variables: through $ORCHCTL_ENV_DIR, never on an argv. */
  privateEnv: Record<string, string>;
}

export function buildLaunch(i: LaunchInput): LaunchPlan {
  const delivery = i.agent.promptDelivery ?? 'paste';
  const command = [...i.agent.command, ...(i.agent.args ?? [])];
  if (delivery === 'argument' && i.prompt) command.push(...(i.agent.promptFlag ? [i.agent.promptFlag] : []), i.prompt);
  const privateEnv: Record<string, string> = {};
  const vars = [
    ...Object.entries(i.inheritedEnv ?? {}).map(([name, value]) => ({ name, value })),
    ...(i.agent.env ?? []),
    ...(i.sessionEnv ?? []),
  ];
  for (const e of vars) if (!e.name.startsWith('ORCHCTL_')) privateEnv[e.name] = e.value ?? '';
  const base = Object.entries(i.baseEnv ?? {}).filter(([name]) => !name.startsWith('ORCHCTL_'));
  const tmuxEnv: Record<string, string> = {
    ...Object.fromEntries(base),
    ORCHCTL_SESSION: i.sessionKey,
    ORCHCTL_SESSION_UID: i.uid,
    ORCHCTL_RUN: String(i.run),
    ORCHCTL_WORKSPACE: i.workspace,
    ORCHCTL_PROMPT_FILE: i.promptFile,
    ORCHCTL_RESULT_FILE: i.resultFile,
    ...(Object.keys(privateEnv).length ? { ORCHCTL_ENV_DIR: envDirOf(i.workspace) } : {}),
  };
  const argv = ['sh', '-c', delivery === 'stdin' ? LAUNCH_SCRIPT_STDIN : LAUNCH_SCRIPT, ...command];
  // The wrapper exports the private variables after tmux set the base: they win over it (never
  // over ORCHCTL_*, which privateEnv cannot hold).
  return { argv, env: { ...tmuxEnv, ...privateEnv }, tmuxEnv, privateEnv };
}

/** Where a run's private environment files are written (inside its 0700 workspace). */
export const envDirOf = (workspace: string) => `${workspace}/env`;

/** Seed 004: the persona (system prompt) first, then the task. */
export function composePrompt(
  systemPrompt: string | undefined,
  task: string | undefined,
  extra: string[] = [],
): string {
  return (
    [systemPrompt?.trim(), ...extra.map((x) => x.trim()), task?.trim()].filter((x): x is string => !!x).join('\n\n') +
    '\n'
  );
}
