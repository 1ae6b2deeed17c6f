/**
 * The live, read-only terminal view: a run's output.log (the pane's output stream, escape
 * sequences and all, as `orchctl logs --raw` reads it) tailed once per run however many pages
 * show it, and written to each viewer as server-sent events for xterm.js to render.
 */
import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import { sseHead, sseSend } from './hub.js';

/** What a new viewer is sent first: the end of the log, enough for a screenful or two. */
const BACKLOG_BYTES = 64 * 1024;
/** Most read in one go, so a burst of output never makes one huge event. */
const CHUNK_BYTES = 256 * 1024;
const POLL_MS = 200;

interface Feed {
  file: string;
  pos: number;
  viewers: Set<ServerResponse>;
}

function readRange(file: string, from: number, to: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(to - from);
    const n = fs.readSync(fd, buf, 0, buf.length, from);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

const sizeOf = (file: string) => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};

export class TerminalFeeds {
  private readonly feeds = new Map<string, Feed>();

  /** Open terminal streams, over every run. */
  get viewers(): number {
    let n = 0;
    for (const f of this.feeds.values()) n += f.viewers.size;
    return n;
  }

  /** Streams `file` to `res`: the backlog first, then everything appended. */
  subscribe(file: string, res: ServerResponse): void {
    let feed = this.feeds.get(file);
    if (!feed) {
      feed = { file, pos: sizeOf(file), viewers: new Set() };
      this.feeds.set(file, feed);
      const f = feed;
      fs.watchFile(file, { interval: POLL_MS, persistent: false }, () => this.pump(f));
    }
    sseHead(res);
    const end = feed.pos;
    if (end > 0) sseSend(res, 'data', readRange(file, Math.max(0, end - BACKLOG_BYTES), end));
    feed.viewers.add(res);
    const f = feed;
    res.on('close', () => {
      f.viewers.delete(res);
      if (!f.viewers.size) {
        fs.unwatchFile(file);
        this.feeds.delete(file);
      }
    });
  }

  private pump(f: Feed): void {
    const size = sizeOf(f.file);
    if (size < f.pos) f.pos = 0; // a new file in its place: from its start
    while (f.pos < size) {
      const to = Math.min(size, f.pos + CHUNK_BYTES);
      const chunk = readRange(f.file, f.pos, to);
      f.pos = to;
      for (const v of f.viewers) sseSend(v, 'data', chunk);
    }
  }

  stop(): void {
    for (const f of this.feeds.values()) {
      fs.unwatchFile(f.file);
      for (const v of f.viewers) v.end();
    }
    this.feeds.clear();
  }
}
