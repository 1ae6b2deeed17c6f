#!/usr/bin/env node
// Install a pinned coding-agent CLI into a test cache directory and print the path of its
// executable on stdout (progress goes to stderr).
//
//   node scripts/agents/install.mjs AGENT [--version X] [--dir DIR] [--check] [--force]
//
// AGENT is one of claude-code, codex, gemini-cli; its pin is scripts/<AGENT>/pin.json.
// Default directory: test/.cache/<AGENT>/<version> (gitignored). ORCHCTL_<AGENT>_CACHE (e.g.
// ORCHCTL_CLAUDE_CODE_CACHE, ORCHCTL_CODEX_CACHE) overrides the parent; --dir overrides the whole
// path. The project's own node_modules and package.json are never touched: npm runs with
// --prefix <dir> --no-save.
//
// Why pins: the TUIs' screens, startup dialogs, config keys and wire protocols change between
// releases (several a week). The fakes and golden pane fixtures in test/support/fixtures/<AGENT>/
// <version>/ were verified against the pinned version; a new version is adopted by bumping the pin
// and recording new fixtures.
//
// How each installs (registry packages only, npm --ignore-scripts, so no install script runs):
// - claude-code: a thin wrapper whose optional dependency `@anthropic-ai/claude-code-<platform>`
//   carries the native binary (~175 MB tarball); we use that binary directly.
// - codex: the same shape — the optional dependency `@openai/codex-<os>-<arch>` (an alias of
//   `@openai/codex@<version>-<os>-<arch>`) carries vendor/<target triple>/bin/codex, a static musl
//   binary on Linux; we use it directly (the JS wrapper bin/codex.js only finds and spawns it).
// - gemini-cli: plain JavaScript (bundle/gemini.js, needs Node >= 20); the executable is the
//   node_modules/.bin/gemini link npm creates.
//
// Idempotent: an existing install with a matching .installed.json marker and a working
// `--version` is reused. Installs go to a temporary sibling directory that is renamed into
// place, so an interrupted or concurrent install never leaves a half-installed cache behind.
//
// Exit status: 0 and the path on stdout; 1 on failure (reason on stderr); 2 on bad arguments;
// with --check, 1 when not installed (nothing is installed).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');

/** The platform suffix of the native packages, as the wrappers compute it. */
export function platformKey() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    const musl = report != null && report.header?.glibcVersionRuntime === undefined;
    return `linux-${arch}${musl ? '-musl' : ''}`;
  }
  return `${platform}-${arch}`;
}

/** Rust target triple of the codex binary (bin/codex.js: linux builds are musl on both libcs). */
function codexTriple() {
  const { platform, arch } = process;
  const cpu = arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : arch;
  if (platform === 'linux') return `${cpu}-unknown-linux-musl`;
  if (platform === 'darwin') return `${cpu}-apple-darwin`;
  if (platform === 'win32') return `${cpu}-pc-windows-msvc`;
  return `${cpu}-unknown-${platform}`;
}

const exe = (name) => (process.platform === 'win32' ? `${name}.exe` : name);

/** Per agent: where the executable lands under the install dir and how `--version` reports it. */
export const AGENTS = {
  'claude-code': {
    binary: (dir) => path.join(dir, 'node_modules', '@anthropic-ai', `claude-code-${platformKey()}`, exe('claude')),
    // "2.1.330 (Claude Code)"
    parseVersion: (out) => out.trim().split(/\s+/)[0],
    env: { DISABLE_AUTOUPDATER: '1' },
    size: '~175 MB download, ~364 MB on disk',
    missing: () => `the native package @anthropic-ai/claude-code-${platformKey()} was not installed`,
  },
  codex: {
    binary: (dir) =>
      path.join(
        dir,
        'node_modules',
        '@openai',
        `codex-${process.platform}-${process.arch}`,
        'vendor',
        codexTriple(),
        'bin',
        exe('codex'),
      ),
    // "codex-cli 0.171.0"
    parseVersion: (out) => out.trim().split(/\s+/).pop(),
    env: {},
    size: '~424 MB on disk',
    missing: () => `the native package @openai/codex-${process.platform}-${process.arch} was not installed`,
  },
  'gemini-cli': {
    binary: (dir) => path.join(dir, 'node_modules', '.bin', process.platform === 'win32' ? 'gemini.cmd' : 'gemini'),
    // "0.61.0"
    parseVersion: (out) => out.trim().split(/\s+/).pop(),
    // No update check, no telemetry, no browser while asking for the version.
    env: { GEMINI_CLI_DISABLE_AUTOUPDATER: 'true', NO_BROWSER: 'true' },
    size: '~100 MB on disk',
    missing: () => 'npm installed no node_modules/.bin/gemini',
  },
};

export function readPin(agent) {
  return JSON.parse(fs.readFileSync(path.join(root, 'scripts', agent, 'pin.json'), 'utf8'));
}

export function defaultDir(agent, version) {
  const envName = `ORCHCTL_${agent.replace(/-/g, '_').toUpperCase()}_CACHE`;
  const parent = process.env[envName] || path.join(root, 'test', '.cache', agent);
  return path.join(parent, version);
}

export function binaryPath(agent, dir) {
  return AGENTS[agent].binary(dir);
}

function usage(agent) {
  return `usage: install.mjs ${agent ?? 'AGENT'} [--version X] [--dir DIR] [--check] [--force]\n`;
}

function parseArgs(agent, argv) {
  const pin = readPin(agent);
  const out = { version: pin.version, dir: undefined, check: false, force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--version') out.version = argv[++i];
    else if (a === '--dir') out.dir = argv[++i];
    else if (a === '--check') out.check = true;
    else if (a === '--force') out.force = true;
    else if (a === '-h' || a === '--help') {
      process.stderr.write(usage(agent));
      process.exit(0);
    } else {
      process.stderr.write(`install.mjs: unknown argument ${a}\n${usage(agent)}`);
      process.exit(2);
    }
  }
  if (!out.version || !/^\d+\.\d+\.\d+([-.+][\w.]+)?$/.test(out.version)) {
    process.stderr.write(`install.mjs: bad version ${out.version}\n`);
    process.exit(2);
  }
  return { ...out, pkg: pin.package };
}

function versionOf(agent, bin) {
  const r = spawnSync(bin, ['--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...AGENTS[agent].env },
  });
  if (r.status !== 0) return undefined;
  return AGENTS[agent].parseVersion(r.stdout);
}

function isInstalled(agent, dir, version) {
  try {
    const marker = JSON.parse(fs.readFileSync(path.join(dir, '.installed.json'), 'utf8'));
    if (marker.version !== version) return false;
  } catch {
    return false;
  }
  const bin = binaryPath(agent, dir);
  return fs.existsSync(bin) && versionOf(agent, bin) === version;
}

/** Install `agent` per argv (without the agent name); returns the exit status. */
export function main(agent, argv) {
  if (!Object.hasOwn(AGENTS, agent)) {
    process.stderr.write(
      `install.mjs: unknown agent ${JSON.stringify(agent)}; one of ${Object.keys(AGENTS).join(', ')}\n`,
    );
    return 2;
  }
  const args = parseArgs(agent, argv);
  const dir = path.resolve(args.dir ?? defaultDir(agent, args.version));
  const bin = binaryPath(agent, dir);
  const tag = `${agent} ${args.version}`;

  if (!args.force && isInstalled(agent, dir, args.version)) {
    process.stderr.write(`${tag}: already installed in ${dir}\n`);
    process.stdout.write(`${bin}\n`);
    return 0;
  }
  if (args.check) {
    process.stderr.write(`${tag}: not installed in ${dir}\n`);
    return 1;
  }

  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const spec = `${args.pkg}@${args.version}`;
  const started = Date.now();
  process.stderr.write(`${tag}: installing ${spec} into ${dir} (npm, ${AGENTS[agent].size}) …\n`);
  const npmArgs = [
    'install',
    '--prefix',
    tmp,
    '--no-save',
    '--no-package-lock',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--engine-strict=false', // claude-code's wrapper declares node >=22; its native binary needs no node
    '--loglevel=error',
    spec,
  ];
  // Keep a parent `npm run`'s settings (e.g. npm_config_global, npm_config_prefix) out of this install.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^npm_config_(global|prefix|location|save|workspaces?|include_workspace_root)$/i.test(k),
    ),
  );
  try {
    // npm's own stdout ("added 2 packages in 7s") goes to our stderr: stdout carries only the path.
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', npmArgs, {
      stdio: ['ignore', process.stderr, 'inherit'],
      timeout: 15 * 60_000,
      env,
      cwd: tmp,
    });
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.stderr.write(`${tag}: npm install failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const tmpBin = binaryPath(agent, tmp);
  if (!fs.existsSync(tmpBin)) {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.stderr.write(
      `${tag}: ${AGENTS[agent].missing()} (unsupported platform, or optional dependencies omitted); expected ${tmpBin}\n`,
    );
    return 1;
  }
  const got = versionOf(agent, tmpBin);
  if (got !== args.version) {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.stderr.write(`${tag}: ${tmpBin} --version printed ${got ?? '(failed)'}\n`);
    return 1;
  }
  fs.writeFileSync(
    path.join(tmp, '.installed.json'),
    `${JSON.stringify(
      {
        package: args.pkg,
        version: args.version,
        platform: platformKey(),
        installedAt: new Date().toISOString(),
        seconds: (Date.now() - started) / 1000,
      },
      null,
      2,
    )}\n`,
  );

  // Move into place. A concurrent installer may have won the race; then keep theirs.
  if (fs.existsSync(dir)) {
    if (!args.force && isInstalled(agent, dir, args.version)) {
      fs.rmSync(tmp, { recursive: true, force: true });
      process.stdout.write(`${bin}\n`);
      return 0;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  try {
    fs.renameSync(tmp, dir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!isInstalled(agent, dir, args.version)) {
      process.stderr.write(`${tag}: could not move the install into place: ${String(err)}\n`);
      return 1;
    }
  }
  process.stderr.write(`${tag}: installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  process.stdout.write(`${bin}\n`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [agent, ...rest] = process.argv.slice(2);
  if (agent === undefined || agent === '-h' || agent === '--help') {
    process.stderr.write(usage());
    process.exitCode = agent === undefined ? 2 : 0;
  } else {
    process.exitCode = main(agent, rest);
  }
}
