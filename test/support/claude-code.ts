/**
 * Running the real Claude Code CLI in tests: where the pinned binary is, and a throw-away
 * HOME / CLAUDE_CONFIG_DIR whose config lets the interactive TUI start with no dialog, plus a
 * `--settings` file that installs logging hooks.
 *
 * Facts behind every key and variable here: docs/notes/claude-code.md (verified on the version in
 * scripts/claude-code/pin.json by scripts/claude-code/spike.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_HOOK_EVENTS } from '../../controller/agents/claude-code.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const installScript = path.join(repoRoot, 'scripts', 'claude-code', 'install.mjs');

/** The pinned Claude Code version (scripts/claude-code/pin.json). */
export const CLAUDE_CODE_VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, 'scripts', 'claude-code', 'pin.json'), 'utf8')) as { version: string }
).version;

/** Golden pane fixtures and samples recorded by the spike for `version`. */
export function fixturesDir(version = CLAUDE_CODE_VERSION): string {
  return path.join(repoRoot, 'test', 'support', 'fixtures', 'claude-code', version);
}

/** Path of the installed `claude` binary, or undefined when the cache has no install. */
export function findClaudeCode(version = CLAUDE_CODE_VERSION): string | undefined {
  try {
    return (
      execFileSync(process.execPath, [installScript, '--check', '--version', version], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

/**
 * Install (if needed) and return the path of the `claude` binary. First install takes ~10 s with
 * a warm npm cache and downloads ~175 MB from the npm registry otherwise (~364 MB on disk); give the caller's hook
 * a generous timeout.
 */
export function ensureClaudeCode(version = CLAUDE_CODE_VERSION): string {
  const out = execFileSync(process.execPath, [installScript, '--version', version], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 15 * 60_000,
  });
  // The script's contract is one line, the path; anything else means something leaked onto stdout.
  const bin = out.trim();
  if (bin.includes('\n') || !path.isAbsolute(bin) || !fs.existsSync(bin)) {
    throw new Error(`install.mjs printed ${JSON.stringify(out)} on stdout; expected the path of the claude binary`);
  }
  return bin;
}

/**
 * The hook events the spike installs — the same list orchctl installs (controller/agents/claude-code.ts):
 * the ones issue #5 asks for plus PermissionRequest, PostToolUseFailure and StopFailure.
 */
export const HOOK_EVENTS = CLAUDE_HOOK_EVENTS;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Events whose entries take a tool-name `matcher`. */
const TOOL_EVENTS = new Set<string>(['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure']);

/**
 * The transcript directory name Claude Code derives from a working directory: every character
 * other than [A-Za-z0-9] becomes `-` (so `/tmp/a.b` → `-tmp-a-b`). Paths whose encoding exceeds
 * 200 characters get a hash suffix this function does not reproduce (returns undefined) — read
 * `transcript_path` from the SessionStart hook payload instead.
 */
export function projectDirName(cwd: string): string | undefined {
  const enc = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  return enc.length <= 200 ? enc : undefined;
}

/** `<configDir>/projects/<encoded cwd>/<sessionId>.jsonl`, as Claude Code writes it. */
export function transcriptPath(configDir: string, cwd: string, sessionId: string): string | undefined {
  const dir = projectDirName(cwd);
  return dir === undefined ? undefined : path.join(configDir, 'projects', dir, `${sessionId}.jsonl`);
}

/** The part of an API key Claude Code stores in `customApiKeyResponses.approved`: its last 20 characters. */
export function apiKeyTail(key: string): string {
  return key.trim().slice(-20);
}

export interface ClaudeHomeOptions {
  /** Project directories to mark trusted (the cwd Claude runs in). */
  projectDirs: string[];
  /** Fake Messages API base URL (ANTHROPIC_BASE_URL). */
  baseUrl: string;
  /** API key to send and pre-approve. */
  apiKey?: string;
  /** Root directory to create everything in; default a fresh mkdtemp under os.tmpdir(). */
  root?: string;
  /** Hook events to install (default {@link HOOK_EVENTS}); [] for none. */
  hookEvents?: readonly string[];
  /**
   * Command run for each hook (gets the payload on stdin). Default: a generated sh script that
   * appends `{"t":<epoch ms>,"payload":<payload>}` as one line to `hookLog` and exits 0.
   */
  hookCommand?: string;
  /** `permissions.defaultMode` in the settings file; default `default` (ask before Bash/edits). */
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions' | 'auto';
  /** Extra keys merged into the settings file. */
  settings?: Record<string, unknown>;
  /** Extra keys merged into `.claude.json`. */
  config?: Record<string, unknown>;
  /** Leave these config keys out (to provoke a startup dialog in a test). */
  omitConfig?: Array<'hasCompletedOnboarding' | 'customApiKeyResponses' | 'trust' | 'theme'>;
}

export interface ClaudeHome {
  root: string;
  /** HOME for the CLI. */
  home: string;
  /** CLAUDE_CONFIG_DIR (holds .claude.json, projects/, sessions/ …). */
  configDir: string;
  /** The file for `--settings`. */
  settingsPath: string;
  /** Where the default hook command appends payload lines. */
  hookLog: string;
  apiKey: string;
  /** Environment for the CLI process (merge over a clean base such as PATH/TERM/LANG). */
  env: Record<string, string>;
  /** argv after the binary: `--session-id <id> --settings <file>` plus `extra`. */
  args(sessionId: string, ...extra: string[]): string[];
  /** Hook payloads logged so far (default hook command only). */
  readHooks(): HookRecord[];
  /** Remove the root directory. */
  cleanup(): void;
}

export interface HookRecord {
  /** Epoch ms when the hook ran. */
  t: number;
  payload: { hook_event_name?: string; session_id?: string; transcript_path?: string; [k: string]: unknown };
}

/**
 * Environment variables that keep the CLI off the network and quiet. Each exists in the pinned
 * version's binary; see the note for what each one changes.
 */
export const QUIET_ENV: Readonly<Record<string, string>> = {
  // Telemetry, update checks, the /api/hello preconnect. It does NOT skip the onboarding
  // connectivity preflight (which ignores ANTHROPIC_BASE_URL and fails here with ENOTFOUND
  // api.anthropic.com): hasCompletedOnboarding in the config does (docs/notes/claude-code.md §12).
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION: 'false',
  CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL: '1',
  // Without these two the CLI still tries downloads.claude.ai (model catalog) and github.com
  // (official plugin marketplace) at start-up; they fail quietly, but tests should not try.
  CLAUDE_CODE_MODEL_CATALOG: 'off',
  CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
};

/** Create the temp HOME/config/settings for one CLI run. */
export function makeClaudeHome(opts: ClaudeHomeOptions): ClaudeHome {
  const root = opts.root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-claude-'));
  const home = path.join(root, 'home');
  const configDir = path.join(home, '.claude');
  const settingsPath = path.join(root, 'settings.json');
  const hookLog = path.join(root, 'hooks.jsonl');
  const hookScript = path.join(root, 'hook.sh');
  const apiKey = opts.apiKey ?? 'sk-ant-api03-orchctl-test-key-0000000000000000';
  fs.mkdirSync(configDir, { recursive: true });

  const omit = new Set(opts.omitConfig ?? []);
  const config: Record<string, unknown> = {};
  if (!omit.has('hasCompletedOnboarding')) {
    config.hasCompletedOnboarding = true;
    config.lastOnboardingVersion = CLAUDE_CODE_VERSION;
  }
  if (!omit.has('theme')) config.theme = 'dark';
  if (!omit.has('customApiKeyResponses'))
    config.customApiKeyResponses = { approved: [apiKeyTail(apiKey)], rejected: [] };
  if (!omit.has('trust')) {
    config.projects = Object.fromEntries(
      opts.projectDirs.map((d) => [path.resolve(d), { hasTrustDialogAccepted: true }]),
    );
  }
  Object.assign(config, opts.config ?? {});
  fs.writeFileSync(path.join(configDir, '.claude.json'), JSON.stringify(config, null, 2) + '\n');

  // {"t":<ms>,"payload":<stdin>} per line. Newlines are dropped from the payload (in JSON they can
  // only be whitespace; Claude Code ends its payload with one). An empty stdin leaves an
  // unparsable line, which readHooks() skips.
  fs.writeFileSync(
    hookScript,
    '#!/bin/sh\n# orchctl test hook: log the payload, never block the agent.\n' +
      `{ printf '{"t":%s,"payload":' "$(date +%s%3N)"; tr -d '\\n'; printf '}\\n'; } ` +
      `>> '${hookLog.replace(/'/g, `'\\''`)}' 2>/dev/null\nexit 0\n`,
    { mode: 0o755 },
  );
  const command = opts.hookCommand ?? hookScript;
  const hooks: Record<string, unknown[]> = {};
  for (const ev of opts.hookEvents ?? HOOK_EVENTS) {
    hooks[ev] = [
      { ...(TOOL_EVENTS.has(ev) ? { matcher: '*' } : {}), hooks: [{ type: 'command', command, timeout: 10 }] },
    ];
  }
  const settings: Record<string, unknown> = {
    permissions: { defaultMode: opts.permissionMode ?? 'default' },
    hooks,
    ...(opts.settings ?? {}),
  };
  fs.writeFileSync(settingsPath, JSON.stringify(settings, null, 2) + '\n');

  // The CLI also keeps state outside its config dir: a messaging socket at
  // $XDG_RUNTIME_DIR/cc-socks/<pid>.sock (else $TMPDIR) and scratch files in
  // $CLAUDE_CODE_TMPDIR/claude-<uid> (else $TMPDIR). Keep both inside the root as well.
  const runDir = path.join(root, 'run');
  fs.mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    XDG_RUNTIME_DIR: runDir,
    CLAUDE_CODE_TMPDIR: runDir,
    TMPDIR: runDir,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: apiKey,
    ...QUIET_ENV,
  };

  return {
    root,
    home,
    configDir,
    settingsPath,
    hookLog,
    apiKey,
    env,
    args: (sessionId, ...extra) => ['--session-id', sessionId, '--settings', settingsPath, ...extra],
    readHooks: () => readHookLog(hookLog),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** Parse a hook log written by the default hook command; bad lines are skipped. */
export function readHookLog(file: string): HookRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: HookRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as HookRecord);
    } catch {
      // partial or empty payload
    }
  }
  return out;
}

/**
 * A live-session record Claude Code keeps at `<configDir>/sessions/<pid>.json` while it runs
 * (the data behind `claude agents --json`). `status` follows the TUI: `idle`, `busy`, `waiting`
 * (then `waitingFor`, e.g. `permission prompt`).
 */
export interface SessionRecord {
  pid: number;
  sessionId: string;
  cwd: string;
  status?: string;
  waitingFor?: string;
  statusUpdatedAt?: number;
  version?: string;
  kind?: string;
  [k: string]: unknown;
}

/** The live-session records under `<configDir>/sessions/` (unreadable ones skipped). */
export function readSessionRecords(configDir: string): SessionRecord[] {
  const dir = path.join(configDir, 'sessions');
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const out: SessionRecord[] = [];
  for (const n of names) {
    try {
      out.push(JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as SessionRecord);
    } catch {
      // being rewritten
    }
  }
  return out;
}

/** Transcript JSONL lines (parsed; bad or partial lines skipped). */
export function readTranscript(file: string): Array<Record<string, unknown>> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line still being written
    }
  }
  return out;
}
