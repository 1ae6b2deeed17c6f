/**
 * A scripted HTTP server on 127.0.0.1 for the judge's backend tests: each request gets the next
 * scripted reply (or the default one), and every request is recorded with its parsed body and
 * headers. It counts requests in flight, so a test can check the concurrency limit (the peak is
 * `maxInFlight`). A `hang` reply never answers; close() drops such connections.
 * fake-openai.ts and fake-judge-anthropic.ts put the two APIs' shapes on top of it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Reply =
  | { kind: 'json'; body: unknown; status?: number; headers?: Record<string, string>; delayMs?: number }
  | { kind: 'raw'; text: string; status: number; headers?: Record<string, string>; delayMs?: number }
  | { kind: 'hang' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  at: number;
}

export class ScriptedServer {
  readonly requests: RecordedRequest[] = [];
  private queue: Reply[] = [];
  private inFlight = 0;
  /** Highest number of requests in flight at once. */
  maxInFlight = 0;
  private readonly waiters: { n: number; resolve: () => void }[] = [];
  private readonly open = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private defaultReply: (req: RecordedRequest) => Reply,
    private readonly guard?: (req: RecordedRequest) => Reply | undefined,
  ) {}

  /** `guard` answers first (wrong path, missing headers) without using up a scripted reply. */
  static async start(
    defaultReply: (req: RecordedRequest) => Reply,
    guard?: (req: RecordedRequest) => Reply | undefined,
  ): Promise<ScriptedServer> {
    let self!: ScriptedServer;
    const server = http.createServer((req, res) => void self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new ScriptedServer(server, `http://127.0.0.1:${port}`, defaultReply, guard);
    return self;
  }

  /** Replies for the next requests, in order; then the default reply again. */
  script(...replies: Reply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Forgets the script, the recorded requests and the peak (between tests). */
  reset(): void {
    this.queue = [];
    this.requests.splice(0);
    this.maxInFlight = this.inFlight;
  }

  setDefault(fn: (req: RecordedRequest) => Reply): void {
    this.defaultReply = fn;
  }

  get current(): number {
    return this.inFlight;
  }

  /** Resolves once `n` requests have arrived. */
  waitForRequests(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* keep the text */
    }
    const rec: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      at: Date.now(),
    };
    this.requests.push(rec);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    for (const w of this.waiters.filter((x) => this.requests.length >= x.n)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      this.inFlight--;
      this.open.delete(res);
    };
    res.on('close', finish);
    this.open.add(res);
    const reply = this.guard?.(rec) ?? this.queue.shift() ?? this.defaultReply(rec);
    if (reply.kind === 'hang') return; // never answered; the client gives up or close() drops it
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const payload = reply.kind === 'json' ? JSON.stringify(reply.body) : reply.text;
    res.writeHead(reply.status ?? 200, {
      'content-type': reply.kind === 'json' ? 'application/json' : 'text/plain',
      ...(reply.headers ?? {}),
    });
    res.end(payload, finish);
  }

  async close(): Promise<void> {
    for (const r of this.open) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A verdict that matches the judge's schema. */
/** A fake API on a ScriptedServer: the script, the recorded requests and close, shared by the fakes. */
export abstract class ScriptedApi {
  protected constructor(readonly server: ScriptedServer) {}

  /** Base URL for the backend's `endpoint`. */
  abstract get endpoint(): string;

  script(...r: Reply[]): this {
    this.server.script(...r);
    return this;
  }

  get requests() {
    return this.server.requests;
  }

  close() {
    return this.server.close();
  }
}

export const GOOD_VERDICT = {
  score: 4,
  recommendation: 'continue',
  outcome: 'partial',
  confidence: 0.7,
  accomplishments: ['added the parser', 'tests pass'],
  failures: ['docs not updated'],
  reasoning: 'Clear progress with passing tests; documentation is missing.',
};

/** Valid JSON that breaks the schema: score out of range, an unknown recommendation, fields missing. */
export const INVALID_VERDICT = { score: 9, recommendation: 'celebrate', reasoning: 'great' };
