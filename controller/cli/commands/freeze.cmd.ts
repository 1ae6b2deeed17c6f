import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl freeze` and `orchctl thaw` (flags, help); freeze.ts loads only when one runs. */
export function register(program: Command): void {
  for (const verb of ['freeze', 'thaw'] as const)
    program
      .command(verb)
      .description(
        verb === 'freeze'
          ? 'Emergency stop: hold every matching agent at once (its processes stopped with SIGSTOP), keep the ' +
              'autopilot off them and new runs from starting, until `orchctl thaw`; survives a controller restart'
          : 'Undo `orchctl freeze`: the held agents continue where they were (SIGCONT), nothing lost',
      )
      .argument('[project...]', 'projects (with all their sessions)')
      .option('-n, --namespace <ns>', 'namespace')
      .option('-l, --selector <selector>', 'the sessions matching this label selector')
      .option('--all', 'every session, project and autopilot of the namespace', false)
      .option('-A, --all-namespaces', 'with --all: of every namespace', false)
      .option('-m, --message <text>', 'why (kept in the freeze mark and its Event)')
      .action(async (args, opts, cmd) => {
        const { freezeCommand, thawCommand } = await import('./freeze.js');
        await (verb === 'freeze' ? freezeCommand : thawCommand)(args, opts, globals(cmd));
      });
}
