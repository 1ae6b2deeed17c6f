/** `orchctl controller`'s retention flags: a value out of bounds is refused before anything starts. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { orchctl, tempHome } from '../support/cli.js';

let home: string | undefined;
afterEach(() => {
  if (home) fs.rmSync(path.dirname(home), { recursive: true, force: true });
});

it.each([
  [['--event-ttl', '10s'], 'error: --event-ttl 10s: must be a duration from 1m to 720h'],
  [['--run-dirs-per-session', '1'], 'error: --run-dirs-per-session 1: must be an integer from 2 to 1000'],
  [['--event-log-max-bytes', '100Ki'], 'error: --event-log-max-bytes 100Ki: must be a size from 1Mi to 64Gi'],
  [['--notification-retention', 'forever'], 'error: --notification-retention forever: must be a duration'],
])('orchctl controller %j: a clear error, and no store or state directory made', async (flags, message) => {
  home = tempHome();
  const r = await orchctl(home, ['controller', '--metrics-addr', '0', ...flags]);
  expect(r.exitCode).toBe(1);
  expect(r.stderr).toContain(message);
  expect(fs.existsSync(home)).toBe(false);
});
