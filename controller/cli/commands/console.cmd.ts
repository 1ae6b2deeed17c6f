import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl console` (flags, help); console.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('console')
    .description('Serve the web console on 127.0.0.1 (docs/console.md): sessions live, decisions, actions')
    .option('--port <port>', 'port to listen on (0: any free one)', '9470')
    .option('--address <host>', 'address to listen on; beyond loopback only with --allow-remote and TLS', '127.0.0.1')
    .option('--allow-remote', 'allow an address beyond loopback (needs --tls-cert and --tls-key)')
    .option('--tls-cert <file>', 'TLS certificate (PEM)')
    .option('--tls-key <file>', 'TLS private key (PEM; a path, never the key itself)')
    .option('--print-url', 'print the URL that logs in (with the access token) instead of the bare address')
    .option('--external-url <url>', 'the https:// URL of a reverse proxy in front: its Host and Origin are accepted')
    .option('--tmux-socket <name>', 'tmux socket name (-L), default $ORCHCTL_TMUX_SOCKET or orchctl')
    .action(async (opts, cmd) => (await import('./console.js')).consoleCommand(opts, globals(cmd)));
}
