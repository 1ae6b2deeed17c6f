/**
 * `orchctl apply -f DIR` of a generated 1000-object directory, as a cold process: into a fresh
 * store (1000 created), again unchanged, and with every object changed (1000 configured).
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { orchctl, stats, tempDir } from '../lib.js';
import type { Bench } from '../types.js';
import { sampleSession } from './cli-get.js';

const OBJECTS = 1000;
const FILES = 50;
const RUNS = 5;

function writeManifests(dir: string, variant: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const perFile = OBJECTS / FILES;
  for (let f = 0; f < FILES; f++) {
    const docs = [];
    for (let j = 0; j < perFile; j++) {
      const o = sampleSession(f * perFile + j);
      (o.spec as Record<string, unknown>).prompt = `${variant}: ${(o.spec as Record<string, unknown>).prompt}`;
      docs.push(YAML.stringify(o));
    }
    fs.writeFileSync(path.join(dir, `sessions-${String(f).padStart(2, '0')}.yaml`), docs.join('---\n'));
  }
}

function count(stdout: string, action: string): number {
  return stdout.split('\n').filter((l) => l.endsWith(` ${action}`)).length;
}

export const applyBench: Bench = {
  name: 'apply-1000',
  description: `orchctl apply -f DIR with ${OBJECTS} objects in ${FILES} files, cold process`,
  async run() {
    const base = tempDir('apply');
    const dir = path.join(base, 'manifests');
    const created: number[] = [];
    const unchanged: number[] = [];
    const configured: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const home = path.join(base, `home-${i}`);
      writeManifests(dir, 'v1');
      const c = orchctl(home, ['apply', '-f', dir]);
      if (count(c.stdout, 'created') !== OBJECTS) throw new Error('not every object was created');
      created.push(c.ms);
      const u = orchctl(home, ['apply', '-f', dir]);
      if (count(u.stdout, 'unchanged') !== OBJECTS) throw new Error('not every object was unchanged');
      unchanged.push(u.ms);
      writeManifests(dir, 'v2');
      const g = orchctl(home, ['apply', '-f', dir]);
      if (count(g.stdout, 'configured') !== OBJECTS) throw new Error('not every object was configured');
      configured.push(g.ms);
      fs.rmSync(home, { recursive: true, force: true });
    }
    fs.rmSync(base, { recursive: true, force: true });
    const s = { createdFreshStoreMs: stats(created), unchangedMs: stats(unchanged), configuredMs: stats(configured) };
    return {
      objects: OBJECTS,
      files: FILES,
      ...s,
      summary:
        `fresh store ${s.createdFreshStoreMs.median} ms, unchanged ${s.unchangedMs.median} ms, ` +
        `all configured ${s.configuredMs.median} ms (medians of ${RUNS})`,
    };
  },
};
