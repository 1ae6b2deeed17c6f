/**
 * One HTTP POST for the webhook and ntfy channels, with global fetch: a time limit over the whole
 * exchange (connect, answer, body), no redirects followed (a redirect would carry the request and
 * its Authorization somewhere the channel does not name), a capped read of the answer, and the
 * answer or failure turned into a result. Messages name the channel, never the URL.
 */
import { requestSignal, retryAfterMs } from '../llm/http.js';
import { excerpt, failed, sent, socketFailure } from './result.js';
import type { NotificationSendResult } from '../api/notification-channel.js';

/** The most of an answer read: enough for an error's reason, and a hostile server cannot fill memory. */
const MAX_ANSWER = 64 * 1024;

export interface HttpSend {
  label: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    n += value.length;
    if (n >= MAX_ANSWER) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ANSWER);
}

export async function postHttp(req: HttpSend): Promise<NotificationSendResult> {
  const { label } = req;
  const signal = requestSignal(req.timeoutMs, req.signal);
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, signal, redirect: 'manual' });
    text = await readCapped(res);
  } catch (e) {
    return fetchFailure(label, e, req.timeoutMs, req.signal);
  }
  const status = res.status;
  const said = excerpt(text);
  const detail = `HTTP ${status}${said ? `: ${said}` : ''}`;
  if (status >= 200 && status < 300) return sent(label, `HTTP ${status}`, status);
  if (status === 429)
    return failed('rate_limited', label, `rate limited (${detail})`, {
      status,
      retryAfterMs: retryAfterMs(res.headers),
    });
  if (status === 408) return failed('timeout', label, detail, { status });
  if (status >= 500) return failed('server_error', label, detail, { status, retryAfterMs: retryAfterMs(res.headers) });
  if (status >= 300 && status < 400)
    return failed('rejected', label, `the URL redirects (HTTP ${status}); give the final URL`, { status });
  return failed('rejected', label, detail, { status });
}

function fetchFailure(label: string, e: unknown, timeoutMs: number, outer?: AbortSignal): NotificationSendResult {
  const name = (e as { name?: string })?.name;
  if (outer?.aborted) return failed('cancelled', label, 'the send was cancelled');
  if (name === 'TimeoutError' || name === 'AbortError')
    return failed('timeout', label, `no answer within ${timeoutMs} ms`);
  const cause = (e as { cause?: { code?: string; name?: string } })?.cause;
  // fetch reports a request it cannot even make (a header it refuses) as a TypeError without a cause.
  if (!cause) return failed('config', label, `the request cannot be made: ${(e as Error)?.message ?? String(e)}`);
  return socketFailure(label, cause.code, 'cannot reach the destination');
}
