import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl assess` (flags, help); assess.ts loads only when it runs. */
export function register(program: Command): void {
  const assess = program
    .command('assess')
    .description('What the detector, circuit breaker and checkpoints say about sessions');
  assess
    .command('status')
    .description('Breaker state against its thresholds, EMAs, checkpoints, interventions and consumer lag')
    .argument('[session]', 'AgentSession name (default: a table of every session)')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('-o, --output <format>', 'json')
    .action(async (name, opts, cmd) => (await import('./assess.js')).assessStatusCommand(name, opts, globals(cmd)));
  assess
    .command('history')
    .description(
      "Sessions' outcomes and frustration, or one session's trajectory, checkpoints, signals and interventions",
    )
    .argument('[session]', 'AgentSession name (default: every recent session)')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('--since <duration>', 'how far back: 7d, 12h, 30m', '7d')
    .option('-o, --output <format>', 'json')
    .action(async (name, opts, cmd) => (await import('./assess.js')).assessHistoryCommand(name, opts, globals(cmd)));
}
