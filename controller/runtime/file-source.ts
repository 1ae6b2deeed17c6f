/**
 * Files that bring a key back when they change: an event source for `ControllerBuilder.watches`.
 * One chokidar watcher for every key, created on the first watch(); a file that does not exist
 * yet is picked up when it is created.
 */
import chokidar, { type FSWatcher } from 'chokidar';
import fs from 'node:fs';
import path from 'node:path';
import type { EventSource } from './builder.js';
import type { Runnable } from './manager.js';

export class FileWatchSource implements EventSource<string>, Runnable {
  private watcher?: FSWatcher;
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
    if (!this.watcher) {
      this.watcher = chokidar.watch(fresh, { ignoreInitial: true, persistent: true });
      this.watcher.on('all', (_ev: string, file: string) => {
        const k = this.owners.get(file);
        if (k) for (const h of this.handlers) h(k);
      });
    } else this.watcher.add(fresh);
  }

  /** Stops watching `key`'s files. */
  unwatch(key: string): void {
    const files = [...this.owners].filter(([, k]) => k === key).map(([f]) => f);
    for (const f of files) this.owners.delete(f);
    if (files.length) void this.watcher?.unwatch(files);
  }

  async stop(): Promise<void> {
    this.closed = true;
    await this.watcher?.close();
  }
}
