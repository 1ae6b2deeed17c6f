import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl logs` and `orchctl attach` (flags, help); logs.ts loads only when one runs. */
export function register(program: Command): void {
  program
    .command('logs')
    .description("Print a session's output (the current run's output.log)")
    .argument('<session>', 'AgentSession name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-f, --follow', 'keep printing new output')
    .option('--tail <lines>', 'only the last N lines')
    .option('--run <n>', 'an earlier run instead of the current one')
    .option('--raw', 'keep terminal escape sequences')
    .action(async (name, opts, cmd) => (await import('./logs.js')).logsCommand(name, opts, globals(cmd)));

  program
    .command('attach')
    .description("Attach your terminal to a running session's tmux pane (detach: C-b d)")
    .argument('<session>', 'AgentSession name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-r, --read-only', 'attach read-only')
    .option('--tmux-socket <name>', 'tmux socket name (-L)')
    .action(async (name, opts, cmd) => (await import('./logs.js')).attachCommand(name, opts, globals(cmd)));
}
