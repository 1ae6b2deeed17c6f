import type { Command } from 'commander';
import { collect, globals } from '../register.js';

/** Registers `orchctl silence` (flags, help); silence.ts loads only when it runs. */
export function register(program: Command): void {
  const silence = program.command('silence').description('Mute notifications for a while (Alertmanager silences)');
  silence
    .command('create')
    .description('Create a Silence starting now; prints its name (list them with orchctl get silences)')
    .argument('[matchers...]', "matchers, as with -l: amtool's bare form, e.g. reason=Stalled")
    .option('-l, --matcher <matcher>', 'name=value, name!=value, name=~regex or name!~regex (repeatable)', collect)
    .option('--for <duration>', 'how long it lasts: 2h, 90m, 3d (at most 366d)')
    .option('--until <time>', 'when it ends instead, RFC 3339: 2025-01-31T18:00:00Z')
    .option('--comment <text>', 'why')
    .option('--name <name>', 'object name (default silence-<yyyymmdd-hhmmss>-<4 hex>)')
    .option('-n, --namespace <ns>', 'namespace (a silence mutes Events of its own namespace)')
    .action(async (matchers, opts, cmd) =>
      (await import('./silence.js')).silenceCreateCommand(matchers, opts, globals(cmd)),
    );
  silence
    .command('expire')
    .description('End silences now; the objects stay for the record')
    .argument('<name...>', 'Silence names')
    .option('-n, --namespace <ns>', 'namespace')
    .action(async (names, opts, cmd) => (await import('./silence.js')).silenceExpireCommand(names, opts, globals(cmd)));
}
