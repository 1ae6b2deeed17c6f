/**
 * The web console's server-side guards, over real HTTP and a real SQLite store (the browser tests
 * are in test/e2e/console.test.ts): the token file, the Host a loopback console answers to, no
 * state change by GET, a wrong token refused and audited, binding beyond loopback only with TLS,
 * the console served by `orchctl controller --console-addr`, and what the board costs on the wire
 * (its HTML gzip-compressed, its rows not sent again by a stream opened on an unchanged board).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleAddress } from '../../controller/console/address.js';
import { loadOrCreateToken } from '../../controller/console/auth.js';
import { type ConsoleServer, externalUrl, startConsole } from '../../controller/console/server.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { gunzipSync } from 'node:zlib';
import { makeHarness } from '../support/controller-harness.js';

let dir: string;
let store: SqliteStore;
let server: ConsoleServer;
const quiet = { info() {}, warn() {} };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-console-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  server = await startConsole({ store, home: dir, host: '127.0.0.1', port: 0, tmuxSocket: 'unused', log: quiet });
});

afterAll(async () => {
  await server?.close();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A raw request, so the Host header can be anything. */
function request(
  method: string,
  p: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<{ status: number; text: string }> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: p, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A login's cookie (the token posted as the login form does). */
function loginCookie(): Promise<string> {
  const u = new URL(server.url);
  const headers = { host: u.host, 'content-type': 'application/x-www-form-urlencoded' };
  return new Promise<string>((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: '/login', headers }, (res) => {
      res.resume();
      resolve(String(res.headers['set-cookie']?.[0]).split(';')[0]);
    });
    req.on('error', reject);
    req.end(`token=${loadOrCreateToken(dir).token}`);
  });
}

/** GET with the raw body and headers (not decoded). */
function getRaw(
  p: string,
  headers: Record<string, string>,
): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: u.hostname, port: u.port, path: p, headers: { host: u.host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}

/** The first event a board stream sends (after its opening comment), then the stream is closed. */
function firstEvent(p: string, cookie: string): Promise<string> {
  const u = new URL(server.url);
  const headers = { host: u.host, cookie, accept: 'text/event-stream' };
  return new Promise((resolve, reject) => {
    const req = http.get({ host: u.hostname, port: u.port, path: p, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => {
        text += d.toString();
        const ev = /event: (\w+)\ndata: .*\n\n/.exec(text);
        if (!ev) return;
        req.destroy();
        resolve(ev[0]);
      });
    });
    req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
  });
}

const session = (name: string) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name, namespace: 'default' },
  spec: { agent: { command: ['sh', '-c', 'exec sleep 3600'], promptDelivery: 'none' }, workdir: dir },
});

const streamOf = (html: string) => /data-stream="([^"]+)"/.exec(html)![1].replace(/&amp;/g, '&');

describe('console server', () => {
  it('keeps its token in a 0600 file created once, and refuses a file others can read', () => {
    const file = path.join(dir, 'console-token');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateToken(dir).token).toBe(JSON.parse(fs.readFileSync(file, 'utf8')).token);
    expect(server.loginUrl).toBe(`${server.url}/login#token=${loadOrCreateToken(dir).token}`);
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-console-mode-'));
    fs.writeFileSync(path.join(other, 'console-token'), '{"name":"admin","token":"x"}', { mode: 0o644 });
    expect(() => loadOrCreateToken(other)).toThrow(/readable by others \(mode 644\): chmod 600/);
    fs.rmSync(other, { recursive: true });
  });

  it('answers only to its loopback Host names (no DNS rebinding)', async () => {
    const port = new URL(server.url).port;
    expect((await request('GET', '/login', { host: `evil.example:${port}` })).status).toBe(421);
    expect((await request('GET', '/login', { host: `localhost:${port}` })).status).toBe(200);
  });

  it('changes nothing on GET: actions are POST routes only, behind the login', async () => {
    const port = new URL(server.url).port;
    const host = `127.0.0.1:${port}`;
    expect((await request('GET', '/sessions/default/x/restart', { host })).status).toBe(302); // to /login
    expect((await request('POST', '/sessions/default/x/restart', { host })).status).toBe(401);
  });

  it('refuses a wrong token and writes the attempt to the audit log', async () => {
    const port = new URL(server.url).port;
    const r = await request(
      'POST',
      '/login',
      { host: `127.0.0.1:${port}`, 'content-type': 'application/x-www-form-urlencoded' },
      'token=not-the-token',
    );
    expect(r.status).toBe(401);
    const lines = fs.readFileSync(path.join(dir, 'audit.log'), 'utf8').trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: 'Console', to: 'login-refused', address: '127.0.0.1' });
  });

  it('answers a bad board filter with 400, naming the field', async () => {
    const host = `127.0.0.1:${new URL(server.url).port}`;
    const cookie = await new Promise<string>((resolve, reject) => {
      const u = new URL(server.url);
      const headers = { host, 'content-type': 'application/x-www-form-urlencoded' };
      const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: '/login', headers }, (res) => {
        res.resume();
        resolve(String(res.headers['set-cookie']?.[0]).split(';')[0]);
      });
      req.on('error', reject);
      req.end(`token=${loadOrCreateToken(dir).token}`);
    });
    const bad = await request('GET', `/?label=${encodeURIComponent('team in (web')}`, { host, cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('filter label: ');
    expect((await request('GET', '/?label=team%3Dweb', { host, cookie })).status).toBe(200);
  });

  it('binds beyond loopback only with --allow-remote and TLS files', async () => {
    expect(() => consoleAddress('0.0.0.0:9470', {})).toThrow(/not loopback: add --allow-remote/);
    expect(() => consoleAddress('0.0.0.0:9470', { allowRemote: true })).toThrow(/needs --tls-cert and --tls-key/);
    expect(() => consoleAddress('127.0.0.1:9470', { tlsCert: 'c.pem' })).toThrow(/go together/);
    expect(consoleAddress('[::1]:0', {})).toEqual({ host: '::1', port: 0 });
    await expect(
      startConsole({ store, home: dir, host: '0.0.0.0', port: 0, tmuxSocket: 'x', log: quiet }),
    ).rejects.toThrow(/only with TLS/);
  });

  it('behind a reverse proxy, accepts the Host and Origin of --external-url and no other', async () => {
    expect(() => externalUrl('http://console.example.org')).toThrow(/must be https:\/\//);
    expect(() => externalUrl('https://console.example.org/orchctl')).toThrow(/no path/);
    const proxied = await startConsole({
      store,
      home: dir,
      host: '127.0.0.1',
      port: 0,
      tmuxSocket: 'x',
      log: quiet,
      externalUrl: 'https://console.example.org',
    });
    try {
      const token = loadOrCreateToken(dir).token;
      expect(proxied.loginUrl).toBe(`https://console.example.org/login#token=${token}`);
      const u = new URL(proxied.url);
      const login = (origin: string) =>
        new Promise<number>((resolve, reject) => {
          const headers = {
            host: 'console.example.org',
            origin,
            'content-type': 'application/x-www-form-urlencoded',
          };
          const req = http.request(
            { host: u.hostname, port: u.port, method: 'POST', path: '/login', headers },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end(`token=${token}`);
        });
      expect(await login('https://console.example.org')).toBe(303);
      expect(await login('https://evil.example')).toBe(403);
    } finally {
      await proxied.close();
    }
  });

  it('is served by orchctl controller --console-addr', async () => {
    const h = await makeHarness();
    try {
      h.start(['--console-addr', '127.0.0.1:0']);
      const line = await h.waitFor('the console listens', async () =>
        h.controllerLog.find((l) => l.includes('serving the web console on')),
      );
      const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1];
      expect(await (await fetch(`${url}/healthz`)).text()).toBe('ok\n');
      expect(fs.statSync(path.join(h.home, 'console-token')).mode & 0o777).toBe(0o600);
    } finally {
      await h.cleanup();
    }
  });

  it('serves the board gzip-compressed to a browser that takes it', async () => {
    const cookie = await loginCookie();
    const r = await getRaw('/', { cookie, 'accept-encoding': 'gzip, deflate, br' });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(r.body).toString()).toContain('id="board"');
    const plain = await getRaw('/', { cookie });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toContain('id="board"');
  });

  it('sends a stream opened on the board its page showed no rows again, and sends them after a change', async () => {
    const cookie = await loginCookie();
    await store.create(session('board-a'));
    const page = async () => (await getRaw('/', { cookie })).body.toString();
    await expect.poll(page).toContain('data-key="default/board-a"');
    const stream = streamOf(await page());
    expect(await firstEvent(stream, cookie)).toMatch(/^event: same\n/);
    await store.create(session('board-b'));
    await expect.poll(page).toContain('data-key="default/board-b"');
    const rows = await firstEvent(stream, cookie); // the page of before: it lacks board-b
    expect(rows).toMatch(/^event: rows\n/);
    expect(rows).toContain('"key":"default/board-b"');
    expect(await firstEvent(streamOf(await page()), cookie)).toMatch(/^event: same\n/);
  });
});
