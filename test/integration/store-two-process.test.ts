/**
 * Two real processes on one SQLite database file: compare-and-swap holds across processes
 * (exactly one of two updates carrying the same resourceVersion wins, the other gets Conflict)
 * and a watch in one process sees writes made by the other.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { keyOf, session, until } from '../support/store-conformance.js';

const WORKER = path.resolve(import.meta.dirname, '../fixtures/store-worker.mjs');

type Msg = Record<string, any>;

/** One worker process; `call` sends a command and resolves with its answer. */
class Worker {
  readonly proc: ResultPromise;
  readonly lines: Msg[] = [];
  private nextId = 0;
  private waiters = new Map<number, (m: Msg) => void>();

  constructor(file: string) {
    this.proc = execa('node', [WORKER, file], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit', reject: false });
    readline.createInterface({ input: this.proc.stdout! }).on('line', (l) => {
      const m = JSON.parse(l) as Msg;
      this.lines.push(m);
      if (m.id !== undefined) this.waiters.get(m.id)?.(m);
    });
  }

  ready(): Promise<void> {
    return until(() => this.lines.some((m) => m.ready), 'the worker to start', 20_000);
  }

  /** Writes the command line now; the answer comes back through the promise. */
  call(msg: Msg): Promise<Msg> {
    const id = this.nextId++;
    const p = new Promise<Msg>((resolve) => this.waiters.set(id, resolve));
    this.proc.stdin!.write(JSON.stringify({ id, ...msg }) + '\n');
    return p;
  }

  events(): Msg[] {
    return this.lines.filter((m) => m.event);
  }

  /** Closing stdin makes the worker close its store and exit. */
  async stop(): Promise<void> {
    this.proc.stdin!.end();
    const r = await this.proc;
    expect(r.exitCode).toBe(0);
  }
}

let dir: string;
let file: string;
let workers: Worker[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-2proc-'));
  // Built by npm test.
  expect(fs.existsSync(path.resolve(import.meta.dirname, '../../dist/controller/store/sqlite.js'))).toBe(true);
});
afterEach(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function start(n: number, name: string): Promise<Worker[]> {
  file = path.join(dir, name, 'state.db');
  // Create the database first so both workers open an initialised file.
  const s = new SqliteStore(file);
  await s.close();
  workers = Array.from({ length: n }, () => new Worker(file));
  await Promise.all(workers.map((w) => w.ready()));
  return workers;
}

describe('two processes on one database file', () => {
  it('updates with the same resourceVersion: exactly one succeeds, the other gets Conflict (20 rounds)', async () => {
    const [a, b] = await start(2, 'cas');
    const created = await a.call({ op: 'create', object: session('shared') });
    expect(created.ok).toBe(true);
    const key = keyOf(created.object);
    const wins = { a: 0, b: 0 };
    let generation = 1;
    for (let round = 0; round < 20; round++) {
      // Both processes read the object and hold the same resourceVersion...
      const [ra, rb] = await Promise.all([a.call({ op: 'read', key }), b.call({ op: 'read', key })]);
      expect(ra.resourceVersion).toBeTruthy();
      expect(ra.resourceVersion).toBe(rb.resourceVersion);
      // ...then both try to write at once.
      const [ua, ub] = await Promise.all([
        a.call({ op: 'updateHeld', value: `a${round}` }),
        b.call({ op: 'updateHeld', value: `b${round}` }),
      ]);
      const results = [ua, ub];
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      const loser = results.find((r) => !r.ok)!;
      expect(loser.reason).toBe('Conflict');
      expect(loser.message).toContain('the object has been modified');
      const winner = ua.ok ? ua : ub;
      ua.ok ? wins.a++ : wins.b++;
      generation++;
      expect(Number(winner.object.metadata.resourceVersion)).toBeGreaterThan(Number(ra.resourceVersion));
      // What is stored is exactly the winner's write, seen the same from the other process.
      const seen = await (ua.ok ? b : a).call({ op: 'get', key });
      expect(seen.object.spec.prompt).toBe(ua.ok ? `a${round}` : `b${round}`);
      expect(seen.object.metadata.resourceVersion).toBe(winner.object.metadata.resourceVersion);
      expect(seen.object.metadata.generation).toBe(generation);
    }
    expect(wins.a + wins.b).toBe(20);
    // The test process itself, a third reader, agrees.
    const s = new SqliteStore(file);
    expect((await s.get(key))!.metadata.generation).toBe(21);
    await s.close();
  });

  it('a watch in one process sees the writes of another, in order', async () => {
    const [watcher, writer] = await start(2, 'watch');
    const from = (await writer.call({ op: 'revision' })).revision as number;
    expect((await watcher.call({ op: 'watch', kind: 'AgentSession', fromRevision: from })).ok).toBe(true);
    const c = await writer.call({ op: 'create', object: session('remote') });
    await writer.call({ op: 'create', object: { ...session('proj'), kind: 'Project' } }); // another kind: filtered out
    const u = await writer.call({
      op: 'update',
      object: { ...c.object, spec: { ...c.object.spec, prompt: 'changed' } },
    });
    expect(u.ok).toBe(true);
    const d = await writer.call({ op: 'delete', key: keyOf(c.object) });
    expect(d.ok).toBe(true);
    await until(() => watcher.events().length >= 3, 'the watcher to see 3 events');
    const evs = watcher.events();
    expect(evs.map((e) => `${e.event} ${e.name}`)).toEqual(['ADDED remote', 'MODIFIED remote', 'DELETED remote']);
    expect(evs[0].revision).toBe(Number(c.object.metadata.resourceVersion));
    expect(evs[1].revision).toBe(Number(u.object.metadata.resourceVersion));
    expect(evs[1].object.spec.prompt).toBe('changed');
    expect(evs[2].revision).toBeGreaterThan(evs[1].revision);
  });
});
