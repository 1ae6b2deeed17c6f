/** AuditLog (controller/observers/audit.ts): JSON lines, appended, rotated by size. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { AuditLog } from '../../../controller/observers/audit.js';

it('appends one JSON line per record and rotates by size, keeping N old files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-audit-'));
  const log = new AuditLog(dir, 400, 2);
  for (let i = 0; i < 20; i++) log.write({ kind: 'AgentSession', name: `s${i}`, from: 'Pending', to: 'Starting' });
  const files = fs.readdirSync(dir).sort();
  expect(files).toEqual(['audit.log', 'audit.log.1', 'audit.log.2']);
  for (const f of files) expect(fs.statSync(path.join(dir, f)).size).toBeLessThanOrEqual(400);
  const current = fs
    .readFileSync(path.join(dir, 'audit.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(current[current.length - 1]).toMatchObject({ name: 's19', to: 'Starting' });
  expect(current[0].time).toMatch(/^\d{4}-/);
  // Nothing is lost between the files that are kept: their records are consecutive.
  const kept = ['audit.log.2', 'audit.log.1', 'audit.log'].flatMap((f) =>
    fs
      .readFileSync(path.join(dir, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).name as string),
  );
  const nums = kept.map((n) => Number(n.slice(1)));
  expect(nums).toEqual(Array.from({ length: nums.length }, (_, i) => nums[0] + i));
  expect(fs.statSync(path.join(dir, 'audit.log')).mode & 0o777).toBe(0o600);
  fs.rmSync(dir, { recursive: true, force: true });
});

it('keeps audit.log open, and writes to the file at the path again after it was moved away or removed', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-audit-'));
  const file = path.join(dir, 'audit.log');
  const log = new AuditLog(dir);
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  log.write({ kind: 'AgentSession', name: 'a', to: 'Starting' });
  const open = fds();
  log.write({ kind: 'AgentSession', name: 'b', to: 'Running' });
  expect(fds()).toBe(open);
  fs.renameSync(file, `${file}.moved`); // rotated by someone else (another process's AuditLog, logrotate)
  log.write({ kind: 'AgentSession', name: 'c', to: 'Succeeded' });
  fs.rmSync(file);
  log.write({ kind: 'AgentSession', name: 'd', to: 'Failed' });
  const names = (f: string) =>
    fs
      .readFileSync(f, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).name as string);
  expect(names(`${file}.moved`)).toEqual(['a', 'b']);
  expect(names(file)).toEqual(['d']);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  log.close();
  expect(fds()).toBe(open - 1);
  fs.rmSync(dir, { recursive: true, force: true });
});
