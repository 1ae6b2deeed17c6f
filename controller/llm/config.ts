/**
 * The judge configuration as a SessionPolicy carries it (`spec.judge`, schema in
 * crds/sessionpolicies.yaml), with its defaults. Only the *name* of the environment variable
 * holding an API key is configuration; the key is read from the environment when a request is
 * made and kept nowhere else.
 */
import { parseDuration } from '../api/duration.js';
import { JUDGE_BACKENDS, type JudgeBackend, type JudgePolicy, type SessionPolicy } from '../api/session-policy.js';

export type BackendName = JudgeBackend;
export const BACKENDS: readonly BackendName[] = JUDGE_BACKENDS;

/** `spec.judge` of a SessionPolicy (typed in api/). */
export type JudgeConfig = JudgePolicy;

/** A policy's `spec.judge` section, if it has one (read by the judge and by the assessment's summarizer). */
export function judgeConfigOf(policy: SessionPolicy | undefined): JudgeConfig | undefined {
  const j = policy?.spec?.judge;
  return j && typeof j === 'object' ? j : undefined;
}

export interface ResolvedJudgeConfig {
  enabled: boolean;
  backend: BackendName;
  model?: string;
  endpoint?: string;
  command?: string[];
  apiKeyEnv?: string;
  timeoutMs: number;
  maxRetries: number;
  maxConcurrent: number;
}

export const DEFAULT_TIMEOUT = '60s';
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MAX_CONCURRENT = 2;
export const DEFAULT_API_KEY_ENV: Record<string, string> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' };

/**
 * Defaults filled in; a malformed value (possible only if the store was written around
 * validation) falls back to its default.
 */
export function resolveJudgeConfig(raw: JudgeConfig | undefined): ResolvedJudgeConfig {
  const c = raw ?? {};
  let timeoutMs = parseDuration(DEFAULT_TIMEOUT);
  try {
    if (c.timeout) timeoutMs = parseDuration(c.timeout);
  } catch {
    /* validated at apply time; keep the default */
  }
  const int = (v: unknown, d: number, min: number) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min ? v : d;
  return {
    enabled: c.enabled !== false,
    backend: BACKENDS.includes(c.backend as BackendName) ? (c.backend as BackendName) : 'heuristic',
    model: c.model,
    endpoint: c.endpoint,
    command: Array.isArray(c.command) ? c.command : undefined,
    apiKeyEnv: c.apiKeyEnv,
    timeoutMs: timeoutMs > 0 ? timeoutMs : parseDuration(DEFAULT_TIMEOUT),
    maxRetries: int(c.maxRetries, DEFAULT_MAX_RETRIES, 0),
    maxConcurrent: int(c.maxConcurrent, DEFAULT_MAX_CONCURRENT, 1),
  };
}

/** The controller-wide limit: the smallest maxConcurrent any policy sets, else the default 2. */
export function globalConcurrency(configs: (JudgeConfig | undefined)[]): number {
  const set = configs
    .map((c) => c?.maxConcurrent)
    .filter((n): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1);
  return set.length ? Math.min(...set) : DEFAULT_MAX_CONCURRENT;
}
