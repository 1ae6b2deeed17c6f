/**
 * scripts/claude-code/install.mjs from an empty cache: its stdout is the binary's path and nothing
 * else, even though npm itself prints to stdout ("added 2 packages in 7s"). A fake `npm` first on
 * PATH lays out the platform package the way the registry's would, so this runs offline and fast;
 * the real install from an empty cache is what a fresh clone's `npm test` does (see .ci/run).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const installScript = path.join(repoRoot, 'scripts', 'claude-code', 'install.mjs');

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-cc-install-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A fake npm: chats on stdout like the real one, then installs a `claude` that prints VERSION. */
function fakeNpm(binDir: string): void {
  fs.mkdirSync(binDir, { recursive: true });
  const script = `#!/usr/bin/env node
const fs = require('node:fs'), path = require('node:path');
const args = process.argv.slice(2);
const prefix = args[args.indexOf('--prefix') + 1];
const spec = args[args.length - 1];
const version = spec.slice(spec.lastIndexOf('@') + 1);
const { platform, arch } = process;
const report = process.report.getReport();
const musl = platform === 'linux' && report.header.glibcVersionRuntime === undefined;
const key = platform + '-' + arch + (musl ? '-musl' : '');
const dir = path.join(prefix, 'node_modules', '@anthropic-ai', 'claude-code-' + key);
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'claude'), '#!/bin/sh\\necho "' + version + ' (Claude Code)"\\n', { mode: 0o755 });
process.stdout.write('\\nadded 2 packages in 7s\\n');
`;
  fs.writeFileSync(path.join(binDir, 'npm'), script, { mode: 0o755 });
}

describe('claude-code install script', () => {
  it('prints only the binary path on stdout when npm writes to stdout', () => {
    const bin = path.join(tmp, 'bin');
    fakeNpm(bin);
    const dir = path.join(tmp, 'cache', '9.9.9');
    const out = execFileSync(process.execPath, [installScript, '--version', '9.9.9', '--dir', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(path.isAbsolute(lines[0]!)).toBe(true);
    expect(lines[0]!.startsWith(dir)).toBe(true);
    expect(execFileSync(lines[0]!, ['--version'], { encoding: 'utf8' }).trim()).toBe('9.9.9 (Claude Code)');
    // Second run: reused from the cache, same single line.
    const again = execFileSync(process.execPath, [installScript, '--version', '9.9.9', '--dir', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    expect(again).toBe(`${lines[0]}\n`);
  });
});
