/**
 * Shared by the metrics and Prometheus integration tests: free loopback ports, plain HTTP GETs,
 * the promtool/prometheus binaries, and the scripted scenario (one session succeeds with a
 * commit, one fails with exit 3 and restarts once before it is Escalated, one keeps running).
 */
import { execa } from 'execa';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { condition, phaseOf, shellSession, type Harness } from './controller-harness.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export function httpGet(port: number, p: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, timeout: 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }),
        );
      })
      .on('error', reject);
  });
}

/** controller_runtime_reconcile_total of the session controller, every result summed. */
export async function sessionReconciles(port: number): Promise<number> {
  const { body } = await httpGet(port, '/metrics');
  let n = 0;
  for (const m of body.matchAll(/^controller_runtime_reconcile_total\{([^}]*)\} (\S+)$/gm))
    if (m[1].includes('controller="agentsession"')) n += Number(m[2]);
  return n;
}

/** The Debian `prometheus` package's binaries; CI (.ci/run) installs the package when missing. */
export function prometheusBinary(name: 'prometheus' | 'promtool'): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).concat('/usr/bin', '/usr/local/bin')) {
    const p = path.join(dir, name);
    if (dir && fs.existsSync(p)) return p;
  }
  throw new Error(`${name} not found: install prometheus (apt-get install prometheus)`);
}

export async function promtool(args: string[], input?: string) {
  const r = await execa(prometheusBinary('promtool'), args, { reject: false, input, timeout: 60_000 });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

export const COMMIT = 'git -c user.email=a@b -c user.name=agent commit -qm';

/** Applies the scenario and waits until it has played out. */
export async function runScenario(h: Harness): Promise<void> {
  await h.apply([
    shellSession('ok', `printf 'a\\nb\\n' > ok.txt; git add ok.txt; ${COMMIT} "add ok"; exit 0`, h.repo),
    shellSession('flaky', 'echo "attempt $ORCHCTL_RUN"; exit 3', h.repo, {
      restartPolicy: 'OnFailure',
      maxRestarts: 1,
      restartBackoff: { initialDelay: '200ms' },
    }),
    shellSession('long', 'sleep 300', h.repo),
  ]);
  await h.waitFor('ok Succeeded', async () => phaseOf(await h.session('ok')) === 'Succeeded');
  await h.waitFor('flaky Failed and Escalated after one restart', async () => {
    const s = await h.session('flaky');
    return phaseOf(s) === 'Failed' && condition(s, 'Escalated')?.status === 'True' && s?.status?.restarts === 1;
  });
  await h.waitFor('long Running', async () => phaseOf(await h.session('long')) === 'Running');
}
