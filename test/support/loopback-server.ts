/**
 * The scaffolding the scripted fake model APIs share: an HTTP server on a free 127.0.0.1 port, a
 * request body read whole (JSON when it parses, else the raw text), and a close that does not wait
 * for a CLI's keep-alive connections.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  server: http.Server;
  url: string;
}

/** Listens on a free loopback port; `handle` gets every request (its promise is not awaited). */
export async function startLoopback(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
): Promise<LoopbackServer> {
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export async function closeLoopback(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The body as text and as JSON (undefined when empty; the raw text when it is not JSON). */
export async function readBody(req: http.IncomingMessage): Promise<{ raw: string; body: unknown }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  try {
    return { raw, body: raw === '' ? undefined : JSON.parse(raw) };
  } catch {
    return { raw, body: raw }; // keep the raw text: a test can still look at it
  }
}
