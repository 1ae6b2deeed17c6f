import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl send` (flags, help); send.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('send')
    .description('Send text (or answer keys) into a running session; verified like the task prompt')
    .argument('<session>', 'AgentSession name')
    .argument('[text]', 'text to send (or -f FILE)')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-f, --file <file>', 'send the contents of a file (- for stdin)')
    .option('--approve', "answer the prompt on screen with the Agent's approve keys")
    .option('--deny', "answer the prompt on screen with the Agent's deny keys")
    .option('--keys <keys...>', 'send these tmux key names instead (e.g. Down Enter)')
    .option('--force', 'paste text even while the agent waits at a prompt')
    .option('--tmux-socket <name>', 'tmux socket name (-L)')
    .option('--timeout <duration>', 'text for a run on another host: how long to wait for its node (default 60s)')
    .option('-o, --output <format>', 'json for a machine-readable result')
    .action(async (name, text, opts, cmd) => {
      process.exitCode = await (await import('./send.js')).sendCommand(name, text, opts, globals(cmd));
    });
}
