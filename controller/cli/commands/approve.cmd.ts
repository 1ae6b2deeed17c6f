import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl approve` and `orchctl reject` (flags, help); approve.ts loads only when one runs. */
export function register(program: Command): void {
  for (const [verb, what] of [
    ['approve', 'Approve decisions waiting for a person (PendingApproval): the controller then executes them'],
    ['reject', 'Reject decisions waiting for a person (PendingApproval): they end Rejected and never execute'],
  ] as const)
    program
      .command(verb)
      .description(what)
      .argument('<type...>', 'decision NAME… or decision/NAME…')
      .option('-n, --namespace <ns>', 'namespace')
      .option('-l, --selector <selector>', 'every pending decision matching this label selector')
      .option('--all', 'every pending decision in the namespace (with -l: every one matching)')
      .option('-m, --message <text>', 'why (recorded in spec.approval.message)')
      .action(async (args, opts, cmd) => {
        const { approveCommand, rejectCommand } = await import('./approve.js');
        await (verb === 'approve' ? approveCommand : rejectCommand)(args, opts, globals(cmd));
      });
}
