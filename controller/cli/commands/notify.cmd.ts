import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl notify` (flags, help); notify.ts loads only when it runs. */
export function register(program: Command): void {
  const notify = program.command('notify').description('Work with notification channels');
  notify
    .command('test')
    .description(
      'Send one test message through a NotificationChannel, with secrets from this shell; exit 1 unless ' +
        'delivered. Besides the notifier, the only command that calls a channel directly; writes nothing',
    )
    .argument('<channel>', 'NotificationChannel name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('--tier <n>', 'tier of the message: 1 urgent, 2 action, 3 summary, 4 debug', '2')
    .option('--title <text>', 'title (default "orchctl test notification")')
    .option('--message <text>', 'text of the body (a line naming channel, namespace, host and time follows)')
    .option('--timeout <duration>', "time limit of the send (default the channel's timeout)")
    .action(async (name, opts, cmd) => {
      process.exitCode = await (await import('./notify.js')).notifyTestCommand(name, opts, globals(cmd));
    });
}
