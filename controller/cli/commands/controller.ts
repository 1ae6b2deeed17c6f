import { parseDuration } from '../../api/duration.js';
import { createLogger } from '../../runtime/log.js';
import type { GlobalOptions } from '../context.js';
import { Manager } from '../manager.js';

export interface ControllerOptions {
  once?: boolean;
  manifests?: string;
  workers?: string;
  resync?: string;
  observeInterval?: string;
  tmuxSocket?: string;
  logFormat?: 'text' | 'json';
  logLevel?: string;
}

export async function controllerCommand(opts: ControllerOptions, g: GlobalOptions): Promise<void> {
  const log = createLogger({ format: opts.logFormat, level: opts.logLevel });
  const workers = opts.workers ? Number(opts.workers) : undefined;
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1)) throw new Error(`--workers must be a positive integer, got "${opts.workers}"`);
  const m = new Manager({
    home: g.home,
    once: opts.once,
    manifests: opts.manifests,
    workers,
    resyncMs: opts.resync ? parseDuration(opts.resync) : undefined,
    observeEveryMs: opts.observeInterval ? parseDuration(opts.observeInterval) : undefined,
    tmuxSocket: opts.tmuxSocket,
    log,
  });
  const stop = (sig: string) => {
    log.info(`${sig}: shutting down (tmux sessions keep running and are adopted on the next start)`);
    void m.stop();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  try {
    await m.run();
  } finally {
    await m.stop();
  }
}
