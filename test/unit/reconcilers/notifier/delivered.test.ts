/**
 * The channels' delivered-keys record on a real directory: a key added is there for a new reader
 * (a restarted controller), per channel; a torn last line is no key; the file keeps the newest
 * MAX_KEYS keys when it is rewritten.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeliveredKeys, MAX_KEYS } from '../../../../controller/reconcilers/notifier/delivered.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-delivered-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('DeliveredKeys', () => {
  it('a key recorded for one channel is seen after a restart, and only for that channel', () => {
    new DeliveredKeys(dir).add('default/ops', 'orchctl-1');
    const again = new DeliveredKeys(dir);
    expect(again.has('default/ops', 'orchctl-1')).toBe(true);
    expect(again.has('default/pager', 'orchctl-1')).toBe(false);
    expect(again.has('default/ops', 'orchctl-2')).toBe(false);
  });

  it('a torn last line (a crash mid-append) is no key', () => {
    fs.writeFileSync(path.join(dir, 'default_ops.keys'), 'orchctl-1\norchctl-2');
    const keys = new DeliveredKeys(dir);
    expect(keys.has('default/ops', 'orchctl-1')).toBe(true);
    expect(keys.has('default/ops', 'orchctl-2')).toBe(false);
  });

  it('keeps the newest MAX_KEYS keys when the file is rewritten', () => {
    const keys = new DeliveredKeys(dir);
    for (let i = 0; i < 2 * MAX_KEYS; i++) keys.add('default/ops', `k${i}`);
    const lines = fs.readFileSync(path.join(dir, 'default_ops.keys'), 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(MAX_KEYS);
    const again = new DeliveredKeys(dir);
    expect(again.has('default/ops', `k${2 * MAX_KEYS - 1}`)).toBe(true);
    expect(again.has('default/ops', `k${MAX_KEYS}`)).toBe(true);
    expect(again.has('default/ops', `k${MAX_KEYS - 1}`)).toBe(false);
  });
});
