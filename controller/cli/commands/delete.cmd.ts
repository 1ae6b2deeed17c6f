import type { Command } from 'commander';
import { collect, globals } from '../register.js';

/** Registers `orchctl delete` (flags, help); delete.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('delete')
    .description('Delete objects by name, label selector or manifest file')
    .argument('[type...]', 'TYPE NAME..., TYPE/NAME')
    .option('-f, --filename <path>', 'delete the objects defined in these files (repeatable)', collect)
    .option('-R, --recursive', 'process directories recursively')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-l, --selector <selector>', 'label selector')
    .option('--all', 'delete all objects of the type in the namespace')
    .option('--ignore-not-found', 'treat missing objects as deleted')
    .option('--dry-run [mode]', 'none, client or server')
    .option('--wait', 'wait until finalizers have run and the objects are gone')
    .option('--timeout <duration>', 'how long --wait waits', '60s')
    .action(async (args, opts, cmd) => (await import('./delete.js')).deleteCommand(args, opts, globals(cmd)));
}
