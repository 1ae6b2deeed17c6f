/** The compiled shape of detection data and its errors, shared by validate, compile and classify. */

export type ScreenState = 'idle' | 'busy' | 'waiting' | 'dialog' | 'unknown';

export interface ScreenClass {
  state: ScreenState;
  /**
   * Startup dialog name when state is 'dialog' (e.g. workspace-trust, custom-api-key,
   * bypass-permissions, mcp-server, login, onboarding).
   */
  dialog?: string;
  /**
   * waiting/dialog: the question and its options as shown; unknown: the screen's text no pattern
   * recognised (escape-free, trimmed, at most 1 KB).
   */
  prompt?: string;
  /** Usage or rate limit text on screen. */
  quotaExhausted?: boolean;
  /** The lines the limit notice was found in (escape-free, at most 600 bytes): they may say when it resets. */
  quotaText?: string;
  /**
   * The latest thing above the input is an interruption notice (e.g. Claude's "Interrupted · What
   * should Claude do instead?").
   */
  interrupted?: boolean;
  /** The input box/prompt is drawn and empty (or shows only a placeholder), whatever the state. */
  inputReady?: boolean;
}

export type Region = 'above' | 'input' | 'footer' | 'screen' | 'last';
export const REGIONS: readonly Region[] = ['above', 'input', 'footer', 'screen', 'last'];
export const STATES = ['idle', 'busy', 'waiting', 'unknown'] as const;

/** One compiled pattern: a regex tested against a region (optionally only its last `within` lines). */
export interface CompiledPattern {
  re: RegExp;
  region: Region;
  within?: number;
  /** Only the lines after the last one matching this (e.g. the latest echoed user prompt). */
  since?: RegExp;
  /** present: only when the input line is drawn; absent: only when it is not. */
  box?: 'present' | 'absent';
}

export interface DetectionProfile {
  agent: string;
  /** CLI versions these patterns were verified on (exact, or with `*` wildcards). */
  versions: string[];
  /** recorded: checked against real captures; reconstructed: written from documentation, not verified on a live CLI. */
  provenance: 'recorded' | 'reconstructed';
  /** tmux key names that answer a permission prompt. */
  approveKeys: string[];
  denyKeys: string[];
  /** Startup dialogs and the keys that get past each (for opt-in auto-answer). */
  dialogs: { name: string; answerKeys?: string[] }[];
  contextWindowTokens?: number;
  // compiled form
  tailLines: number;
  header?: { match: RegExp; lines: number; within: number };
  ignore: RegExp[];
  input?: { line: RegExp; within: number; border?: RegExp; empty: RegExp[] };
  dialogPatterns: { name: string; match: CompiledPattern[]; prompt?: PromptRule }[];
  waiting: CompiledPattern[];
  busy: CompiledPattern[];
  idle: CompiledPattern[];
  quota: CompiledPattern[];
  interrupted: CompiledPattern[];
  prompt: PromptRule;
  otherwise: 'idle' | 'busy' | 'waiting' | 'unknown';
  /** Known texts of an agent that gave up (tried on the last output of a run that failed): a reason each. */
  failures: { reason: string; re: RegExp; hint?: string }[];
}

/** Where the prompt text of a waiting/dialog screen starts: after/at a line, else the last `lines` lines. */
export interface PromptRule {
  after?: RegExp;
  from?: RegExp;
  lines: number;
}

export class DetectionVersionError extends Error {
  constructor(
    readonly agent: string,
    readonly version: string,
    readonly verified: string[],
  ) {
    super(
      `agent ${agent}: no detection profile is verified for version ${version} ` +
        `(verified: ${verified.join(', ') || 'none'}); ` +
        `record pane fixtures for ${version} and add a profile listing it (manifests/agents/README.md)`,
    );
    this.name = 'DetectionVersionError';
  }
}

/** Bad detection data; the message names where and which field. */
export class DetectionDataError extends Error {
  constructor(
    readonly where: string,
    readonly errors: { path: string; message: string }[],
  ) {
    super(`${where}: invalid detection data: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
    this.name = 'DetectionDataError';
  }
}

export const MAX_PROMPT_BYTES = 1024;
export const DEFAULT_TAIL = 40;

/** A JSON object as read from a manifest. */
export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
