import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl digest` (flags, help); digest.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('digest')
    .description(
      'Preview the notification digest the controller would send now (writes nothing), or with --now ask the ' +
        'controller to send it and wait until it is sent',
    )
    .option('-n, --namespace <ns>', 'namespace')
    .option('--policy <name>', "the NotificationPolicy (default: the namespace's only one)")
    .option('--dry-run', 'preview only (the default)')
    .option('--now', 'ask the controller to record and send the digest now, and wait for it (exit 1 if it fails)')
    .option('--template', 'preview the template alone, without the LLM narrative')
    .option('--timeout <duration>', 'how long --now waits, and the narrative may take', '30s')
    .action(async (opts, cmd) => (await import('./digest.js')).digestCommand(opts, globals(cmd)));
}
