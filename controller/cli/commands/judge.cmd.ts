import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl judge` (flags, help); judge.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('judge')
    .description("Judge a session's current or last run now (an OnDemand Evaluation)")
    .argument('<session>', 'AgentSession name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('--wait', 'wait for the verdict and print it (exit 1 if the judgement fails)')
    .option('--timeout <duration>', 'how long --wait waits', '120s')
    .action(async (name, opts, cmd) => (await import('./judge.js')).judgeCommand(name, opts, globals(cmd)));
}
