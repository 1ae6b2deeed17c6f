import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl pipeline` (flags, help); pipeline.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('pipeline')
    .description('Work with pipelines')
    .command('resume')
    .description(
      'Answer a blocked pipeline: its blocked phases get the message (typed into a live run, verified; a run ' +
        'that ended gets a new run with the message in its prompt) and the pipeline goes on',
    )
    .argument('<name>', 'Pipeline name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-m, --message <text>', 'what to tell the blocked agent (default: go on, the blocker was dealt with)')
    .option('--wait', 'wait until the controller delivered it and print how (exit 1 unless delivered)')
    .option('--timeout <duration>', 'how long --wait waits', '60s')
    .action(async (name, opts, cmd) => (await import('./pipeline.js')).resumeCommand(name, opts, globals(cmd)));
}
