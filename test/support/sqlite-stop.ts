/**
 * SIGSTOP a process that shares a SQLite store, at a moment it holds no write lock.
 *
 * Tests that simulate a lost node or a hung process by SIGSTOP mean "the process stops answering",
 * not "the process stops inside a write transaction": with SQLite that second case stalls every
 * writer on the file (docs/store.md says so), which is a different scenario. A SIGSTOP landing
 * between BEGIN IMMEDIATE and COMMIT made such tests fail now and then on a loaded machine, so the
 * process is stopped, the lock is probed, and on a held lock it is continued and stopped again.
 */
import Database from 'better-sqlite3';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a write transaction can begin on `file` within `ms` (live writers hold it only briefly). */
async function writable(file: string, ms: number): Promise<boolean> {
  const db = new Database(file, { timeout: 0, fileMustExist: true });
  try {
    const until = Date.now() + ms;
    for (;;) {
      try {
        db.exec('BEGIN IMMEDIATE');
        db.exec('ROLLBACK');
        return true;
      } catch (e) {
        if (!/SQLITE_BUSY|database is locked/.test(String((e as { code?: string }).code ?? e))) throw e;
        if (Date.now() > until) return false;
        await sleep(20);
      }
    }
  } finally {
    db.close();
  }
}

export async function stopOutsideWriteLock(
  signal: (s: 'SIGSTOP' | 'SIGCONT') => unknown,
  file: string,
  tries = 20,
): Promise<void> {
  for (let i = 0; i < tries; i++) {
    signal('SIGSTOP');
    if (await writable(file, 1500)) return;
    signal('SIGCONT');
    await sleep(50 + Math.floor(Math.random() * 150));
  }
  throw new Error(`could not stop the process outside a write transaction on ${file} in ${tries} tries`);
}
