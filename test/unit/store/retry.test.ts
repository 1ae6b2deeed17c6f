/**
 * retryOnConflict (controller/store/retry.ts): a write refused as stale by a real SQLite store is
 * run again, reading afresh; other errors and fences are not; the runs are bounded; a backoff
 * waits between runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError, isApiError } from '../../../controller/api/errors.js';
import type { Resource } from '../../../controller/api/types.js';
import { retryOnConflict } from '../../../controller/store/retry.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { fencedError } from '../../../controller/store/store.js';
import { keyOf, session } from '../../support/store-conformance.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-retry-'));
let n = 0;
const freshStore = () => new SqliteStore(path.join(root, `s${++n}`, 'state.db'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const labelled = (o: Resource, v: string): Resource => ({
  ...o,
  metadata: { ...o.metadata, labels: { ...o.metadata.labels, v } },
});

describe('retryOnConflict', () => {
  it('runs again after the store refuses a stale write, and the run that read afresh succeeds', async () => {
    const store = freshStore();
    const created = await store.create(session('a'));
    await store.update(labelled(created, 'other')); // another writer: `created` is now stale
    const runs: number[] = [];
    const out = await retryOnConflict(async (attempt) => {
      runs.push(attempt);
      const base = attempt === 0 ? created : (await store.get(keyOf(created)))!;
      return store.update(labelled(base, 'mine'));
    });
    expect(runs).toEqual([0, 1]);
    expect(out.metadata.labels?.v).toBe('mine');
    expect((await store.get(keyOf(created)))?.metadata.labels?.v).toBe('mine');
    await store.close();
  });

  it('stops after the given number of runs and throws the last Conflict', async () => {
    const store = freshStore();
    const created = await store.create(session('b'));
    await store.update(labelled(created, 'other'));
    let runs = 0;
    const err = await retryOnConflict(
      async () => {
        runs++;
        return store.update(labelled(created, 'stale')); // never reads again: always stale
      },
      { attempts: 3 },
    ).catch((e: unknown) => e);
    expect(isApiError(err, 'Conflict')).toBe(true);
    expect(runs).toBe(3);
    await store.close();
  });

  it('does not retry an error other than a Conflict', async () => {
    let runs = 0;
    const err = await retryOnConflict(async () => {
      runs++;
      throw new ApiError('NotFound', 'gone');
    }).catch((e: unknown) => e);
    expect(isApiError(err, 'NotFound')).toBe(true);
    expect(runs).toBe(1);
  });

  it('does not retry a fenced write (a Conflict no fresh read can cure)', async () => {
    let runs = 0;
    const err = await retryOnConflict(async () => {
      runs++;
      throw fencedError({ lease: 'l', holder: 'me' }, 'they hold it');
    }).catch((e: unknown) => e);
    expect(isApiError(err, 'Conflict')).toBe(true);
    expect(runs).toBe(1);
  });

  it('retries what a caller-given predicate accepts, and only that', async () => {
    const runs: number[] = [];
    const out = await retryOnConflict(
      async (attempt) => {
        runs.push(attempt);
        if (attempt < 2) throw new ApiError('AlreadyExists', 'raced');
        return 'done';
      },
      { retryOn: (e) => isApiError(e, 'AlreadyExists') },
    );
    expect(out).toBe('done');
    expect(runs).toEqual([0, 1, 2]);
  });

  it('waits between runs when given a backoff: at least half of a delay that doubles', async () => {
    const times: number[] = [];
    await retryOnConflict(
      async (attempt) => {
        times.push(performance.now());
        if (attempt < 2) throw new ApiError('Conflict', 'stale');
      },
      { backoff: { initialMs: 40, maxMs: 200 } },
    );
    expect(times).toHaveLength(3);
    // Waits of 40 then 80 ms, each jittered down to no less than half (a timer may fire 1 ms early).
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(19);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(39);
  });
});
