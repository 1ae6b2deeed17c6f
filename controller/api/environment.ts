/**
 * Which variables of the controller's own environment an agent gets (docs/agents.md, "What an
 * agent's environment is"). Like a pod, which does not inherit the kubelet's environment, an agent
 * starts from a documented base; any other variable is passed only when an Agent's or a
 * SessionPolicy's `inheritEnv` names it, or set by `env`.
 *
 * A name pattern is a variable name, or a prefix ending in `*` (`LC_*`, `ANTHROPIC_*`): env names
 * are letters, digits and underscores, so a prefix match is all the globbing they need.
 */

/**
 * The base every agent starts with, taken from the controller's environment when set. TERM is not
 * in it: inside tmux it is tmux's own (default-terminal), like TMUX and TMUX_PANE.
 */
export const BASE_ENV: readonly string[] = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_*', 'TZ', 'TMPDIR'];

/** Whether `name` matches one of `patterns` (exact names, or prefixes ending in `*`). */
export function envNameMatches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p));
}

/** The variables of `env` whose names match `patterns` (unset ones are left out). */
export function pickEnv(patterns: readonly string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  if (!patterns.length) return out;
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && envNameMatches(name, patterns)) out[name] = value;
  }
  return out;
}
