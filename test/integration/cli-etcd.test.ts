/**
 * "orchctl commands work unchanged against an etcd context" (issue 16): the same sequence of
 * commands — apply, apply again, get (tables, -l, -o name/yaml/json/jsonpath), describe, diff, a
 * change, restart, delete by name and by file — through the built bin/orchctl, once against an
 * SQLite context and once against a real 3-member etcd cluster (test/support/etcd-cluster.ts),
 * prints the same thing on both (uids, timestamps and resourceVersions aside). Then what only a
 * live store shows: `get -w` streams a change and a deletion from etcd, `$ORCHCTL_STORE`'s etcd
 * form reaches the same keys, and version/doctor name the etcd store.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, normalize, normalizeTable, orchctl, ROOT, tempHome } from '../support/cli.js';
import { type EtcdCluster, startEtcdCluster } from '../support/etcd-cluster.js';
import { until } from '../support/until.js';

let cluster: EtcdCluster;
let home: string;
let dir: string;

const manifests = (prompt: string) => `apiVersion: orchctl.io/v1alpha1
kind: Agent
metadata: {name: sh-agent, labels: {team: web}}
spec: {command: [sh, -c, 'sleep 600']}
---
apiVersion: orchctl.io/v1alpha1
kind: AgentSession
metadata: {name: fix-a, labels: {team: web}}
spec: {agentRef: sh-agent, workdir: ${ROOT}, prompt: '${prompt}', restartPolicy: Never}
---
apiVersion: orchctl.io/v1alpha1
kind: AgentSession
metadata: {name: fix-b, labels: {team: api}}
spec: {agentRef: sh-agent, workdir: ${ROOT}, prompt: 'tidy b'}
`;

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => orchctl(home, args, { env: { ...cliEnv(home), ...env } });

/** Every step's command, exit status and output, with what differs between any two stores replaced. */
async function transcript(context: string): Promise<string[]> {
  const file = path.join(dir, `${context}.yaml`);
  const steps: [string[], 'table' | 'text', (() => void)?][] = [
    [['apply', '-f', file], 'text'],
    [['apply', '-f', file], 'text'],
    [['get', 'agents,agentsessions'], 'table'],
    [['get', 'agentsessions', '-l', 'team=web', '-o', 'name'], 'text'],
    [['get', 'agentsession', 'fix-a', '-o', 'yaml'], 'text'],
    [['get', 'agent', 'sh-agent', '-o', 'json'], 'text'],
    [['get', 'agentsessions', '-o', 'jsonpath={.items[*].spec.prompt}'], 'text'],
    [['describe', 'agentsession', 'fix-b'], 'text'],
    [['diff', '-f', file], 'text', () => fs.writeFileSync(file, manifests('fix a, carefully'))],
    [['apply', '-f', file], 'text'],
    [['restart', 'session', 'fix-a'], 'text'],
    [['get', 'agentsession', 'fix-a', '-o', 'jsonpath={.metadata.generation} {.spec.prompt}'], 'text'],
    [['delete', 'agentsession', 'fix-b'], 'text'],
    [['get', 'agentsessions'], 'table'],
    [['get', 'agentsession', 'fix-b'], 'text'],
    [['delete', '-f', file, '--ignore-not-found'], 'text'],
    [['get', 'all'], 'text'],
  ];
  fs.writeFileSync(file, manifests('fix a'));
  const out: string[] = [];
  for (const [args, kind, before] of steps) {
    before?.();
    const r = await run(['--context', context, ...args]);
    const paths = { [file]: '<FILE>' };
    const stdout = kind === 'table' && r.exitCode === 0 ? normalizeTable(r.stdout, paths) : normalize(r.stdout, paths);
    out.push(
      normalize(`$ orchctl ${args.join(' ')}\nexit ${r.exitCode}\n`, paths) + stdout + normalize(r.stderr, paths),
    );
  }
  return out;
}

describe('orchctl against an etcd context', () => {
  beforeAll(async () => {
    cluster = await startEtcdCluster();
    home = tempHome();
    dir = path.dirname(home);
    const set = (args: string[]) => run(['config', 'set-context', ...args]);
    expect((await set(['lite', '--sqlite', path.join(dir, 'lite.db')])).exitCode).toBe(0);
    expect(
      (await set(['cluster', '--etcd-endpoints', cluster.endpoints.join(','), '--etcd-prefix', '/cli/'])).exitCode,
    ).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('prints what it prints against SQLite, step for step', async () => {
    const lite = await transcript('lite');
    const etcd = await transcript('cluster');
    // Not vacuous: the steps did what they say on SQLite.
    expect(lite[0]).toBe(
      '$ orchctl apply -f <FILE>\nexit 0\nagent.orchctl.io/sh-agent created\n' +
        'agentsession.orchctl.io/fix-a created\nagentsession.orchctl.io/fix-b created\n',
    );
    expect(lite[3]).toBe('$ orchctl get agentsessions -l team=web -o name\nexit 0\nagentsession.orchctl.io/fix-a\n');
    expect(lite[8]).toMatch(/^\$ orchctl diff -f <FILE>\nexit 1\n/);
    expect(lite[8]).toContain('\n-  prompt: fix a\n+  prompt: fix a, carefully\n');
    expect(lite[11]).toBe(
      '$ orchctl get agentsession fix-a -o jsonpath={.metadata.generation} {.spec.prompt}\nexit 0\n' +
        '2 fix a, carefully',
    );
    expect(lite.at(-1)).toBe('$ orchctl get all\nexit 0\nNo resources found in default namespace.\n');
    expect(etcd).toEqual(lite);
    // Nothing of it went to the embedded default.
    expect(fs.existsSync(path.join(home, 'state.db'))).toBe(false);
  }, 120_000);

  it('get -w streams changes from etcd; ORCHCTL_STORE reaches the same keys; version and doctor name it', async () => {
    const file = path.join(dir, 'watch.yaml');
    fs.writeFileSync(file, manifests('watch me'));
    expect((await run(['--context', 'cluster', 'apply', '-f', file])).exitCode).toBe(0);
    const watch = execa(BIN, ['--context', 'cluster', 'get', 'agentsessions', '-w', '--output-watch-events'], {
      env: cliEnv(home),
      extendEnv: false,
      reject: false,
    });
    let seen = '';
    watch.stdout?.on('data', (b: Buffer) => {
      seen += b.toString();
    });
    try {
      await until('the initial rows', () => /ADDED\s+fix-b/.test(seen), 15_000);
      fs.writeFileSync(file, manifests('watch me again'));
      expect((await run(['--context', 'cluster', 'restart', 'session', 'fix-a'])).exitCode).toBe(0);
      expect((await run(['--context', 'cluster', 'delete', 'agentsession', 'fix-b'])).exitCode).toBe(0);
      await until(
        'the change and the deletion',
        () => /MODIFIED\s+fix-a/.test(seen) && /DELETED\s+fix-b/.test(seen),
        15_000,
      );
    } finally {
      watch.kill();
      await watch;
    }

    const hosts = cluster.endpoints.map((e) => e.replace('http://', '')).join(',');
    const env = { ORCHCTL_STORE: `etcd://${hosts}/cli` };
    const names = await run(['get', 'agentsessions', '-o', 'name'], env);
    expect([names.exitCode, names.stdout]).toEqual([0, 'agentsession.orchctl.io/fix-a\n']);

    const version = JSON.parse((await run(['--context', 'cluster', 'version', '-o', 'json'])).stdout);
    expect(version.store).toMatchObject({ backend: 'etcd', path: cluster.endpoints.join(',') });
    expect(version.store.revision).toBeGreaterThan(0);
    const doctor = JSON.parse((await run(['--context', 'cluster', 'doctor', '-o', 'json'])).stdout);
    expect(doctor.store).toEqual({
      backend: 'etcd',
      location: `etcd ${cluster.endpoints.join(',')} prefix /cli/`,
      chosenBy: 'context "cluster" (--context)',
      context: 'cluster',
    });
    expect(
      doctor.agents.filter((a: { source: string }) => a.source === 'store').map((a: { name: string }) => a.name),
    ).toEqual(['sh-agent']);
  }, 90_000);
});
