import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl explain` (flags, help); explain.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('explain')
    .description('Document a kind or one of its fields, from the CRD schema')
    .argument('<field>', 'KIND[.field.path], e.g. agentsession.spec.restartPolicy')
    .option('--recursive', 'list all nested fields')
    .action(async (field, opts, cmd) => (await import('./explain.js')).explainCommand(field, opts, globals(cmd)));
}
