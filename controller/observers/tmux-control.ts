/**
 * One long-lived tmux control-mode client (`tmux -C`) for the observe tick's periodic `list-panes`
 * (issue 29): at 1000 panes a `list-panes` process a second cost the controller a fork, execa's
 * per-call objects and a tmux client's start-up each time. Only constant command strings are
 * written to it (the caller's format is a constant), so no data is ever quoted into a tmux command;
 * everything else (launches, sends, kills) stays one `execa(tmux, [args])` process as before.
 *
 * A control client must be attached to a session: it attaches read-only, without output and
 * without a say in window sizes (`-f ignore-size,no-output,read-only`), to a session the caller
 * names, and leaves when that session goes (detach-on-destroy) or the server does.
 *
 * Crash-only: it is an optimisation and never the only way. A client that cannot start, exits,
 * answers with an error or does not answer within `timeoutMs` is killed and the call fails at once;
 * the caller then runs the command as its own process, and a new client is tried on a later call
 * (not sooner than `retryMs` after a failure). Killing the controller closes the client's stdin,
 * and tmux ends a control client whose input is gone — except one killed with a reply unread: tmux
 * 3.3a keeps that client, and a later `kill-server` never finishes (the server waits for it and
 * refuses every client meanwhile). So the first client a process starts first ends such leftovers:
 * control clients with this client's flags whose parent is gone (adopted by pid 1).
 */
import fs from 'node:fs';
import { execa, type ResultPromise } from 'execa';

export class ControlClientError extends Error {}

/** How this client attaches; a leftover of an earlier controller is known by the same flags. */
const FLAGS = ['ignore-size', 'no-output', 'read-only'];

const SPAWN = {
  stdin: 'pipe',
  stdout: 'pipe',
  stderr: 'ignore',
  buffer: false,
  reject: false,
  extendEnv: false,
} as const;

interface Pending {
  resolve(lines: string[]): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export interface ControlClientOptions {
  /** `tmux`, or a path. */
  binary: string;
  socket: string;
  env: Record<string, string>;
  /** A command not answered in this long fails (and the client is killed). */
  timeoutMs?: number;
  /** No new client sooner than this after one failed. */
  retryMs?: number;
  now?: () => number;
}

export class TmuxControlClient {
  private proc?: ResultPromise<typeof SPAWN & { env: Record<string, string> }>;
  private buf = '';
  /** Lines of the reply being read (between %begin and %end of a command this client sent). */
  private reply?: { head: string; lines: string[] };
  private readonly queue: Pending[] = [];
  private failedAt = Number.NEGATIVE_INFINITY;
  private readonly timeoutMs: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  /** Clients started, and commands answered through one (tests and benchmarks read them). */
  readonly stats = { started: 0, answered: 0, failed: 0, leftoversEnded: 0 };
  /** Ending an earlier controller's leftover clients, once, before the first start. */
  private leftovers?: Promise<void>;
  private leftoversDone = false;

  constructor(private readonly o: ControlClientOptions) {
    this.timeoutMs = o.timeoutMs ?? 5000;
    this.retryMs = o.retryMs ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /** Whether a client runs now. */
  get running(): boolean {
    return !!this.proc;
  }

  /** Whether a call now may start a client (none runs, and the last failure is `retryMs` old). */
  get mayStart(): boolean {
    return !this.proc && this.now() - this.failedAt >= this.retryMs;
  }

  /**
   * Runs `command` (a constant tmux command line, no data in it) and returns its output lines.
   * Starts a client attached to `session` first when none runs. Fails at once, for the caller to
   * run the command another way, when no client can be had or it does not answer.
   */
  run(command: string, session: () => string | undefined): Promise<string[]> {
    if (!this.proc) {
      const target = this.mayStart ? session() : undefined;
      if (!target) return Promise.reject(new ControlClientError('no control client'));
      if (!this.leftoversDone) {
        this.leftovers ??= this.endLeftovers().finally(() => (this.leftoversDone = true));
        return this.leftovers.then(() => this.run(command, session));
      }
      this.start(target);
    }
    return new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(`no answer in ${this.timeoutMs} ms`), this.timeoutMs);
      this.queue.push({ resolve, reject, timer });
      this.proc!.stdin.write(`${command}\n`);
    });
  }

  /** Ends the client (the controller stopping); calls in flight fail. */
  close(): void {
    this.end(new ControlClientError('control client closed'));
  }

  /** Ends the control clients an earlier, killed controller left attached (see the top of this file). */
  private async endLeftovers(): Promise<void> {
    const r = await execa(this.o.binary, ['-L', this.o.socket, 'list-clients', '-F', '#{client_pid} #{client_flags}'], {
      reject: false,
      env: this.o.env,
      extendEnv: false,
    });
    if (r.exitCode !== 0) return;
    for (const line of String(r.stdout).split('\n')) {
      const [pid, flags = ''] = line.split(' ');
      const has = new Set(flags.split(','));
      if (!has.has('control-mode') || !FLAGS.every((f) => has.has(f)) || !orphaned(Number(pid))) continue;
      try {
        process.kill(Number(pid), 'SIGKILL'); // nothing reads it: no need to let it finish anything
        this.stats.leftoversEnded++;
      } catch {
        // gone meanwhile
      }
    }
  }

  private start(target: string): void {
    this.stats.started++;
    this.buf = '';
    this.reply = undefined;
    const proc = execa(
      this.o.binary,
      ['-L', this.o.socket, '-C', 'attach-session', '-t', target, '-f', FLAGS.join(',')],
      { ...SPAWN, env: this.o.env },
    );
    this.proc = proc;
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (d: string) => this.data(d));
    proc.stdin.on('error', () => undefined); // a client gone: its exit below says so
    void proc.then(() => {
      if (this.proc === proc) this.fail('the control client exited');
    });
  }

  private data(d: string): void {
    this.buf += d;
    for (let i = this.buf.indexOf('\n'); i >= 0; i = this.buf.indexOf('\n')) {
      const line = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 1);
      this.line(line);
    }
  }

  /**
   * A reply is `%begin <time> <number> <flags>`, its lines, then `%end` or `%error` with the same
   * three fields; flags 1 marks a command this client sent (the attach's own reply has 0).
   * Notifications (`%session-changed`, `%exit`, ...) come only between replies.
   */
  private line(line: string): void {
    if (this.reply) {
      const [word, ...rest] = line.split(' ');
      if ((word === '%end' || word === '%error') && rest.join(' ') === this.reply.head) {
        const { lines } = this.reply;
        this.reply = undefined;
        if (line.endsWith(' 1')) this.answer(word === '%end', lines);
      } else this.reply.lines.push(line);
    } else if (line.startsWith('%begin ')) this.reply = { head: line.slice(7), lines: [] };
    else if (line.startsWith('%exit')) this.fail('the control client was detached');
  }

  private answer(ok: boolean, lines: string[]): void {
    const p = this.queue.shift();
    if (!p) return;
    clearTimeout(p.timer);
    if (ok) {
      this.stats.answered++;
      p.resolve(lines);
    } else {
      p.reject(new ControlClientError(`tmux: ${lines.join(' ').trim()}`));
      this.fail('a command failed');
    }
  }

  private fail(why: string): void {
    this.stats.failed++;
    this.failedAt = this.now();
    this.end(new ControlClientError(why));
  }

  private end(e: Error): void {
    const proc = this.proc;
    this.proc = undefined;
    this.reply = undefined;
    for (const p of this.queue.splice(0)) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    if (proc) {
      proc.stdin.destroy();
      proc.kill('SIGKILL');
    }
  }
}

/**
 * Whether a process's parent is gone (it was adopted by pid 1), from /proc; false where there is no
 * /proc or the process is not there: a client that cannot be shown orphaned is left alone.
 */
function orphaned(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === '1';
  } catch {
    return false;
  }
}
