/**
 * Claude Code's statusline, as orchctl installs it (`statusLine: {type: command}` in the run's
 * settings, running `orchctl hook statusline`): the JSON Claude Code gives the command on stdin
 * reduced to the few figures orchctl uses, and the short text the statusline itself shows.
 *
 * Verified on 2.1.330 (docs/long-running.md): `context_window.{used_percentage,
 * context_window_size, current_usage}` (used_percentage an integer, null before the first answer
 * and right after /clear); `rate_limits.{five_hour,seven_day}.{used_percentage, resets_at}` with
 * resets_at in epoch seconds, present only when the API sends `anthropic-ratelimit-unified-*`
 * headers (a subscription, or a gateway). No imports: the hook entry loads this on every call.
 */

export const STATUSLINE_FILE = 'statusline.json';
/** Rate-limit windows kept (Claude Code has four today). */
const MAX_WINDOWS = 4;
const MAX_NAME = 40;

/** What the statusline file holds: only figures, so it stays small and changes only when they do. */
export interface StatuslineRecord {
  /** Percent of the context window in use (0-100), when Claude Code knows it. */
  usedPercent?: number;
  windowTokens?: number;
  /** Tokens of the current context (input, cache read and cache write of the last answer). */
  usedTokens?: number;
  rateLimits: { window: string; usedPercent?: number; resetsAt: number }[];
}

const num = (v: unknown, max = Number.MAX_SAFE_INTEGER): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max ? v : undefined;
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** The figures of one statusline payload (or of the file written from one); nothing else is kept. */
export function statuslineRecord(payload: unknown): StatuslineRecord {
  const p = obj(payload) ?? {};
  const cw = obj(p.context_window) ?? {};
  const usage = obj(cw.current_usage);
  const rec: StatuslineRecord = { rateLimits: [] };
  const used = num(cw.used_percentage, 100) ?? num(p.usedPercent, 100);
  if (used !== undefined) rec.usedPercent = used;
  const size = num(cw.context_window_size) ?? num(p.windowTokens);
  if (size !== undefined) rec.windowTokens = size;
  const tokens = usage
    ? (num(usage.input_tokens) ?? 0) +
      (num(usage.cache_read_input_tokens) ?? 0) +
      (num(usage.cache_creation_input_tokens) ?? 0)
    : num(p.usedTokens);
  if (tokens !== undefined) rec.usedTokens = tokens;
  const limits = obj(p.rate_limits);
  if (limits) {
    for (const [window, v] of Object.entries(limits).slice(0, MAX_WINDOWS)) {
      const w = obj(v);
      const resetsAt = num(w?.resets_at);
      if (!w || resetsAt === undefined) continue;
      const pct = num(w.used_percentage, 1000);
      rec.rateLimits.push({
        window: window.slice(0, MAX_NAME),
        ...(pct !== undefined ? { usedPercent: pct } : {}),
        resetsAt,
      });
    }
  } else if (Array.isArray(p.rateLimits)) {
    for (const v of p.rateLimits.slice(0, MAX_WINDOWS)) {
      const w = obj(v);
      const resetsAt = num(w?.resetsAt);
      if (!w || typeof w.window !== 'string' || resetsAt === undefined) continue;
      const pct = num(w.usedPercent, 1000);
      rec.rateLimits.push({
        window: w.window.slice(0, MAX_NAME),
        ...(pct !== undefined ? { usedPercent: pct } : {}),
        resetsAt,
      });
    }
  }
  return rec;
}

/** The statusline's own text: short, so it fits beside Claude Code's footer. */
export function statuslineText(rec: StatuslineRecord): string {
  const ctx = rec.usedPercent !== undefined ? `ctx ${Math.round(rec.usedPercent)}%` : 'ctx -';
  const hot = rec.rateLimits.filter((r) => (r.usedPercent ?? 0) >= 80).map((r) => `${r.window} ${r.usedPercent}%`);
  return ['orchctl', ctx, ...hot].join(' · ');
}
