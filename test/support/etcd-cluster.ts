/**
 * A real etcd cluster for tests: N members (default 3) of Debian's /usr/bin/etcd on free loopback
 * ports, each with its own temporary data directory, fast elections (heartbeat 100 ms, election
 * 1000 ms). One cluster per test file (start in beforeAll, stop in afterAll); every member still
 * running is killed when the test process exits, so no etcd outlives its tests.
 *
 *   const cluster = await startEtcdCluster();
 *   const store = new EtcdStore({ endpoints: cluster.endpoints, prefix: '/t1/' });
 *   const i = await cluster.leader();          // index of the raft leader
 *   await cluster.kill(i);                     // SIGKILL (or another signal: SIGSTOP, SIGTERM)
 *   await cluster.restart(i);                  // same name, ports and data: rejoins
 *   await cluster.stop();                      // kills every member, removes the data
 *
 * TLS: `const files = makeTlsFiles(dir)` (a throwaway CA, server and client certificates), then
 * `startEtcdCluster({ tls: files.server, clientTls: files.client })` serves https:// and requires a
 * client certificate; `new EtcdStore({ endpoints, tls: files.client })` connects.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ETCD_BIN = process.env.ORCHCTL_ETCD_BIN ?? '/usr/bin/etcd';
/** Whether the tests can run here (CI installs Debian's etcd-server when missing). */
export const etcdAvailable = fs.existsSync(ETCD_BIN);

export interface EtcdMember {
  name: string;
  /** http://127.0.0.1:PORT, what clients connect to. */
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  /** The running process, or undefined while it is killed. */
  process?: ChildProcess;
}

export interface EtcdCluster {
  /** Client URLs of every member, in member order. */
  endpoints: string[];
  members: EtcdMember[];
  /** Index of the current raft leader (asked of the members that answer). */
  leader(): Promise<number>;
  /** Sends `signal` (default SIGKILL) to a member; for SIGKILL/SIGTERM, waits until it has exited. */
  kill(member: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts a killed member again with its data; resolves when it answers as healthy. */
  restart(member: number): Promise<void>;
  /** Kills every member and removes the data directories. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test that throws before afterAll, or a worker that exits early, must not leave members behind.
  process.once('exit', () => {
    for (const p of live) if (p.pid && p.exitCode === null) p.kill('SIGKILL');
  });
}

/** A TCP port of 127.0.0.1 that nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

interface StatusReply {
  header?: { member_id?: string };
  leader?: string;
}

/** PEM files: a CA, and a certificate and key signed by it (see makeTlsFiles). */
export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** POST to etcd's v3 JSON gateway (over TLS with a client certificate when given); undefined on any failure. */
function gateway(clientUrl: string, route: string, body: unknown, tls?: TlsFiles): Promise<unknown> {
  const url = new URL(route, clientUrl);
  const opts: https.RequestOptions = { method: 'POST', timeout: 1000 };
  if (tls)
    Object.assign(opts, {
      ca: fs.readFileSync(tls.ca),
      cert: fs.readFileSync(tls.cert),
      key: fs.readFileSync(tls.key),
    });
  return new Promise((resolve) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, opts, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(res.statusCode === 200 ? JSON.parse(text) : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(JSON.stringify(body));
  });
}

/** Maintenance status of one member (its id and who it thinks leads). */
const status = (m: EtcdMember, tls?: TlsFiles) =>
  gateway(m.clientUrl, '/v3/maintenance/status', {}, tls) as Promise<StatusReply | undefined>;

/** Healthy = answers a linearizable read (which needs a leader and a quorum). */
const healthy = async (m: EtcdMember, tls?: TlsFiles) =>
  (await gateway(m.clientUrl, '/v3/kv/range', { key: Buffer.from('health').toString('base64') }, tls)) !== undefined;

/**
 * A throwaway CA and, signed by it, a server certificate for 127.0.0.1/localhost and a client
 * certificate (openssl, EC P-256, valid 2 days), in `dir`.
 */
export function makeTlsFiles(dir: string): { server: TlsFiles; client: TlsFiles } {
  fs.mkdirSync(dir, { recursive: true });
  const f = (name: string) => path.join(dir, name);
  const openssl = (args: string[]) => {
    const r = spawnSync('openssl', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr || r.error}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', '/CN=test-ca']);
  for (const [who, usage] of [
    // etcd's own JSON gateway dials the server with its server certificate: it needs clientAuth too.
    ['server', 'serverAuth,clientAuth'],
    ['client', 'clientAuth'],
  ]) {
    fs.writeFileSync(f(`${who}.ext`), `subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=${usage}\n`);
    openssl(['req', ...ec, '-keyout', f(`${who}.key`), '-out', f(`${who}.csr`), '-subj', `/CN=${who}`]);
    openssl(
      ['x509', '-req', '-in', f(`${who}.csr`), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial'].concat([
        '-out',
        f(`${who}.crt`),
        '-days',
        '2',
        '-extfile',
        f(`${who}.ext`),
      ]),
    );
  }
  const files = (who: string) => ({ ca: f('ca.crt'), cert: f(`${who}.crt`), key: f(`${who}.key`) });
  return { server: files('server'), client: files('client') };
}

async function waitFor(what: string, cond: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`etcd cluster: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `size` members (default 3). With `tls`, clients must speak TLS and show a certificate signed by
 * `tls.ca` (--client-cert-auth); `clientTls` is what the helper itself uses to check health.
 */
export async function startEtcdCluster(
  opts: { size?: number; tls?: TlsFiles; clientTls?: TlsFiles } = {},
): Promise<EtcdCluster> {
  if (!etcdAvailable) throw new Error(`${ETCD_BIN} is missing: install Debian's etcd-server`);
  installExitHook();
  const size = opts.size ?? 3;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-etcd-'));
  const token = path.basename(root);
  const members: EtcdMember[] = [];
  for (let i = 0; i < size; i++) {
    const name = `m${i}`;
    members.push({
      name,
      clientUrl: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${await freePort()}`,
      peerUrl: `http://127.0.0.1:${await freePort()}`,
      dataDir: path.join(root, name),
    });
  }
  const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');

  const launch = (m: EtcdMember, state: 'new' | 'existing') => {
    const args = [
      `--name=${m.name}`,
      `--data-dir=${m.dataDir}`,
      `--listen-client-urls=${m.clientUrl}`,
      `--advertise-client-urls=${m.clientUrl}`,
      `--listen-peer-urls=${m.peerUrl}`,
      `--initial-advertise-peer-urls=${m.peerUrl}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-state=${state}`,
      `--initial-cluster-token=${token}`,
      '--heartbeat-interval=100',
      '--election-timeout=1000',
      // As docs/store.md recommends: `apply` of a directory is one transaction of every object.
      '--max-txn-ops=10000',
      ...(opts.tls
        ? [
            `--cert-file=${opts.tls.cert}`,
            `--key-file=${opts.tls.key}`,
            `--trusted-ca-file=${opts.tls.ca}`,
            '--client-cert-auth',
          ]
        : []),
      '--log-level=error',
      '--logger=zap',
    ];
    const log = fs.openSync(path.join(root, `${m.name}.log`), 'a');
    const p = spawn(ETCD_BIN, args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    live.add(p);
    p.once('exit', () => live.delete(p));
    m.process = p;
  };

  for (const m of members) launch(m, 'new');
  const cluster: EtcdCluster = {
    endpoints: members.map((m) => m.clientUrl),
    members,
    async leader() {
      let found = -1;
      await waitFor(
        'a leader',
        async () => {
          for (const m of members) {
            if (!m.process) continue;
            const s = await status(m, opts.clientTls);
            if (!s?.leader || s.leader === '0') continue;
            const ids = await Promise.all(members.map((x) => (x.process ? status(x, opts.clientTls) : undefined)));
            found = ids.findIndex((x) => x?.header?.member_id === s.leader);
            if (found >= 0) return true;
          }
          return false;
        },
        15_000,
      );
      return found;
    },
    async kill(i, signal = 'SIGKILL') {
      const p = members[i].process;
      if (!p || p.exitCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill(signal);
      if (signal === 'SIGKILL' || signal === 'SIGTERM') {
        await exited;
        members[i].process = undefined;
      }
    },
    async restart(i) {
      const m = members[i];
      if (m.process) await cluster.kill(i);
      launch(m, 'existing');
      await waitFor(`${m.name} to rejoin`, () => healthy(m, opts.clientTls), 20_000);
    },
    async stop() {
      await Promise.all(members.map((_, i) => cluster.kill(i)));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(
      'every member healthy',
      async () => (await Promise.all(members.map((m) => healthy(m, opts.clientTls)))).every(Boolean),
      20_000,
    );
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
