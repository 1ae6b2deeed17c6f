/**
 * orchctl: the kubectl-shaped command line. Each command's module is loaded only when it runs,
 * so `orchctl get` does not pay for ajv or the controller at start-up.
 */
import type * as Commander from 'commander';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GlobalOptions } from './context.js';
import { registerSecretsFromEnv } from '../api/redact.js';
import { reportError } from './output.js';

// require(), not import: Node 20 loads a CommonJS package imported from ESM through its ESM
// translator (a lexer pass and a second module record): ~2 ms of every start-up here.
const { Command } = createRequire(import.meta.url)('commander') as typeof Commander;
type Command = Commander.Command;

const collect = (v: string, prev: string[] = []) => [...prev, v];

function packageVersion(): string {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

export function buildProgram(): Command {
  const program = new Command('orchctl')
    .description('Declarative, Kubernetes-style controller for AI coding-agent sessions')
    .option('--home <dir>', 'state directory (default $ORCHCTL_HOME or ~/.orchctl)')
    .option('--context <name>', 'the context of $ORCHCTL_HOME/config whose store to use (docs/contexts.md)')
    // A usage error is one line and a pointer to the help, not the whole help text.
    .showHelpAfterError("Run 'orchctl --help' for usage.")
    .enablePositionalOptions()
    .option('--version', 'print the orchctl version and exit')
    .on('option:version', () => {
      process.stdout.write(`orchctl v${packageVersion()}\n`);
      process.exit(0);
    });

  program
    .command('apply')
    .description('Create or update objects from manifest files, all-or-nothing')
    .requiredOption('-f, --filename <path>', 'file, directory or - for stdin (repeatable)', collect)
    .option('-R, --recursive', 'process directories recursively')
    .option('--dry-run [mode]', 'none, client or server: validate and report without writing')
    .option('--prune', 'delete previously applied objects that match -l and are not in the files')
    .option('-l, --selector <selector>', 'label selector for --prune')
    .option('-n, --namespace <ns>', 'namespace for objects that do not name one')
    .option('-o, --output <format>', 'name: print only type/name')
    .action(async (opts, cmd) => (await import('./commands/apply.js')).applyCommand(opts, globals(cmd)));

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
      (await import('./commands/get.js')).getCommand(
        args,
        { ...opts, noHeaders: opts.headers === false },
        globals(cmd),
      ),
    );

  program
    .command('describe')
    .description('Show an object in detail, with its conditions and events')
    .argument('<type...>', 'TYPE [NAME...] or TYPE/NAME')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('-l, --selector <selector>', 'label selector when no name is given')
    .action(async (args, opts, cmd) =>
      (await import('./commands/describe.js')).describeCommand(args, opts, globals(cmd)),
    );

  program
    .command('delete')
    .description('Delete objects by name, label selector or manifest file')
    .argument('[type...]', 'TYPE NAME..., TYPE/NAME')
    .option('-f, --filename <path>', 'delete the objects defined in these files (repeatable)', collect)
    .option('-R, --recursive', 'process directories recursively')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-l, --selector <selector>', 'label selector')
    .option('--all', 'delete all objects of the type in the namespace')
    .option('--ignore-not-found', 'treat missing objects as deleted')
    .option('--dry-run [mode]', 'none, client or server')
    .option('--wait', 'wait until finalizers have run and the objects are gone')
    .option('--timeout <duration>', 'how long --wait waits', '60s')
    .action(async (args, opts, cmd) => (await import('./commands/delete.js')).deleteCommand(args, opts, globals(cmd)));

  program
    .command('diff')
    .description('Show what apply would change (exit 0: none, 1: differences)')
    .requiredOption('-f, --filename <path>', 'file, directory or - (repeatable)', collect)
    .option('-R, --recursive', 'process directories recursively')
    .option('-n, --namespace <ns>', 'namespace for objects that do not name one')
    .action(async (opts, cmd) => (await import('./commands/diff.js')).diffCommand(opts, globals(cmd)));

  program
    .command('explain')
    .description('Document a kind or one of its fields, from the CRD schema')
    .argument('<field>', 'KIND[.field.path], e.g. agentsession.spec.restartPolicy')
    .option('--recursive', 'list all nested fields')
    .action(async (field, opts, cmd) =>
      (await import('./commands/explain.js')).explainCommand(field, opts, globals(cmd)),
    );

  program
    .command('schema')
    .description('Write JSON Schemas for editors (yaml-language-server), generated from crds/')
    .argument('[kind]', 'print the schema of one kind instead')
    .option('-d, --output-dir <dir>', 'directory to write to', 'schemas')
    .action(async (kind, opts) => (await import('./commands/schema.js')).schemaCommand(kind, opts));

  program
    .command('version')
    .description('Print the orchctl version, the store and the controller holding the lease')
    .option('-o, --output <format>', 'json')
    .option('--client', 'client version only')
    .action(async (opts, cmd) => (await import('./commands/version.js')).versionCommand(opts, globals(cmd)));

  program
    .command('doctor')
    .description(
      'Check this host: tmux, git and node versions, agent CLIs on PATH and whether their detection patterns ' +
        'are verified for the installed version',
    )
    .option('-o, --output <format>', 'json')
    .action(async (opts, cmd) => (await import('./commands/doctor.js')).doctorCommand(opts, globals(cmd)));

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
    .option('--workers <n>', 'concurrent session reconciles', '4')
    .option('--resync <duration>', 'period of the full resync', '30s')
    .option('--observe-interval <duration>', 'how often a running session is observed', '5s')
    .option('--tmux-socket <name>', 'tmux socket name (-L), default $ORCHCTL_TMUX_SOCKET or orchctl')
    .option(
      '--gc-orphans',
      'kill tmux sessions on the socket that this store cannot account for (default: report them)',
    )
    .option('--log-format <format>', 'text or json (default: text on a terminal)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .option(
      '--metrics-addr <host:port>',
      'serve /metrics, /healthz and /readyz here; 0 or off disables (default $ORCHCTL_METRICS_ADDR or 127.0.0.1:9464)',
    )
    .action(async (opts, cmd) => (await import('./commands/controller.js')).controllerCommand(opts, globals(cmd)));

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
    .option('--workers <n>', 'concurrent session reconciles', '4')
    .option('--resync <duration>', 'period of the full resync', '30s')
    .option('--observe-interval <duration>', 'how often a running session is observed', '5s')
    .option('--tmux-socket <name>', 'tmux socket name (-L), default $ORCHCTL_TMUX_SOCKET or orchctl')
    .option('--gc-orphans', 'kill tmux sessions on the socket that this store cannot account for')
    .option('--log-format <format>', 'text or json (default: text on a terminal)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .option('--metrics-addr <host:port>', 'serve /metrics, /healthz and /readyz here; 0 or off disables')
    .action(async (opts, cmd) => (await import('./commands/node.js')).nodeCommand(opts, globals(cmd)));

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
      (await import('./commands/config.js')).getContextsCommand(
        names,
        { ...opts, noHeaders: opts.headers === false },
        globals(cmd),
      ),
    );
  config
    .command('current-context')
    .description('Print the current context')
    .action(async (_opts, cmd) => (await import('./commands/config.js')).currentContextCommand(globals(cmd)));
  config
    .command('use-context')
    .description('Make NAME the current context')
    .argument('<name>', 'context name')
    .action(async (name, _opts, cmd) => (await import('./commands/config.js')).useContextCommand(name, globals(cmd)));
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
    .action(async (name, opts, cmd) =>
      (await import('./commands/config.js')).setContextCommand(name, opts, globals(cmd)),
    );
  config
    .command('delete-context')
    .description('Delete a context (the current one too: orchctl then uses the embedded default)')
    .argument('<name>', 'context name')
    .action(async (name, _opts, cmd) =>
      (await import('./commands/config.js')).deleteContextCommand(name, globals(cmd)),
    );
  config
    .command('view')
    .description('Print the config file')
    .option('-o, --output <format>', 'yaml or json', 'yaml')
    .action(async (opts, cmd) => (await import('./commands/config.js')).viewCommand(opts, globals(cmd)));

  const store = program.command('store').description('Back up or restore the state database (like etcdctl snapshot)');
  store
    .command('backup')
    .description('Write a consistent copy of the store to FILE (safe while the controller runs)')
    .argument('<file>', 'where to write the backup')
    .option('--force', 'overwrite FILE if it exists')
    .action(async (file, opts, cmd) =>
      (await import('./commands/store.js')).storeBackupCommand(file, opts, globals(cmd)),
    );
  store
    .command('restore')
    .description('Replace the store with the backup in FILE (refused while a controller holds the store)')
    .argument('<file>', 'a file written by orchctl store backup')
    .action(async (file, opts, cmd) =>
      (await import('./commands/store.js')).storeRestoreCommand(file, opts, globals(cmd)),
    );

  program
    .command('logs')
    .description("Print a session's output (the current run's output.log)")
    .argument('<session>', 'AgentSession name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-f, --follow', 'keep printing new output')
    .option('--tail <lines>', 'only the last N lines')
    .option('--run <n>', 'an earlier run instead of the current one')
    .option('--raw', 'keep terminal escape sequences')
    .action(async (name, opts, cmd) => (await import('./commands/logs.js')).logsCommand(name, opts, globals(cmd)));

  program
    .command('attach')
    .description("Attach your terminal to a running session's tmux pane (detach: C-b d)")
    .argument('<session>', 'AgentSession name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-r, --read-only', 'attach read-only')
    .option('--tmux-socket <name>', 'tmux socket name (-L)')
    .action(async (name, opts, cmd) => (await import('./commands/logs.js')).attachCommand(name, opts, globals(cmd)));

  program
    .command('send')
    .description('Send text (or answer keys) into a running session; verified like the task prompt')
    .argument('<session>', 'AgentSession name')
    .argument('[text]', 'text to send (or -f FILE)')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-f, --file <file>', 'send the contents of a file (- for stdin)')
    .option('--approve', "answer the prompt on screen with the Agent's approve keys")
    .option('--deny', "answer the prompt on screen with the Agent's deny keys")
    .option('--keys <keys...>', 'send these tmux key names instead (e.g. Down Enter)')
    .option('--force', 'paste text even while the agent waits at a prompt')
    .option('--tmux-socket <name>', 'tmux socket name (-L)')
    .option('--timeout <duration>', 'text for a run on another host: how long to wait for its node (default 60s)')
    .option('-o, --output <format>', 'json for a machine-readable result')
    .action(async (name, text, opts, cmd) => {
      process.exitCode = await (await import('./commands/send.js')).sendCommand(name, text, opts, globals(cmd));
    });

  program
    .command('judge')
    .description("Judge a session's current or last run now (an OnDemand Evaluation)")
    .argument('<session>', 'AgentSession name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('--wait', 'wait for the verdict and print it (exit 1 if the judgement fails)')
    .option('--timeout <duration>', 'how long --wait waits', '120s')
    .action(async (name, opts, cmd) => (await import('./commands/judge.js')).judgeCommand(name, opts, globals(cmd)));

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
        const { approveCommand, rejectCommand } = await import('./commands/approve.js');
        await (verb === 'approve' ? approveCommand : rejectCommand)(args, opts, globals(cmd));
      });

  program
    .command('restart')
    .description(
      'Ask for a new run of sessions (like kubectl rollout restart): sets their orchctl.io/restartedAt ' +
        'annotation; the controller stops the current run and starts a new one',
    )
    .argument('<type...>', 'session NAME… or session/NAME…')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-l, --selector <selector>', 'every session matching this label selector')
    .action(async (args, opts, cmd) =>
      (await import('./commands/restart.js')).restartCommand(args, opts, globals(cmd)),
    );

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
        const { freezeCommand, thawCommand } = await import('./commands/freeze.js');
        await (verb === 'freeze' ? freezeCommand : thawCommand)(args, opts, globals(cmd));
      });

  program
    .command('pipeline')
    .description('Work with pipelines')
    .command('resume')
    .description(
      'Answer a blocked pipeline: its blocked phases get the message (typed into a live run, verified; a run ' +
        'that ended gets a new run with the message in its prompt) and the pipeline goes on',
    )
    .argument('<name>', 'Pipeline name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-m, --message <text>', 'what to tell the blocked agent (default: go on, the blocker was dealt with)')
    .option('--wait', 'wait until the controller delivered it and print how (exit 1 unless delivered)')
    .option('--timeout <duration>', 'how long --wait waits', '60s')
    .action(async (name, opts, cmd) =>
      (await import('./commands/pipeline.js')).resumeCommand(name, opts, globals(cmd)),
    );

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
    .action(async (opts, cmd) => (await import('./commands/digest.js')).digestCommand(opts, globals(cmd)));

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
      process.exitCode = await (await import('./commands/notify.js')).notifyTestCommand(name, opts, globals(cmd));
    });

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
      (await import('./commands/silence.js')).silenceCreateCommand(matchers, opts, globals(cmd)),
    );
  silence
    .command('expire')
    .description('End silences now; the objects stay for the record')
    .argument('<name...>', 'Silence names')
    .option('-n, --namespace <ns>', 'namespace')
    .action(async (names, opts, cmd) =>
      (await import('./commands/silence.js')).silenceExpireCommand(names, opts, globals(cmd)),
    );

  const assess = program
    .command('assess')
    .description('What the detector, circuit breaker and checkpoints say about sessions');
  assess
    .command('status')
    .description('Breaker state against its thresholds, EMAs, checkpoints, interventions and consumer lag')
    .argument('[session]', 'AgentSession name (default: a table of every session)')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('-o, --output <format>', 'json')
    .action(async (name, opts, cmd) =>
      (await import('./commands/assess.js')).assessStatusCommand(name, opts, globals(cmd)),
    );
  assess
    .command('history')
    .description(
      "Sessions' outcomes and frustration, or one session's trajectory, checkpoints, signals and interventions",
    )
    .argument('[session]', 'AgentSession name (default: every recent session)')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces')
    .option('--since <duration>', 'how far back: 7d, 12h, 30m', '7d')
    .option('-o, --output <format>', 'json')
    .action(async (name, opts, cmd) =>
      (await import('./commands/assess.js')).assessHistoryCommand(name, opts, globals(cmd)),
    );

  program
    .command('completion')
    .description('Print a shell completion script: source <(orchctl completion bash)')
    .argument('<shell>', 'bash or zsh')
    .action(async (shell) => (await import('./commands/completion.js')).completionCommand(shell));

  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .action(async (words: string[], _opts, cmd) => {
      const { completeWords } = await import('./commands/completion.js');
      process.stdout.write((await completeWords(program, words, globals(cmd))).join('\n') + '\n');
    });

  return program;
}

export async function main(argv = process.argv): Promise<number> {
  // A closed pipe (`orchctl get ... | head`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
  });
  registerSecretsFromEnv(); // keys in this process's environment never reach its output
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e);
  }
}
