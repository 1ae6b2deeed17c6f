/**
 * What orchctl does for Claude Code beyond running a command (Agent `hooks: {kind: claude-code}`):
 *  - a settings file per run, passed with `--settings`, installing hooks that call `orchctl hook`
 *    (merged with the Agent's own `hooks.settings`);
 *  - a known `--session-id` per run (derived from the session's uid and run number, so a restarted
 *    controller computes the same one), which fixes the transcript's path;
 *  - the transcript normaliser: Claude Code's JSONL lines → orchctl's AgentEvents.
 * Facts behind each choice: docs/notes/claude-code.md.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { AgentSpec } from '../api/kinds.js';
import type { NewEvent } from '../store/eventlog.js';
import { bound } from './bound.js';
import {
  type AgentDriver,
  type LaunchAdditions,
  type LaunchFacts,
  restoreTurns,
  type TranscriptReader,
  turnCounters,
} from './driver.js';

/**
 * Hook events installed: the issue's list plus PermissionRequest (fires as the prompt opens),
 * PostToolUseFailure and StopFailure.
 */
export const CLAUDE_HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
  'Notification',
  'Stop',
  'StopFailure',
  'SessionEnd',
  'PreCompact',
  'PostCompact',
] as const;

const TOOL_EVENTS = new Set<string>(['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure']);

/**
 * Whose config directory a run uses. `prepared`: a fresh one in the run's workspace
 * (CLAUDE_CONFIG_DIR), holding what the interactive CLI otherwise asks for or checks before the
 * prompt can go in — onboarding done (else a first-run check goes to api.anthropic.com whatever
 * ANTHROPIC_BASE_URL says, and fails behind a gateway), the workdir trusted, the API key approved.
 * `user`: the person's own (~/.claude), untouched. `auto` (default): `prepared` when the agent's
 * environment has an ANTHROPIC_API_KEY, `user` otherwise (a subscription login lives there). A
 * CLAUDE_CONFIG_DIR in the environment is always the one used: the person chose it.
 */
export type ClaudeConfigDirMode = 'auto' | 'prepared' | 'user';

export interface ClaudeHooksConfig {
  kind: 'claude-code';
  /** Extra keys merged into the generated settings file (e.g. permissions). */
  settings?: Record<string, unknown>;
  configDir?: ClaudeConfigDirMode;
}

export function claudeHooks(hooks: unknown): ClaudeHooksConfig | undefined {
  const h = hooks as { kind?: unknown; settings?: unknown; configDir?: unknown } | undefined;
  if (h?.kind !== 'claude-code') return undefined;
  const mode = h.configDir === 'prepared' || h.configDir === 'user' ? h.configDir : 'auto';
  return {
    kind: 'claude-code',
    settings: h.settings && typeof h.settings === 'object' ? (h.settings as Record<string, unknown>) : undefined,
    configDir: mode,
  };
}

/** The run's own config directory, inside its workspace (prepared mode). */
export const PREPARED_CONFIG_DIR = 'claude-config';

/** What Claude Code records of an approved key (`customApiKeyResponses.approved`): its last 20 characters. */
const keyTail = (key: string) => key.trim().slice(-20);

/** Whether a run gets a prepared config directory (see ClaudeConfigDirMode). */
export function usesPreparedConfig(cfg: ClaudeHooksConfig, env: Record<string, string | undefined>): boolean {
  if (env.CLAUDE_CONFIG_DIR) return false;
  const mode = cfg.configDir ?? 'auto';
  return mode === 'prepared' || (mode === 'auto' && !!env.ANTHROPIC_API_KEY);
}

/**
 * `.claude.json` of a prepared config directory (keys verified on 2.1.330, docs/notes/claude-code.md):
 * no first-run screens or connectivity check, `workdir` trusted, the key's tail approved.
 */
export function preparedClaudeConfig(workdir: string, apiKey: string | undefined): Record<string, unknown> {
  return {
    hasCompletedOnboarding: true,
    projects: { [path.resolve(workdir)]: { hasTrustDialogAccepted: true } },
    ...(apiKey ? { customApiKeyResponses: { approved: [keyTail(apiKey)], rejected: [] } } : {}),
  };
}

/** A stable UUID (v4 layout, hash-derived) for a session's run: the same inputs give the same id. */
export function claudeSessionId(uid: string, run: number): string {
  const h = createHash('sha256').update(`orchctl:${uid}:${run}`).digest('hex');
  const v = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${v}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Single-quotes a word for sh (our own install paths; no data goes through here). */
function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The settings file contents. The hook command is our node and bin/orchctl, both absolute paths
 * of this installation; the workspace reaches the hook through ORCHCTL_WORKSPACE in the
 * environment the agent passes down, so no session data is in the command.
 */
/** `permissions.defaultMode` values of Claude Code's settings (2.1.330's schema). */
const SETTINGS_MODES = new Set(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'auto']);

/**
 * The permission mode the settings file declares: the one `--permission-mode` asks for (its
 * `manual` is the settings' `default`), else `default`. Claude Code 2.1.330 opens with "Make auto
 * mode your default permission mode?" — before any hook, holding the prompt — whenever no
 * settings source (user, project or `--settings`) names a mode, as when the person's own
 * ~/.claude/settings.json says `default` (fixture dialog-auto-mode-opt-in.txt). One in
 * `--settings` keeps it away whatever the person's files say.
 */
export function claudeDefaultMode(args: readonly string[] | undefined): string {
  const list = args ?? [];
  let asked: string | undefined;
  list.forEach((a, i) => {
    if (a === '--permission-mode') asked = list[i + 1];
    else if (a.startsWith('--permission-mode=')) asked = a.slice('--permission-mode='.length);
  });
  if (asked === 'manual') return 'default';
  return asked && SETTINGS_MODES.has(asked) ? asked : 'default';
}

export function claudeSettings(
  cfg: ClaudeHooksConfig,
  hookCommand: string[],
  args?: readonly string[],
): Record<string, unknown> {
  const command = hookCommand.map(shQuote).join(' ');
  const hooks: Record<string, unknown[]> = {};
  for (const ev of CLAUDE_HOOK_EVENTS)
    hooks[ev] = [
      { ...(TOOL_EVENTS.has(ev) ? { matcher: '*' } : {}), hooks: [{ type: 'command', command, timeout: 10 }] },
    ];
  const extra = cfg.settings ?? {};
  const extraHooks = (extra.hooks ?? {}) as Record<string, unknown[]>;
  for (const [ev, list] of Object.entries(extraHooks))
    hooks[ev] = [...(hooks[ev] ?? []), ...(Array.isArray(list) ? list : [])];
  // The statusline gives the exact context figure and rate limits (agents/statusline.ts); an
  // Agent's own statusLine wins, and then the transcript's figure is used.
  const statusLine = { type: 'command', command: `${command} statusline`, padding: 0 };
  // An Agent's own permissions win, key by key; the mode is always named (claudeDefaultMode).
  const own =
    extra.permissions && typeof extra.permissions === 'object' ? (extra.permissions as Record<string, unknown>) : {};
  const permissions = { ...own, defaultMode: own.defaultMode ?? claudeDefaultMode(args) };
  return { statusLine, ...extra, permissions, hooks };
}

/** Claude Code's config directory for an agent environment (CLAUDE_CONFIG_DIR, else ~/.claude). */
export function claudeConfigDir(env: Record<string, string | undefined>): string {
  if (env.CLAUDE_CONFIG_DIR) return env.CLAUDE_CONFIG_DIR;
  return path.join(env.HOME || os.homedir(), '.claude');
}

/**
 * `<config>/projects/<cwd, every non-alphanumeric → '->/<session-id>.jsonl`. Encodings over 200
 * characters get a hash suffix this does not reproduce: then the SessionStart hook's
 * `transcript_path` is used (it always is, when it arrives first).
 */
export function claudeTranscriptPath(configDir: string, cwd: string, sessionId: string): string | undefined {
  const enc = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  return enc.length <= 200 ? path.join(configDir, 'projects', enc, `${sessionId}.jsonl`) : undefined;
}

// ---- transcript → events ---------------------------------------------------------------------

const MAX_TEXT = 4096;
const MAX_OUTPUT = 8192;

/** State carried between transcript lines (also across restarts, through the log's cursors). */
export interface TranscriptState {
  users: number;
  assistants: number;
  /** tool_use id → tool name and command, to label results. */
  tools: Map<string, { tool: string; command?: string }>;
}

export const newTranscriptState = (): TranscriptState => ({ users: 0, assistants: 0, tools: new Map() });

interface Block {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((c) => (typeof c === 'string' ? c : ((c as Block)?.text ?? ''))).join('');
  return '';
}

const EXIT_CODE = /^(?:Error: )?Exit code (\d+)/;

/** One transcript line → the events it means (most lines mean none). */
export function transcriptEvents(line: Record<string, unknown>, run: number, st: TranscriptState): NewEvent[] {
  const type = line.type;
  if ((type !== 'user' && type !== 'assistant') || line.isSidechain === true || line.isMeta === true) return [];
  const ts = typeof line.timestamp === 'string' ? line.timestamp : new Date().toISOString();
  const msg = (line.message ?? {}) as {
    content?: unknown;
    usage?: Record<string, number>;
    stop_reason?: string | null;
    id?: string;
    model?: string;
  };
  const base = { ts, run, source: 'transcript' as const };
  const out: NewEvent[] = [];
  if (type === 'user') {
    if (typeof msg.content === 'string') {
      const interrupt = msg.content.startsWith('[Request interrupted by user');
      out.push({
        ...base,
        type: 'user_message',
        text: bound(msg.content, MAX_TEXT),
        index: interrupt ? undefined : st.users++,
        ...(interrupt ? { interrupt: true } : {}),
      });
      return out;
    }
    const blocks = Array.isArray(msg.content) ? (msg.content as Block[]) : [];
    const text = blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join('\n');
    if (text && !text.startsWith('<system-reminder>')) {
      const interrupt = text.startsWith('[Request interrupted by user');
      out.push({
        ...base,
        type: 'user_message',
        text: bound(text, MAX_TEXT),
        index: interrupt ? undefined : st.users++,
        ...(interrupt ? { interrupt: true } : {}),
      });
    }
    const result = line.toolUseResult as
      | { stdout?: string; stderr?: string; interrupted?: boolean }
      | string
      | undefined;
    for (const b of blocks) {
      if (b.type !== 'tool_result') continue;
      const known = b.tool_use_id ? st.tools.get(b.tool_use_id) : undefined;
      const content = blockText(b.content);
      const isError = b.is_error === true;
      let exitCode: number | undefined;
      let output = content;
      if (isError) {
        const m = EXIT_CODE.exec(content);
        if (m) exitCode = Number(m[1]);
      } else if (result && typeof result === 'object') {
        output = [result.stdout, result.stderr].filter(Boolean).join('\n') || content;
        if (known?.tool === 'Bash' && !result.interrupted) exitCode = 0;
      }
      out.push({
        ...base,
        type: 'tool_result',
        tool: known?.tool,
        toolUseId: b.tool_use_id,
        ...(known?.command ? { command: known.command } : {}),
        isError,
        ...(exitCode !== undefined ? { exitCode } : {}),
        output: bound(output, MAX_OUTPUT),
        ...(result && typeof result === 'object' && result.interrupted ? { interrupted: true } : {}),
      });
    }
    return out;
  }
  // assistant: one transcript line per content block
  const blocks = Array.isArray(msg.content) ? (msg.content as Block[]) : [];
  const u = msg.usage;
  const usage = u
    ? {
        inputTokens: u.input_tokens ?? 0,
        outputTokens: u.output_tokens ?? 0,
        cacheReadTokens: u.cache_read_input_tokens ?? 0,
        cacheCreationTokens: u.cache_creation_input_tokens ?? 0,
      }
    : undefined;
  // Every line of a message repeats its usage: the id lets the usage fold count the message once.
  const facts = {
    ...(usage ? { usage } : {}),
    ...(typeof msg.id === 'string' ? { messageId: msg.id } : {}),
    ...(typeof msg.model === 'string' ? { model: msg.model } : {}),
  };
  for (const b of blocks) {
    if (b.type === 'text' && b.text) {
      out.push({
        ...base,
        type: 'assistant_message',
        text: bound(b.text, MAX_TEXT),
        index: st.assistants++,
        ...facts,
        ...(msg.stop_reason ? { stopReason: msg.stop_reason } : {}),
      });
    } else if (b.type === 'tool_use') {
      const command = typeof b.input?.command === 'string' ? (b.input.command as string) : undefined;
      if (b.id) st.tools.set(b.id, { tool: b.name ?? '', command });
      if (st.tools.size > 1000) st.tools.delete(st.tools.keys().next().value as string);
      out.push({
        ...base,
        type: 'tool_use',
        tool: b.name ?? '',
        toolUseId: b.id,
        ...(command ? { command: bound(command, MAX_TEXT) } : { input: boundJson(b.input) }),
        ...facts, // a message of tool calls alone has no text event to carry its usage
      });
    }
  }
  return out;
}

function boundJson(v: unknown): unknown {
  const s = JSON.stringify(v ?? null);
  return s.length <= 2048 ? v : bound(s, 2048);
}

// ---- the driver ------------------------------------------------------------------------------

/** Claude Code's JSONL transcript → events (the generic driver reads announced transcripts with it too). */
const jsonl: TranscriptReader<TranscriptState> = {
  // "API Error: … 429 / rate limit" (verified on 2.1.330, shared/reference/claude-code-samples.md) and
  // the older "Claude AI usage limit reached|<epoch seconds>" form.
  limitNotice: {
    message: /^API Error: .*\b(429|rate.?limit|usage limit|quota)|^Claude AI usage limit reached\|/i,
    resetEpoch: /usage limit reached\|(\d{10})\b/i,
  },
  newState: newTranscriptState,
  events: transcriptEvents,
  counters: turnCounters,
  restore: restoreTurns,
};
export const jsonlTranscript = jsonl as TranscriptReader;

export const claudeCodeDriver: AgentDriver = {
  name: 'claude-code',
  // Typed at idle: no hook or API starts a compaction (verified on 2.1.330: PreCompact manual,
  // SessionStart compact, PostCompact with compact_summary; /clear: SessionEnd clear, SessionStart clear).
  context: { compact: '/compact', clear: '/clear' },
  hooks: (agent) => !!claudeHooks(agent?.hooks),
  /** A settings file installing our hooks, and a --session-id fixed by uid and run (so the transcript's path). */
  launch(agent: AgentSpec, f: LaunchFacts): LaunchAdditions {
    const cfg = claudeHooks(agent.hooks) ?? { kind: 'claude-code' };
    const sessionId = claudeSessionId(f.uid, f.run);
    const settingsFile = path.join(f.workspace, SETTINGS_FILE);
    const files: Record<string, string> = {
      [SETTINGS_FILE]: `${JSON.stringify(claudeSettings(cfg, f.hookCommand, agent.args), null, 2)}\n`,
    };
    const env: Record<string, string> = {};
    if (usesPreparedConfig(cfg, f.env)) {
      env.CLAUDE_CONFIG_DIR = path.join(f.workspace, PREPARED_CONFIG_DIR);
      const config = preparedClaudeConfig(f.workdir, f.env.ANTHROPIC_API_KEY);
      files[`${PREPARED_CONFIG_DIR}/.claude.json`] = `${JSON.stringify(config, null, 2)}\n`;
    }
    const transcript = claudeTranscriptPath(claudeConfigDir({ ...f.env, ...env }), f.workdir, sessionId);
    return {
      args: ['--session-id', sessionId, '--settings', settingsFile],
      files,
      env,
      sessionId,
      ...(transcript ? { transcript } : {}),
    };
  },
  // Verified on 2.1.330 (`claude --help`): --append-system-prompt <prompt> adds to the default
  // system prompt. The text is orchctl's constant protocol, never data or a secret. An Agent that
  // already sets a system prompt flag keeps its own.
  appendSystemPrompt: (agent, text) =>
    (agent.args ?? []).some((a) => /^--(append-)?system-prompt(-file)?$/.test(a))
      ? []
      : ['--append-system-prompt', text],
  transcript: jsonlTranscript,
  async setupChecks(agent) {
    const cfg = claudeHooks(agent.hooks);
    if (!cfg) return [];
    const { claudeSetupChecks } = await import('./claude-code-setup.js');
    return claudeSetupChecks(agent, (env) => usesPreparedConfig(cfg, env));
  },
};

const SETTINGS_FILE = 'claude-settings.json';
