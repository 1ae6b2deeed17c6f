/**
 * Launches gathered into as few tmux processes as fit (issue 29). Every tmux client is a fork of
 * the controller and a client start-up, ~10 ms each on two cores: one process per launch made 1000
 * sessions take 12 s in tmux clients alone. Launches that arrive while a list is running go
 * together into the next one (an idle batcher starts at once): one `tmux` argv holding, after the
 * server's set-up, each session's commands (`new-session … ; pipe-pane …`) — a command list of
 * separate argv elements, never a string tmux or a shell parses.
 *
 * Crash-only: tmux runs the whole list a client sent in one pass of its loop (a client killed
 * after sending it leaves every session of it created and tagged; one killed before, none), and
 * the runner tells which sessions were launched whole (sessionKeys: tagged with the run key, and
 * with its output pipe open when it asked for one, which its last command does). The caller
 * records each run in the store before it asks for the launch.
 *
 * One bad launch must not fail the others: tmux drops the rest of a list after a failing command.
 * After a failed list, the sessions carrying their key are done; every other launch of it runs
 * again alone, as before batching, and gets its own outcome (its own error).
 */
import { failpoint } from '../runtime/failpoints.js';

export interface LaunchRequest {
  /** The tmux session name, and the key tag a session launched whole carries. */
  session: string;
  key: string;
  /** The session's commands, each an argv, without separators. */
  commands: string[][];
}

interface Pending extends LaunchRequest {
  bytes: number;
  done: (err?: Error) => void;
}

export interface BatchRunner {
  /** Runs one tmux argv (a command list); throws the tmux error when a command failed. */
  run(args: string[]): Promise<void>;
  /** Every session on the server with its key tag once launched whole ('' for none); empty when no server runs. */
  sessionKeys(): Promise<Map<string, string>>;
}

/**
 * A command list argument as tmux reads it from its argv: an argument ending in `;` ends a command
 * there, so that `;` is written `\;` (which tmux turns back into `;`). No other character of an
 * argument is special on tmux's command line.
 */
export const listArg = (a: string): string => (a.endsWith(';') ? `${a.slice(0, -1)}\\;` : a);

/** Joins commands into one argv with `;` separators, each argument kept whole. */
export function commandList(commands: string[][]): string[] {
  return commands.flatMap((c, i) => [...(i ? [';'] : []), ...c.map(listArg)]);
}

const argvBytes = (args: string[]) => args.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0);
/** A launch's share of a list: its commands and the `;` before them. */
const ownBytes = (r: LaunchRequest) => argvBytes(commandList(r.commands)) + 2;

export class LaunchBatcher {
  private readonly queue: Pending[] = [];
  private running = false;
  /** Lists run and launches in them, for the cost tests and benchmarks. */
  readonly stats = { lists: 0, launches: 0, retriedAlone: 0 };
  private readonly setupBytes: number;

  /**
   * @param setup the commands every list starts with (server options and hooks: idempotent)
   * @param maxBytes the most a list's argv may hold (tmux refuses a client command much over 16 KB)
   */
  constructor(
    private readonly runner: BatchRunner,
    private readonly setup: string[][],
    private readonly maxBytes: number,
  ) {
    this.setupBytes = argvBytes(commandList(setup));
  }

  /** Bytes of a list holding only this launch: more than `maxBytes` cannot be launched at all. */
  aloneBytes(r: LaunchRequest): number {
    return this.setupBytes + ownBytes(r);
  }

  /** Resolves once the session is created and tagged; rejects with this launch's own tmux error. */
  launch(r: LaunchRequest): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...r, bytes: ownBytes(r), done: (err) => (err ? reject(err) : resolve()) });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      // An idle batcher starts the tmux client at once, in the turn the launch was asked for: between
      // the run recorded in the store and tmux's client started, a crash leaves a run with no session
      // (restarted after the launch grace), so that window is kept as short as before batching. What
      // arrives while a list runs goes together in the next one.
      while (this.queue.length) await this.runList(this.take());
    } finally {
      this.running = false;
    }
  }

  /** As many queued launches, oldest first, as fit in one list (at least one). */
  private take(): Pending[] {
    let bytes = this.setupBytes;
    let n = 0;
    while (n < this.queue.length && (n === 0 || bytes + this.queue[n].bytes <= this.maxBytes)) {
      bytes += this.queue[n].bytes;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async runList(batch: Pending[]): Promise<void> {
    this.stats.lists++;
    this.stats.launches += batch.length;
    const args = commandList([...this.setup, ...batch.flatMap((b) => b.commands)]);
    const sent = this.runner.run(args);
    failpoint('tmux-launch-list-sent');
    try {
      await sent;
      for (const b of batch) b.done();
      return;
    } catch (err) {
      if (batch.length === 1) return batch[0].done(err as Error);
    }
    // Which launches of the failed list ran whole: those whose session carries their key (sessionKeys).
    const keys = await this.runner.sessionKeys().catch(() => new Map<string, string>());
    for (const b of batch) {
      if (keys.get(b.session) === b.key) {
        b.done();
        continue;
      }
      this.stats.retriedAlone++;
      await this.runner.run(commandList([...this.setup, ...b.commands])).then(
        () => b.done(),
        (e: Error) => b.done(e),
      );
    }
  }
}
