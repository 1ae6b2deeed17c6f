/**
 * tmux on a dedicated socket (`tmux -L <socket>`). Every call is an argument array handed to
 * execa — never a shell string built from data. Observation is batched: `listPanes()` is one
 * `list-panes -a` for every session on the server, whatever their number.
 *
 * Sessions are tagged with the owning object's uid, so a restarted controller adopts them instead
 * of starting duplicates, and with the store's identity, so a controller whose store was lost or
 * replaced never mistakes them for its own (they are orphans: reported, never killed
 * automatically). The tags (uid, run key, store, epoch) are one session option, `@orchctl-tags`;
 * sessions launched by an older orchctl carry them as separate options and are read the same
 * way (TAGS_FORMAT). `remain-on-exit` keeps a dead
 * pane around so its exit status can be read (`pane_dead_status`), and a `pane-died` hook
 * signals the tmux channel `orchctl-pane-died`, which the controller waits on to notice exits
 * at once instead of by polling.
 *
 * No agent inherits the controller's environment (docs/agents.md). The server copies the
 * environment of the client that starts it into its global environment, which every pane starts
 * from, so every tmux client here runs with only the base (api/environment.ts) plus TERM and
 * TMUX_TMPDIR (where the socket is); each agent is then given its own variables explicitly. A
 * server found already running (started by an older orchctl or by hand) has its global
 * environment cut back to the same names once, before this process's first launch.
 */
import { execa, type ResultPromise } from 'execa';
import { BASE_ENV, pickEnv } from '../api/environment.js';
import { commandList, LaunchBatcher } from './launch-batch.js';
import { type ControlClientOptions, TmuxControlClient } from './tmux-control.js';

/**
 * A session's tags, `uid key store epoch` (space-separated: none of them can hold a space). A launch
 * puts them in the new session's environment (ORCHCTL_TAGS, `new-session -e`), which tmux formats read
 * when no option of that name exists: no command of their own. Each `set-option` costs the server a
 * walk over all its sessions (options_push_changes in tmux 3.3a), so a burst of N launches that set
 * an option each costs O(N²) (issue 29). A session re-tagged since (tagStore), or one an older
 * orchctl launched, carries them in the `@orchctl-tags` option, which wins.
 */
export const TAGS_OPTION = '@orchctl-tags';
export const TAGS_ENV = 'ORCHCTL_TAGS';
/** Where pipe-pane reads the output log's path: the session's environment, as the tags. */
export const OUTPUT_LOG_ENV = 'ORCHCTL_OUTPUT_LOG';
/** The tags as separate options, as an older orchctl set them (still read: TAGS_FORMAT). */
export const UID_OPTION = '@orchctl-uid';
export const KEY_OPTION = '@orchctl-key';
export const STORE_OPTION = '@orchctl-store';
/** The binding epoch a run was started under (several nodes: a node's stale-run sweep reads it). */
export const EPOCH_OPTION = '@orchctl-epoch';
/**
 * A tmux format giving a session's tags as `uid key store epoch` whichever orchctl launched it: the
 * `@orchctl-tags` option, else the session's ORCHCTL_TAGS, else the older separate options (`   `
 * for a session that is not ours). A tmux format falls back to the server's global environment too:
 * the controller scrubs that one (scrubEnvironment) and never starts a server with ORCHCTL_TAGS set.
 */
export const TAGS_FORMAT =
  `#{?${TAGS_OPTION},#{${TAGS_OPTION}},#{?${TAGS_ENV},#{${TAGS_ENV}},` +
  `#{${UID_OPTION}} #{${KEY_OPTION}} #{${STORE_OPTION}} #{${EPOCH_OPTION}}}}`;
/** Set once on a server when a launch list has set its options and hooks up (SERVER_SETUP). */
const SETUP_MARKER = '@orchctl-setup';
/** Set on a pane by the node's watchdog (app/watchdog.ts) before it hangs up its run. */
export const FUSED_OPTION = '@orchctl-fused';
export const DIED_CHANNEL = 'orchctl-pane-died';
/** tmux refuses a client command much over 16 KB ("command too long"); leave room for the log path. */
const MAX_COMMAND_BYTES = 15_000;

const FIELDS = [
  'session_name',
  TAGS_FORMAT,
  'pane_id',
  'pane_pid',
  'pane_dead',
  'pane_dead_status',
  'pane_dead_signal',
  'session_created',
  'pane_in_mode',
  'pane_current_command',
  'pid',
  'pane_dead_time',
  FUSED_OPTION,
] as const;
const FORMAT = FIELDS.map((f) => (f.startsWith('#{') ? f : `#{${f}}`)).join('\x1f');
/** The same, as one control-mode command line: FORMAT is a constant without a quote, so quoting it is safe. */
const LIST_PANES_COMMAND = `list-panes -a -F '${FORMAT}'`;

export interface PaneInfo {
  session: string;
  uid: string; // '' when the session is not ours
  key: string;
  paneId: string;
  pid: number;
  dead: boolean;
  exitStatus?: number;
  exitSignal?: number;
  /** When the pane's process ended, unix seconds (tmux ≥ 3.3; undefined on older tmux or while alive). */
  deadAt?: number;
  created: number; // unix seconds
  inMode: boolean;
  currentCommand: string;
  /** The tmux server's pid. */
  serverPid: number;
  /** The identity of the store whose controller launched it ('' for none or an older orchctl). */
  store: string;
  /** The binding epoch its run was started under ('' when unbound, or launched by an older orchctl). */
  epoch: string;
  /** The node's fuse hung up its run (the watchdog tagged it first). */
  fused: boolean;
}

export interface LaunchSpec {
  session: string;
  cwd: string;
  argv: string[]; // executed directly by tmux (execvp), at least two elements
  env: Record<string, string>;
  tags: { uid: string; key: string; store?: string; epoch?: number };
  width?: number;
  height?: number;
  /** The window's name once its output pipe is open (default: the session's name). */
  window?: string;
}

export class TmuxError extends Error {}

/** A `list-panes` line (FIELDS joined by \x1f) as a frozen PaneInfo: shared by the snapshots that saw it. */
function parsePane(line: string): PaneInfo {
  const f = line.split('\x1f');
  const dead = f[4] === '1';
  return Object.freeze({
    session: f[0],
    ...parseTags(f[1] ?? ''),
    paneId: f[2],
    pid: Number(f[3]),
    dead,
    exitStatus: dead && f[5] !== '' ? Number(f[5]) : undefined,
    exitSignal: dead && f[6] !== '' ? Number(f[6]) : undefined,
    created: Number(f[7]),
    inMode: f[8] === '1',
    currentCommand: f[9] ?? '',
    serverPid: Number(f[10]),
    fused: !!f[12],
    ...(dead && /^\d+$/.test(f[11] ?? '') ? { deadAt: Number(f[11]) } : {}),
  });
}

/** A session's tags: what TAGS_FORMAT expands to, or what `@orchctl-tags` holds ('' for each one missing). */
export interface SessionTags {
  uid: string;
  key: string;
  store: string;
  epoch: string;
}

export function parseTags(s: string): SessionTags {
  const [uid = '', key = '', store = '', epoch = ''] = s.split(' ');
  return { uid, key, store, epoch };
}

/** The value of `@orchctl-tags`; a tag holding a space (never: they are validated names and numbers) is refused. */
export function formatTags(t: SessionTags): string {
  const values = [t.uid, t.key, t.store, t.epoch];
  if (values.some((v) => /\s/.test(v))) throw new TmuxError(`a session tag holds white space: ${JSON.stringify(t)}`);
  return values.join(' ');
}

/** The environment of every tmux client (and so of a server one of them starts). */
export function tmuxClientEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return pickEnv([...BASE_ENV, 'TERM', 'TMUX_TMPDIR'], env);
}

export class Tmux {
  /** Number of tmux processes started; the benchmarks read it. */
  spawned = 0;
  /** The last `list-panes` lines, parsed; a pane parses again only when its line changed. */
  private lastPanes = new Map<string, PaneInfo>();
  private readonly env = tmuxClientEnv();
  /** Cutting back the global environment of a server that was already running; every launch waits for it. */
  private scrubbed?: Promise<void>;
  /** Launches gathered into shared tmux processes; `launches.stats` counts them. */
  readonly launches = new LaunchBatcher(
    {
      run: async (args) => void (await this.run(args)),
      sessionKeys: () => this.sessionKeys(),
    },
    SERVER_SETUP,
    MAX_COMMAND_BYTES,
  );

  /** The periodic list-panes' control-mode client (a long-running controller's only; tmux-control.ts). */
  readonly control?: TmuxControlClient;

  constructor(
    readonly socket: string,
    private readonly binary = 'tmux',
    opts: { controlClient?: boolean | Pick<ControlClientOptions, 'timeoutMs' | 'retryMs'> } = {},
  ) {
    const c = opts.controlClient;
    if (c) this.control = new TmuxControlClient({ binary, socket, env: this.env, ...(c === true ? {} : c) });
  }

  /** Ends the control client, if any (the controller stopping). */
  close(): void {
    this.control?.close();
  }

  async run(
    args: string[],
    opts: { input?: string; reject?: boolean } = {},
  ): Promise<{ stdout: string; stderr: string; exitCode: number }> {
    this.spawned++;
    const r = await execa(this.binary, ['-L', this.socket, ...args], {
      reject: false,
      input: opts.input,
      stripFinalNewline: false,
      env: this.env,
      extendEnv: false,
    });
    if (r.exitCode !== 0 && opts.reject !== false) {
      // Name the command that matters (a launch is a list starting with start-server) and say why
      // it failed even when tmux never ran (then there is no exit code, only execa's reason).
      const verbs = args.filter((a) => /^[a-z]+-[a-z-]+$/.test(a));
      const verb = verbs.includes('new-session') ? 'new-session' : (verbs[0] ?? args[0]);
      const why = String(r.stderr).trim() || (r.exitCode === undefined ? r.shortMessage : `exit ${r.exitCode}`);
      throw new TmuxError(`tmux ${verb}: ${why}`);
    }
    return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode ?? -1 };
  }

  /** All panes of all sessions on our server; empty when no server runs. */
  async listPanes(): Promise<{ serverRunning: boolean; panes: PaneInfo[] }> {
    // Through the control client when one runs or can be started (attached to a session of the
    // last listing); any failure of it falls back to a list-panes process, this call.
    let lines = this.control
      ? await this.control.run(LIST_PANES_COMMAND, () => this.someSession()).catch(() => undefined)
      : undefined;
    if (!lines) {
      const r = await this.run(['list-panes', '-a', '-F', FORMAT], { reject: false });
      if (r.exitCode !== 0) {
        if (/no server running|error connecting|no sessions/i.test(r.stderr))
          return { serverRunning: false, panes: [] };
        // A server with no sessions left.
        if (/no current target/i.test(r.stderr)) return { serverRunning: true, panes: [] };
        throw new TmuxError(`tmux list-panes: ${r.stderr.trim()}`);
      }
      lines = r.stdout.split('\n');
    }
    // A line the last call also returned is that pane unchanged: its parsed (frozen) object is
    // reused, so an idle server's 1000 panes cost no parse (issue 29: ~17 allocations a pane a tick).
    // A new line is copied before it is parsed: a line split from the output, and every field split
    // from it, is a slice that keeps the whole output (~90 KB at 1000 panes) alive for as long as the
    // pane object lives — 56 outputs (4.8 MB, a tenth of the heap) held by 1000 idle panes (issue 29).
    const panes: PaneInfo[] = [];
    const parsed = new Map<string, PaneInfo>();
    for (const line of lines) {
      if (!line) continue;
      const p = this.lastPanes.get(line) ?? parsePane(Buffer.from(line).toString());
      parsed.set(line, p);
      panes.push(p);
    }
    this.lastPanes = parsed;
    return { serverRunning: true, panes };
  }

  /** A pane of the last listing whose session the control client can attach to (its pane id targets it). */
  private someSession(): string | undefined {
    for (const p of this.lastPanes.values()) if (!p.dead) return p.paneId;
    return undefined;
  }

  /**
   * Creates a detached session running `argv`, tagged with the owner's uid. One tmux command list:
   * server options, the session, its tags and output piping happen together, so even an agent that
   * exits at once leaves its exit status behind. Launches asked for together share one tmux
   * process (launch-batch.ts); each still resolves or fails on its own.
   */
  async launch(spec: LaunchSpec, outputLog?: string): Promise<void> {
    if (spec.argv.length < 2)
      throw new TmuxError('launch needs at least two argv elements so tmux executes them without a shell');
    // tmux's #{q:} escapes the shell's special characters but not white space other than ' ': a tab or
    // a newline in the path would split pipe-pane's command. orchctl's own paths hold none.
    if (outputLog !== undefined && /[\x00-\x1f\x7f]/.test(outputLog))
      throw new TmuxError(`the output log path holds a control character: ${JSON.stringify(outputLog)}`);
    const request = { session: spec.session, key: spec.tags.key, commands: sessionCommands(spec, outputLog) };
    const bytes = this.launches.aloneBytes(request);
    if (bytes > MAX_COMMAND_BYTES)
      throw new TmuxError(
        `tmux new-session: the launch command is ${bytes} bytes, more than tmux accepts (about 16 KB); ` +
          "the agent's command, args and (with promptDelivery argument) the prompt are part of it — " +
          'use paste or stdin delivery for long prompts',
      );
    await this.scrubEnvironment();
    await this.launches.launch(request);
  }

  /**
   * Every session on the server with its run key once launched whole, '' for none; empty when no
   * server runs. A session has its key from its first command (new-session -e): one that asked for
   * an output log was launched whole only once its pipe is open, which its last command does.
   */
  private async sessionKeys(): Promise<Map<string, string>> {
    const format = `#{session_name}\x1f${TAGS_FORMAT}\x1f#{?${OUTPUT_LOG_ENV},#{pane_pipe},1}`;
    const r = await this.run(['list-sessions', '-F', format], { reject: false });
    const keys = new Map<string, string>();
    if (r.exitCode !== 0) return keys;
    for (const line of r.stdout.split('\n')) {
      const [name, tags, whole] = line.split('\x1f');
      if (name) keys.set(name, whole === '1' ? parseTags(tags ?? '').key : '');
    }
    return keys;
  }

  /**
   * Cuts a running server's global environment back to the clean one, once per process. A node
   * does it as it starts, so that its first launch after a restart is not delayed by it (a crash
   * between recording a run and starting it is what that delay would widen).
   */
  scrubEnvironment(): Promise<void> {
    this.scrubbed ??= this.scrubGlobalEnv();
    return this.scrubbed;
  }

  /**
   * Unsets every variable of a running server's global environment that a server started by this
   * process would not have (PWD, which tmux adds, stays). Once per process: a server that is not
   * running yet is started by a launch, with the clean environment.
   */
  private async scrubGlobalEnv(): Promise<void> {
    const r = await this.run(['show-environment', '-g'], { reject: false });
    if (r.exitCode !== 0) return; // no server yet: the launch starts one, clean
    const keep = new Set([...Object.keys(this.env), 'PWD']);
    // Lines are NAME=value, or -NAME for a variable marked for removal; a value's own newlines give
    // lines whose "names" are unset harmlessly, whatever they are.
    const names = new Set<string>();
    for (const line of r.stdout.split('\n')) {
      const name = line.replace(/^-/, '').split('=')[0];
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !keep.has(name)) names.add(name);
    }
    let batch: string[] = [];
    let bytes = 0;
    for (const name of names) {
      if (batch.length) batch.push(';');
      batch.push('set-environment', '-g', '-u', name);
      bytes += name.length + 25;
      if (bytes > MAX_COMMAND_BYTES - 200) {
        await this.run(batch, { reject: false });
        batch = [];
        bytes = 0;
      }
    }
    if (batch.length) await this.run(batch, { reject: false });
  }

  /**
   * Marks a session as launched under the store `uid` (an adopted session of an older orchctl, or
   * after a restore): its tags are read whichever way they were set and written back as one option.
   */
  async tagStore(name: string, uid: string): Promise<void> {
    const r = await this.run(['display-message', '-p', '-t', `=${name}:`, TAGS_FORMAT], { reject: false });
    const tags = parseTags(r.stdout.replace(/\n$/, ''));
    if (r.exitCode !== 0 || !tags.uid) return;
    await this.run(['set-option', '-t', `=${name}:`, TAGS_OPTION, formatTags({ ...tags, store: uid })], {
      reject: false,
    });
  }

  async hasSession(name: string): Promise<boolean> {
    return (await this.run(['has-session', '-t', `=${name}`], { reject: false })).exitCode === 0;
  }

  /**
   * Kills a session. Its output pipe is closed first, as a separate step: killing a session
   * with an open pipe-pane while other panes are busy was seen to close a *different* pane's
   * pty in tmux 3.3a (pane marked dead with no exit status while its process still ran).
   */
  async kill(name: string): Promise<void> {
    await this.run(['pipe-pane', '-t', `=${name}:`], { reject: false });
    await this.run(['kill-session', '-t', `=${name}`], { reject: false });
  }

  async sendKeys(target: string, keys: string[]): Promise<void> {
    if (keys.length) await this.run(['send-keys', '-t', target, ...keys]);
  }

  async sendLiteral(target: string, text: string): Promise<void> {
    await this.run(['send-keys', '-t', target, '-l', '--', text]);
  }

  /**
   * Pastes text through a uniquely named buffer (bracketed paste when the program asked for it),
   * then deletes the buffer. The text travels on stdin, never on a command line.
   */
  async pasteText(target: string, text: string, bufferName: string): Promise<void> {
    await this.run(
      ['load-buffer', '-b', bufferName, '-', ';', 'paste-buffer', '-p', '-d', '-b', bufferName, '-t', target],
      { input: text },
    );
  }

  /** Whether the pane is in a mode (copy mode, a chooser), where it takes no input. */
  async inMode(target: string): Promise<boolean> {
    const r = await this.run(['display-message', '-p', '-t', target, '#{pane_in_mode}'], { reject: false });
    return r.stdout.trim() === '1';
  }

  /** The pane's text (no escape sequences), with wrapped lines joined; `lines` from the end of history. */
  async capture(target: string, lines = 200): Promise<string> {
    const r = await this.run(['capture-pane', '-p', '-J', '-S', `-${lines}`, '-t', target], { reject: false });
    return r.exitCode === 0 ? r.stdout : '';
  }

  async version(): Promise<string> {
    this.spawned++;
    const r = await execa(this.binary, ['-V'], { reject: false });
    return String(r.stdout)
      .trim()
      .replace(/^tmux\s+/, '');
  }

  async killServer(): Promise<void> {
    await this.run(['kill-server'], { reject: false });
  }

  /** A long-lived `wait-for` on the pane-died channel; resolves when any pane dies or the server goes. */
  waitForPaneDied(): ResultPromise {
    this.spawned++;
    return execa(this.binary, ['-L', this.socket, 'wait-for', DIED_CHANNEL], {
      reject: false,
      env: this.env,
      extendEnv: false,
    });
  }
}

/** The server set-up a launch list makes sure of: options and hooks, the marker last. */
const SETUP_COMMANDS = [
  'set-option -g remain-on-exit on',
  'set-option -g history-limit 5000',
  'set-option -g exit-empty off',
  `set-hook -g pane-died "wait-for -S ${DIED_CHANNEL}"`,
  `set-hook -g session-closed "wait-for -S ${DIED_CHANNEL}"`,
  `set-option -g ${SETUP_MARKER} 1`,
].join(' ; ');
/** Empty once the set-up ran on this server and its options still hold, else 1 (a flag shows as 0 or 1). */
const SETUP_DUE =
  `#{?#{&&:#{${SETUP_MARKER}},#{&&:#{==:#{remain-on-exit},on},` +
  '#{&&:#{==:#{history-limit},5000},#{==:#{exit-empty},0}}}},,1}';

/**
 * What every launch list starts with: the server, then its set-up only where it is due. Every
 * `set-option` and `set-hook` costs the server a walk over all its sessions (options_push_changes in
 * tmux 3.3a), so five of them in each list of a burst cost more than the sessions' own options; the
 * set-up is a constant tmux command string (no data in it), run by `if-shell -F` — a format, no
 * shell — when the marker is missing or an option was changed since (a server restarted between two
 * lists, or one an older orchctl or a person started).
 */
const SERVER_SETUP: string[][] = [
  ['-f', '/dev/null', 'start-server'],
  ['if-shell', '-F', SETUP_DUE, SETUP_COMMANDS],
];

/**
 * One session's commands: the session, then its output pipe. The session's tags and the output log's
 * path go in as the new session's environment (ORCHCTL_TAGS, ORCHCTL_OUTPUT_LOG; the launch wrapper
 * unsets both before the agent starts), the window's name (what a person attaching sees) as `-n`:
 * no `set-option` or `rename-window` of their own, each a walk over all sessions in tmux 3.3a
 * (issue 29). pipe-pane's command is constant: tmux quotes the path for the shell itself
 * (#{q:ORCHCTL_OUTPUT_LOG}), so no data becomes code.
 */
function sessionCommands(spec: LaunchSpec, outputLog?: string): string[][] {
  const { uid, key, store = '', epoch } = spec.tags;
  const env: Record<string, string> = {
    ...spec.env,
    [TAGS_ENV]: formatTags({ uid, key, store, epoch: epoch === undefined ? '' : String(epoch) }),
    ...(outputLog !== undefined ? { [OUTPUT_LOG_ENV]: outputLog } : {}),
  };
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const target = `=${spec.session}:`; // the trailing ':' makes it an exact session match for any target type
  // -c and -n are expanded as tmux formats: '#' must be doubled to stay literal (-e values are not).
  const literal = (v: string) => v.replace(/#/g, '##');
  const newSession = [
    ...['new-session', '-d', '-s', spec.session, '-c', literal(spec.cwd), '-n', literal(spec.window ?? spec.session)],
    ...['-x', String(spec.width ?? 200), '-y', String(spec.height ?? 50), ...envArgs, '--', ...spec.argv],
  ];
  if (outputLog === undefined) return [newSession];
  return [newSession, ['pipe-pane', '-o', '-t', target, `exec cat >> #{q:${OUTPUT_LOG_ENV}}`]];
}

/**
 * The tmux argv of one launch list holding `launches` (the server's set-up, then each session's
 * commands), as the launch batcher sends it: for the benchmarks' floor of what launches cost tmux.
 */
export function launchListArgs(launches: { spec: LaunchSpec; outputLog?: string }[]): string[] {
  return commandList([...SERVER_SETUP, ...launches.flatMap((l) => sessionCommands(l.spec, l.outputLog))]);
}

/** tmux session names may not contain '.' or ':'; ours are built only from validated names and a uid. */
export function tmuxSessionName(namespace: string, name: string, uid: string): string {
  return `${namespace}_${name}_${uid.slice(0, 8)}`;
}
