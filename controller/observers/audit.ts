/**
 * Global audit log of lifecycle transitions (seed 004): one JSON line per transition in
 * $ORCHCTL_HOME/audit.log, appended synchronously so a kill -9 never loses an acknowledged
 * line. Rotated by size (audit.log.1 … .N), which is all the rotation an append-only audit
 * trail needs; written by hand because the line must be on disk before the status write.
 *
 * The file stays open (a launch burst wrote two lines per session, each an open and a close): each
 * line is one write to it, after a stat of the path — a file rotated or removed meanwhile (by this
 * writer, another process's, or a person) is let go and the one now at the path opened, made if need be.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface AuditRecord {
  /** Who did it and from where, for a person's action (the web console: its token's name, the client address). */
  by?: string;
  address?: string;
  time?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  run?: number;
  from?: string;
  to: string;
  reason?: string;
  message?: string;
}

export class AuditLog {
  readonly file: string;
  private size = 0;
  private fd = -1;
  /** Which file `fd` is: the one at the path while the path still names it. */
  private id = '';

  constructor(
    home: string,
    private readonly maxBytes = 10 * 1024 * 1024,
    private readonly keep = 4,
  ) {
    this.file = path.join(home, 'audit.log');
  }

  write(rec: AuditRecord): void {
    const line = Buffer.from(JSON.stringify({ time: new Date().toISOString(), ...rec }) + '\n');
    try {
      let fd = this.descriptor();
      if (this.size + line.length > this.maxBytes) {
        this.rotate();
        fd = this.descriptor();
      }
      for (let at = 0; at < line.length; ) at += fs.writeSync(fd, line, at); // as appendFileSync: all of it
      this.size += line.length;
    } catch {
      this.close(); // opened afresh next time; auditing must never break reconciling
    }
  }

  /** Lets the file go (a later write opens it again). */
  close(): void {
    if (this.fd < 0) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      /* already closed */
    }
    this.fd = -1;
  }

  /** The open descriptor of the file now at the path (appending), and its size from the same stat. */
  private descriptor(): number {
    if (this.fd >= 0) {
      const st = fs.statSync(this.file, { throwIfNoEntry: false });
      if (st && `${st.dev}:${st.ino}` === this.id) {
        this.size = st.size; // another process (the console) may write to it too
        return this.fd;
      }
      this.close();
    }
    this.fd = fs.openSync(this.file, 'a', 0o600);
    const st = fs.fstatSync(this.fd);
    this.id = `${st.dev}:${st.ino}`;
    this.size = st.size;
    return this.fd;
  }

  private rotate(): void {
    this.close();
    for (let i = this.keep - 1; i >= 1; i--) {
      const from = `${this.file}.${i}`;
      if (fs.existsSync(from)) fs.renameSync(from, `${this.file}.${i + 1}`);
    }
    if (fs.existsSync(this.file)) fs.renameSync(this.file, `${this.file}.1`);
    this.size = 0;
  }
}
