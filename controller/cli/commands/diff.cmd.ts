import type { Command } from 'commander';
import { collect, globals } from '../register.js';

/** Registers `orchctl diff` (flags, help); diff.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('diff')
    .description('Show what apply would change (exit 0: none, 1: differences)')
    .requiredOption('-f, --filename <path>', 'file, directory or - (repeatable)', collect)
    .option('-R, --recursive', 'process directories recursively')
    .option('-n, --namespace <ns>', 'namespace for objects that do not name one')
    .action(async (opts, cmd) => (await import('./diff.js')).diffCommand(opts, globals(cmd)));
}
