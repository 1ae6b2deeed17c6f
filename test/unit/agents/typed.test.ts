/** What orchctl typed into a run (agents/typed.ts): recorded per delivery, read back with the prompt, bounded. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTyped, recordTyped, TYPED_FILE } from '../../../controller/agents/typed.js';

const dirs: string[] = [];
const workspace = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-typed-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('typed texts', () => {
  it('reads the prompt, then what was typed, oldest first; a torn line is skipped', () => {
    const ws = workspace();
    fs.writeFileSync(path.join(ws, 'prompt.md'), 'Add rate limit middleware\n');
    recordTyped(ws, 'The usage limit has reset. Continue.');
    fs.appendFileSync(path.join(ws, TYPED_FILE), '{"ts":"x","text":"torn');
    recordTyped(ws, 'second');
    expect(readTyped(ws)).toEqual(['Add rate limit middleware\n', 'The usage limit has reset. Continue.', 'second']);
    expect(fs.statSync(path.join(ws, TYPED_FILE)).mode & 0o777).toBe(0o600);
  });

  it('stays bounded: the last 20 texts, each at most 4000 characters', () => {
    const ws = workspace();
    for (let i = 0; i < 40; i++) recordTyped(ws, `${i} ${'x'.repeat(5000)}`);
    const got = readTyped(ws);
    expect(got).toHaveLength(20);
    expect(got[19].startsWith('39 ')).toBe(true);
    expect(got.every((t) => t.length <= 4000)).toBe(true);
    expect(fs.statSync(path.join(ws, TYPED_FILE)).size).toBeLessThanOrEqual(128 * 1024 + 4100);
  });

  it('a missing workspace is no error: nothing is recorded, nothing read', () => {
    const gone = path.join(os.tmpdir(), `orchctl-typed-gone-${process.pid}`);
    expect(() => recordTyped(gone, 'x')).not.toThrow();
    expect(readTyped(gone)).toEqual([]);
  });
});
