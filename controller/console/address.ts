/** Where the console listens: `HOST:PORT` (or `PORT`), loopback unless `--allow-remote` with TLS files. */

export const DEFAULT_CONSOLE_PORT = 9470;

export interface ConsoleFlags {
  allowRemote?: boolean;
  tlsCert?: string;
  tlsKey?: string;
}

export interface ConsoleAddress {
  host: string;
  port: number;
  tls?: { cert: string; key: string };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Parses and checks an address; errors name the flag and say what to do. */
export function consoleAddress(addr: string, flags: ConsoleFlags, flag = '--address'): ConsoleAddress {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:]+)|([0-9a-fA-F:]+)):(\d+)$/.exec(addr) ?? /^()()()(\d+)$/.exec(addr);
  if (!m) throw new Error(`${flag} "${addr}" is not HOST:PORT or PORT`);
  const host = m[1] || m[2] || m[3] || '127.0.0.1';
  const port = Number(m[4]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${flag} "${addr}": port must be 0-65535`);
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined))
    throw new Error('--tls-cert and --tls-key go together');
  const tls = flags.tlsCert && flags.tlsKey ? { cert: flags.tlsCert, key: flags.tlsKey } : undefined;
  if (!LOOPBACK.test(host)) {
    if (!flags.allowRemote)
      throw new Error(
        `${flag} "${addr}" is not loopback: add --allow-remote (with --tls-cert and --tls-key), or keep it on ` +
          '127.0.0.1 and reach it through an SSH tunnel or a TLS reverse proxy (docs/console.md)',
      );
    if (!tls) throw new Error(`${flag} "${addr}" is not loopback: it needs --tls-cert and --tls-key`);
  }
  return { host, port, ...(tls ? { tls } : {}) };
}
