/**
 * scripts/agents/install.mjs for the Codex and Gemini CLIs: it finds each CLI's executable where
 * the registry package puts it (codex: the platform package's vendor/<triple>/bin/codex; gemini:
 * node_modules/.bin/gemini), prints only that path on stdout, and refuses an unknown agent. A fake
 * `npm` first on PATH lays the packages out the way the registry's do, so this runs offline; the
 * real install is what test/e2e/codex-gemini.test.ts does on a fresh clone.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const installScript = path.join(repoRoot, 'scripts', 'agents', 'install.mjs');

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-agents-install-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A fake npm that chats on stdout and lays out the codex platform package or gemini's .bin link. */
function fakeNpm(binDir: string): void {
  fs.mkdirSync(binDir, { recursive: true });
  const script = `#!/usr/bin/env node
const fs = require('node:fs'), path = require('node:path');
const args = process.argv.slice(2);
const prefix = args[args.indexOf('--prefix') + 1];
const spec = args[args.length - 1];
const at = spec.lastIndexOf('@');
const pkg = spec.slice(0, at), version = spec.slice(at + 1);
const cpu = process.arch === 'x64' ? 'x86_64' : 'aarch64';
let file, text;
if (pkg === '@openai/codex') {
  const dir = path.join(prefix, 'node_modules', '@openai', 'codex-' + process.platform + '-' + process.arch,
    'vendor', cpu + (process.platform === 'darwin' ? '-apple-darwin' : '-unknown-linux-musl'), 'bin');
  file = path.join(dir, 'codex'); text = 'codex-cli ' + version;
} else {
  file = path.join(prefix, 'node_modules', '.bin', 'gemini'); text = version;
}
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, '#!/bin/sh\\necho "' + text + '"\\n', { mode: 0o755 });
process.stdout.write('\\nadded 2 packages in 7s\\n');
`;
  fs.writeFileSync(path.join(binDir, 'npm'), script, { mode: 0o755 });
}

function install(agent: string, version: string, dir: string, bin: string): string {
  return execFileSync(process.execPath, [installScript, agent, '--version', version, '--dir', dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
}

describe('agents install script', () => {
  it.each([
    ['codex', 'codex-cli 9.9.9', `codex-${process.platform}-${process.arch}`],
    ['gemini-cli', '9.9.9', path.join('.bin', 'gemini')],
  ])('installs %s and prints only the path of its executable', (agent, versionLine, where) => {
    const bin = path.join(tmp, 'bin');
    fakeNpm(bin);
    const dir = path.join(tmp, 'cache', agent, '9.9.9');
    const out = install(agent, '9.9.9', dir, bin);
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(dir)).toBe(true);
    expect(lines[0]).toContain(where);
    expect(execFileSync(lines[0]!, ['--version'], { encoding: 'utf8' }).trim()).toBe(versionLine);
    // Second run: reused from the cache (the marker and --version match), same single line.
    expect(install(agent, '9.9.9', dir, bin)).toBe(`${lines[0]}\n`);
  });

  it('refuses an unknown agent with exit status 2 and names the known ones', () => {
    const r = spawnSync(process.execPath, [installScript, 'aider'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('unknown agent "aider"; one of claude-code, codex, gemini-cli');
  });
});
