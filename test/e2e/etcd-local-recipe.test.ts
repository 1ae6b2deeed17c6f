/**
 * docs/multi-host.md's "A 3-member etcd on one machine" recipe, run as written (issue 26, item 5):
 * the block between its `<!-- recipe: etcd-local -->` markers, by sh, from the repository, with
 * HOME a temporary directory, the built CLI as `orchctl` on PATH and ORCHCTL_ETCD_PORT_BASE set to free
 * ports (the box may run other etcds). Then the members are a healthy 3-member cluster with the
 * documented flags, and every home's context reaches it.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { packageRoot } from '../../controller/config/paths.js';
import { etcdAvailable } from '../support/etcd-cluster.js';

const ROOT = packageRoot();
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-recipe-'));
const etcdDir = path.join(home, 'orchctl-mh/etcd');

afterAll(async () => {
  await execa(path.join(ROOT, 'scripts/etcd-local-cluster.sh'), ['stop', etcdDir], { reject: false });
  fs.rmSync(home, { recursive: true, force: true });
}, 30_000);

function recipe(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/multi-host.md'), 'utf8');
  const m = /<!-- recipe: etcd-local -->\n```sh\n([\s\S]*?)```\n<!-- \/recipe -->/.exec(doc);
  if (!m) throw new Error('docs/multi-host.md: no etcd-local recipe block');
  return m[1];
}

const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/** A base port whose six ports (base, base+1, +100, +101, +200, +201) are free now. */
async function freeBase(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const ports = [0, 1, 100, 101, 200, 201].map((d) => base + d);
    if ((await Promise.all(ports.map(bindable))).every(Boolean)) return base;
  }
  throw new Error('no free ports for the recipe');
}

it.runIf(etcdAvailable)(
  'the documented one-machine etcd recipe starts 3 healthy members with compaction and gives every home a context',
  async () => {
    const bin = path.join(home, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(path.join(ROOT, 'bin/orchctl'), path.join(bin, 'orchctl'));
    const base = await freeBase();
    const r = await execa('sh', ['-e', '-c', recipe()], {
      cwd: ROOT,
      env: { HOME: home, PATH: `${bin}:${process.env.PATH}`, ORCHCTL_ETCD_PORT_BASE: String(base), NO_COLOR: '1' },
      extendEnv: false,
      reject: false,
      timeout: 90_000,
    });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // `get nodes` reached the store: no Node yet (kubectl says so on stderr).
    expect(`${r.stdout}\n${r.stderr}`).toMatch(/No resources found/);
    const endpoints = [0, 100, 200].map((d) => `127.0.0.1:${base + d}`).join(',');
    const health = await execa('etcdctl', ['--endpoints', endpoints, 'endpoint', 'health'], {
      env: { ETCDCTL_API: '3' },
      reject: false,
    });
    expect(health.stderr.match(/is healthy/g) ?? health.stdout.match(/is healthy/g)).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      const log = fs.readFileSync(path.join(etcdDir, `m${i}.log`), 'utf8');
      // etcd logs its configuration at start: the recipe's flags are in force.
      expect(log).toContain('"auto-compaction-mode":"periodic","auto-compaction-retention":"1h0m0s"');
    }
    for (const h of ['cp-0', 'cp-1', 'node-a', 'node-b', 'client']) {
      const ctx = await execa(path.join(ROOT, 'bin/orchctl'), ['config', 'current-context'], {
        env: { ...process.env, ORCHCTL_HOME: path.join(home, 'orchctl-mh', h) },
        reject: false,
      });
      expect(ctx.stdout.trim(), `${h}: ${ctx.stderr}`).toBe('local');
    }
  },
  120_000,
);

it("the shipped etcd unit compacts, allows orchctl's transactions and displaces Debian's etcd.service", () => {
  const unit = fs.readFileSync(path.join(ROOT, 'manifests/systemd/etcd-member.service'), 'utf8');
  const exec = unit.slice(unit.indexOf('ExecStart='), unit.indexOf('Restart='));
  expect(exec).toContain('--auto-compaction-mode periodic --auto-compaction-retention 1h');
  expect(exec).toContain('--max-txn-ops 10000');
  expect(unit).toMatch(/^Conflicts=etcd\.service$/m);
});
