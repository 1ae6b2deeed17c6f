/**
 * The one interface every LLM backend implements (heuristic, command, openai, anthropic), used by
 * the judge and by checkpoint summaries. A request asks for JSON matching a JSON Schema; the
 * backend returns the parsed value (validation against the schema and the one repair attempt are
 * the caller's, see controller/llm/structured.ts) or throws an {@link LlmError}.
 */

export interface LlmRequest {
  /** What the call is for, for logs and metrics: 'judge', 'checkpoint-summary', ... */
  purpose: string;
  /** Instructions (trusted, ours). */
  system: string;
  /** The user turn; untrusted text inside it is fenced and labelled as data by the caller. */
  prompt: string;
  /** JSON Schema the answer must match. */
  schema: Record<string, unknown>;
  /** Name for the schema where the API wants one (OpenAI json_schema.name). */
  schemaName: string;
  /** Structured evidence, for backends that do not read prose (the heuristic one). */
  evidence?: unknown;
  timeoutMs: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface LlmResponse {
  /** The parsed JSON answer (not yet validated). */
  value: unknown;
  /** The raw text, kept for the repair attempt and for debugging. */
  raw: string;
  model?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
}

/**
 * Kinds of failure, which decide retrying: `timeout`, `rate_limited` (honour retryAfterMs),
 * `server` (5xx) and `network` are retried with backoff; `bad_output` gets one repair attempt;
 * `config` and `client` (4xx) are not retried.
 */
export type LlmErrorKind = 'timeout' | 'rate_limited' | 'server' | 'network' | 'bad_output' | 'config' | 'client';

export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly retryAfterMs?: number,
    readonly raw?: string,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export interface LlmBackend {
  /** heuristic | command | openai | anthropic */
  readonly name: string;
  readonly model?: string;
  complete(req: LlmRequest): Promise<LlmResponse>;
}
