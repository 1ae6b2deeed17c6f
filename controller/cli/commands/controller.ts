/**
 * `orchctl controller`: parses the flags, serves /metrics, /healthz and /readyz, and runs the
 * controller process (controller/app/controller.ts: the control plane and, unless --no-node, this
 * host's node agent) until SIGINT/SIGTERM or, with --once, one pass. `orchctl node` (node.ts) runs
 * the same process without the control plane, through runProcess().
 */
import path from 'node:path';
import { formatDuration, parseDuration } from '../../api/duration.js';
import { orchctlHome } from '../../config/paths.js';
import { checkDns1123Subdomain } from '../../api/names.js';
import { ControllerApp, type ControllerAppOptions } from '../../app/controller.js';
import { parseRetention } from '../../api/retention.js';
import {
  DEFAULT_METRICS_ADDR,
  exposureWarning,
  formatAddr,
  parseMetricsAddr,
  startMetricsServer,
  type MetricsServer,
} from '../../metrics/index.js';
import { checkLeaderLease } from '../../runtime/lease.js';
import { createLogger, type Logger } from '../../runtime/log.js';
import { SHUTDOWN_TEARDOWN_MS, shutdownGraceMs } from '../../runtime/shutdown.js';
import { type ConsoleAddress, consoleAddress } from '../../console/address.js';
import { externalUrl, startConsole } from '../../console/server.js';
import { parseLinkTtl } from '../../notify/action-links.js';
import { storeTarget } from '../../store/open.js';
import { type GlobalOptions, openContext } from '../context.js';
import { orchctlVersion } from './version.js';

export interface ControllerOptions {
  once?: boolean;
  manifests?: string;
  workers?: string;
  resync?: string;
  observeInterval?: string;
  tmuxSocket?: string;
  logFormat?: 'text' | 'json';
  /** How long a stop lets the work in flight finish (1s to 10m, default 30s; runtime/shutdown.ts). */
  shutdownGrace?: string;
  logLevel?: string;
  metricsAddr?: string;
  gcOrphans?: boolean;
  /** commander's --no-node: false runs the control plane only. */
  node?: boolean;
  nodeName?: string;
  /** Take over the runs of the node name this home ran under before (app/node-home.ts). */
  renameNode?: boolean;
  nodeLostGrace?: string;
  leaderLease?: string;
  /** Also serve the web console here (HOST:PORT; docs/console.md). */
  consoleAddr?: string;
  allowRemote?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  /** The console's external URL: signed approve/reject links in a pending Decision's notification. */
  consoleUrl?: string;
  /** How long such a link works (1m to 24h, default 1h). */
  linkTtl?: string;
  /** Retention flags (api/retention.ts), as typed. */
  eventTtl?: string;
  notificationRetention?: string;
  evaluationsPerSession?: string;
  runDirsPerSession?: string;
  deletedSessionDirTtl?: string;
  autopilotSessionTtl?: string;
  eventLogMaxBytes?: string;
}

/** The flags `orchctl controller` and `orchctl node` share. */
export type ProcessOptions = Omit<
  ControllerOptions,
  | 'manifests'
  | 'node'
  | 'nodeName'
  | 'nodeLostGrace'
  | 'leaderLease'
  | 'consoleAddr'
  | 'allowRemote'
  | 'tlsCert'
  | 'tlsKey'
  | 'consoleUrl'
  | 'linkTtl'
  | 'eventTtl'
  | 'notificationRetention'
  | 'evaluationsPerSession'
  | 'runDirsPerSession'
  | 'deletedSessionDirTtl'
  | 'autopilotSessionTtl'
  | 'eventLogMaxBytes'
>;

export async function controllerCommand(opts: ControllerOptions, g: GlobalOptions): Promise<void> {
  const nodeGraceMs = opts.nodeLostGrace ? parseDuration(opts.nodeLostGrace) : undefined;
  if (opts.node === false && opts.nodeName) throw new Error('--node-name names the embedded node: not with --no-node');
  const badName = opts.nodeName === undefined ? undefined : checkDns1123Subdomain(opts.nodeName);
  if (badName) throw new Error(`--node-name ${opts.nodeName}: ${badName}`);
  if (opts.node === false && opts.renameNode)
    throw new Error('--rename-node renames the embedded node: not with --no-node');
  const web = opts.consoleAddr === undefined ? undefined : consoleAddress(opts.consoleAddr, opts, '--console-addr');
  const linkBase = externalUrl(opts.consoleUrl, '--console-url');
  const linkTtlMs = parseLinkTtl(opts.linkTtl);
  if (opts.linkTtl !== undefined && !linkBase)
    throw new Error('--link-ttl is for action links: give --console-url too');
  const retention = parseRetention({
    eventTtlMs: opts.eventTtl,
    notificationTtlMs: opts.notificationRetention,
    evaluationsPerSession: opts.evaluationsPerSession,
    runDirsPerSession: opts.runDirsPerSession,
    deletedSessionDirTtlMs: opts.deletedSessionDirTtl,
    autopilotSessionTtlMs: opts.autopilotSessionTtl,
    eventLogMaxBytes: opts.eventLogMaxBytes,
  });
  await runProcess(opts, g, {
    retention,
    manifests: opts.manifests,
    node: opts.node === false ? false : { name: opts.nodeName, rename: !!opts.renameNode },
    nodeGraceMs,
    leaderLeaseSeconds: leaderLeaseSeconds(opts.leaderLease),
    ...(web ? { console: web } : {}),
    ...(linkBase ? { actionLinks: { base: linkBase, ttlMs: linkTtlMs } } : {}),
  });
}

/** `--leader-lease`: seconds, or undefined for the default; throws outside the bounds. */
export function leaderLeaseSeconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  const bad = checkLeaderLease(ms);
  if (bad) throw new Error(`--leader-lease ${text}: ${bad}`);
  return ms / 1000;
}

/** Runs the process `roles` describe with the shared flags, serving metrics, until a signal (or one pass). */
export async function runProcess(
  opts: ProcessOptions,
  g: GlobalOptions,
  roles: Pick<
    ControllerAppOptions,
    'manifests' | 'controlPlane' | 'node' | 'nodeGraceMs' | 'leaderLeaseSeconds' | 'retention' | 'actionLinks'
  > & {
    console?: ConsoleAddress;
  },
): Promise<void> {
  const { console: web, ...appRoles } = roles;
  const log = createLogger({ format: opts.logFormat, level: opts.logLevel });
  const workers = opts.workers ? Number(opts.workers) : undefined;
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1))
    throw new Error(`--workers must be a positive integer, got "${opts.workers}"`);
  const shutdownGrace = shutdownGraceMs(opts.shutdownGrace);
  // --once is one pass and exit: nothing would scrape it, so it serves nothing.
  const metricsAddr = opts.once
    ? undefined
    : parseMetricsAddr(opts.metricsAddr ?? process.env.ORCHCTL_METRICS_ADDR ?? DEFAULT_METRICS_ADDR);
  // A node's name: the flag, else the context's `node` (docs/contexts.md), else as this home was first started.
  const node = roles.node;
  if (node && !node.name) {
    const t = await storeTarget({ home: g.home ? path.resolve(g.home) : orchctlHome(), context: g.context });
    if (t.node) roles = { ...roles, node: { ...node, name: t.node } };
  }
  const m = new ControllerApp({
    home: g.home,
    context: g.context,
    once: opts.once,
    workers,
    resyncMs: opts.resync ? parseDuration(opts.resync) : undefined,
    observeEveryMs: opts.observeInterval ? parseDuration(opts.observeInterval) : undefined,
    tmuxSocket: opts.tmuxSocket,
    gcOrphans: opts.gcOrphans,
    shutdownGraceMs: shutdownGrace,
    version: orchctlVersion(),
    log,
    ...appRoles,
  });
  // Served from before the lease is won, so a standby answers /healthz (and /readyz with 503).
  let server: MetricsServer | undefined;
  let consoleServer: { close(): Promise<void> } | undefined;
  try {
    if (web && !opts.once) consoleServer = await serveConsole(web, opts, g, log);
    if (metricsAddr) {
      server = await startMetricsServer(metricsAddr, m.metrics.registry, () => m.readiness(), log);
      log.info(`serving /metrics, /healthz and /readyz on http://${formatAddr(server.address)}`);
      const exposed = exposureWarning(metricsAddr);
      if (exposed) log.warn(exposed);
    }
  } catch (e) {
    await consoleServer?.close();
    await m.stop();
    throw e;
  }
  let signalled = false;
  const stop = (sig: string) => {
    // A control plane without a node agent (--no-node) runs nothing in tmux: nothing to adopt.
    const runs = roles.node === false ? '' : ' (tmux sessions keep running and are adopted on the next start)';
    log.info(`${sig}: shutting down within ${formatDuration(shutdownGrace)}${runs}`);
    if (!signalled) exitBy(shutdownGrace + SHUTDOWN_TEARDOWN_MS, sig, log);
    signalled = true;
    // Its failure (a store lost under it) is reported once, by the `await m.stop()` below.
    m.stop().catch(() => undefined);
  };
  // `on`, not `once`: a repeated signal during shutdown must not kill the process before the
  // store is closed and its WAL checkpointed (m.stop() is idempotent).
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  try {
    await m.run();
  } finally {
    await m.stop();
    await server?.close();
    await consoleServer?.close();
    // Shut down: a reconcile the grace gave up on may still hold a timer, a child or a socket that
    // keeps Node's loop alive. Not unless something does (unref), and after the exit code is set.
    setTimeout(() => process.exit(), 0).unref();
  }
}

/**
 * The backstop of a stop: past the grace and the time for what must be done after it (the leases
 * released, the store closed), the process exits whatever it still waits for (a store that does
 * not answer). Unref'd: it never keeps a finished process alive.
 */
function exitBy(ms: number, sig: string, log: Logger): void {
  setTimeout(() => {
    log.error(`shutdown: not done ${formatDuration(ms)} after ${sig}; exiting without closing the store`);
    process.exit(1);
  }, ms).unref();
}

/** The web console in the controller's process, over a store handle of its own (docs/console.md). */
async function serveConsole(web: ConsoleAddress, opts: ProcessOptions, g: GlobalOptions, log: Logger) {
  const ctx = openContext(g);
  try {
    const home = g.home ? path.resolve(g.home) : orchctlHome();
    const tmuxSocket = opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl';
    const s = await startConsole({ store: ctx.store, home, ...web, tmuxSocket, log });
    log.info(`serving the web console on ${s.url} (orchctl console --print-url prints the URL that logs in)`);
    return { close: () => s.close().finally(() => ctx.close()) };
  } catch (e) {
    await ctx.close();
    throw e;
  }
}
