/**
 * A scripted fake of the OpenAI Responses API (`POST /v1/responses`, SSE streaming), for driving
 * the real Codex CLI in tests. Codex is pointed at it with a `model_providers` entry in a private
 * CODEX_HOME/config.toml (`base_url = "<fake.url>/v1"`, `wire_api = "responses"`, `env_key`); see
 * {@link codexConfig} and docs/notes/codex.md.
 *
 * Each request is recorded with its parsed body. A request that offers tools takes the next scripted
 * turn from the queue (with the queue empty, a short text); one without tools (title generation)
 * gets a short text. A turn streams response.created, then per
 * output item response.output_item.added / (response.output_text.delta…) / response.output_item.done,
 * then response.completed with usage — the events codex-rs's SSE reader acts on. A `rateLimit`
 * turn answers 429 with the headers and error body OpenAI sends (and Codex shows), instead.
 */
import type http from 'node:http';
import { closeLoopback, readBody, startLoopback } from './loopback-server.js';

export type ResponsesTurn =
  /** `inputTokens` overrides the reported usage (a long context without sending one). */
  | { kind: 'text'; text: string; inputTokens?: number }
  /** A function call to a tool Codex offered (e.g. `shell_command`, `exec_command`). */
  | { kind: 'call'; name: string; args: Record<string, unknown>; text?: string }
  /** `resetsAt` (epoch seconds) fixes the reset instead of `resetSeconds` from the request. */
  | { kind: 'rateLimit'; resetSeconds: number; message?: string; resetsAt?: number };

export interface RecordedResponsesRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export const textTurn = (text: string, inputTokens?: number): ResponsesTurn => ({
  kind: 'text',
  text,
  ...(inputTokens === undefined ? {} : { inputTokens }),
});
export const callTurn = (name: string, args: Record<string, unknown>, text?: string): ResponsesTurn => ({
  kind: 'call',
  name,
  args,
  ...(text === undefined ? {} : { text }),
});
export const rateLimitTurn = (resetSeconds: number, message?: string): ResponsesTurn => ({
  kind: 'rateLimit',
  resetSeconds,
  ...(message === undefined ? {} : { message }),
});

/** The tool names a Responses request offered (function tools by name, others by type). */
export function toolNames(body: unknown): string[] {
  const tools = (body as { tools?: { type?: string; name?: string }[] }).tools ?? [];
  return tools.map((t) => t.name ?? t.type ?? '?');
}

/** Every user-message text of a request's input. */
export function userTexts(body: unknown): string[] {
  const input = (body as { input?: unknown }).input;
  if (typeof input === 'string') return [input];
  const out: string[] = [];
  for (const item of (input as { role?: string; content?: { text?: string }[] }[] | undefined) ?? []) {
    if (item.role !== 'user') continue;
    for (const c of item.content ?? []) if (typeof c.text === 'string') out.push(c.text);
  }
  return out;
}

/** The function_call_output items of a request's input (the results of earlier calls). */
export function callOutputs(body: unknown): { callId: string; output: string }[] {
  const input = (body as { input?: unknown }).input;
  if (!Array.isArray(input)) return [];
  return (input as { type?: string; call_id?: string; output?: unknown }[])
    .filter((i) => i.type === 'function_call_output')
    .map((i) => ({
      callId: String(i.call_id),
      output: typeof i.output === 'string' ? i.output : JSON.stringify(i.output),
    }));
}

export class FakeResponses {
  readonly requests: RecordedResponsesRequest[] = [];
  /** The usage of each conversation response answered (requests offering tools), in order. */
  readonly completed: { id: string; input_tokens: number; output_tokens: number }[] = [];
  private readonly queue: ResponsesTurn[] = [];
  private seq = 0;
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeResponses> {
    let self: FakeResponses | undefined;
    const { server, url } = await startLoopback(async (req, res) => self?.handle(req, res));
    self = new FakeResponses(server, url);
    return self;
  }

  script(...turns: ResponsesTurn[]): void {
    this.queue.push(...turns);
  }

  /** The conversation requests (to /v1/responses, offering tools) so far. */
  responses(): RecordedResponsesRequest[] {
    return this.requests.filter((r) => r.path.startsWith('/v1/responses') && toolNames(r.body).length > 0);
  }

  /** What the fake received and still has scripted, for a failed test's message. */
  describe(): string {
    const lines = this.requests.map((r, i) => {
      const user = r.body ? userTexts(r.body).map((t) => JSON.stringify(t.slice(-200))) : [];
      const outputs = r.body ? callOutputs(r.body).map((o) => JSON.stringify(o.output.slice(0, 200))) : [];
      return `  ${i}: ${r.method} ${r.path} user=[${user.join(', ')}] outputs=[${outputs.join(', ')}]`;
    });
    const head = `fake Responses API: ${this.requests.length} request(s), ${this.queue.length} turn(s) left`;
    return `${head}\n${lines.join('\n')}`;
  }

  close(): Promise<void> {
    return closeLoopback(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { raw, body } = await readBody(req);
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? '', path, headers: req.headers, body });
    if (req.method === 'GET' && path.startsWith('/v1/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-codex-model', object: 'model' }], models: [] }));
      return;
    }
    if (req.method !== 'POST' || !path.startsWith('/v1/responses')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no such route ${path}`, type: 'invalid_request_error' } }));
      return;
    }
    // A request that offers no tools is a side request (Codex's thread-title generation): it gets a
    // short text and leaves the script alone, so scripted turns reach the conversation only.
    const sideRequest = toolNames(body).length === 0;
    const turn = sideRequest ? textTurn('Fake title') : (this.queue.shift() ?? textTurn('Done.'));
    if (turn.kind === 'rateLimit') {
      // What api.openai.com sends with a 429: the reset in headers, the reason in the body.
      res.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': String(turn.resetSeconds),
        'x-ratelimit-reset-requests': `${turn.resetSeconds}s`,
        'x-ratelimit-remaining-requests': '0',
      });
      res.end(
        JSON.stringify({
          error: {
            type: 'usage_limit_reached',
            code: 'rate_limit_exceeded',
            message: turn.message ?? `Rate limit reached. Please try again in ${turn.resetSeconds}s.`,
            resets_in_seconds: turn.resetSeconds,
            resets_at: turn.resetsAt ?? Math.floor(Date.now() / 1000) + turn.resetSeconds,
          },
        }),
      );
      return;
    }
    const model = (body as { model?: string } | undefined)?.model ?? 'fake-codex-model';
    const id = `resp_fake_${++this.seq}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('response.created', { response: { id, object: 'response', model, status: 'in_progress', output: [] } });
    const items: Record<string, unknown>[] = [];
    const text = turn.text;
    if (text !== undefined) {
      const msgId = `msg_fake_${this.seq}`;
      const done = {
        type: 'message',
        id: msgId,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [] }],
      };
      send('response.output_item.added', {
        output_index: items.length,
        item: { ...done, status: 'in_progress', content: [] },
      });
      for (const piece of text.match(/.{1,24}/gs) ?? []) {
        send('response.output_text.delta', {
          item_id: msgId,
          output_index: items.length,
          content_index: 0,
          delta: piece,
        });
      }
      send('response.output_item.done', { output_index: items.length, item: done });
      items.push(done);
    }
    if (turn.kind === 'call') {
      const item = {
        type: 'function_call',
        id: `fc_fake_${this.seq}`,
        call_id: `call_fake_${this.seq}`,
        name: turn.name,
        arguments: JSON.stringify(turn.args),
        status: 'completed',
      };
      send('response.output_item.added', { output_index: items.length, item: { ...item, arguments: '' } });
      send('response.output_item.done', { output_index: items.length, item });
      items.push(item);
    }
    const inputTokens =
      turn.kind === 'text' && turn.inputTokens !== undefined ? turn.inputTokens : Math.ceil(raw.length / 4);
    if (toolNames(body).length > 0) this.completed.push({ id, input_tokens: inputTokens, output_tokens: 20 });
    send('response.completed', {
      response: {
        id,
        object: 'response',
        model,
        status: 'completed',
        output: items,
        usage: {
          input_tokens: inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 20,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: inputTokens + 20,
        },
      },
    });
    res.end();
  }
}

/** A CODEX_HOME/config.toml that sends Codex to `fakeUrl` and trusts `cwd` (no onboarding dialog). */
export function codexConfig(
  fakeUrl: string,
  cwd: string,
  // 0.171.0 refuses `untrusted` ("no longer supported"); `on-request` asks when a command wants out
  // of the sandbox (`sandbox_permissions: "require_escalated"`).
  approval: 'never' | 'on-request',
  sandbox: 'danger-full-access' | 'workspace-write' | 'read-only' = 'danger-full-access',
): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    `model = "fake-codex-model"`,
    `model_provider = "fake"`,
    `approval_policy = ${q(approval)}`,
    `sandbox_mode = ${q(sandbox)}`,
    `check_for_update_on_startup = false`,
    // The fake model is unknown to Codex: give it a window and a compaction threshold, so a turn
    // reporting a long context (textTurn(…, inputTokens)) makes Codex compact.
    `model_context_window = 200000`,
    `model_auto_compact_token_limit = 100000`,
    ``,
    `[model_providers.fake]`,
    `name = "fake"`,
    `base_url = ${q(`${fakeUrl}/v1`)}`,
    `wire_api = "responses"`,
    `env_key = "FAKE_OPENAI_API_KEY"`,
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
    ``,
    `[projects.${q(cwd)}]`,
    `trust_level = "trusted"`,
    ``,
  ].join('\n');
}
