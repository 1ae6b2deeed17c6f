/**
 * One list of the programs the tests start (test/prerequisites.json): the README's prerequisite
 * line, .ci/run and the test suite's set-up all follow it, and a program started by a test but
 * missing from it fails here — the class of failure that let `etcdctl` (etcd-client) go unnamed.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findProgram, missingPrerequisites, prerequisites } from '../support/prerequisites.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');
const packages = () => [...new Set(prerequisites().map((p) => p.package))].sort();

/** Programs every POSIX system has (Debian's essential set) or that the toolchain itself is. */
const ESSENTIAL = new Set(['sh', 'bash', 'sleep', 'true', 'node', 'npm', 'npm.cmd']);
/** Started only on macOS (host observer), never on the Linux machines the tests run on. */
const MACOS_ONLY = new Set(['sysctl']);

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name) && !e.parentPath.includes('.cache'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('test/prerequisites.json', () => {
  it("names exactly the packages of the README's apt-get line", () => {
    const section = read('README.md').split('## Prerequisites')[1].split('\n## ')[0];
    const line = section.split('\n').find((l) => l.includes('apt-get install'));
    expect(line, 'the README has an apt-get install line under Prerequisites').toBeDefined();
    const named = line!
      .split('apt-get install')[1]
      .split(/\s+/)
      .filter((w) => w && !w.startsWith('-'));
    expect([...new Set(named)].sort()).toEqual(packages());
  });

  it('is what .ci/run installs from, with no package list of its own', () => {
    const ci = read('.ci/run');
    expect(ci).toContain('node scripts/missing-packages.mjs');
    expect(ci).not.toMatch(/need\+=/);
  });

  it('lists every program a test or the controller starts by name', () => {
    const started = new Set<string>();
    const call = /\b(?:execa|execaSync|spawn|spawnSync|execFile|execFileSync)\(\s*['"]([^'"]+)['"]/g;
    for (const f of [...sourceFiles('test'), ...sourceFiles('controller'), ...sourceFiles('scripts')]) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(call)) started.add(path.basename(m[1]));
    }
    const listed = new Set(prerequisites().map((p) => p.program));
    const unlisted = [...started].filter((p) => !listed.has(p) && !ESSENTIAL.has(p) && !MACOS_ONLY.has(p));
    expect(unlisted).toEqual([]);
    // The scan finds the ones it must (so it cannot pass by finding nothing).
    expect([...started]).toEqual(expect.arrayContaining(['tmux', 'git', 'etcdctl', 'openssl']));
  });
});

describe('the set-up check', () => {
  it('names every missing program with its package, one line each', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-prereq-'));
    const lines = missingPrerequisites(prerequisites(), empty);
    expect(lines).toHaveLength(prerequisites().length);
    expect(lines).toContainEqual(
      expect.stringMatching(/^missing program etcdctl \(.+\): apt-get install etcd-client$/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^missing program promtool \(.+\): apt-get install prometheus$/),
    );
  });

  it('passes on this machine (every program is on PATH)', () => {
    expect(missingPrerequisites()).toEqual([]);
    expect(findProgram('tmux')).toMatch(/\/tmux$/);
  });

  it('scripts/missing-packages.mjs prints the packages of the programs not on PATH, once each', async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-prereq-bin-'));
    for (const p of ['tmux', 'git', 'etcd', 'prometheus']) fs.writeFileSync(path.join(bin, p), '', { mode: 0o755 });
    const r = await execa(process.execPath, [path.join(ROOT, 'scripts/missing-packages.mjs')], {
      env: { PATH: bin },
      extendEnv: false,
    });
    const expected = [
      ...new Set(
        prerequisites()
          .filter((p) => !['tmux', 'git', 'etcd', 'prometheus'].includes(p.program))
          .map((p) => p.package),
      ),
    ];
    // promtool is still missing, so prometheus is still needed.
    expect(r.stdout.split('\n').sort()).toEqual(expected.sort());
    expect(expected).toContain('prometheus');
  });
});
