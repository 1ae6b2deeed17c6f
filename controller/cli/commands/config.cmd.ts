import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl config` (flags, help); config.ts loads only when it runs. */
export function register(program: Command): void {
  const config = program
    .command('config')
    .description('Contexts: which store orchctl uses, kept in $ORCHCTL_HOME/config (like kubectl config)');
  config
    .command('get-contexts')
    .description('List the contexts (* marks the current one)')
    .argument('[name...]', 'only these contexts')
    .option('-o, --output <format>', 'name: print only the names')
    .option('--no-headers', 'omit the table header')
    .action(async (names, opts, cmd) =>
      (await import('./config.js')).getContextsCommand(
        names,
        { ...opts, noHeaders: opts.headers === false },
        globals(cmd),
      ),
    );
  config
    .command('current-context')
    .description('Print the current context')
    .action(async (_opts, cmd) => (await import('./config.js')).currentContextCommand(globals(cmd)));
  config
    .command('use-context')
    .description('Make NAME the current context')
    .argument('<name>', 'context name')
    .action(async (name, _opts, cmd) => (await import('./config.js')).useContextCommand(name, globals(cmd)));
  config
    .command('set-context')
    .description('Create a context, or change the given fields of one')
    .argument('<name>', 'context name')
    .option('--sqlite <path>', 'an SQLite store file')
    .option(
      '--etcd-endpoints <urls>',
      'etcd client URLs, comma-separated (host:port means http://, or https:// with TLS)',
    )
    .option('--etcd-prefix <prefix>', 'key prefix in etcd (default /orchctl/)')
    .option('--etcd-ca <file>', "the etcd cluster's CA certificate (PEM)")
    .option('--etcd-cert <file>', 'client certificate for mutual TLS (PEM)')
    .option('--etcd-key <file>', 'client key for mutual TLS (PEM; a path, never the key itself)')
    .option('--etcd-call-timeout <duration>', 'deadline of every etcd call (default 5s)')
    .option('--node <name>', 'the node this host runs as in this context ("" removes it)')
    .action(async (name, opts, cmd) => (await import('./config.js')).setContextCommand(name, opts, globals(cmd)));
  config
    .command('delete-context')
    .description('Delete a context (the current one too: orchctl then uses the embedded default)')
    .argument('<name>', 'context name')
    .action(async (name, _opts, cmd) => (await import('./config.js')).deleteContextCommand(name, globals(cmd)));
  config
    .command('view')
    .description('Print the config file')
    .option('-o, --output <format>', 'yaml or json', 'yaml')
    .action(async (opts, cmd) => (await import('./config.js')).viewCommand(opts, globals(cmd)));
}
