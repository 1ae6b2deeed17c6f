import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl describe` (flags, help); describe.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('describe')
    .description('Show an object in detail, with its conditions and events')
    .argument('<type...>', 'TYPE [NAME...] or TYPE/NAME')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('-l, --selector <selector>', 'label selector when no name is given')
    .action(async (args, opts, cmd) => (await import('./describe.js')).describeCommand(args, opts, globals(cmd)));
}
