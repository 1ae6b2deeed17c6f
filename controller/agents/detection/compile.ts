/** Detection data → compiled profiles (regexes built once, cached per Agent spec), version selection. */
import path from 'node:path';
import type { AgentSpec } from '../../api/kinds.js';
import {
  type Region,
  type CompiledPattern,
  type DetectionProfile,
  type PromptRule,
  DetectionVersionError,
  DetectionDataError,
  DEFAULT_TAIL,
  type Obj,
} from './types.js';
import { validateDetection } from './validate.js';

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
    failures: ((d.failures as Obj[] | undefined) ?? []).map((f) => ({
      reason: f.reason as string,
      re: new RegExp(f.regex as string, 'm' + ((f.flags as string | undefined) ?? '')),
      ...(f.hint ? { hint: f.hint as string } : {}),
    })),
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

/**
 * The version in a `--version` output: "2.1.330 (Claude Code)" → 2.1.330, "codex-cli 0.169.0" →
 * 0.169.0, "GNU bash, version 5.2.15(1)-release" → 5.2.15.
 */
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

/** The Agent's profile, or none: invalid detection data is refused at apply, so an old object just goes without. */
export function profileFor(agent: AgentSpec | undefined): DetectionProfile | undefined {
  if (!agent) return undefined;
  try {
    return detectionFor(agent);
  } catch {
    return undefined;
  }
}
