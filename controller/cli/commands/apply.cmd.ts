import type { Command } from 'commander';
import { collect, globals } from '../register.js';

/** Registers `orchctl apply` (flags, help); apply.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('apply')
    .description('Create or update objects from manifest files, all-or-nothing')
    .requiredOption('-f, --filename <path>', 'file, directory or - for stdin (repeatable)', collect)
    .option('-R, --recursive', 'process directories recursively')
    .option('--dry-run [mode]', 'none, client or server: validate and report without writing')
    .option('--prune', 'delete previously applied objects that match -l and are not in the files')
    .option('-l, --selector <selector>', 'label selector for --prune')
    .option('-n, --namespace <ns>', 'namespace for objects that do not name one')
    .option('-o, --output <format>', 'name: print only type/name')
    .action(async (opts, cmd) => (await import('./apply.js')).applyCommand(opts, globals(cmd)));
}
