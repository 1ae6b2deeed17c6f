import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl store` (flags, help); store.ts loads only when it runs. */
export function register(program: Command): void {
  const store = program.command('store').description('Back up or restore the state database (like etcdctl snapshot)');
  store
    .command('backup')
    .description('Write a consistent copy of the store to FILE (safe while the controller runs)')
    .argument('<file>', 'where to write the backup')
    .option('--force', 'overwrite FILE if it exists')
    .action(async (file, opts, cmd) => (await import('./store.js')).storeBackupCommand(file, opts, globals(cmd)));
  store
    .command('restore')
    .description('Replace the store with the backup in FILE (refused while a controller holds the store)')
    .argument('<file>', 'a file written by orchctl store backup')
    .action(async (file, opts, cmd) => (await import('./store.js')).storeRestoreCommand(file, opts, globals(cmd)));
}
