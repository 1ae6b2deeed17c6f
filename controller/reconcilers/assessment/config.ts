/**
 * Assessment settings: seed 001's defaults, overridden by the SessionPolicy that applies to a
 * session (spec.detector, spec.breaker, spec.checkpoints, spec.sampling; schema and descriptions
 * in crds/sessionpolicies.yaml). Patterns were checked at apply time (controller/api/patterns.ts);
 * compiled configs are cached per policy generation.
 */
import { parseDuration } from '../../api/duration.js';
import { INTERVENTION_TYPES, type BreakerThresholdsStatus, type InterventionType } from '../../api/assessment.js';
import type { SessionPolicy } from '../../api/kinds.js';
import { compilePattern } from '../../api/patterns.js';
import { samplingConfig, type SamplingConfig } from '../../api/sampling.js';
import type { BreakerThresholds } from './breaker.js';
import { normaliseText, type DetectorConfig } from './detector.js';

// The intervention types are API vocabulary (status.breaker; metrics and the CLI read them).
export { INTERVENTION_TYPES, type InterventionType, type SamplingConfig };

/** Seed 001's frustration patterns, plus a short list of expletives people type when annoyed. */
export const DEFAULT_FRUSTRATION_PATTERNS = [
  String.raw`\bno\b,?\s*(that'?s?\s*)?(not|wrong)`,
  String.raw`\bi\s+(already|just)\s+(said|told|mentioned)`,
  String.raw`\btry\s+again\b`,
  String.raw`\bstill\s+(not|doesn'?t|won'?t)\b`,
  String.raw`\bwhy\s+(are|do|did)\s+you\b`,
  String.raw`\bi\s+don'?t\s+want\b`,
  String.raw`\bactually\b.*\bnot\b`,
  String.raw`\b(wtf|ffs|this sucks|so frustrating|damn it|what the (hell|fuck))\b`,
];

export const DEFAULT_SATISFACTION_PATTERNS = [
  String.raw`\b(perfect|excellent|great|awesome)\b`,
  String.raw`\bthat'?s?\s+(exactly|precisely)\b`,
  String.raw`\bthank(s|\s+you)\b`,
  String.raw`\bworks?\s+(great|perfectly|well)\b`,
  String.raw`\bgood\s+job\b`,
];

/** A person telling the agent it did the wrong thing (seed 001's is_correction, made concrete). */
export const DEFAULT_CORRECTION_PATTERNS = [
  String.raw`^\s*(no|nope|wrong|stop)\b(?!\s+(worries|problem|rush|need))`,
  String.raw`\bthat'?s\s+(not|wrong|incorrect)\b`,
  String.raw`\bnot\s+what\s+i\s+(asked|meant|wanted|said)\b`,
  String.raw`\b(undo|revert)\s+(that|this|it|your)\b`,
  String.raw`\bi\s+(said|asked\s+for|meant)\b`,
  String.raw`\bdon'?t\s+(do|use|change|touch|add|remove|delete)\b`,
  String.raw`\binstead\b`,
];

/** Seed 001's task-boundary keywords, as whole words. */
export const DEFAULT_TASK_BOUNDARY_PATTERNS = [
  String.raw`\b(done|finished|complete)\b`,
  String.raw`\b(next|now\s+let'?s|moving\s+on)\b`,
  String.raw`\b(that\s+works|perfect)\b`,
];

/** Seed 001's intervention texts. */
export const DEFAULT_INTERVENTION_TEXTS: Record<InterventionType, string> = {
  ClarificationPause:
    "Before we continue: I want to make sure I understand what you're looking for. " +
    "Could you help me understand which part isn't matching your expectations?",
  ApproachPivot:
    "I notice my current approach isn't working well. Let me step back and try a different strategy. " +
    'What would be most helpful right now?',
  ExplicitCheckIn:
    'I sense some friction in our session. ' +
    'Would you like to pause and reassess our approach, or should I continue with adjustments?',
};

/** The machine's thresholds (breaker.ts; noProgressTurns 0 disables that trigger) plus what surrounds them. */
export interface BreakerConfig extends BreakerThresholds {
  enabled: boolean;
  texts: Record<InterventionType, string>;
  /** Deliver interventions into the session (policy autonomy act) or only record them (observe/suggest). */
  deliver: boolean;
}

export interface CheckpointConfig {
  enabled: boolean;
  messageThreshold: number;
  intervalMs: number;
  onCommit: boolean;
  taskBoundary: RegExp[];
  summarizer: 'offline' | 'judge';
}

export interface AssessmentConfig {
  enabled: boolean;
  policy?: string;
  detector: DetectorConfig;
  breaker: BreakerConfig;
  checkpoints: CheckpointConfig;
  sampling: SamplingConfig;
}

export const DEFAULTS = {
  alpha: 0.3,
  failureThreshold: 5,
  correctionThreshold: 3,
  correctionWindow: '5m',
  frustrationThreshold: 0.7,
  noProgressTurns: 5,
  cooldown: '10m',
  messageThreshold: 30,
  checkpointInterval: '30m',
  maxText: 4000,
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const bool = (v: unknown, d: boolean) => (typeof v === 'boolean' ? v : d);
const dur = (v: unknown, d: string) => {
  try {
    return parseDuration(typeof v === 'string' ? v : d);
  } catch {
    return parseDuration(d);
  }
};
const strings = (v: unknown, d: string[]) =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : d;

/** Compiles patterns; one that no longer compiles (applied before validation existed) is skipped. */
function compileAll(srcs: string[]): RegExp[] {
  const out: RegExp[] = [];
  for (const s of srcs) {
    try {
      out.push(compilePattern(s));
    } catch {
      /* rejected at apply time; an old stored object may still carry one */
    }
  }
  return out;
}

const cache = new Map<string, AssessmentConfig>();

/** The settings for sessions under `policy` (undefined: the defaults). */
export function assessmentConfig(policy: SessionPolicy | undefined): AssessmentConfig {
  const key = policy
    ? `${policy.metadata.uid ?? policy.metadata.name}@${policy.metadata.generation ?? 0}` +
      `@${policy.metadata.resourceVersion ?? ''}`
    : '';
  const hit = cache.get(key);
  if (hit) return hit;
  const spec = obj(policy?.spec);
  const d = obj(spec.detector);
  const b = obj(spec.breaker);
  const c = obj(spec.checkpoints);
  const textsIn = obj(b.interventions);
  const texts = { ...DEFAULT_INTERVENTION_TEXTS };
  for (const t of INTERVENTION_TYPES)
    if (typeof textsIn[t] === 'string' && (textsIn[t] as string).trim()) texts[t] = textsIn[t] as string;
  const cfg: AssessmentConfig = {
    enabled: bool(d.enabled, true),
    policy: policy?.metadata.name,
    detector: {
      frustration: compileAll(strings(d.frustrationPatterns, DEFAULT_FRUSTRATION_PATTERNS)),
      satisfaction: compileAll(strings(d.satisfactionPatterns, DEFAULT_SATISFACTION_PATTERNS)),
      correction: compileAll(strings(d.correctionPatterns, DEFAULT_CORRECTION_PATTERNS)),
      alpha: Math.min(1, Math.max(0.01, num(d.emaAlpha, DEFAULTS.alpha))),
      interventionTexts: new Set(Object.values(texts).map(normaliseText)),
      maxText: DEFAULTS.maxText,
    },
    breaker: {
      enabled: bool(b.enabled, true),
      failureThreshold: Math.max(1, num(b.failureThreshold, DEFAULTS.failureThreshold)),
      correctionThreshold: Math.max(1, num(b.correctionThreshold, DEFAULTS.correctionThreshold)),
      correctionWindowMs: dur(b.correctionWindow, DEFAULTS.correctionWindow),
      frustrationThreshold: num(b.frustrationThreshold, DEFAULTS.frustrationThreshold),
      noProgressTurns: Math.max(0, num(b.noProgressTurns, DEFAULTS.noProgressTurns)),
      cooldownMs: dur(b.cooldown, DEFAULTS.cooldown),
      texts,
      deliver: (spec.autonomy ?? 'act') === 'act',
    },
    checkpoints: {
      enabled: bool(c.enabled, true),
      messageThreshold: Math.max(1, num(c.messageThreshold, DEFAULTS.messageThreshold)),
      intervalMs: dur(c.interval, DEFAULTS.checkpointInterval),
      onCommit: bool(c.onCommit, true),
      taskBoundary: compileAll(strings(c.taskBoundaryPatterns, DEFAULT_TASK_BOUNDARY_PATTERNS)),
      summarizer: c.summarizer === 'judge' ? 'judge' : 'offline',
    },
    sampling: samplingConfig(spec.sampling),
  };
  if (cache.size > 256) cache.clear();
  cache.set(key, cfg);
  return cfg;
}

/** The thresholds as status shows them (durations as Go strings). */
export function thresholdsOf(b: BreakerConfig): BreakerThresholdsStatus {
  return {
    failureThreshold: b.failureThreshold,
    correctionThreshold: b.correctionThreshold,
    correctionWindowSeconds: b.correctionWindowMs / 1000,
    frustrationThreshold: b.frustrationThreshold,
    noProgressTurns: b.noProgressTurns,
    cooldownSeconds: b.cooldownMs / 1000,
  };
}
