/**
 * Live updates for every open page from ONE informer per kind (a list, then the store's watch):
 * a change is turned into a board row once and written to each server-sent-events client whose
 * filter it matches. No client polls, and a thousand open boards cost one watch.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Resource } from '../api/types.js';
import { Informer } from '../runtime/informer.js';
import type { Store } from '../store/store.js';
import { boardRows, sessionKey } from './board.js';

interface Client {
  res: ServerResponse;
  match: (o: Resource) => boolean;
  /** The sessions this client shows now, so one that stops matching is taken off its board. */
  shown: Set<string>;
}

/** A comment line every 20 s keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 20_000;
/** At most this many open streams: past it a new one is refused (503), so memory stays bounded. */
export const MAX_STREAMS = 500;

export function sseHead(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  res.write(': open\n\n');
}

export const sseSend = (res: ServerResponse, event: string, data: unknown) =>
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

export class Hub {
  readonly sessions: Informer<'AgentSession'>;
  readonly decisions: Informer<'Decision'>;
  private readonly clients = new Set<Client>();
  private readonly timer: NodeJS.Timeout;
  /** Random per process, so that a version never matches one another process (or a restart) gave. */
  private readonly epoch = randomBytes(6).toString('hex');
  private changes = 0;

  constructor(store: Store, log: (m: string) => void) {
    this.sessions = new Informer(store, 'AgentSession', log);
    this.decisions = new Informer(store, 'Decision', log);
    this.sessions.onChange((type, o) => this.changed(type === 'DELETED' ? undefined : o, sessionKey(o)));
    this.timer = setInterval(() => {
      for (const c of this.clients) c.res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.timer.unref();
  }

  async start(): Promise<void> {
    await Promise.all([this.sessions.start(), this.decisions.start()]);
  }

  /**
   * Names the sessions' state now: a page rendered at this version and a stream opened while it still
   * holds have the same rows, so the stream need not send them again (1000 rows are ~250 kB).
   */
  get version(): string {
    return `${this.epoch}.${this.changes}`;
  }

  get streams(): number {
    return this.clients.size;
  }

  /**
   * Streams board changes to `res` from now on. Its current rows are sent first (`rows`), unless the
   * page already shows them: it was rendered at `since`, still the version (then `same`).
   */
  subscribe(res: ServerResponse, match: (o: Resource) => boolean, since?: string): void {
    const shown = new Set<string>();
    const c: Client = { res, match, shown };
    this.clients.add(c);
    res.on('close', () => this.clients.delete(c));
    sseHead(res);
    const items = this.sessions.list().filter(match);
    for (const o of items) shown.add(sessionKey(o));
    if (since === this.version) sseSend(res, 'same', { version: since });
    else sseSend(res, 'rows', boardRows(sortSessions(items)));
  }

  private changed(o: Resource | undefined, key: string): void {
    this.changes++;
    const row = o ? boardRows([o])[0] : undefined;
    for (const c of this.clients) {
      if (o && c.match(o)) {
        c.shown.add(key);
        sseSend(c.res, 'row', row);
      } else if (c.shown.delete(key)) sseSend(c.res, 'remove', { key });
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.sessions.stop();
    this.decisions.stop();
    for (const c of this.clients) c.res.end();
    this.clients.clear();
  }
}

/** Namespace, then name: the board's order (a new session takes its place there). */
export function sortSessions(items: Resource[]): Resource[] {
  return [...items].sort((a, b) => sessionKey(a).localeCompare(sessionKey(b)));
}
