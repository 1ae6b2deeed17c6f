import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl restart` (flags, help); restart.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('restart')
    .description(
      'Ask for a new run of sessions (like kubectl rollout restart): sets their orchctl.io/restartedAt ' +
        'annotation; the controller stops the current run and starts a new one',
    )
    .argument('<type...>', 'session NAME… or session/NAME…')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-l, --selector <selector>', 'every session matching this label selector')
    .action(async (args, opts, cmd) => (await import('./restart.js')).restartCommand(args, opts, globals(cmd)));
}
