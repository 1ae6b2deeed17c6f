import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl doctor` (flags, help); doctor.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check this host: tmux, git and node versions, agent CLIs on PATH and whether their detection patterns ' +
        'are verified for the installed version',
    )
    .option('-o, --output <format>', 'json')
    .action(async (opts, cmd) => (await import('./doctor.js')).doctorCommand(opts, globals(cmd)));
}
