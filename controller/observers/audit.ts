/**
 * Global audit log of lifecycle transitions (seed 004): one JSON line per transition in
 * $ORCHCTL_HOME/audit.log, appended synchronously so a kill -9 never loses an acknowledged
 * line. Rotated by size (audit.log.1 … .N), which is all the rotation an append-only audit
 * trail needs; written by hand because the line must be on disk before the status write.
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
  private size = -1;

  constructor(
    home: string,
    private readonly maxBytes = 10 * 1024 * 1024,
    private readonly keep = 4,
  ) {
    this.file = path.join(home, 'audit.log');
  }

  write(rec: AuditRecord): void {
    const line = JSON.stringify({ time: new Date().toISOString(), ...rec }) + '\n';
    try {
      if (this.size < 0) this.size = fs.existsSync(this.file) ? fs.statSync(this.file).size : 0;
      if (this.size + line.length > this.maxBytes) this.rotate();
      fs.appendFileSync(this.file, line, { mode: 0o600 });
      this.size += Buffer.byteLength(line);
    } catch {
      this.size = -1; // re-stat next time; auditing must never break reconciling
    }
  }

  private rotate(): void {
    for (let i = this.keep - 1; i >= 1; i--) {
      const from = `${this.file}.${i}`;
      if (fs.existsSync(from)) fs.renameSync(from, `${this.file}.${i + 1}`);
    }
    if (fs.existsSync(this.file)) fs.renameSync(this.file, `${this.file}.1`);
    this.size = 0;
  }
}
