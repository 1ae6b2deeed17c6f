import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl version` (flags, help); version.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('version')
    .description('Print the orchctl version, the store and the controller holding the lease')
    .option('-o, --output <format>', 'json')
    .option('--client', 'client version only')
    .action(async (opts, cmd) => (await import('./version.js')).versionCommand(opts, globals(cmd)));
}
