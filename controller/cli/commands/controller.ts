/**
 * `orchctl controller`: parses the flags, serves /metrics, /healthz and /readyz, and runs the
 * controller process (controller/app/controller.ts) until SIGINT/SIGTERM or, with --once, one pass.
 */
import { parseDuration } from '../../api/duration.js';
import { ControllerApp } from '../../app/controller.js';
import {
  DEFAULT_METRICS_ADDR,
  formatAddr,
  parseMetricsAddr,
  startMetricsServer,
  type MetricsServer,
} from '../../metrics/index.js';
import { createLogger } from '../../runtime/log.js';
import type { GlobalOptions } from '../context.js';
import { orchctlVersion } from './version.js';

export interface ControllerOptions {
  once?: boolean;
  manifests?: string;
  workers?: string;
  resync?: string;
  observeInterval?: string;
  tmuxSocket?: string;
  logFormat?: 'text' | 'json';
  logLevel?: string;
  metricsAddr?: string;
  gcOrphans?: boolean;
}

export async function controllerCommand(opts: ControllerOptions, g: GlobalOptions): Promise<void> {
  const log = createLogger({ format: opts.logFormat, level: opts.logLevel });
  const workers = opts.workers ? Number(opts.workers) : undefined;
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1))
    throw new Error(`--workers must be a positive integer, got "${opts.workers}"`);
  // --once is one pass and exit: nothing would scrape it, so it serves nothing.
  const metricsAddr = opts.once
    ? undefined
    : parseMetricsAddr(opts.metricsAddr ?? process.env.ORCHCTL_METRICS_ADDR ?? DEFAULT_METRICS_ADDR);
  const m = new ControllerApp({
    home: g.home,
    context: g.context,
    once: opts.once,
    manifests: opts.manifests,
    workers,
    resyncMs: opts.resync ? parseDuration(opts.resync) : undefined,
    observeEveryMs: opts.observeInterval ? parseDuration(opts.observeInterval) : undefined,
    tmuxSocket: opts.tmuxSocket,
    gcOrphans: opts.gcOrphans,
    version: orchctlVersion(),
    log,
  });
  // Served from before the lease is won, so a standby answers /healthz (and /readyz with 503).
  let server: MetricsServer | undefined;
  try {
    if (metricsAddr) {
      server = await startMetricsServer(metricsAddr, m.metrics.registry, () => m.readiness(), log);
      log.info(`serving /metrics, /healthz and /readyz on http://${formatAddr(server.address)}`);
    }
  } catch (e) {
    await m.stop();
    throw e;
  }
  const stop = (sig: string) => {
    log.info(`${sig}: shutting down (tmux sessions keep running and are adopted on the next start)`);
    void m.stop();
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
  }
}
