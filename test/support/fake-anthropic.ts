/**
 * A scripted fake of the Anthropic Messages API, for driving the real Claude Code CLI in tests.
 *
 * Listens on 127.0.0.1 (random free port). Point the CLI at it with
 * `ANTHROPIC_BASE_URL=<fake.url>` and any `ANTHROPIC_API_KEY`.
 *
 * What it answers (see docs/notes/claude-code.md for what Claude Code 2.1.x actually calls):
 * - `POST /v1/messages[?beta=true]` — the Messages API. With `stream: true` it answers with the SSE
 *   event sequence message_start, ping, content_block_start / content_block_delta (text_delta,
 *   input_json_delta) / content_block_stop per block, message_delta (stop_reason, usage),
 *   message_stop. Without `stream` it answers with one JSON message.
 *   - A request that offers tools is a *main* request (the conversation the user drives): it gets
 *     the next scripted turn from the queue ({@link FakeAnthropic.script}), or, when the queue is
 *     empty, {@link FakeAnthropicOptions.onUnscripted}'s answer (by default a short text).
 *   - A request that offers no tools (title generation, quota probes, summaries) is a *side*
 *     request: it gets {@link FakeAnthropicOptions.side}'s answer — by default a short text, or,
 *     when the request asks for structured output (`output_config.format.type: json_schema`, as
 *     Claude Code's session-title request does), a JSON text that fits the schema.
 * - `POST /v1/messages/count_tokens` — `{input_tokens}` estimated from the body length.
 * - `GET /v1/models` — one model (the model id of the last request, or `claude-sonnet-4-5`).
 * - `HEAD|GET /api/hello` — 200 (Claude Code's connectivity preflight).
 * - any other `/api/...` path (telemetry, OAuth, settings probes) — 200 `{}`; anything else 404.
 * - Used as the CLI's `HTTPS_PROXY`/`HTTP_PROXY` (with `NO_PROXY=127.0.0.1,localhost`), it also
 *   records and refuses (403) every attempt to reach another host: kind `egress`, path `host:port`.
 *
 * Every request is recorded ({@link FakeAnthropic.requests}) with its parsed body, so a test can
 * check that the user's prompt arrived ({@link userText}) or that a tool_result came back with
 * `is_error` ({@link toolResults}).
 *
 * Typical use:
 * ```ts
 * const fake = await FakeAnthropic.start();
 * fake.script(
 *   bashTurn('git commit -qm wip'),          // 1st main request: a Bash tool call
 *   textTurn('Committed.'),                   // 2nd main request (carries the tool_result)
 * );
 * // … run claude with ANTHROPIC_BASE_URL=fake.url …
 * const second = await fake.waitForMain(2);
 * expect(toolResults(second.body)[0].isError).toBe(false);
 * await fake.close();
 * ```
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';

// ---------------------------------------------------------------------------------------------
// Scripted answers

/** A text content block to send. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** A tool_use content block to send; `id` defaults to a fresh `toolu_…`. */
export interface ToolUseBlock {
  type: 'tool_use';
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

export type ScriptedBlock = TextBlock | ToolUseBlock;

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal';

/** One assistant message. */
export interface ScriptedTurn {
  content: ScriptedBlock[];
  /** Defaults to `tool_use` when a block is a tool_use, else `end_turn`. */
  stopReason?: StopReason;
  /** Delay before the response headers (time to first byte), ms. */
  delayMs?: number;
  /** Delay between SSE deltas, ms (streaming only). Makes the TUI's busy spinner visible. */
  chunkDelayMs?: number;
  /** Delay after the last content block, before message_delta/message_stop, ms (streaming only). */
  holdMs?: number;
  /** Never finish the stream (until the client goes away or the fake closes): a stalled API. */
  stall?: boolean;
  /** Extra response headers (e.g. `anthropic-ratelimit-unified-5h-reset`, which Claude Code reads). */
  headers?: Record<string, string>;
  /** Output/input token counts to report; defaults are small made-up numbers. */
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
}

/** An HTTP error answer, e.g. `{status: 429, type: 'rate_limit_error', message: '…'}`. */
export interface ScriptedError {
  error: { status: number; type: string; message: string; headers?: Record<string, string> };
  delayMs?: number;
}

export type ScriptedAnswer = ScriptedTurn | ScriptedError;

/** A queued answer, or a function that builds it from the request being answered. */
export type ScriptStep = ScriptedAnswer | ((req: RecordedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>);

/** `{type:'text'}` turn that ends the turn. */
export function textTurn(text: string, extra: Omit<ScriptedTurn, 'content'> = {}): ScriptedTurn {
  return { content: [{ type: 'text', text }], ...extra };
}

/** A turn calling one tool (optionally preceded by a line of text); stop_reason `tool_use`. */
export function toolTurn(
  name: string,
  input: Record<string, unknown>,
  opts: { text?: string; id?: string } & Omit<ScriptedTurn, 'content'> = {},
): ScriptedTurn {
  const { text, id, ...extra } = opts;
  const content: ScriptedBlock[] = [];
  if (text !== undefined) content.push({ type: 'text', text });
  content.push({ type: 'tool_use', name, input, ...(id !== undefined ? { id } : {}) });
  return { content, ...extra };
}

/** A turn calling Claude Code's `Bash` tool with `command` (and a `description`). */
export function bashTurn(
  command: string,
  opts: { description?: string; text?: string; id?: string } & Omit<ScriptedTurn, 'content'> = {},
): ScriptedTurn {
  const { description, ...rest } = opts;
  return toolTurn('Bash', { command, description: description ?? `Run ${command.split(/\s+/)[0]}` }, rest);
}

/** An HTTP error answer. */
export function errorAnswer(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): ScriptedError {
  return { error: { status, type, message, ...(headers ? { headers } : {}) } };
}

function isError(a: ScriptedAnswer): a is ScriptedError {
  return (a as ScriptedError).error !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Recorded requests

/**
 * `egress`: a request meant for another host, which reached the fake because it was set as the
 * CLI's HTTPS_PROXY/HTTP_PROXY (a CONNECT, or an absolute-form URL); it is refused with 403.
 */
export type RequestKind = 'main' | 'side' | 'count_tokens' | 'models' | 'hello' | 'egress' | 'other';

/** A request body of `POST /v1/messages`, loosely typed (only what tests look at). */
export interface MessagesBody {
  model?: string;
  stream?: boolean;
  max_tokens?: number;
  system?: string | Array<{ type: string; text?: string }>;
  tools?: Array<{ name?: string; type?: string }>;
  messages?: Array<{ role: string; content: string | ContentBlockIn[] }>;
  [k: string]: unknown;
}

export interface ContentBlockIn {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | Array<{ type: string; text?: string }>;
  is_error?: boolean;
  [k: string]: unknown;
}

export interface RecordedRequest {
  /** 1-based arrival order over all requests. */
  seq: number;
  /** 1-based order among main requests (undefined for others). */
  mainIndex?: number;
  kind: RequestKind;
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (undefined when empty or not JSON). */
  body?: MessagesBody;
  rawBody: string;
  receivedAt: number;
  /** What was answered: 'scripted', 'unscripted', 'side', 'error <status>', 'aborted', … */
  answeredWith?: string;
}

/** Joined text of a content value (string, or the text blocks of an array). */
function textOf(content: string | ContentBlockIn[] | Array<{ type: string; text?: string }> | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

/** The last message with role `user`, or undefined. */
export function lastUserMessage(
  body: MessagesBody | undefined,
): { role: string; content: string | ContentBlockIn[] } | undefined {
  const msgs = body?.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].role === 'user') return msgs[i];
  return undefined;
}

/**
 * The text the user typed in the last user message: its text blocks without Claude Code's
 * injected `<system-reminder>…</system-reminder>` blocks (and other wholly `<…>`-wrapped blocks
 * such as `<command-name>`).
 */
export function userText(body: MessagesBody | undefined): string {
  const m = lastUserMessage(body);
  if (!m) return '';
  const blocks: ContentBlockIn[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
  return blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .filter((t) => !/^\s*<system-reminder>[\s\S]*<\/system-reminder>\s*$/.test(t))
    .join('\n')
    .trim();
}

/** Every user-role text (all messages), reminders included — for "did X ever reach the API". */
export function allUserText(body: MessagesBody | undefined): string {
  return (body?.messages ?? [])
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
}

export interface ToolResult {
  toolUseId: string;
  isError: boolean;
  /** Flattened text content. */
  content: string;
}

/** The tool_result blocks of the last user message. */
export function toolResults(body: MessagesBody | undefined): ToolResult[] {
  const m = lastUserMessage(body);
  if (!m || typeof m.content === 'string') return [];
  return m.content
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({ toolUseId: String(b.tool_use_id ?? ''), isError: b.is_error === true, content: textOf(b.content) }));
}

/**
 * Whether a request is Claude Code's compaction (`/compact`, or its own auto-compaction): 2.1.330
 * sends the conversation with a last user text that starts "CRITICAL: Respond with TEXT ONLY".
 */
export function isCompactionRequest(body: MessagesBody | undefined): boolean {
  return /^CRITICAL: Respond with TEXT ONLY\b/m.test(userText(body));
}

/** Names of the tools a request offers. */
export function toolNames(body: MessagesBody | undefined): string[] {
  return (body?.tools ?? []).map((t) => t.name ?? t.type ?? '?');
}

// ---------------------------------------------------------------------------------------------
// The server

export interface FakeAnthropicOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Answer for a main request when the script queue is empty. Default: a short text turn. */
  onUnscripted?: (req: RecordedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>;
  /** Answer for a side request (no tools offered). Default: {@link defaultSideAnswer}. */
  side?: (req: RecordedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>;
  /** Override the main/side split (default: main ⇔ the request offers at least one tool). */
  classify?: (body: MessagesBody) => 'main' | 'side';
  /** Called with one line per request (`#seq METHOD path kind → answer`). */
  log?: (line: string) => void;
}

export class FakeAnthropic extends EventEmitter {
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ScriptStep[] = [];
  private readonly server: http.Server;
  private readonly opts: FakeAnthropicOptions;
  private readonly open = new Set<http.ServerResponse>();
  private mainCount = 0;
  private msgCount = 0;
  private closed = false;
  port = 0;

  private constructor(opts: FakeAnthropicOptions) {
    super();
    this.opts = opts;
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
    // Proxy CONNECT (HTTPS through HTTPS_PROXY): record and refuse.
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
      const rec = this.record({
        kind: 'egress',
        method: 'CONNECT',
        path: req.url ?? '',
        query: '',
        headers: req.headers,
        rawBody: '',
      });
      rec.answeredWith = '403';
      this.emit('request', rec);
      this.opts.log?.(`#${rec.seq} CONNECT ${req.url} egress → 403`);
      socket.on('error', () => {});
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    });
  }

  /** Start listening on 127.0.0.1. */
  static async start(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
    const fake = new FakeAnthropic(opts);
    await new Promise<void>((resolve, reject) => {
      fake.server.once('error', reject);
      fake.server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** Base URL for `ANTHROPIC_BASE_URL`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Queue answers for the next main requests, in order. */
  script(...steps: ScriptStep[]): this {
    this.queue.push(...steps);
    return this;
  }

  /** Answer main requests with `fn` from now on whenever the script queue is empty. */
  answerUnscripted(fn: NonNullable<FakeAnthropicOptions['onUnscripted']>): this {
    this.opts.onUnscripted = fn;
    return this;
  }

  /** Drop every queued step; returns how many there were. */
  clearScript(): number {
    return this.queue.splice(0).length;
  }

  /** How many scripted steps are still queued. */
  get pending(): number {
    return this.queue.length;
  }

  /** Main requests so far, in order. */
  get mainRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === 'main');
  }

  /** `METHOD path` of every request, in order (for logs and notes). */
  paths(): string[] {
    return this.requests.map((r) => `${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`);
  }

  /**
   * Resolve with the first request (already received or arriving later) that matches `pred`;
   * reject after `timeoutMs` (default 30 s).
   */
  waitFor(pred: (r: RecordedRequest) => boolean, timeoutMs = 30_000): Promise<RecordedRequest> {
    const found = this.requests.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const onReq = (r: RecordedRequest): void => {
        if (!pred(r)) return;
        clearTimeout(timer);
        this.off('request', onReq);
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.off('request', onReq);
        reject(
          new Error(
            `fake-anthropic: no matching request within ${timeoutMs} ms; got: ${this.paths().join(', ') || 'none'}`,
          ),
        );
      }, timeoutMs);
      this.on('request', onReq);
    });
  }

  /** Wait for the n-th (1-based) main request. */
  waitForMain(n: number, timeoutMs = 30_000): Promise<RecordedRequest> {
    return this.waitFor((r) => r.kind === 'main' && r.mainIndex === n, timeoutMs);
  }

  /** Stop listening and cut open streams. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // -------------------------------------------------------------------------------------------

  private record(r: Omit<RecordedRequest, 'seq' | 'receivedAt' | 'mainIndex'>): RecordedRequest {
    const rec: RecordedRequest = { seq: this.requests.length + 1, ...r, receivedAt: Date.now() };
    if (rec.kind === 'main') rec.mainIndex = ++this.mainCount;
    this.requests.push(rec);
    return rec;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    let target = req.url ?? '/';
    let egress = false;
    if (/^https?:\/\//i.test(target)) {
      // Absolute-form request: we are being used as an HTTP proxy.
      const u = new URL(target);
      if ((u.hostname === '127.0.0.1' || u.hostname === 'localhost') && Number(u.port) === this.port)
        target = u.pathname + u.search;
      else egress = true;
    }
    const [path, query = ''] = target.split('?', 2);
    let body: MessagesBody | undefined;
    if (rawBody) {
      try {
        body = JSON.parse(rawBody) as MessagesBody;
      } catch {
        body = undefined;
      }
    }
    const method = req.method ?? 'GET';
    let kind: RequestKind = 'other';
    if (egress) kind = 'egress';
    else if (method === 'POST' && path === '/v1/messages') {
      const offersTools = Array.isArray(body?.tools) && body.tools.length > 0;
      kind = body && this.opts.classify ? this.opts.classify(body) : offersTools ? 'main' : 'side';
    } else if (path === '/v1/messages/count_tokens') kind = 'count_tokens';
    else if (path === '/v1/models' || path.startsWith('/v1/models/')) kind = 'models';
    else if (path === '/api/hello') kind = 'hello';

    const rec = this.record({ kind, method, path, query, headers: req.headers, body, rawBody });

    try {
      switch (kind) {
        case 'main':
        case 'side': {
          let answer: ScriptedAnswer;
          if (kind === 'main') {
            const step = this.queue.shift();
            if (step !== undefined) {
              answer = typeof step === 'function' ? await step(rec) : step;
              rec.answeredWith = 'scripted';
            } else {
              answer = this.opts.onUnscripted
                ? await this.opts.onUnscripted(rec)
                : textTurn('(fake-anthropic: nothing scripted)');
              rec.answeredWith = 'unscripted';
            }
          } else {
            answer = this.opts.side ? await this.opts.side(rec) : defaultSideAnswer(rec.body);
            rec.answeredWith = 'side';
          }
          this.emit('request', rec);
          await this.answerMessages(rec, answer, res);
          break;
        }
        case 'count_tokens':
          this.emit('request', rec);
          json(res, 200, { input_tokens: Math.max(1, Math.ceil(rawBody.length / 4)) });
          rec.answeredWith = 'count_tokens';
          break;
        case 'models': {
          this.emit('request', rec);
          const id = [...this.requests].reverse().find((r) => r.body?.model)?.body?.model ?? 'claude-sonnet-4-5';
          const model = { type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' };
          json(res, 200, path === '/v1/models' ? { data: [model], has_more: false, first_id: id, last_id: id } : model);
          rec.answeredWith = 'models';
          break;
        }
        case 'egress':
          this.emit('request', rec);
          res.writeHead(403, { 'content-type': 'text/plain' });
          res.end('fake-anthropic: no egress');
          rec.answeredWith = '403';
          break;
        case 'hello':
          this.emit('request', rec);
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(method === 'HEAD' ? undefined : 'OK');
          rec.answeredWith = 'hello';
          break;
        default:
          this.emit('request', rec);
          if (path.startsWith('/api/')) {
            json(res, 200, {});
            rec.answeredWith = '200 {}';
          } else {
            json(res, 404, {
              type: 'error',
              error: { type: 'not_found_error', message: `fake-anthropic: no route ${method} ${path}` },
            });
            rec.answeredWith = '404';
          }
      }
    } catch (err) {
      rec.answeredWith = `500 ${String(err)}`;
      if (!res.headersSent) json(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
      else res.destroy();
    }
    this.opts.log?.(
      `#${rec.seq} ${method} ${req.url} ${kind}${rec.mainIndex ? `#${rec.mainIndex}` : ''} → ${rec.answeredWith}`,
    );
  }

  private async answerMessages(rec: RecordedRequest, answer: ScriptedAnswer, res: http.ServerResponse): Promise<void> {
    if (answer.delayMs) await sleep(answer.delayMs);
    const requestId = `req_fake${String(rec.seq).padStart(6, '0')}`;
    if (isError(answer)) {
      const { status, type, message, headers } = answer.error;
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...(headers ?? {}) });
      res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }));
      rec.answeredWith = `error ${status}`;
      return;
    }
    const model = rec.body?.model ?? 'claude-sonnet-4-5';
    const msgId = `msg_fake${String(++this.msgCount).padStart(6, '0')}`;
    const content = answer.content.map((b) =>
      b.type === 'tool_use'
        ? {
            type: 'tool_use' as const,
            id: b.id ?? `toolu_fake${String(rec.seq).padStart(4, '0')}${randomTail()}`,
            name: b.name,
            input: b.input,
          }
        : b,
    );
    const stopReason: StopReason =
      answer.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    const inputTokens = answer.usage?.input_tokens ?? Math.max(1, Math.ceil(rec.rawBody.length / 4));
    const outputTokens = answer.usage?.output_tokens ?? Math.max(1, Math.ceil(JSON.stringify(content).length / 4));
    const usage = {
      input_tokens: inputTokens,
      cache_creation_input_tokens: answer.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: answer.usage?.cache_read_input_tokens ?? 0,
      output_tokens: outputTokens,
      service_tier: 'standard',
    };

    if (rec.body?.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId, ...answer.headers });
      res.end(
        JSON.stringify({
          id: msgId,
          type: 'message',
          role: 'assistant',
          model,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': requestId,
      ...answer.headers,
    });
    this.open.add(res);
    let gone = false;
    res.on('close', () => {
      this.open.delete(res);
      if (!res.writableFinished) {
        gone = true;
        rec.answeredWith = `${rec.answeredWith ?? ''} (client went away)`;
      }
    });
    const send = (event: string, data: unknown): void => {
      if (!gone) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const pause = async (): Promise<void> => {
      if (answer.chunkDelayMs) await sleep(answer.chunkDelayMs);
    };

    send('message_start', {
      type: 'message_start',
      message: {
        id: msgId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    send('ping', { type: 'ping' });
    for (let index = 0; index < content.length && !gone; index++) {
      const block = content[index];
      if (block.type === 'text') {
        send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        for (const piece of splitInto(block.text, 3)) {
          await pause();
          send('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: piece },
          });
        }
      } else {
        send('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        for (const piece of splitInto(JSON.stringify(block.input), 2)) {
          await pause();
          send('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: piece },
          });
        }
      }
      send('content_block_stop', { type: 'content_block_stop', index });
    }
    if (answer.stall) {
      // Keep the stream open with nothing more to say; close() or the client ends it.
      await new Promise<void>((resolve) => res.once('close', () => resolve()));
      return;
    }
    if (answer.holdMs) await sleep(answer.holdMs);
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: {
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
      },
    });
    send('message_stop', { type: 'message_stop' });
    if (!gone) res.end();
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * The default answer to a side request: JSON fitting `output_config.format.schema` when the
 * request asks for structured output (e.g. `{"title":"Fake title"}`), else the text `Fake title`.
 */
export function defaultSideAnswer(body: MessagesBody | undefined): ScriptedTurn {
  const format = (body?.output_config as { format?: { type?: string; schema?: unknown } } | undefined)?.format;
  if (format?.type === 'json_schema' && format.schema)
    return textTurn(JSON.stringify(sampleOf(format.schema, 'value')));
  return textTurn('Fake title');
}

/** A minimal value that satisfies a (simple) JSON schema: strings are `Fake <name>`. */
function sampleOf(schema: unknown, name: string): unknown {
  const s = (schema ?? {}) as {
    type?: string | string[];
    properties?: Record<string, unknown>;
    required?: string[];
    items?: unknown;
    enum?: unknown[];
    const?: unknown;
  };
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? Object.keys(s.properties ?? {})) out[key] = sampleOf(s.properties?.[key], key);
      return out;
    }
    case 'array':
      return [];
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return `Fake ${name}`;
  }
}

function json(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let buf = Buffer.concat(chunks);
  const enc = String(req.headers['content-encoding'] ?? '').toLowerCase();
  try {
    if (enc === 'gzip') buf = zlib.gunzipSync(buf);
    else if (enc === 'deflate') buf = zlib.inflateSync(buf);
    else if (enc === 'br') buf = zlib.brotliDecompressSync(buf);
  } catch {
    // leave as received
  }
  return buf.toString('utf8');
}

/** Split a string into at most n non-empty pieces (code-point safe). */
function splitInto(s: string, n: number): string[] {
  const chars = [...s];
  if (chars.length === 0) return [''];
  const size = Math.ceil(chars.length / n);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

function randomTail(): string {
  return Math.random().toString(36).slice(2, 10);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
