/**
 * `orchctl doctor` as a user runs it (the built bin/orchctl, a temp ORCHCTL_HOME), with a PATH we
 * control: fake agent CLIs (small sh scripts printing a version) in a temp dir in front of the
 * system's tmux, git and node.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliEnv, orchctl, parseTable, ROOT, tempHome } from '../support/cli.js';

let home: string;
let bin: string;

/** Directories holding the system's tmux, git and node (the PATH entries the test keeps). */
function systemDirs(...cmds: string[]): string[] {
  const dirs = new Set<string>();
  for (const c of cmds) {
    const dir = (process.env.PATH ?? '').split(path.delimiter).find((d) => d && fs.existsSync(path.join(d, c)));
    if (!dir) throw new Error(`${c} is not on PATH`);
    dirs.add(dir);
  }
  return [...dirs];
}

function fakeCli(name: string, output: string): void {
  const file = path.join(bin, name);
  fs.writeFileSync(file, `#!/bin/sh\nif [ "$1" = "--version" ]; then printf '%s\\n' '${output}'; exit 0; fi\nexit 2\n`);
  fs.chmodSync(file, 0o755);
}

const doctor = (pathDirs: string[], ...args: string[]) =>
  orchctl(home, ['doctor', ...args], { env: { ...cliEnv(home), PATH: pathDirs.join(path.delimiter) } });

beforeAll(() => {
  expect(fs.existsSync(path.join(ROOT, 'dist/controller/cli/commands/doctor.js')), 'npm test builds dist/ first').toBe(
    true,
  );
});

beforeEach(() => {
  home = tempHome();
  bin = path.join(path.dirname(home), 'bin');
  fs.mkdirSync(bin, { recursive: true });
});

afterEach(() => {
  fs.rmSync(path.dirname(home), { recursive: true, force: true });
});

describe('orchctl doctor', () => {
  it('reports tmux, git, node and each template; a pinned claude is verified, missing CLIs are info', async () => {
    fakeCli('claude', '2.1.330 (Claude Code)');
    const r = await doctor([bin, ...systemDirs('tmux', 'git', 'node')]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const [tools, agents] = r.stdout.trimEnd().split('\n\n').map(parseTable);
    expect(tools[0]).toEqual(['TOOL', 'VERSION', 'STATUS', 'DETAIL']);
    expect(tools.slice(1).map((t) => [t[0], t[2]])).toEqual([
      ['tmux', 'ok'],
      ['git', 'ok'],
      ['node', 'ok'],
    ]);
    expect(tools[1][1]).toMatch(/^\d+\.\d+/);
    expect(agents[0]).toEqual(['AGENT', 'SOURCE', 'COMMAND', 'INSTALLED', 'VERSION', 'PATTERNS', 'DETAIL']);
    const row = (name: string) => agents.find((a) => a[0] === name)!;
    expect(row('claude-code').slice(0, 6)).toEqual(['claude-code', 'template', 'claude', 'yes', '2.1.330', 'verified']);
    expect(row('codex').slice(0, 6)).toEqual(['codex', 'template', 'codex', 'no', '-', 'unknown']);
    expect(row('codex')[6]).toBe('codex not found on PATH (patterns for 0.169.0, 0.171.0)');
    expect(agents.map((a) => a[0]).slice(1)).toEqual(['aider', 'claude-code', 'codex', 'gemini-cli', 'shell']);
    expect(fs.existsSync(path.join(home, 'state.db')), 'doctor never creates a store').toBe(false);
  });

  it(
    "verifies the pinned Codex and Gemini CLI binaries (installed from npm) against the templates' recorded versions",
    async () => {
      const install = (agent: string) =>
        execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'agents', 'install.mjs'), agent], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
          timeout: 15 * 60_000,
        }).trim();
      fs.symlinkSync(install('codex'), path.join(bin, 'codex'));
      fs.symlinkSync(install('gemini-cli'), path.join(bin, 'gemini'));
      // Gemini CLI's --version reads its settings under HOME: a private one, not the person's.
      const r = await orchctl(home, ['doctor', '-o', 'json'], {
        env: {
          ...cliEnv(home),
          HOME: path.dirname(home),
          PATH: [bin, ...systemDirs('tmux', 'git', 'node')].join(path.delimiter),
        },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const agents = JSON.parse(r.stdout).agents as {
        name: string;
        installed: boolean;
        version?: string;
        patterns: string;
      }[];
      const pick = (n: string) => agents.find((a) => a.name === n);
      expect(pick('codex')).toMatchObject({ installed: true, version: '0.171.0', patterns: 'verified' });
      expect(pick('gemini-cli')).toMatchObject({ installed: true, version: '0.61.0', patterns: 'verified' });
    },
    15 * 60_000,
  );

  it('says when the installed version is not one the patterns were verified on (-o json)', async () => {
    fakeCli('claude', '2.1.400 (Claude Code)');
    fakeCli('aider', 'aider 0.86.2');
    const r = await doctor([bin, ...systemDirs('tmux', 'git', 'node')], '-o', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(true);
    const claude = report.agents.find((a: { name: string }) => a.name === 'claude-code');
    expect(claude).toMatchObject({
      installed: true,
      path: path.join(bin, 'claude'),
      version: '2.1.400',
      patterns: 'unverified',
      verifiedVersions: ['2.1.330'],
    });
    expect(claude.message).toBe(
      'patterns were recorded from 2.1.330, not 2.1.400: a screen of 2.1.400 they do not know ' +
        'shows as WaitingForInput UnrecognisedScreen',
    );
    // aider's profile lists 0.86.2 but was reconstructed, not recorded: not "verified".
    expect(report.agents.find((a: { name: string }) => a.name === 'aider')).toMatchObject({
      version: '0.86.2',
      patterns: 'reconstructed',
      verifiedVersions: [],
    });
  });

  it("checks Claude Code's set-up: the config's onboarding state and the base URL, saying what to fix", async () => {
    fakeCli('claude', '2.1.330 (Claude Code)');
    const person = path.join(path.dirname(home), 'person'); // a fresh HOME: no ~/.claude.json
    fs.mkdirSync(person);
    const closed = await new Promise<number>((resolve) => {
      const srv = http.createServer().listen(0, '127.0.0.1', () => {
        const port = (srv.address() as AddressInfo).port;
        srv.close(() => resolve(port));
      });
    });
    const gateway = http.createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const open = (gateway.address() as AddressInfo).port;
    const PATH = [bin, ...systemDirs('tmux', 'git', 'node')].join(path.delimiter);
    const run = async (env: Record<string, string>) => {
      const base: NodeJS.ProcessEnv = { ...cliEnv(home), PATH, HOME: person };
      delete base.ANTHROPIC_API_KEY;
      delete base.CLAUDE_CONFIG_DIR;
      const r = await orchctl(home, ['doctor', '-o', 'json'], { env: { ...base, ...env } });
      expect(r.exitCode, r.stderr).toBe(0);
      return JSON.parse(r.stdout).agents.find((a: { name: string }) => a.name === 'claude-code').checks;
    };
    try {
      const broken = await run({ ANTHROPIC_BASE_URL: `http://127.0.0.1:${closed}` });
      expect(broken).toEqual([
        { check: 'config', ok: false, message: expect.stringContaining('is missing or unreadable') },
        { check: 'base-url', ok: false, message: expect.stringContaining('ECONNREFUSED') },
      ]);
      expect(broken[0].message).toContain(path.join(person, '.claude.json'));
      expect(broken[0].message).toMatch(/Fix: .*ANTHROPIC_API_KEY/);
      const fine = await run({ ANTHROPIC_BASE_URL: `http://127.0.0.1:${open}`, ANTHROPIC_API_KEY: 'sk-test-key' });
      expect(fine).toEqual([
        { check: 'config', ok: true, message: expect.stringContaining('prepared config directory') },
        { check: 'base-url', ok: true, message: `http://127.0.0.1:${open}/ answers (HTTP 404)` },
      ]);
      expect(JSON.stringify(fine)).not.toContain('sk-test-key');
    } finally {
      gateway.close();
    }
  });

  it('includes the Agents of an existing store', async () => {
    fakeCli('claude', '2.1.330 (Claude Code)');
    const manifest = path.join(path.dirname(home), 'agents.yaml');
    fs.writeFileSync(
      manifest,
      [
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Agent',
        'metadata: {name: plain-claude, namespace: team-a}',
        'spec: {command: [claude]}',
        '---',
        'apiVersion: orchctl.io/v1alpha1',
        'kind: Agent',
        'metadata: {name: tool}',
        'spec: {command: [no-such-tool-xyz]}',
        '',
      ].join('\n'),
    );
    const applied = await orchctl(home, ['apply', '-f', manifest]);
    expect(applied.exitCode, applied.stderr).toBe(0);
    const r = await doctor([bin, ...systemDirs('tmux', 'git', 'node')], '-o', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    const stored = JSON.parse(r.stdout).agents.filter((a: { source: string }) => a.source === 'store');
    expect(stored).toEqual(
      [
        expect.objectContaining({ name: 'tool', namespace: 'default', installed: false, patterns: 'unknown' }),
        expect.objectContaining({
          name: 'plain-claude',
          namespace: 'team-a',
          installed: true,
          version: '2.1.330',
          patterns: 'generic',
        }),
      ].sort((a, b) => (a.namespace < b.namespace ? -1 : 1)),
    );
  });

  it('fails with a clear message when tmux and git are missing', async () => {
    fs.symlinkSync(process.execPath, path.join(bin, 'node')); // bin/orchctl itself needs node
    const r = await doctor([bin]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/^tmux\s+-\s+missing\s+not found on PATH$/m);
    expect(r.stdout).toMatch(/^git\s+-\s+missing\s+not found on PATH$/m);
    expect(r.stderr).toBe(
      'error: tmux and git not found on PATH: orchctl runs agents in tmux (≥ 3.2) and watches git; ' +
        'install tmux and git (e.g. apt-get install tmux git)\n',
    );
  });

  it('rejects an unknown output format', async () => {
    const r = await doctor([bin, ...systemDirs('tmux', 'git', 'node')], '-o', 'yaml');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('error: unknown output format "yaml" (allowed: json)\n');
  });
});
