/**
 * A minimal tmux driver for tests that run an interactive CLI in a pane: a private server
 * (`tmux -L <socket>`, so nothing leaks into the user's tmux), a fixed window size (so captures
 * are comparable), `remain-on-exit` (so the exit status can be read), bracketed paste through a
 * uniquely named buffer, and polling helpers.
 *
 * Deliberately independent of controller/observers/tmux.ts: tests use it to produce ground
 * truth about the agent CLI, not to test the controller's own tmux code.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface PaneStart {
  /** tmux server socket name (`-L`); use a unique one per test run. */
  socket: string;
  session: string;
  cwd: string;
  /** Program and arguments, run directly (no shell). */
  argv: string[];
  /**
   * The complete environment of the program (it is started through `env -i`, so nothing else
   * leaks in). Include PATH, and TERM (tmux itself advertises `tmux-256color` or `screen`).
   */
  env: Record<string, string>;
  width?: number;
  height?: number;
  /**
   * Record the program's exit status in this file through a small `sh` wrapper (then the pane's
   * process is that shell and the program is its child: see {@link TmuxPane.programPid}).
   * tmux's own `pane_dead_status` was found empty here even for plain `exit 3`.
   */
  exitFile?: string;
}

export interface PaneState {
  dead: boolean;
  exitStatus?: number;
  /** Signal number when the program was killed by a signal (tmux's pane_dead_signal, if it has it). */
  exitSignal?: number;
  pid: number;
  currentCommand: string;
  inMode: boolean;
}

let bufferSeq = 0;

export class TmuxPane {
  private constructor(
    readonly socket: string,
    readonly target: string,
    readonly exitFile?: string,
  ) {}

  /** Run a tmux command on this pane's server; returns stdout. */
  tmux(args: string[], input?: string): string {
    return execFileSync('tmux', ['-u', '-L', this.socket, ...args], {
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TMUX: '' },
    });
  }

  /** Start a detached session running `argv` (server started with `-f /dev/null`). */
  static start(spec: PaneStart): TmuxPane {
    const pane = new TmuxPane(spec.socket, `${spec.session}:0.0`, spec.exitFile);
    const envArgs = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
    execFileSync(
      'tmux',
      [
        '-u',
        '-L',
        spec.socket,
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        spec.session,
        '-x',
        String(spec.width ?? 120),
        '-y',
        String(spec.height ?? 40),
        '-c',
        spec.cwd,
        // remain-on-exit must be set before the program can exit, so start a placeholder, set it, respawn.
        'sleep',
        '3600',
      ],
      { stdio: 'pipe', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TMUX: '' } },
    );
    // The server is private to the caller, so global options are fine.
    pane.tmux(['set-option', '-g', 'remain-on-exit', 'on']);
    // A handler (not an ignore) for the signals, so the shell outlives the program but the program
    // still gets default dispositions; the status is written even when the program is killed.
    const argv = spec.exitFile
      ? [
          '/bin/sh',
          '-c',
          'trap : INT TERM; "$@"; code=$?; printf "%s\\n" "$code" > "$0"; exit "$code"',
          spec.exitFile,
          ...spec.argv,
        ]
      : spec.argv;
    pane.tmux(['respawn-pane', '-k', '-t', pane.target, '-c', spec.cwd, 'env', '-i', ...envArgs, ...argv]);
    return pane;
  }

  /** The visible screen (`capture-pane -p`); `ansi` keeps escape sequences (`-e`). */
  capture(opts: { ansi?: boolean; history?: boolean } = {}): string {
    const args = ['capture-pane', '-p', '-t', this.target];
    if (opts.ansi) args.push('-e');
    if (opts.history) args.push('-S', '-');
    return this.tmux(args);
  }

  /** Paste text with bracketed paste (`paste-buffer -p`) through a uniquely named buffer. */
  paste(text: string): void {
    const name = `orchctl-test-${process.pid}-${++bufferSeq}`;
    this.tmux(['load-buffer', '-b', name, '-'], text);
    this.tmux(['paste-buffer', '-p', '-d', '-b', name, '-t', this.target]);
  }

  /** `send-keys` with tmux key names (e.g. 'Enter', 'Escape', 'C-c', 'Down', '1'). */
  keys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', this.target, ...keys]);
  }

  state(): PaneState {
    const out = this.tmux([
      'display-message',
      '-p',
      '-t',
      this.target,
      '#{pane_dead}\t#{pane_dead_status}\t#{pane_pid}\t#{pane_current_command}\t#{pane_in_mode}\t#{pane_dead_signal}',
    ]).trim();
    const [dead, status, pid, cmd, inMode, signal] = out.split('\t');
    let recorded: number | undefined;
    if (dead === '1' && this.exitFile) {
      try {
        const text = readFileSync(this.exitFile, 'utf8').trim();
        if (text !== '') recorded = Number(text);
      } catch {
        // not written (the wrapper itself was killed)
      }
    }
    return {
      dead: dead === '1',
      ...(recorded !== undefined
        ? { exitStatus: recorded }
        : dead === '1' && status !== ''
          ? { exitStatus: Number(status) }
          : {}),
      ...(dead === '1' && signal !== undefined && signal !== '' ? { exitSignal: Number(signal) } : {}),
      pid: Number(pid),
      currentCommand: cmd,
      inMode: inMode === '1',
    };
  }

  /**
   * Poll the screen until `pred` holds; resolve with the capture. Rejects after `timeoutMs` with
   * the last screen in the message.
   */
  async waitFor(pred: RegExp | ((screen: string) => boolean), timeoutMs = 15_000, intervalMs = 100): Promise<string> {
    const test = typeof pred === 'function' ? pred : (s: string) => pred.test(s);
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      last = this.capture();
      if (test(last)) return last;
      if (Date.now() > deadline)
        throw new Error(`screen did not match ${String(pred)} within ${timeoutMs} ms; last screen:\n${last}`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** Pid of the program: the pane's process, or its child when started with `exitFile`. */
  programPid(): number | undefined {
    const { pid, dead } = this.state();
    if (dead) return undefined;
    if (!this.exitFile) return pid;
    try {
      const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim();
      const child = Number(out.split(/\s+/)[0]);
      return Number.isFinite(child) && child > 0 ? child : undefined;
    } catch {
      return undefined;
    }
  }

  /** Kill the whole private tmux server (all its sessions). */
  killServer(): void {
    try {
      this.tmux(['kill-server']);
    } catch {
      // already gone
    }
  }
}

/** Drop trailing blank lines and trailing spaces (tmux pads captures to the window height). */
export function trimCapture(screen: string): string {
  return screen
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\n+$/, '\n');
}
