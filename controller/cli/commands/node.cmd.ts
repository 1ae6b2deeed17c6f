import type { Command } from 'commander';
import { collect, globals } from '../register.js';

/** Registers `orchctl node` (flags, help); node.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('node')
    .description('Run a node agent: register this host as a Node and run the sessions bound to it (docs/multi-host.md)')
    .option('--name <name>', 'the Node name (default: as last run in this ORCHCTL_HOME, else the hostname)')
    .option(
      '--rename-node',
      "rename this home's node: rebind its sessions to --name and adopt their runs (docs/multi-host.md)",
    )
    .option('--label <key=value>', 'a label of the Node (repeatable); nodeSelectors match these', collect, [])
    .option('--max-sessions <n>', 'at most this many sessions bound here (spec.maxSessions)')
    .option('--once', 'run one full pass and exit')
    .option('--workers <n>', 'concurrent session reconciles', '16')
    .option('--resync <duration>', 'period of the full resync', '30s')
    .option('--observe-interval <duration>', 'how often a running session is observed', '5s')
    .option('--tmux-socket <name>', 'tmux socket name (-L), default $ORCHCTL_TMUX_SOCKET or orchctl')
    .option('--gc-orphans', 'kill tmux sessions on the socket that this store cannot account for')
    .option(
      '--shutdown-grace <duration>',
      'on SIGINT/SIGTERM, let the reconciles in flight finish this long, 1s to 10m (default 30s)',
    )
    .option('--log-format <format>', 'text or json (default: text on a terminal)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .option('--metrics-addr <host:port>', 'serve /metrics, /healthz and /readyz here; 0 or off disables')
    .action(async (opts, cmd) => (await import('./node.js')).nodeCommand(opts, globals(cmd)));
}
