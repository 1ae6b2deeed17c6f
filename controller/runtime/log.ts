/** The controller's own log: pino, human-readable (pino-pretty) on a terminal, JSON lines otherwise. */
import { pino } from 'pino';
import pretty from 'pino-pretty';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
  debug(msg: string): void;
}

export function createLogger(opts: { level?: string; format?: 'text' | 'json' } = {}): Logger {
  const format = opts.format ?? (process.stderr.isTTY ? 'text' : 'json');
  const base = { level: opts.level ?? process.env.ORCHCTL_LOG_LEVEL ?? 'info', base: undefined };
  const p =
    format === 'text'
      ? pino(base, pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }))
      : pino(base, pino.destination({ dest: 2, sync: true }));
  return {
    info: (m) => p.info(m),
    warn: (m) => p.warn(m),
    debug: (m) => p.debug(m),
    error: (m, err) => (err instanceof Error ? p.error({ err: { message: err.message, stack: process.env.ORCHCTL_DEBUG ? err.stack : undefined } }, m) : p.error(m)),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };
