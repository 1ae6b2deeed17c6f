#!/usr/bin/env node
// Install a pinned Claude Code CLI (`@anthropic-ai/claude-code`) into a test cache directory and
// print the path of its `claude` executable on stdout (progress goes to stderr).
//
//   node scripts/claude-code/install.mjs [--version X] [--dir DIR] [--check] [--force]
//
// Default directory: test/.cache/claude-code/<version> (gitignored). ORCHCTL_CLAUDE_CODE_CACHE
// overrides the parent (…/claude-code); --dir overrides the whole path. The project's own
// node_modules and package.json are never touched: npm runs with --prefix <dir> --no-save.
//
// Why the pin (scripts/claude-code/pin.json): the TUI's screens, its startup dialogs, config keys
// and hook payloads change between releases (several a week). The fake Messages API, the config
// that skips the dialogs and the golden pane fixtures in test/support/fixtures/claude-code/<version>/
// were all verified against that one version by scripts/claude-code/spike.ts; a new version is
// adopted by bumping the pin, rerunning the spike and committing its new fixtures.
//
// How it installs: the npm package is a thin wrapper whose optional dependency
// `@anthropic-ai/claude-code-<platform>` carries the native binary (~364 MB on disk, ~175 MB
// tarball, from the npm registry only). The wrapper's postinstall (install.cjs) just copies/links
// that binary over a stub at bin/claude.exe and downloads nothing; we run npm with --ignore-scripts
// and use the platform package's binary directly, so no install script runs at all (and npm's
// allowScripts policy cannot get in the way).
//
// Idempotent: an existing install with a matching .installed.json marker and a working
// `claude --version` is reused. Installs go to a temporary sibling directory that is renamed into
// place, so an interrupted or concurrent install never leaves a half-installed cache behind.
//
// Exit status: 0 and the path on stdout; 1 on failure (reason on stderr); with --check, 1 when not
// installed (nothing is installed).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const pin = JSON.parse(fs.readFileSync(path.join(here, 'pin.json'), 'utf8'));

function parseArgs(argv) {
  const out = { version: pin.version, dir: undefined, check: false, force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--version') out.version = argv[++i];
    else if (a === '--dir') out.dir = argv[++i];
    else if (a === '--check') out.check = true;
    else if (a === '--force') out.force = true;
    else if (a === '-h' || a === '--help') {
      process.stderr.write('usage: install.mjs [--version X] [--dir DIR] [--check] [--force]\n');
      process.exit(0);
    } else {
      process.stderr.write(`install.mjs: unknown argument ${a}\n`);
      process.exit(2);
    }
  }
  if (!out.version || !/^\d+\.\d+\.\d+([-.+][\w.]+)?$/.test(out.version)) {
    process.stderr.write(`install.mjs: bad version ${out.version}\n`);
    process.exit(2);
  }
  return out;
}

/** The platform suffix of the native package, as the wrapper's install.cjs computes it. */
export function platformKey() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    const musl = report != null && report.header?.glibcVersionRuntime === undefined;
    return `linux-${arch}${musl ? '-musl' : ''}`;
  }
  if (platform === 'darwin' || platform === 'win32') return `${platform}-${arch}`;
  return `${platform}-${arch}`;
}

export function defaultDir(version) {
  const parent = process.env.ORCHCTL_CLAUDE_CODE_CACHE || path.join(root, 'test', '.cache', 'claude-code');
  return path.join(parent, version);
}

export function binaryPath(dir) {
  const exe = process.platform === 'win32' ? 'claude.exe' : 'claude';
  return path.join(dir, 'node_modules', '@anthropic-ai', `claude-code-${platformKey()}`, exe);
}

function versionOf(bin) {
  const r = spawnSync(bin, ['--version'], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, DISABLE_AUTOUPDATER: '1' },
  });
  if (r.status !== 0) return undefined;
  return r.stdout.trim().split(/\s+/)[0];
}

function isInstalled(dir, version) {
  try {
    const marker = JSON.parse(fs.readFileSync(path.join(dir, '.installed.json'), 'utf8'));
    if (marker.version !== version) return false;
  } catch {
    return false;
  }
  const bin = binaryPath(dir);
  return fs.existsSync(bin) && versionOf(bin) === version;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const dir = path.resolve(args.dir ?? defaultDir(args.version));
  const bin = binaryPath(dir);

  if (!args.force && isInstalled(dir, args.version)) {
    process.stderr.write(`claude-code ${args.version}: already installed in ${dir}\n`);
    process.stdout.write(`${bin}\n`);
    return 0;
  }
  if (args.check) {
    process.stderr.write(`claude-code ${args.version}: not installed in ${dir}\n`);
    return 1;
  }

  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const spec = `${pin.package}@${args.version}`;
  const started = Date.now();
  process.stderr.write(
    `claude-code ${args.version}: installing ${spec} into ${dir} (npm, ~175 MB download, ~364 MB on disk) …\n`,
  );
  const npmArgs = [
    'install',
    '--prefix',
    tmp,
    '--no-save',
    '--no-package-lock',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--engine-strict=false', // the wrapper declares node >=22; the native binary does not need node at all
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
    process.stderr.write(
      `claude-code ${args.version}: npm install failed: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return 1;
  }
  const tmpBin = binaryPath(tmp);
  if (!fs.existsSync(tmpBin)) {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.stderr.write(
      `claude-code ${args.version}: the native package @anthropic-ai/claude-code-${platformKey()} was not installed ` +
        `(unsupported platform, or optional dependencies omitted); expected ${tmpBin}\n`,
    );
    return 1;
  }
  const got = versionOf(tmpBin);
  if (got !== args.version) {
    fs.rmSync(tmp, { recursive: true, force: true });
    process.stderr.write(`claude-code ${args.version}: ${tmpBin} --version printed ${got ?? '(failed)'}\n`);
    return 1;
  }
  fs.writeFileSync(
    path.join(tmp, '.installed.json'),
    JSON.stringify(
      {
        package: pin.package,
        version: args.version,
        platform: platformKey(),
        installedAt: new Date().toISOString(),
        seconds: (Date.now() - started) / 1000,
      },
      null,
      2,
    ) + '\n',
  );

  // Move into place. A concurrent installer may have won the race; then keep theirs.
  if (fs.existsSync(dir)) {
    if (!args.force && isInstalled(dir, args.version)) {
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
    if (!isInstalled(dir, args.version)) {
      process.stderr.write(`claude-code ${args.version}: could not move the install into place: ${String(err)}\n`);
      return 1;
    }
  }
  process.stderr.write(`claude-code ${args.version}: installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  process.stdout.write(`${bin}\n`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main();
}
