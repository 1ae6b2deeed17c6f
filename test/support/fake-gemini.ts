/**
 * A scripted fake of the Gemini API (generativelanguage `v1beta`), for driving the real Gemini CLI
 * in tests. The CLI is pointed at it with `GOOGLE_GEMINI_BASE_URL=<fake.url>` and any
 * `GEMINI_API_KEY` (docs/notes/gemini-cli.md).
 *
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` — the conversation: the next scripted
 *   turn (with the queue empty, a short text) as SSE `data:` chunks of GenerateContentResponse
 *   (candidates[0].content.parts with text / functionCall, finishReason STOP, usageMetadata).
 * - `POST …:generateContent` — side calls (the CLI's next-speaker check, model routing, loop
 *   detection ask for JSON): a JSON text when the request asks for JSON, a short text otherwise.
 *   They never take a scripted turn.
 * - `POST …:countTokens` — `{totalTokens}` from the body length.
 * - A `rateLimit` turn answers 429 RESOURCE_EXHAUSTED with a google.rpc.RetryInfo retryDelay and a
 *   QuotaFailure, as the real API does when a quota is exhausted.
 *
 * Every request is recorded with its parsed body ({@link FakeGemini.requests}).
 */
import type http from 'node:http';
import { closeLoopback, readBody, startLoopback } from './loopback-server.js';

export type GeminiTurn =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; args: Record<string, unknown>; text?: string }
  /** `exhausted`: an ErrorInfo QUOTA_EXHAUSTED (the CLI keeps the delay) instead of a per-day QuotaFailure. */
  | { kind: 'rateLimit'; retrySeconds: number; exhausted?: boolean };

export interface RecordedGeminiRequest {
  method: string;
  path: string;
  body: unknown;
}

export const geminiText = (text: string): GeminiTurn => ({ kind: 'text', text });
export const geminiCall = (name: string, args: Record<string, unknown>, text?: string): GeminiTurn => ({
  kind: 'call',
  name,
  args,
  ...(text === undefined ? {} : { text }),
});
export const geminiRateLimit = (retrySeconds: number, exhausted?: boolean): GeminiTurn => ({
  kind: 'rateLimit',
  retrySeconds,
  ...(exhausted ? { exhausted } : {}),
});

interface Content {
  role?: string;
  parts?: { text?: string; functionCall?: unknown; functionResponse?: { name?: string; response?: unknown } }[];
}

/** The user-typed texts of a request's contents. */
export function geminiUserTexts(body: unknown): string[] {
  const contents = (body as { contents?: Content[] } | undefined)?.contents ?? [];
  return contents
    .filter((c) => c.role === 'user')
    .flatMap((c) => (c.parts ?? []).map((p) => p.text).filter((t): t is string => typeof t === 'string'));
}

/** The functionResponse parts of a request (the results of earlier calls). */
export function geminiFunctionResponses(body: unknown): { name: string; response: unknown }[] {
  const contents = (body as { contents?: Content[] } | undefined)?.contents ?? [];
  return contents.flatMap((c) =>
    (c.parts ?? []).flatMap((p) =>
      p.functionResponse ? [{ name: String(p.functionResponse.name), response: p.functionResponse.response }] : [],
    ),
  );
}

/** The function declarations' names a request offered. */
export function geminiToolNames(body: unknown): string[] {
  const tools = (body as { tools?: { functionDeclarations?: { name: string }[] }[] } | undefined)?.tools ?? [];
  return tools.flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
}

export class FakeGemini {
  readonly requests: RecordedGeminiRequest[] = [];
  /** The usageMetadata of each streamed conversation turn answered, in order. */
  readonly streamed: { promptTokenCount: number; candidatesTokenCount: number }[] = [];
  private readonly queue: GeminiTurn[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeGemini> {
    let self: FakeGemini | undefined;
    const { server, url } = await startLoopback(async (req, res) => self?.handle(req, res));
    self = new FakeGemini(server, url);
    return self;
  }

  script(...turns: GeminiTurn[]): void {
    this.queue.push(...turns);
  }

  /** The conversation (streamGenerateContent) requests so far. */
  streams(): RecordedGeminiRequest[] {
    return this.requests.filter((r) => r.path.includes(':streamGenerateContent'));
  }

  /** What the fake received and still has scripted, for a failed test's message. */
  describe(): string {
    const lines = this.requests.map((r, i) => {
      const user = geminiUserTexts(r.body).map((t) => JSON.stringify(t.slice(-200)));
      const results = geminiFunctionResponses(r.body).map(
        (f) => `${f.name}→${JSON.stringify(f.response).slice(0, 200)}`,
      );
      return `  ${i}: ${r.method} ${r.path} user=[${user.join(', ')}] results=[${results.join(', ')}]`;
    });
    const head = `fake Gemini API: ${this.requests.length} request(s), ${this.queue.length} turn(s) left`;
    return `${head}\n${lines.join('\n')}`;
  }

  close(): Promise<void> {
    return closeLoopback(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { raw, body } = await readBody(req);
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? '', path, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const usageMetadata = {
      promptTokenCount: Math.ceil(raw.length / 4),
      candidatesTokenCount: 12,
      totalTokenCount: Math.ceil(raw.length / 4) + 12,
    };
    if (path.includes(':countTokens')) return json(200, { totalTokens: Math.ceil(raw.length / 4) });
    if (path.includes(':generateContent')) {
      const cfg = (body as { generationConfig?: { responseMimeType?: string; responseJsonSchema?: unknown } })
        ?.generationConfig;
      const wantsJson = cfg?.responseMimeType === 'application/json' || cfg?.responseJsonSchema !== undefined;
      // One object that satisfies the CLI's JSON side calls (next speaker, routing, loop check).
      const text = wantsJson
        ? JSON.stringify({
            next_speaker: 'user',
            reasoning: 'fake',
            model_choice: 'flash',
            unproductive_state_confidence: 0,
          })
        : 'Fake answer';
      return json(200, {
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
      });
    }
    if (!path.includes(':streamGenerateContent')) {
      return json(404, { error: { code: 404, message: `no such route ${path}`, status: 'NOT_FOUND' } });
    }
    const turn = this.queue.shift() ?? geminiText('Done.');
    if (turn.kind === 'rateLimit') {
      return json(429, {
        error: {
          code: 429,
          message: `You exceeded your current quota. Please retry in ${turn.retrySeconds}s.`,
          status: 'RESOURCE_EXHAUSTED',
          details: [
            turn.exhausted
              ? {
                  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                  reason: 'QUOTA_EXHAUSTED',
                  domain: 'cloudcode-pa.googleapis.com',
                }
              : {
                  '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
                  violations: [
                    {
                      quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
                      quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
                    },
                  ],
                },
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${turn.retrySeconds}s` },
          ],
        },
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    this.streamed.push(usageMetadata);
    const send = (parts: unknown[], last: boolean) =>
      res.write(
        `data: ${JSON.stringify({
          candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
          ...(last ? { usageMetadata } : {}),
          modelVersion: 'fake-gemini',
        })}\r\n\r\n`,
      );
    const text = turn.text;
    if (turn.kind === 'call') {
      if (text !== undefined) send([{ text }], false);
      send([{ functionCall: { name: turn.name, args: turn.args } }], true);
    } else {
      const pieces = turn.text.match(/.{1,24}/gs) ?? [''];
      for (const [i, p] of pieces.entries()) send([{ text: p }], i === pieces.length - 1);
    }
    res.end();
  }
}

/** ~/.gemini/settings.json that lets the TUI start with no theme, auth or trust dialog. */
export function geminiSettings(): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    ui: { theme: 'Default' },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    ide: { enabled: false },
  };
}
