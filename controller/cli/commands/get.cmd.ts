import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl get` (flags, help); get.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('get')
    .description('List objects as a table or in yaml/json/name/jsonpath form')
    .argument('<type...>', 'TYPE [NAME...], TYPE/NAME or TYPE1,TYPE2')
    .option('-n, --namespace <ns>', 'namespace (default: default)')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-l, --selector <selector>', "label selector, e.g. 'team=web,tier!=ci'")
    .option('-o, --output <format>', 'wide | yaml | json | name | jsonpath=TEMPLATE')
    .option('-w, --watch', 'after listing, stream changes')
    .option('--watch-only', 'stream changes without the initial list')
    .option('--output-watch-events', 'prefix watched rows with ADDED/MODIFIED/DELETED')
    .option('--show-labels', 'add a LABELS column')
    .option('--no-headers', 'omit the table header')
    .option('--ignore-not-found', 'exit 0 when a named object does not exist')
    .action(async (args, opts, cmd) =>
      (await import('./get.js')).getCommand(args, { ...opts, noHeaders: opts.headers === false }, globals(cmd)),
    );
}
