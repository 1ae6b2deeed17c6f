/**
 * One JSON POST to an LLM API with global fetch, and the mapping of what can go wrong onto
 * {@link LlmError} kinds (which decide retrying, see backend.ts): 429 → rate_limited with the
 * server's Retry-After, 5xx/529 → server, 408 and our own time limit → timeout, connection
 * failures → network, other 4xx → client. Headers may carry an API key: they are never logged,
 * and error messages quote at most a short, key-free excerpt of the response body.
 */
import { LlmError } from './backend.js';

const MAX_BODY = 1 << 20;

export interface PostResult {
  status: number;
  json: unknown;
  text: string;
}

/** Milliseconds to wait from `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const v = headers.get('retry-after')?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A signal that fires at the request's time limit or when the caller aborts. */
export function requestSignal(timeoutMs: number, outer?: AbortSignal): AbortSignal {
  const t = AbortSignal.timeout(Math.max(1, timeoutMs));
  return outer ? AbortSignal.any([outer, t]) : t;
}

function abortKind(e: unknown, outer?: AbortSignal): LlmError | undefined {
  const name = (e as { name?: string })?.name;
  if (name === 'TimeoutError') return new LlmError('timeout', 'the request timed out');
  if (name === 'AbortError')
    return outer?.aborted
      ? new LlmError('timeout', 'the request was cancelled')
      : new LlmError('timeout', 'the request timed out');
  return undefined;
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > MAX_BODY) {
      await reader.cancel().catch(() => undefined);
      throw new LlmError('bad_output', `the response is larger than ${MAX_BODY} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const excerpt = (s: string) => s.replace(/\s+/g, ' ').slice(0, 200);

export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
  outer?: AbortSignal,
): Promise<PostResult> {
  const signal = requestSignal(timeoutMs, outer);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
      redirect: 'error',
    });
    text = await readCapped(res);
  } catch (e) {
    if (e instanceof LlmError) throw e;
    throw (
      abortKind(e, outer) ??
      new LlmError(
        'network',
        `cannot reach ${new URL(url).origin}: ` +
          `${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`,
      )
    );
  }
  if (res.status === 429)
    throw new LlmError('rate_limited', `rate limited (HTTP 429): ${excerpt(text)}`, retryAfterMs(res.headers));
  if (res.status === 408) throw new LlmError('timeout', `HTTP 408: ${excerpt(text)}`);
  if (res.status >= 500)
    throw new LlmError('server', `HTTP ${res.status}: ${excerpt(text)}`, retryAfterMs(res.headers));
  if (res.status < 200 || res.status >= 300) throw new LlmError('client', `HTTP ${res.status}: ${excerpt(text)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LlmError('bad_output', `the response is not JSON: ${excerpt(text)}`, undefined, text);
  }
  return { status: res.status, json, text };
}

/** The JSON value in a model's text answer: the whole text, a ```json fence, or the outermost {...}. */
export function parseJsonAnswer(text: string): unknown {
  const t = text.trim();
  const attempts = [t];
  const fence = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(t);
  if (fence) attempts.push(fence[1].trim());
  const first = t.indexOf('{');
  const last = t.lastIndexOf('}');
  if (first >= 0 && last > first) attempts.push(t.slice(first, last + 1));
  for (const a of attempts) {
    try {
      return JSON.parse(a);
    } catch {
      /* next */
    }
  }
  throw new LlmError('bad_output', `the answer is not JSON: ${excerpt(t) || '(empty)'}`, undefined, text);
}
