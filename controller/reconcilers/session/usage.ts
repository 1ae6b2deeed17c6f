/**
 * status.usage, pure: the current run's token use summed from the events the agent fold already
 * reads (so no extra reads), and its cost estimated from the Agent's price table.
 *
 * Exactly once: the sums are written in the same status as status.agent.position, and the fold
 * continues from them only when the agent fold continues from that position (same run).
 * Claude Code writes one transcript line per content block of a message, each repeating the
 * message's usage (the recorded 2.1.330 transcript: a text line and a tool_use line with the same
 * message id and figures; a partial message's figures may grow on later lines). So a message is
 * counted by its id: a later line of the last counted message adds only what grew since.
 *
 * The budget's ledger (status.usage.hourly): what each counted line added, by the hour of its
 * timestamp, tokens and cost, the newest LEDGER_HOURS hours. The run's sums start again at a new
 * run; the ledger is carried over, so a SessionPolicy budget sums a window across runs. It is
 * written with the same position as the sums, so it counts each message once as they do.
 */
import type { ModelPrice } from '../../api/agent.js';
import { LEDGER_HOURS } from '../../api/pause.js';
import type { TokenCounts, UsageHour, UsageStatus } from '../../api/session.js';
import type { AgentEvent } from '../../store/eventlog.js';

/** Models priced apart in one run (status stays bounded). */
const MAX_MODELS = 8;
/** Model names and message ids are agent-written: bounded as the schema bounds them. */
const MAX_NAME = 200;
const KINDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheCreationTokens'] as const;

const zero = (): TokenCounts => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 });

export const newUsage = (run: number): UsageStatus => ({ run, ...zero(), totalTokens: 0, priced: false, byModel: [] });

/**
 * Folds the usage the events report (events of other runs are skipped) into `prev`, then prices it.
 * A new run starts its sums from zero and keeps the ledger of the runs before (`prev`'s, or `carry`).
 */
export function foldUsage(
  prev: UsageStatus | undefined,
  run: number,
  events: readonly AgentEvent[],
  pricing: readonly ModelPrice[] | undefined,
  carry?: readonly UsageHour[],
): UsageStatus {
  const u: UsageStatus = prev && prev.run === run ? structuredClone(prev) : newUsage(run);
  const ledger = prev && prev.run === run ? (u.hourly ?? []) : structuredClone([...(carry ?? prev?.hourly ?? [])]);
  for (const e of events) {
    if (e.run !== run || (e.type !== 'assistant_message' && e.type !== 'tool_use' && e.type !== 'usage') || !e.usage)
      continue;
    const now: TokenCounts = {
      inputTokens: e.usage.inputTokens,
      outputTokens: e.usage.outputTokens,
      cacheReadTokens: e.usage.cacheReadTokens ?? 0,
      cacheCreationTokens: e.usage.cacheCreationTokens ?? 0,
    };
    // Another line of the message counted last: only what grew (figures never shrink, by max).
    const same = e.messageId !== undefined && u.last?.messageId === e.messageId.slice(0, MAX_NAME) ? u.last : undefined;
    const add = zero();
    for (const k of KINDS) add[k] = Math.max(0, now[k] - (same?.[k] ?? 0));
    if (e.messageId !== undefined) {
      const counted = same ?? zero();
      u.last = { messageId: e.messageId.slice(0, MAX_NAME), ...zero() };
      for (const k of KINDS) u.last[k] = Math.max(counted[k], now[k]);
    } else delete u.last;
    const model = e.model?.slice(0, MAX_NAME) ?? u.model ?? '';
    if (e.model) u.model = model;
    // Bounded: a model beyond the first MAX_MODELS is summed under '' (unknown, so never priced).
    const key = u.byModel.some((b) => b.model === model) || u.byModel.length < MAX_MODELS ? model : '';
    let bucket = u.byModel.find((b) => b.model === key);
    if (!bucket) {
      bucket = { model: key, ...zero() };
      u.byModel.push(bucket);
    }
    for (const k of KINDS) {
      bucket[k] += add[k];
      u[k] += add[k];
    }
    record(ledger, e.ts, add, key, pricing);
  }
  u.totalTokens = u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheCreationTokens;
  if (ledger.length) u.hourly = ledger;
  else delete u.hourly;
  return price(u, pricing);
}

/** Adds what one line added to the hour of its timestamp (the ledger stays sorted and bounded). */
function record(ledger: UsageHour[], ts: string, add: TokenCounts, model: string, pricing?: readonly ModelPrice[]) {
  const tokens = add.inputTokens + add.outputTokens + add.cacheReadTokens + add.cacheCreationTokens;
  const t = Date.parse(ts);
  if (!tokens || !Number.isFinite(t)) return;
  const hour = new Date(Math.floor(t / 3600_000) * 3600_000).toISOString();
  let b = ledger.find((x) => x.hour === hour);
  if (!b) {
    b = { hour, tokens: 0, costUSD: 0 };
    ledger.push(b);
    ledger.sort((x, y) => x.hour.localeCompare(y.hour));
    if (ledger.length > LEDGER_HOURS) ledger.splice(0, ledger.length - LEDGER_HOURS);
  }
  b.tokens += tokens;
  const p = priceFor(model, pricing);
  // An hour with unpriced use has no cost (as a run's costUSD): a budget then says it is not priced.
  if (p && b.costUSD !== undefined) b.costUSD = Math.round((b.costUSD + estimateUSD(add, p)) * 1e6) / 1e6;
  else delete b.costUSD;
}

/** costUSD and priced from the per-model sums and the current price table. */
export function price(u: UsageStatus, pricing: readonly ModelPrice[] | undefined): UsageStatus {
  let cost = 0;
  let priced = u.byModel.length > 0;
  for (const b of u.byModel) {
    const p = priceFor(b.model, pricing);
    if (!p) {
      priced = false;
      break;
    }
    cost += estimateUSD(b, p);
  }
  const out = { ...u, priced };
  if (priced) out.costUSD = Math.round(cost * 1e6) / 1e6;
  else delete out.costUSD;
  return out;
}

/** The price for a model: an exact entry first, else the first glob (`*` = any text) that matches. */
export function priceFor(model: string, pricing: readonly ModelPrice[] | undefined): ModelPrice | undefined {
  if (!model || !pricing) return undefined;
  return pricing.find((p) => p.model === model) ?? pricing.find((p) => p.model.includes('*') && glob(p.model, model));
}

function glob(pattern: string, s: string): boolean {
  const re = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${re}$`).test(s);
}

/** USD for the counts at the price (per million tokens). */
export function estimateUSD(c: TokenCounts, p: ModelPrice): number {
  return (
    (c.inputTokens * p.inputPerMTok +
      c.outputTokens * p.outputPerMTok +
      c.cacheReadTokens * p.cacheReadPerMTok +
      c.cacheCreationTokens * p.cacheWritePerMTok) /
    1e6
  );
}
