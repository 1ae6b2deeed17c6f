/**
 * Files that bring a key back when they change: an event source for `ControllerBuilder.watches`.
 * One chokidar watcher per key, closed whole when the key is unwatched; a file that does not exist
 * yet is picked up when it is created.
 *
 * Not one watcher shared by every key: chokidar's unwatch() keeps each path it is told to forget in
 * an ignore list that every later add and event is matched against, so a shared watcher grew slower
 * with every run that ended — a quarter of the controller's CPU after a few thousand runs in the
 * soak benchmark (issue 29).
 */
import chokidar, { type FSWatcher } from 'chokidar';
import fs from 'node:fs';
import path from 'node:path';
import type { EventSource } from './builder.js';
import type { Runnable } from './manager.js';

export class FileWatchSource implements EventSource<string>, Runnable {
  private readonly watchers = new Map<string, { watcher: FSWatcher; files: Set<string> }>();
  private readonly owners = new Map<string, string>(); // file → key
  private readonly handlers: ((key: string) => void)[] = [];
  private closed = false;

  subscribe(handler: (key: string) => void): void {
    this.handlers.push(handler);
  }

  /**
   * Watches `files` for `key` (a file already watched for another key moves to this one). chokidar
   * never sees a file appear in a directory that was missing when the file was added (Claude Code
   * creates its transcript's directory with the first line), so such a file is not counted as
   * watched yet: a later call adds it once its directory is there.
   */
  watch(key: string, files: string[]): void {
    const fresh = files.filter((f) => this.owners.get(f) !== key && fs.existsSync(path.dirname(f)));
    if (!fresh.length || this.closed) return;
    for (const f of fresh) this.owners.set(f, key);
    const own = this.watchers.get(key);
    if (own) {
      for (const f of fresh) own.files.add(f);
      own.watcher.add(fresh);
      return;
    }
    const watcher = chokidar.watch(fresh, { ignoreInitial: true, persistent: true });
    watcher.on('all', (_ev: string, file: string) => {
      const k = this.owners.get(file);
      if (k) for (const h of this.handlers) h(k);
    });
    this.watchers.set(key, { watcher, files: new Set(fresh) });
  }

  /** Stops watching `key`'s files: its watcher is closed. */
  unwatch(key: string): void {
    const own = this.watchers.get(key);
    if (!own) return;
    this.watchers.delete(key);
    for (const f of own.files) if (this.owners.get(f) === key) this.owners.delete(f);
    void own.watcher.close();
  }

  /** Keys with a watcher now (one per live run's session), for the cost tests. */
  get size(): number {
    return this.watchers.size;
  }

  async stop(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.watchers.values()].map((w) => w.watcher.close()));
    this.watchers.clear();
  }
}
