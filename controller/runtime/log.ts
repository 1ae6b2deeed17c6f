/** The controller's own log: pino, human-readable (pino-pretty) on a terminal, JSON lines otherwise. */
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { redact } from '../api/redact.js';

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
      ? pino(
          base,
          pretty({
            destination: 2,
            sync: true,
            colorize: process.stderr.isTTY,
            translateTime: 'SYS:HH:MM:ss',
            ignore: 'pid,hostname',
          }),
        )
      : pino(base, pino.destination({ dest: 2, sync: true }));
  // Every line passes through redact(): a message may quote an error body that echoed a key.
  return {
    info: (m) => p.info(redact(m)),
    warn: (m) => p.warn(redact(m)),
    debug: (m) => p.debug(redact(m)),
    error: (m, err) =>
      err instanceof Error
        ? p.error(
            {
              err: {
                message: redact(err.message),
                stack: process.env.ORCHCTL_DEBUG ? redact(err.stack ?? '') : undefined,
              },
            },
            redact(m),
          )
        : p.error(redact(m)),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };
