/**
 * `orchctl silence create` / `expire` with the built bin/orchctl: the Silence written has the
 * matchers (flags and amtool's bare positional form), starts now, ends after --for or at --until,
 * and names who made it; what apply would refuse (a bad matcher, a silence muting everything, a
 * length past 366 days) is refused with the flag named and nothing written. Expiring ends a
 * silence now and keeps it; one not yet started starts and ends now, as in Alertmanager.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Silence } from '../../controller/api/notification.js';
import { cliEnv, orchctl, tempHome } from '../support/cli.js';

const HOUR = 3_600_000;
/** A month from now, to the second: inside the 366-day bound. */
const IN_A_MONTH = new Date(Date.now() + 30 * 24 * HOUR).toISOString().replace(/\.\d{3}Z$/, 'Z');
let home: string;

beforeEach(() => {
  home = tempHome();
});

const run = (...args: string[]) => orchctl(home, args, { env: { ...cliEnv(home), USER: 'ada' } });

async function revision(): Promise<number> {
  const r = await run('version', '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).store.revision;
}

async function getSilence(name: string, ns = 'default'): Promise<Silence> {
  const r = await run('get', 'silence', name, '-n', ns, '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

async function silenceCount(): Promise<number> {
  const r = await run('get', 'silences', '-A', '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim() ? JSON.parse(r.stdout).items.length : 0; // a home with no store prints nothing
}

describe('orchctl silence create', () => {
  it('writes a Silence from -l and bare matchers, starting now, for --for, by $USER@host', async () => {
    const before = Date.now();
    const r = await run(
      'silence',
      'create',
      '-l',
      'reason=Stalled',
      'involvedObject.name="fix-login"',
      '--matcher',
      'type!=Normal',
      '--for',
      '2h',
      '--comment',
      'deploying',
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^silence-\d{8}-\d{6}-[0-9a-f]{4}\n$/);
    const name = r.stdout.trim();
    const s = await getSilence(name);
    expect(s.spec).toEqual({
      matchers: ['reason=Stalled', 'type!=Normal', 'involvedObject.name="fix-login"'],
      startsAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      endsAt: expect.any(String),
      createdBy: `ada@${os.hostname()}`,
      comment: 'deploying',
    });
    const starts = Date.parse(s.spec!.startsAt);
    expect(starts).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(starts).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(s.spec!.endsAt) - starts).toBe(2 * HOUR);
    // The name carries the creation time (UTC).
    expect(name.slice(8, 23)).toBe(s.spec!.startsAt.replace(/[-:]/g, '').replace('T', '-').slice(0, 15));
  });

  it('--name, --until and -n; days in --for; get silences lists them', async () => {
    const a = await run('silence', 'create', 'reason=BackOff', '--name', 'night', '--until', IN_A_MONTH);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.stdout).toBe('night\n');
    const b = await run('silence', 'create', '-l', 'reason=Escalated', '--for', '3d', '-n', 'web');
    expect(b.exitCode, b.stderr).toBe(0);
    expect((await getSilence('night')).spec).toMatchObject({ endsAt: IN_A_MONTH });
    const web = await getSilence(b.stdout.trim(), 'web');
    expect(Date.parse(web.spec!.endsAt) - Date.parse(web.spec!.startsAt)).toBe(72 * HOUR);
    const again = await run('silence', 'create', 'reason=BackOff', '--name', 'night', '--for', '1h');
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toBe('error: silences "night" already exists in namespace default\n');
    const list = await run('get', 'silences', '-A');
    expect(list.stdout).toContain('night');
    expect(list.stdout).toContain(b.stdout.trim());
  });

  it.each<[string, string[], string]>([
    [
      'a matcher that is not one',
      ['-l', 'reason'],
      'spec.matchers[0] (-l/--matcher): matcher "reason" is not name=value',
    ],
    [
      'an invalid regular expression',
      ['reason=Stalled', 'reason=~"(Stalled"'],
      'spec.matchers[1] (-l/--matcher): matcher "reason=~"(Stalled"": invalid regular expression',
    ],
    ['an unknown field', ['-l', 'phase=Running'], 'spec.matchers[0] (-l/--matcher): matcher "phase=Running": "phase"'],
    [
      'a silence muting everything',
      ['-l', 'reason=~".*"'],
      'spec.matchers (-l/--matcher): at least one matcher must not match the empty string',
    ],
  ])('refuses %s with the flag named and writes nothing', async (_what, matchers, message) => {
    const before = await revision();
    const r = await run('silence', 'create', ...matchers, '--for', '1h');
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error: ${message}`);
    expect(r.stderr).toContain('error: the silence was not created');
    expect(await revision()).toBe(before);
    expect(await silenceCount()).toBe(0);
  });

  it.each<[string, string[], string]>([
    ['--for past the bound', ['--for', '400d'], 'spec.endsAt (--for/--until): at most 366 days after startsAt'],
    ['--until in the past', ['--until', '2001-01-01T00:00:00Z'], 'spec.endsAt (--for/--until): must be after startsAt'],
    ['--until that is not RFC 3339', ['--until', 'tomorrow'], 'spec.endsAt (--for/--until): '],
    ['--for that is not a duration', ['--for', 'two hours'], '--for "two hours" is not a duration like 2h'],
    ['--for 0s', ['--for', '0s'], '--for "0s" must be longer than nothing'],
    ['neither --for nor --until', [], 'give how long the silence lasts: --for 2h or --until'],
    ['both --for and --until', ['--for', '1h', '--until', IN_A_MONTH], 'give how long the silence'],
  ])('refuses %s and writes nothing', async (_what, flags, message) => {
    const r = await run('silence', 'create', '-l', 'reason=Stalled', ...flags);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error: ${message}`);
    expect(await silenceCount()).toBe(0);
  });

  it('refuses no matchers at all', async () => {
    const r = await run('silence', 'create', '--for', '1h');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error: give at least one matcher');
  });
});

describe('orchctl silence expire', () => {
  it('ends an active silence now and keeps it; a second expire changes nothing', async () => {
    const name = (await run('silence', 'create', 'reason=Stalled', '--for', '2h')).stdout.trim();
    const created = await getSilence(name);
    const before = Date.now();
    const r = await run('silence', 'expire', name);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`silence.orchctl.io/${name} expired\n`);
    const s = await getSilence(name);
    expect(s.spec!.startsAt).toBe(created.spec!.startsAt);
    expect(Date.parse(s.spec!.endsAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(s.spec!.endsAt)).toBeLessThanOrEqual(Date.now());
    expect(s.spec!.matchers).toEqual(['reason=Stalled']);

    const again = await run('silence', 'expire', name);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe(`silence.orchctl.io/${name} unchanged (expired at ${s.spec!.endsAt})\n`);
    expect((await getSilence(name)).spec).toEqual(s.spec);
  });

  it('a silence not yet started starts and ends now; an unknown name is an error, the rest expire', async () => {
    const file = path.join(path.dirname(home), 'later.yaml');
    const later = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Silence',
      metadata: { name: 'later' },
      spec: { matchers: ['reason=BackOff'], startsAt: '2099-01-01T00:00:00Z', endsAt: '2099-01-01T02:00:00Z' },
    };
    fs.writeFileSync(file, YAML.stringify(later));
    expect((await run('apply', '-f', file)).exitCode).toBe(0);
    const r = await run('silence', 'expire', 'nope', 'silence/later');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('error: silences "nope" not found in namespace default\n');
    expect(r.stdout).toBe('silence.orchctl.io/later expired\n');
    const s = await getSilence('later');
    expect(s.spec!.startsAt).toBe(s.spec!.endsAt);
    expect(Date.parse(s.spec!.endsAt)).toBeLessThanOrEqual(Date.now());
  });
});
