/**
 * The delivered-keys record: per channel, the idempotency keys of the messages it took, appended
 * (and fsynced) the moment a send returns delivered, before the Notification is marked Sent.
 * The sender checks it before every attempt: a controller killed between a send and that mark
 * finds the key on restart and marks the Notification Sent without sending it again. What the
 * record cannot cover (a send in flight when the process died, or a receiver that took the
 * message but never answered) is sent again with the same key: docs/notifications.md
 * "Delivery guarantees".
 *
 * One file per channel under `<home>/notifications/delivered/`, a key a line; a torn last line (a
 * crash mid-append) is no key. The file keeps the newest {@link MAX_KEYS} keys: it is rewritten
 * (temp file, rename) when it holds twice as many. One writer: the controller holding the lease.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Keys kept per channel: far more than a channel's Notifications that can still be Pending. */
export const MAX_KEYS = 5000;

export class DeliveredKeys {
  private readonly loaded = new Map<string, { keys: Set<string>; lines: number }>();

  constructor(private readonly dir: string) {}

  /** Whether `channel` (namespace/name) took the message with `key`. */
  has(channel: string, key: string): boolean {
    return this.load(channel).keys.has(key);
  }

  /** Records that `channel` took the message with `key`; durable when it returns. */
  add(channel: string, key: string): void {
    const rec = this.load(channel);
    if (rec.keys.has(key)) return;
    const file = this.fileOf(channel);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fd = fs.openSync(file, 'a', 0o600);
    try {
      fs.writeSync(fd, `${key}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    rec.keys.add(key);
    rec.lines++;
    if (rec.lines >= 2 * MAX_KEYS) this.compact(channel, rec);
  }

  private fileOf(channel: string): string {
    // namespace/name → one file name; both are DNS-1123 names, so `_` cannot occur in either.
    return path.join(this.dir, `${channel.replace('/', '_') || '_'}.keys`);
  }

  private load(channel: string): { keys: Set<string>; lines: number } {
    let rec = this.loaded.get(channel);
    if (rec) return rec;
    let text = '';
    try {
      text = fs.readFileSync(this.fileOf(channel), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const whole = text.slice(0, text.lastIndexOf('\n') + 1); // a torn last line is no key
    const lines = whole.split('\n').filter(Boolean);
    rec = { keys: new Set(lines.slice(-MAX_KEYS)), lines: lines.length };
    this.loaded.set(channel, rec);
    return rec;
  }

  private compact(channel: string, rec: { keys: Set<string>; lines: number }): void {
    const keep = [...rec.keys].slice(-MAX_KEYS);
    const file = this.fileOf(channel);
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, keep.map((k) => `${k}\n`).join(''), { mode: 0o600 });
    const fd = fs.openSync(tmp, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    rec.keys = new Set(keep);
    rec.lines = keep.length;
  }
}
