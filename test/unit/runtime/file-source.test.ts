/** FileWatchSource on real files: which key a change brings back, and what an unwatched key leaves. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileWatchSource } from '../../../controller/runtime/file-source.js';

let dir: string;
let src: FileWatchSource;
let fired: string[];
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-file-source-'));
  src = new FileWatchSource();
  fired = [];
  src.subscribe((k) => fired.push(k));
});
afterEach(async () => {
  await src.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
/**
 * chokidar reports a watch as ready on its own schedule, and passes over a change whose mtime equals
 * the last one it saw (two appends within the clock's tick): write until the key fires.
 */
async function firesFor(key: string, file: string): Promise<void> {
  for (let i = 0; i < 40 && !fired.includes(key); i++) {
    fs.appendFileSync(file, 'x\n');
    await new Promise((r) => setTimeout(r, 50));
  }
  await until(`${key} to fire`, () => fired.includes(key));
}

describe('FileWatchSource', () => {
  it('brings back the key of a file that changes, or that is created after the watch', async () => {
    const a = path.join(dir, 'a.jsonl');
    fs.writeFileSync(a, '');
    src.watch('ns/a', [a, path.join(dir, 'later.jsonl')]);
    await firesFor('ns/a', a);
    fired.length = 0;
    await firesFor('ns/a', path.join(dir, 'later.jsonl'));
    expect(new Set(fired)).toEqual(new Set(['ns/a']));
  });

  it('an unwatched key fires no more and leaves no watcher, however many runs came and went', async () => {
    for (let i = 0; i < 300; i++) {
      const f = path.join(dir, `run-${i}.jsonl`);
      fs.writeFileSync(f, '');
      src.watch(`ns/s${i}`, [f]);
      if (i > 0) src.unwatch(`ns/s${i - 1}`);
    }
    expect(src.size).toBe(1); // only the last key's
    src.unwatch('ns/s299');
    expect(src.size).toBe(0);
    const live = path.join(dir, 'live.jsonl');
    fs.writeFileSync(live, '');
    src.watch('ns/live', [live]);
    await firesFor('ns/live', live);
    fired.length = 0;
    fs.appendFileSync(path.join(dir, 'run-5.jsonl'), 'x\n');
    await firesFor('ns/live', live);
    expect(fired.filter((k) => k !== 'ns/live')).toEqual([]);
  });

  it('a file watched for another key moves to it', async () => {
    const f = path.join(dir, 'shared.jsonl');
    fs.writeFileSync(f, '');
    src.watch('ns/old', [f]);
    src.watch('ns/new', [f]);
    await firesFor('ns/new', f);
    expect(fired).not.toContain('ns/old');
  });
});
