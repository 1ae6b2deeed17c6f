/**
 * The controller's HTTP endpoints: /metrics (Prometheus text format), /healthz (the process is
 * up) and /readyz (this process leads and its caches are synced). Loopback by default: metrics
 * name sessions and projects, which is nobody else's business unless someone opens it up.
 */
import { isLoopbackHost } from '../api/endpoint.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export const DEFAULT_METRICS_ADDR = '127.0.0.1:9464';

export interface ListenAddr {
  host: string;
  port: number;
}

/**
 * HOST:PORT ([::1]:PORT for IPv6), or a bare PORT meaning 127.0.0.1:PORT; "0", "off" or ""
 * disable the server. ":PORT" is refused rather than read as "every interface" the way Go
 * programs do: listening beyond loopback has to be spelled out (0.0.0.0:PORT).
 */
export function parseMetricsAddr(value: string): ListenAddr | undefined {
  const v = value.trim();
  if (v === '' || v === '0' || v.toLowerCase() === 'off') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(v) ?? (/^\d+$/.test(v) ? [v, undefined, '127.0.0.1', v] : null);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || !host)
    throw new Error(
      `--metrics-addr must be HOST:PORT (e.g. ${DEFAULT_METRICS_ADDR}, or 0.0.0.0:9464 for every interface) ` +
        `or 0/off to disable, got "${value}"`,
    );
  if (!Number.isInteger(port) || port > 65535) throw new Error(`--metrics-addr: port must be 0-65535, got "${m[3]}"`);
  return { host, port };
}

/**
 * Why serving on `a` deserves a Warning (it is reachable from other hosts), or undefined on loopback.
 * Allowed — a Prometheus on another host needs it — but never silently: the metrics name every
 * session, project and node.
 */
export function exposureWarning(a: ListenAddr): string | undefined {
  if (isLoopbackHost(a.host.includes(':') ? `[${a.host}]` : a.host)) return undefined;
  return (
    `the metrics on http://${formatAddr(a)} are exposed beyond this host (session, project and node names ` +
    'included, no authentication): bind 127.0.0.1 unless another host scrapes them, and firewall the port'
  );
}

export const formatAddr = (a: ListenAddr) => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

/** How long a render may hold the event loop before it lets other work run. */
const SLICE_MS = 5;

/**
 * Renders like registry.metrics(), but in slices: after each metric family, if it has held the
 * event loop for SLICE_MS, it yields (setImmediate) so reconciles, watches and tmux signals run
 * in between. A scrape of thousands of sessions may take longer on a busy controller; the
 * controller is never held up for the whole render.
 */
export async function renderMetrics(registry: Registry): Promise<string> {
  const parts: string[] = [];
  let slice = performance.now();
  for (const m of registry.getMetricsAsArray()) {
    parts.push(await registry.getSingleMetricAsString(m.name));
    if (performance.now() - slice >= SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      slice = performance.now();
    }
  }
  return `${parts.join('\n\n')}\n`;
}

export interface Readiness {
  ready: boolean;
  reason: string;
}

export interface MetricsServer {
  address: ListenAddr;
  close(): Promise<void>;
}

const BIND_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (another controller or program listens there)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: "the address is not one of this host's",
  ENOTFOUND: 'the host name does not resolve',
};

export async function startMetricsServer(
  addr: ListenAddr,
  registry: Registry,
  readiness: () => Readiness,
  log?: { error(msg: string, err?: unknown): void },
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    switch (url) {
      case '/metrics':
        renderMetrics(registry).then(
          (text) => send(200, text, registry.contentType),
          (e: Error) => {
            log?.error('rendering /metrics failed', e);
            send(500, `rendering metrics failed: ${e.message}\n`);
          },
        );
        return;
      case '/healthz':
        return send(200, 'ok\n');
      case '/readyz': {
        const r = readiness();
        return send(r.ready ? 200 : 503, `${r.ready ? 'ok' : 'not ready'}: ${r.reason}\n`);
      }
      default:
        return send(404, 'not found: try /metrics, /healthz or /readyz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const why = BIND_ERRORS[e.code ?? ''] ?? e.message;
      reject(
        new Error(
          `cannot serve metrics on ${formatAddr(addr)}: ${why}; choose another address with ` +
            '--metrics-addr HOST:PORT (or ORCHCTL_METRICS_ADDR), or turn the server off with --metrics-addr 0',
        ),
      );
    });
    server.listen({ host: addr.host, port: addr.port }, resolve);
  });
  server.on('error', (e) => log?.error('metrics server error', e));
  const bound = server.address() as AddressInfo;
  return {
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // Prometheus keeps its connection alive between scrapes
      }),
  };
}
