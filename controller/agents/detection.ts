/**
 * Pane-text classification of an agent CLI (idle / busy / waiting / startup dialog), driven by
 * DATA: the Agent manifest's `spec.detection` (format: manifests/agents/README.md). The data is a
 * list of profiles, each verified on named CLI versions, because every UI release moves the
 * strings; a version no profile lists is refused loudly (DetectionVersionError) rather than
 * misread quietly.
 *
 * How a capture is read (all of it from the profile):
 *  - escape sequences are stripped, trailing ASCII blanks trimmed (never U+00A0: Claude Code draws
 *    its live input line as `❯\u00a0`), `ignore` lines dropped (rotating tips, animated art);
 *  - a `header` at the top of the screen (logo, version, cwd — it animates and can hold any
 *    path) is cut off, and only the last `tailLines` non-empty lines are looked at;
 *  - the live input line (`input.line`, searched in the last `input.within` lines) splits the
 *    screen into regions: `above` (content above the box, minus its `input.border` rules),
 *    `input` (what is typed), `footer` (below the box). Busy markers count only `above` the box,
 *    since the box is drawn (and may hold any text) while the agent works;
 *  - categories are tried in order dialogs → waiting → busy → idle → `otherwise`; `quota` and
 *    `interrupted` are flags next to the state.
 * Regexes are compiled once per profile (detectionFor caches per Agent spec object), so a
 * classification is a few regex tests over a few KB.
 */
import path from 'node:path';
import stripAnsi from 'strip-ansi';
import type { AgentSpec } from '../api/kinds.js';
import { checkPattern } from '../api/patterns.js';

export type ScreenState = 'idle' | 'busy' | 'waiting' | 'dialog' | 'unknown';

export interface ScreenClass {
  state: ScreenState;
  /** Startup dialog name when state is 'dialog' (e.g. workspace-trust, custom-api-key, bypass-permissions, mcp-server, login, onboarding). */
  dialog?: string;
  /** waiting/dialog: the question and its options as shown (escape-free, trimmed, at most 1 KB). */
  prompt?: string;
  /** Usage or rate limit text on screen. */
  quotaExhausted?: boolean;
  /** The latest thing above the input is an interruption notice (e.g. Claude's "Interrupted · What should Claude do instead?"). */
  interrupted?: boolean;
  /** The input box/prompt is drawn and empty (or shows only a placeholder), whatever the state. */
  inputReady?: boolean;
}

export type Region = 'above' | 'input' | 'footer' | 'screen' | 'last';
const REGIONS: readonly Region[] = ['above', 'input', 'footer', 'screen', 'last'];
const STATES = ['idle', 'busy', 'waiting', 'unknown'] as const;

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
      `agent ${agent}: no detection profile is verified for version ${version} (verified: ${verified.join(', ') || 'none'}); ` +
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
const DEFAULT_TAIL = 40;

// ---------------------------------------------------------------------------------------------
// Shape validation (hand-written: the CRD keeps `detection` preserve-unknown, so the messages
// here are what a user sees for a typo in a template).

type Errs = { path: string; message: string }[];
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const KEY_NAME = /^[^\s\x00-\x1f]+$/;
const DIALOG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const VERSION = /^[0-9A-Za-z*][0-9A-Za-z.*+-]*$/;

/** Fields a profile may set; every one but `versions` may also be set at the top level as a default. */
const PROFILE_FIELDS = [
  'versions',
  'provenance',
  'source',
  'approveKeys',
  'denyKeys',
  'contextWindowTokens',
  'tailLines',
  'header',
  'ignore',
  'input',
  'dialogs',
  'waiting',
  'busy',
  'idle',
  'quota',
  'interrupted',
  'prompt',
  'otherwise',
] as const;
const TOP_FIELDS = ['agent', 'profiles', ...PROFILE_FIELDS.filter((f) => f !== 'versions')];
const PATTERN_FIELDS = ['regex', 'flags', 'region', 'within', 'since', 'box'];

function unknownKeys(o: Obj, allowed: readonly string[], at: string, errs: Errs): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k))
      errs.push({ path: `${at}.${k}`, message: `unknown field (allowed: ${allowed.join(', ')})` });
}

function checkRegex(src: unknown, at: string, errs: Errs, flags = ''): void {
  if (typeof src !== 'string' || !src)
    return void errs.push({ path: at, message: 'must be a non-empty string (a JavaScript regular expression)' });
  try {
    new RegExp(src, 'm' + flags);
  } catch (e) {
    return void errs.push({
      path: at,
      message: `invalid regular expression ${JSON.stringify(src)}: ${(e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '')}`,
    });
  }
  const problem = checkPattern(src);
  if (problem) errs.push({ path: at, message: problem });
}

function checkInt(v: unknown, at: string, errs: Errs, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    errs.push({ path: at, message: `must be an integer from ${min} to ${max}` });
}

function checkKeys(v: unknown, at: string, errs: Errs): void {
  if (!Array.isArray(v)) return void errs.push({ path: at, message: 'must be a list of tmux key names, e.g. [Enter]' });
  v.forEach((k, i) => {
    if (typeof k !== 'string' || !KEY_NAME.test(k))
      errs.push({ path: `${at}[${i}]`, message: 'must be a tmux key name (no spaces), e.g. Enter, Down, C-c' });
  });
}

function checkPatternList(v: unknown, at: string, errs: Errs): void {
  if (!Array.isArray(v))
    return void errs.push({
      path: at,
      message: 'must be a list of patterns (a regex string or {regex, flags, region, within, box})',
    });
  v.forEach((p, i) => {
    const pa = `${at}[${i}]`;
    if (typeof p === 'string') return checkRegex(p, pa, errs);
    if (!isObj(p)) return void errs.push({ path: pa, message: 'must be a regex string or an object with regex' });
    unknownKeys(p, PATTERN_FIELDS, pa, errs);
    if (p.flags !== undefined && (typeof p.flags !== 'string' || !/^[isu]*$/.test(p.flags)))
      errs.push({ path: `${pa}.flags`, message: 'may only hold i, s and u (m is always on)' });
    checkRegex(p.regex, `${pa}.regex`, errs, typeof p.flags === 'string' && /^[isu]*$/.test(p.flags) ? p.flags : '');
    if (p.region !== undefined && !REGIONS.includes(p.region as Region))
      errs.push({ path: `${pa}.region`, message: `must be one of ${REGIONS.join(', ')}` });
    if (p.within !== undefined) checkInt(p.within, `${pa}.within`, errs, 1, 1000);
    if (p.since !== undefined) checkRegex(p.since, `${pa}.since`, errs);
    if (p.box !== undefined && p.box !== 'present' && p.box !== 'absent')
      errs.push({ path: `${pa}.box`, message: 'must be present or absent' });
  });
}

function checkPromptRule(v: unknown, at: string, errs: Errs): void {
  if (!isObj(v)) return void errs.push({ path: at, message: 'must be an object {after | from, lines}' });
  unknownKeys(v, ['after', 'from', 'lines'], at, errs);
  if (v.after !== undefined) checkRegex(v.after, `${at}.after`, errs);
  if (v.from !== undefined) checkRegex(v.from, `${at}.from`, errs);
  if (v.lines !== undefined) checkInt(v.lines, `${at}.lines`, errs, 1, 200);
}

function checkProfileFields(p: Obj, at: string, errs: Errs): void {
  if (p.provenance !== undefined && p.provenance !== 'recorded' && p.provenance !== 'reconstructed')
    errs.push({ path: `${at}.provenance`, message: 'must be recorded or reconstructed' });
  if (p.source !== undefined && typeof p.source !== 'string')
    errs.push({ path: `${at}.source`, message: 'must be a string' });
  if (p.approveKeys !== undefined) checkKeys(p.approveKeys, `${at}.approveKeys`, errs);
  if (p.denyKeys !== undefined) checkKeys(p.denyKeys, `${at}.denyKeys`, errs);
  if (p.contextWindowTokens !== undefined) checkInt(p.contextWindowTokens, `${at}.contextWindowTokens`, errs, 1, 1e9);
  if (p.tailLines !== undefined) checkInt(p.tailLines, `${at}.tailLines`, errs, 1, 1000);
  if (p.header !== undefined) {
    const h = p.header;
    if (!isObj(h)) errs.push({ path: `${at}.header`, message: 'must be an object {match, lines, within}' });
    else {
      unknownKeys(h, ['match', 'lines', 'within'], `${at}.header`, errs);
      checkRegex(h.match, `${at}.header.match`, errs);
      if (h.lines !== undefined) checkInt(h.lines, `${at}.header.lines`, errs, 1, 100);
      if (h.within !== undefined) checkInt(h.within, `${at}.header.within`, errs, 1, 100);
    }
  }
  if (p.ignore !== undefined) {
    if (!Array.isArray(p.ignore)) errs.push({ path: `${at}.ignore`, message: 'must be a list of regex strings' });
    else p.ignore.forEach((r, i) => checkRegex(r, `${at}.ignore[${i}]`, errs));
  }
  if (p.input !== undefined) {
    const x = p.input;
    if (!isObj(x)) errs.push({ path: `${at}.input`, message: 'must be an object {line, within, border, empty}' });
    else {
      unknownKeys(x, ['line', 'within', 'border', 'empty'], `${at}.input`, errs);
      checkRegex(x.line, `${at}.input.line`, errs);
      if (x.within !== undefined) checkInt(x.within, `${at}.input.within`, errs, 1, 1000);
      if (x.border !== undefined) checkRegex(x.border, `${at}.input.border`, errs);
      if (x.empty !== undefined) {
        if (!Array.isArray(x.empty))
          errs.push({ path: `${at}.input.empty`, message: 'must be a list of regex strings' });
        else x.empty.forEach((r, i) => checkRegex(r, `${at}.input.empty[${i}]`, errs));
      }
    }
  }
  if (p.dialogs !== undefined) {
    if (!Array.isArray(p.dialogs))
      errs.push({ path: `${at}.dialogs`, message: 'must be a list of {name, match, answerKeys, prompt}' });
    else {
      const seen = new Set<string>();
      p.dialogs.forEach((d, i) => {
        const da = `${at}.dialogs[${i}]`;
        if (!isObj(d))
          return void errs.push({ path: da, message: 'must be an object {name, match, answerKeys, prompt}' });
        unknownKeys(d, ['name', 'match', 'answerKeys', 'prompt'], da, errs);
        if (typeof d.name !== 'string' || !DIALOG_NAME.test(d.name))
          errs.push({ path: `${da}.name`, message: 'must be a lowercase name such as workspace-trust' });
        else if (seen.has(d.name)) errs.push({ path: `${da}.name`, message: `duplicate dialog name ${d.name}` });
        else seen.add(d.name);
        if (d.match === undefined)
          errs.push({ path: `${da}.match`, message: 'is required (patterns that identify the dialog)' });
        else checkPatternList(d.match, `${da}.match`, errs);
        if (d.answerKeys !== undefined) checkKeys(d.answerKeys, `${da}.answerKeys`, errs);
        if (d.prompt !== undefined) checkPromptRule(d.prompt, `${da}.prompt`, errs);
      });
    }
  }
  for (const k of ['waiting', 'busy', 'idle', 'quota', 'interrupted'] as const)
    if (p[k] !== undefined) checkPatternList(p[k], `${at}.${k}`, errs);
  if (p.prompt !== undefined) checkPromptRule(p.prompt, `${at}.prompt`, errs);
  if (p.otherwise !== undefined && !(STATES as readonly string[]).includes(p.otherwise as string))
    errs.push({ path: `${at}.otherwise`, message: `must be one of ${STATES.join(', ')}` });
}

/** Apply-time validation of `spec.detection` (empty list = valid). `path` prefixes every error path, e.g. "spec.detection". */
export function validateDetection(detection: unknown, at: string): { path: string; message: string }[] {
  const errs: Errs = [];
  if (detection === undefined || detection === null) return errs;
  if (!isObj(detection)) return [{ path: at, message: 'must be an object with a profiles list' }];
  unknownKeys(detection, TOP_FIELDS, at, errs);
  if (detection.agent !== undefined && (typeof detection.agent !== 'string' || !detection.agent))
    errs.push({ path: `${at}.agent`, message: 'must be a non-empty string' });
  checkProfileFields(detection, at, errs);
  const profiles = detection.profiles;
  if (profiles === undefined)
    errs.push({
      path: `${at}.profiles`,
      message: 'is required: a list of profiles, each with the CLI versions it was verified on',
    });
  else if (!Array.isArray(profiles)) errs.push({ path: `${at}.profiles`, message: 'must be a list' });
  else {
    const owner = new Map<string, number>();
    profiles.forEach((p, i) => {
      const pa = `${at}.profiles[${i}]`;
      if (!isObj(p)) return void errs.push({ path: pa, message: 'must be an object with versions' });
      unknownKeys(p, PROFILE_FIELDS, pa, errs);
      if (!Array.isArray(p.versions) || !p.versions.length)
        errs.push({
          path: `${pa}.versions`,
          message:
            'is required: a non-empty list of the CLI versions these patterns were verified on, e.g. ["2.1.330"]',
        });
      else
        p.versions.forEach((v, j) => {
          if (typeof v !== 'string' || !VERSION.test(v))
            return void errs.push({
              path: `${pa}.versions[${j}]`,
              message: 'must be a version such as 2.1.330 (a * matches any characters)',
            });
          if (owner.has(v))
            errs.push({
              path: `${pa}.versions[${j}]`,
              message: `version ${v} is already listed by profiles[${owner.get(v)}]`,
            });
          else owner.set(v, i);
        });
      checkProfileFields(p, pa, errs);
    });
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Compilation

type PatternData =
  | string
  | { regex: string; flags?: string; region?: Region; within?: number; since?: string; box?: 'present' | 'absent' };

function compilePatterns(list: PatternData[] | undefined): CompiledPattern[] {
  return (list ?? []).map((p) => {
    if (typeof p === 'string') return { re: new RegExp(p, 'm'), region: 'above' };
    return {
      re: new RegExp(p.regex, 'm' + (p.flags ?? '')),
      region: p.region ?? 'above',
      ...(p.within ? { within: p.within } : {}),
      ...(p.since ? { since: new RegExp(p.since) } : {}),
      ...(p.box ? { box: p.box } : {}),
    };
  });
}

function compilePromptRule(r: Obj | undefined, fallback?: PromptRule): PromptRule {
  if (!r) return fallback ?? { lines: 12 };
  return {
    ...(r.after ? { after: new RegExp(r.after as string, 'm') } : {}),
    ...(r.from ? { from: new RegExp(r.from as string, 'm') } : {}),
    lines: (r.lines as number | undefined) ?? 12,
  };
}

function compileProfile(agent: string, d: Obj): DetectionProfile {
  const input = d.input as Obj | undefined;
  const header = d.header as Obj | undefined;
  const prompt = compilePromptRule(d.prompt as Obj | undefined);
  const dialogs = (d.dialogs as Obj[] | undefined) ?? [];
  return {
    agent,
    versions: [...(d.versions as string[])],
    provenance: (d.provenance as 'recorded' | 'reconstructed' | undefined) ?? 'recorded',
    approveKeys: [...((d.approveKeys as string[] | undefined) ?? ['Enter'])],
    denyKeys: [...((d.denyKeys as string[] | undefined) ?? ['Escape'])],
    dialogs: dialogs.map((x) => ({
      name: x.name as string,
      ...(x.answerKeys ? { answerKeys: [...(x.answerKeys as string[])] } : {}),
    })),
    ...(d.contextWindowTokens !== undefined ? { contextWindowTokens: d.contextWindowTokens as number } : {}),
    tailLines: (d.tailLines as number | undefined) ?? DEFAULT_TAIL,
    ...(header
      ? {
          header: {
            match: new RegExp(header.match as string, 'm'),
            lines: (header.lines as number | undefined) ?? 1,
            within: (header.within as number | undefined) ?? 12,
          },
        }
      : {}),
    ignore: ((d.ignore as string[] | undefined) ?? []).map((r) => new RegExp(r)),
    ...(input
      ? {
          input: {
            line: new RegExp(input.line as string),
            within: (input.within as number | undefined) ?? 8,
            ...(input.border ? { border: new RegExp(input.border as string) } : {}),
            empty: ((input.empty as string[] | undefined) ?? ['^$']).map((r) => new RegExp(r)),
          },
        }
      : {}),
    dialogPatterns: dialogs.map((x) => ({
      name: x.name as string,
      match: compilePatterns(x.match as PatternData[]),
      ...(x.prompt ? { prompt: compilePromptRule(x.prompt as Obj, prompt) } : {}),
    })),
    waiting: compilePatterns(d.waiting as PatternData[] | undefined),
    busy: compilePatterns(d.busy as PatternData[] | undefined),
    idle: compilePatterns(d.idle as PatternData[] | undefined),
    quota: compilePatterns(d.quota as PatternData[] | undefined),
    interrupted: compilePatterns(d.interrupted as PatternData[] | undefined),
    prompt,
    otherwise: (d.otherwise as DetectionProfile['otherwise'] | undefined) ?? 'unknown',
  };
}

/**
 * Validates and compiles `spec.detection` into profiles (top-level fields are defaults every
 * profile inherits; a profile's own field replaces the default). Throws DetectionDataError
 * naming `where` and each bad field.
 */
export function compileDetection(detection: unknown, where: string, agentName?: string): DetectionProfile[] {
  const errs = validateDetection(detection, 'spec.detection');
  if (detection === undefined || detection === null) errs.push({ path: 'spec.detection', message: 'is missing' });
  if (errs.length) throw new DetectionDataError(where, errs);
  const d = detection as Obj;
  const { profiles, agent, ...defaults } = d;
  const name = (agent as string | undefined) ?? agentName ?? 'agent';
  return (profiles as Obj[]).map((p) => compileProfile(name, { ...defaults, ...p }));
}

// ---------------------------------------------------------------------------------------------
// Versions

/** The version in a `--version` output: "2.1.330 (Claude Code)" → 2.1.330, "codex-cli 0.169.0" → 0.169.0, "GNU bash, version 5.2.15(1)-release" → 5.2.15. */
export function parseVersion(output: string): string | undefined {
  return /(?:^|[^\w.])v?(\d+\.\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?)/.exec(output)?.[1];
}

function versionMatches(pattern: string, version: string): boolean {
  if (!pattern.includes('*')) return pattern === version;
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\-]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(version);
}

/** Numeric comparison of dotted versions (wildcards and suffixes compare as their numeric prefix). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10));
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = Number.isNaN(pa[i]) || pa[i] === undefined ? -1 : pa[i];
    const y = Number.isNaN(pb[i]) || pb[i] === undefined ? -1 : pb[i];
    if (x !== y) return x - y;
  }
  return 0;
}

/** Whether a profile of the list was verified for `version` (without throwing). */
export function profileForVersion(profiles: DetectionProfile[], version: string): DetectionProfile | undefined {
  return profiles.find((p) => p.versions.some((v) => versionMatches(v, version)));
}

/**
 * The profile for `version`; without a version, the newest profile (the one listing the highest
 * version). A version no profile lists throws DetectionVersionError: patterns verified on
 * another release must not be trusted silently.
 */
export function selectProfile(profiles: DetectionProfile[], version?: string): DetectionProfile {
  if (!profiles.length) throw new Error('no detection profiles');
  if (version === undefined) {
    const newest = (p: DetectionProfile) => [...p.versions].sort(compareVersions).at(-1)!;
    return profiles.reduce((best, p) => (compareVersions(newest(p), newest(best)) >= 0 ? p : best));
  }
  const hit = profileForVersion(profiles, version);
  if (!hit)
    throw new DetectionVersionError(
      profiles[0].agent,
      version,
      profiles.flatMap((p) => p.versions),
    );
  return hit;
}

// ---------------------------------------------------------------------------------------------
// The generic profile, for an Agent without detection data: the markers most TUIs share.

const GENERIC = {
  versions: ['*'],
  provenance: 'reconstructed',
  tailLines: 30,
  waiting: [
    { regex: '(?:do you want|would you like|allow)[^\\n]*\\?', flags: 'i' },
    { regex: '\\[y/n\\]|\\(y/n\\)|\\(y\\)es/\\(n\\)o|press enter to confirm|esc to cancel', flags: 'i' },
  ],
  // A last line ending in a prompt character ("$", "sim>", "❯") is an input prompt with nothing
  // typed: that is what readiness means for a CLI nobody wrote patterns for.
  input: { line: '^.{0,80}[$#>❯›%]$', within: 1 },
  busy: [{ regex: '(?:esc|ctrl\\+c) to (?:interrupt|cancel)', flags: 'i', region: 'screen' }],
  idle: [{ regex: '^', region: 'input', box: 'present' }],
  quota: [
    {
      regex: "you'?ve (?:hit|reached) your (?:usage )?limit|usage limit|rate limit|quota exceeded",
      flags: 'i',
      within: 8,
    },
  ],
  interrupted: [{ regex: 'interrupted', flags: 'i', within: 2 }],
  prompt: { lines: 8 },
};

const cache = new WeakMap<AgentSpec, DetectionProfile[] | null>();
/**
 * By content too: an inline agent is a fresh object every time its session is re-read from the
 * store, and compiling its patterns on every observe tick was a measurable share of idle CPU.
 */
const byContent = new Map<string, DetectionProfile[] | null>();
const BY_CONTENT_MAX = 256;

/**
 * The compiled profile for an Agent spec (cached per spec object): its `detection` data, or a
 * generic profile when it has none; undefined when it lists no profiles (`profiles: []`, pane
 * detection off). Throws DetectionDataError for bad data and DetectionVersionError for a
 * version no profile lists.
 */
export function detectionFor(agent: AgentSpec, version?: string): DetectionProfile | undefined {
  let profiles = cache.get(agent);
  if (profiles === undefined) {
    const name = path.basename(agent.command?.[0] ?? 'agent');
    const key = `${name}\0${JSON.stringify(agent.detection ?? null)}`;
    profiles = byContent.get(key);
    if (profiles === undefined) {
      profiles = agent.detection
        ? compileDetection(agent.detection, `Agent ${name}`, name)
        : compileDetection({ profiles: [GENERIC] }, 'generic detection', name);
      if (!profiles.length) profiles = null;
      if (byContent.size >= BY_CONTENT_MAX) byContent.clear();
      byContent.set(key, profiles);
    }
    cache.set(agent, profiles);
  }
  return profiles ? selectProfile(profiles, version) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Classification

interface Screen {
  /** Non-empty lines of the tail, in order. */
  lines: string[];
  inputIdx: number; // index into lines, -1 without an input line
  above: string[];
  input: string[];
  footer: string[];
}

/** Trailing ASCII blanks only: U+00A0 after ❯ is Claude Code's live-input marker. (A loop: the regex /[ \t]+$/ is quadratic in long runs of inner spaces.) */
function trimAsciiEnd(l: string): string {
  let n = l.length;
  while (n > 0) {
    const c = l.charCodeAt(n - 1);
    if (c !== 32 && c !== 9 && c !== 13) break;
    n--;
  }
  return n === l.length ? l : l.slice(0, n);
}

function readScreen(text: string, p: DetectionProfile): Screen {
  const raw = (text.includes('\x1b') ? stripAnsi(text) : text).split('\n');
  // The header: a marker in the first lines of the capture; it and the lines it spans are cut.
  let start = 0;
  if (p.header) {
    const n = Math.min(raw.length, p.header.within);
    for (let i = 0; i < n; i++)
      if (p.header.match.test(raw[i])) {
        start = i + p.header.lines;
        break;
      }
  }
  // Walk up from the bottom collecting the last tailLines non-empty lines; blank lines are kept
  // as '' (they end an input region), ignored lines vanish.
  const kept: string[] = [];
  let count = 0;
  for (let i = raw.length - 1; i >= start && count < p.tailLines; i--) {
    const l = trimAsciiEnd(raw[i]);
    if (l === '' || l.trim() === '') {
      if (kept.length) kept.push('');
      continue;
    }
    if (p.ignore.some((re) => re.test(l))) continue;
    kept.push(l);
    count++;
  }
  kept.reverse();
  while (kept.length && kept[0] === '') kept.shift();

  let inputIdxRaw = -1;
  if (p.input) {
    let seen = 0;
    for (let i = kept.length - 1; i >= 0 && seen < p.input.within; i--) {
      if (kept[i] === '') continue;
      seen++;
      if (p.input.line.test(kept[i])) {
        inputIdxRaw = i;
        break;
      }
    }
  }
  const nonEmpty = (a: string[]) => a.filter((l) => l !== '');
  const lines = nonEmpty(kept);
  if (inputIdxRaw < 0) return { lines, inputIdx: -1, above: lines, input: [], footer: [] };
  const border = p.input!.border;
  const aboveRaw = nonEmpty(kept.slice(0, inputIdxRaw));
  while (aboveRaw.length && border?.test(aboveRaw[aboveRaw.length - 1])) aboveRaw.pop();
  const first = kept[inputIdxRaw].replace(p.input!.line, '');
  const input = [first];
  let j = inputIdxRaw + 1;
  for (; j < kept.length && kept[j] !== '' && !border?.test(kept[j]); j++) input.push(kept[j]);
  if (j < kept.length && border?.test(kept[j])) j++;
  return {
    lines,
    inputIdx: nonEmpty(kept.slice(0, inputIdxRaw)).length,
    above: aboveRaw,
    input,
    footer: nonEmpty(kept.slice(j)),
  };
}

function regionLines(s: Screen, r: Region): string[] {
  switch (r) {
    case 'above':
      return s.above;
    case 'input':
      return s.input;
    case 'footer':
      return s.footer;
    case 'screen':
      return s.lines;
    case 'last':
      return s.lines.slice(-1);
  }
}

function matcher(s: Screen) {
  const joined = new Map<string, string>();
  return (p: CompiledPattern): boolean => {
    if (p.box === 'present' && s.inputIdx < 0) return false;
    if (p.box === 'absent' && s.inputIdx >= 0) return false;
    const key = `${p.region}:${p.within ?? 0}:${p.since?.source ?? ''}`;
    let text = joined.get(key);
    if (text === undefined) {
      let ls = regionLines(s, p.region);
      if (p.since) {
        const since = p.since;
        let i = ls.length - 1;
        while (i >= 0 && !since.test(ls[i])) i--;
        ls = ls.slice(i + 1);
      }
      text = (p.within ? ls.slice(-p.within) : ls).join('\n');
      joined.set(key, text);
    }
    return p.re.test(text);
  };
}

const BOX_ONLY = /^[\s─━═╌╍┄┅┈┉│┃║╭╮╯╰┌┐└┘├┤┬┴┼▔▁-]*$/;
const BORDER_LEFT = /^\s*[│┃║]\s?/;
const BORDER_RIGHT = /\s?[│┃║]\s*$/;

/** The question and options: from the prompt rule's start to the bottom, borders and rules dropped, ≤ 1 KB. */
function promptText(s: Screen, rule: PromptRule): string | undefined {
  const ls = s.lines;
  let from = Math.max(0, ls.length - rule.lines);
  for (let i = ls.length - 1; i >= 0; i--) {
    if (rule.from?.test(ls[i])) {
      from = i;
      break;
    }
    if (rule.after?.test(ls[i])) {
      from = i + 1;
      break;
    }
  }
  const out: string[] = [];
  for (const l of ls.slice(from)) {
    let t = l;
    for (let prev = ''; prev !== t; ) {
      prev = t;
      t = t.replace(BORDER_LEFT, '').replace(BORDER_RIGHT, ''); // nested boxes: │ │ text │ │
    }
    t = t.trim();
    if (t && !BOX_ONLY.test(t)) out.push(t);
  }
  return out.length ? capBytes(out.join('\n'), MAX_PROMPT_BYTES) : undefined;
}

/** At most `max` UTF-8 bytes; a longer text keeps its head (the question) and tail (the options) around an ellipsis. */
export function capBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  const cut = (s: string, bytes: number, fromEnd: boolean): string => {
    const chars = Array.from(s);
    const picked: string[] = [];
    let used = 0;
    for (let i = 0; i < chars.length; i++) {
      const c = fromEnd ? chars[chars.length - 1 - i] : chars[i];
      const b = Buffer.byteLength(c);
      if (used + b > bytes) break;
      used += b;
      picked.push(c);
    }
    return (fromEnd ? picked.reverse() : picked).join('');
  };
  const sep = '\n…\n';
  const room = max - Buffer.byteLength(sep);
  const head = Math.floor(room * 0.4);
  return cut(text, head, false).trimEnd() + sep + cut(text, room - head, true).trimStart();
}

/** Classifies one pane capture (plain or with escape sequences) with a compiled profile. */
export function classifyScreen(text: string, profile: DetectionProfile): ScreenClass {
  const s = readScreen(text, profile);
  if (!s.lines.length) return { state: 'unknown' };
  const test = matcher(s);
  const out: ScreenClass = { state: 'unknown' };
  let prompt: PromptRule | undefined;
  const dialog = profile.dialogPatterns.find((d) => d.match.some(test));
  if (dialog) {
    out.state = 'dialog';
    out.dialog = dialog.name;
    prompt = dialog.prompt ?? profile.prompt;
  } else if (profile.waiting.some(test)) {
    out.state = 'waiting';
    prompt = profile.prompt;
  } else if (profile.busy.some(test)) out.state = 'busy';
  else if (profile.idle.some(test)) out.state = 'idle';
  else out.state = profile.otherwise;
  if (prompt) {
    const t = promptText(s, prompt);
    if (t) out.prompt = t;
  }
  if (profile.quota.some(test)) out.quotaExhausted = true;
  if (profile.interrupted.some(test)) out.interrupted = true;
  if (profile.input && s.inputIdx >= 0) {
    const typed = s.input
      .map((l) => l.trim())
      .join('\n')
      .trim();
    out.inputReady = profile.input.empty.some((re) => re.test(typed));
  } else if (profile.input) out.inputReady = false;
  return out;
}
