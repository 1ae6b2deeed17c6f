import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl controller` (flags, help); controller.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('controller')
    .description('Run the controller: reconcile AgentSessions against tmux, git and the host')
    .option('--once', 'run one full pass and exit')
    .option('--no-node', 'run the control plane only: no node agent (runs) in this process (docs/multi-host.md)')
    .option('--node-name <name>', "the embedded node agent's name (default: as last run here, else the hostname)")
    .option(
      '--rename-node',
      "rename this home's node: rebind its sessions to --node-name and adopt their runs (docs/multi-host.md)",
    )
    .option('--node-lost-grace <duration>', "a lost node's sessions move (or fail) this long after it was seen", '40s')
    .option(
      '--leader-lease <duration>',
      'the controller lease, 3s to 60s (default 4s): a standby takes over this long after a hang',
    )
    .option('--manifests <dir>', 'also apply this directory (recursively) now and on every change')
    .option('--workers <n>', 'concurrent session reconciles', '16')
    .option('--resync <duration>', 'period of the full resync', '30s')
    .option('--observe-interval <duration>', 'how often a running session is observed', '5s')
    .option('--tmux-socket <name>', 'tmux socket name (-L), default $ORCHCTL_TMUX_SOCKET or orchctl')
    .option(
      '--gc-orphans',
      'kill tmux sessions on the socket that this store cannot account for (default: report them)',
    )
    .option(
      '--shutdown-grace <duration>',
      'on SIGINT/SIGTERM, let the reconciles in flight finish this long, 1s to 10m (default 30s)',
    )
    .option('--log-format <format>', 'text or json (default: text on a terminal)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .option(
      '--metrics-addr <host:port>',
      'serve /metrics, /healthz and /readyz here; 0 or off disables (default $ORCHCTL_METRICS_ADDR or 127.0.0.1:9464)',
    )
    .option('--event-ttl <duration>', 'delete Events this long after they last occurred, 1m to 720h (default 1h)')
    .option('--notification-retention <duration>', 'keep settled Notifications this long, 1m to 2160h (default 48h)')
    .option('--evaluations-per-session <n>', "keep a session's newest N finished Evaluations, 2 to 1000 (default 20)")
    .option('--run-dirs-per-session <n>', "keep a session's newest N run directories on disk, 2 to 1000 (default 10)")
    .option(
      '--deleted-session-dir-ttl <duration>',
      "remove a deleted session's directory once untouched this long, 1m to 2160h (default 24h)",
    )
    .option(
      '--autopilot-session-ttl <duration>',
      'delete a finished session an Autopilot started this long after it completed, 1m to 8760h (default 168h)',
    )
    .option(
      '--event-log-max-bytes <size>',
      "cut a session's event log to its newest half past this size, 1Mi to 64Gi (default 64Mi)",
    )
    .option('--console-addr <host:port>', 'also serve the web console here, e.g. 127.0.0.1:9470 (docs/console.md)')
    .option('--allow-remote', 'let --console-addr be beyond loopback (needs --tls-cert and --tls-key)')
    .option('--tls-cert <file>', "the console's TLS certificate (PEM)")
    .option('--tls-key <file>', "the console's TLS private key (PEM)")
    .option(
      '--console-url <url>',
      "the console's address as people reach it (https://…): a pending Decision's notification carries " +
        'signed approve/reject links to it (docs/console.md "Action links")',
    )
    .option('--link-ttl <duration>', 'how long an action link works, 1m to 24h (default 1h)')
    .action(async (opts, cmd) => (await import('./controller.js')).controllerCommand(opts, globals(cmd)));
}
