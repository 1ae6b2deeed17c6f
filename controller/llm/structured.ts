/**
 * A structured call: ask a backend for JSON matching a schema and do not take no for an answer —
 * within bounds.
 *  - Each request has its own time limit (AbortSignal), passed to the backend.
 *  - Transient failures (timeout, 429, 5xx, network) are retried at most `maxRetries` times with
 *    exponential backoff (base · 2^n, capped), waiting at least what a 429's Retry-After asks.
 *  - The answer is validated with ajv. An answer that is not JSON or does not match gets exactly
 *    one repair request (the errors and the previous answer quoted back); if that fails too, the
 *    call fails with kind bad_output. Nothing is ever made up.
 *  - config and client (4xx) errors fail at once.
 * So a call makes at most 1 + maxRetries + 1 requests.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LlmError, type LlmBackend, type LlmErrorKind, type LlmRequest, type LlmResponse } from './backend.js';

export interface StructuredOptions {
  maxRetries: number;
  /** First backoff, doubled per retry (default 500 ms). */
  backoffMs?: number;
  /** Longest single wait, Retry-After included (default 60 s). */
  maxBackoffMs?: number;
  /** For tests: how to wait (default setTimeout, aborted with the request's signal). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Called after every request, for metrics. */
  onRequest?: (result: 'success' | 'error' | 'timeout' | 'invalid', seconds: number, error?: LlmError) => void;
  /**
   * Top-level fields an answer may leave out, read as null. OpenAI's strict structured outputs need
   * every property listed as required, so a field added later is required-but-nullable in the
   * schema; an answer from a model or a `backend: command` script written before it still fits.
   */
  absentAsNull?: readonly string[];
}

export interface StructuredResult<T> {
  value: T;
  response: LlmResponse;
  /** Requests made, repair included. */
  requests: number;
  repaired: boolean;
}

const RETRYABLE: ReadonlySet<LlmErrorKind> = new Set(['timeout', 'rate_limited', 'server', 'network']);

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

export function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => {
      const allowed =
        e.params && 'allowedValues' in e.params ? ` (${(e.params.allowedValues as unknown[]).join(', ')})` : '';
      return `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${allowed}`;
    })
    .join('; ');
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new LlmError('timeout', 'cancelled'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new LlmError('timeout', 'cancelled'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function repairPrompt(req: LlmRequest, raw: string, problem: string): LlmRequest {
  const prev = raw.length > 2000 ? `${raw.slice(0, 2000)}…` : raw;
  return {
    ...req,
    prompt:
      `${req.prompt}\n\nYour previous answer could not be used: ${problem}.\n` +
      `Previous answer (verbatim, possibly truncated):\n${prev}\n\n` +
      'Answer again with only one JSON object that matches the required schema exactly: ' +
      'every required field, no others, values within their allowed ranges.',
  };
}

export async function completeStructured<T>(
  backend: LlmBackend,
  req: LlmRequest,
  opts: StructuredOptions,
): Promise<StructuredResult<T>> {
  const validate = validatorFor(req.schema);
  const sleep = opts.sleep ?? defaultSleep;
  const base = opts.backoffMs ?? 500;
  const cap = opts.maxBackoffMs ?? 60_000;
  let retries = 0;
  let requests = 0;
  let repaired = false;
  let current = req;
  for (;;) {
    if (req.signal?.aborted) throw new LlmError('timeout', 'cancelled');
    requests++;
    const t0 = performance.now();
    let res: LlmResponse;
    try {
      res = await backend.complete(current);
    } catch (e) {
      const err = e instanceof LlmError ? e : new LlmError('network', (e as Error)?.message ?? String(e));
      const secs = (performance.now() - t0) / 1000;
      opts.onRequest?.(err.kind === 'timeout' ? 'timeout' : err.kind === 'bad_output' ? 'invalid' : 'error', secs, err);
      if (err.kind === 'bad_output' && !repaired) {
        repaired = true;
        current = repairPrompt(req, err.raw ?? '', err.message);
        continue;
      }
      if (RETRYABLE.has(err.kind) && retries < opts.maxRetries) {
        const backoff = Math.min(cap, base * 2 ** retries);
        retries++;
        await sleep(Math.min(cap, Math.max(backoff, err.retryAfterMs ?? 0)), req.signal);
        continue;
      }
      throw err;
    }
    const secs = (performance.now() - t0) / 1000;
    const v = res.value;
    if (opts.absentAsNull && v && typeof v === 'object' && !Array.isArray(v))
      for (const f of opts.absentAsNull) if (!(f in v)) (v as Record<string, unknown>)[f] = null;
    if (validate(res.value)) {
      opts.onRequest?.('success', secs);
      return { value: res.value as T, response: res, requests, repaired };
    }
    const problem = `it does not match the schema: ${describeErrors(validate.errors)}`;
    opts.onRequest?.('invalid', secs);
    if (repaired)
      throw new LlmError(
        'bad_output',
        `the answer still did not match the schema after a repair attempt: ${describeErrors(validate.errors)}`,
        undefined,
        res.raw,
      );
    repaired = true;
    current = repairPrompt(req, res.raw, problem);
  }
}
