/**
 * Performs the session plan's effects at the edge — tmux, files, git, the store, the agent's
 * driver — and reports what came of them as outcomes for the next plan step. Deliveries and
 * dialog answers run beside the loop (they wait for the agent) and bring the session back when
 * they finish. Secrets (the Agent's and the session's env values) stay here, between preparing a
 * run and launching it: they never enter the plan's data.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentSession, AgentSpec, EnvVar } from '../../api/kinds.js';
import type { SessionMetricsHooks } from '../../api/metrics-hooks.js';
import { BASE_ENV, pickEnv } from '../../api/environment.js';
import { registerSecret, SECRET_NAME } from '../../api/redact.js';
import { ownedBy } from '../../api/status-fields.js';
import { deliverKeys, deliverText, type DeliveryResult, sanitizePaste } from '../../agents/delivery.js';
import { profileFor } from '../../agents/detection.js';
import { driverFor } from '../../agents/drivers.js';
import { EnvSourceError, resolveEnv, writePrivateEnv } from '../../agents/env.js';
import { buildLaunch, composePrompt } from '../../agents/launch.js';
import { REPORT_PROTOCOL } from '../../agents/report-protocol.js';
import { paneTargetFor, sendToSession, showing, textDeliveryFor } from '../../agents/send.js';
import { type EventNote, type EventRecorder, isEventRace } from '../../client/events.js';
import { writeOwnedStatus } from '../../client/status.js';
import type { AgentFeed } from '../../observers/agent-feed.js';
import type { AuditLog } from '../../observers/audit.js';
import type { GitObserver } from '../../observers/git.js';
import type { PaneObserver } from '../../observers/panes.js';
import { tmuxSessionName, type Tmux } from '../../observers/tmux.js';
import {
  createWorkspace,
  logLine,
  logLines,
  readResult,
  readTail,
  type RunWorkspace,
  runWorkspace,
  writeState,
} from '../../observers/workspace.js';
import type { Logger } from '../../runtime/log.js';
import type { EventLogs } from '../../store/eventlog.js';
import { retryOnConflict } from '../../store/retry.js';
import type { Store, WriteOp } from '../../store/store.js';
import type { Actuator, Effect, Outcome, PreparedRun, SettledRun } from './effects.js';
import { isDirectory } from './observe.js';
import { outputTail } from './output.js';
import { lastCheckpointSummary, readHandoff } from '../../observers/context-files.js';
import { HOOKS_FILE } from '../../agents/hook-entry.js';
import { RESTARTED_AT_ANNOTATION, RESTART_NOTE_ANNOTATION, RESTART_REASON_ANNOTATION } from '../../api/autopilot.js';
import { isApiError } from '../../api/errors.js';
import { OneOffReason } from '../../api/event-reasons.js';
import { restartRequested } from './decide.js';
import { rehydratePrompt } from './rehydrate.js';
import { MessageDeliveries } from './message-delivery.js';

export interface ActuatorDeps {
  store: Store;
  /**
   * Where a pass's own writes go, the pass going on from what they stored (the finalizer, the record
   * of a launch, the pass's one status write): the controller does not wake for their echoes
   * (runtime/own-writes.ts). Background writes, whose results no pass has seen, go to `store`.
   */
  passStore?: Store;
  tmux: Tmux;
  panes: PaneObserver;
  git: GitObserver;
  recorder: EventRecorder;
  audit: AuditLog;
  log: Logger;
  logs: EventLogs;
  feed: AgentFeed;
  home: string;
  storeUid: string;
  /** argv of `orchctl hook` (absolute node and bin paths), for agents that report through hooks. */
  hookCommand: string[];
  /** Brings a key back (when a background delivery finishes). */
  enqueue: (key: string) => void;
  metrics?: SessionMetricsHooks;
  /** Files whose changes should bring `key` back at once (hook file, transcript). */
  watch?: (key: string, files: string[]) => void;
  /** The last evaluation, as a "Previous run assessment" section for the next run's prompt. */
  resumeNotes?: (s: AgentSession) => string | undefined;
  /** Drops the observer's per-run memory. */
  forget: (key: string, workspace?: string) => void;
}

export class SessionActuator implements Actuator {
  private readonly deliveries = new Map<string, DeliveryResult | 'pending'>();
  /** Continue messages of paused runs (pause.ts), by `key#run`. */
  private readonly resumes = new Map<string, DeliveryResult | 'pending'>();
  private readonly answering = new Set<string>();
  /** A prepared run's private environment, until its launch (never in status or the plan). */
  private readonly privateEnv = new Map<string, { dir: string; env: Record<string, string> }>();
  /** Messages posted on sessions (messages.ts), recorded then typed. */
  private readonly messages: MessageDeliveries;

  constructor(private readonly d: ActuatorDeps) {
    this.messages = new MessageDeliveries(d, (obj, run, warn, line) =>
      logLine(this.ws(obj, run), warn ? 'WARN' : 'INFO', line),
    );
  }

  /** The message of `key` being delivered, or its outcome (messages.ts). */
  message(key: string) {
    return this.messages.get(key);
  }

  /** Prompt pastes still waiting for their pane (--once waits for them before exiting). */
  deliveriesInFlight(): number {
    let n = 0;
    for (const v of this.deliveries.values()) if (v === 'pending') n++;
    return n;
  }

  /** A finished continue message of `key`'s paused run, to be put in status. */
  resumed(key: string, run: number): DeliveryResult | undefined {
    const d = this.resumes.get(`${key}#${run}`);
    return d === 'pending' ? undefined : d;
  }

  /** A finished background delivery of `key`'s run, to be put in status. */
  delivery(key: string, run: number): DeliveryResult | undefined {
    const d = this.deliveries.get(`${key}#${run}`);
    return d === 'pending' ? undefined : d;
  }

  async run(key: string, obj: AgentSession, effects: Effect[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    // session.log's lines of one step go in one append (a launch writes two): held while the effects
    // between them are quick ones that touch neither the store nor the log, written before any other.
    const lines: WorkspaceLogEffect[] = [];
    try {
      for (const e of effects) {
        if (e.type === 'WorkspaceLog') {
          lines.push(e);
          continue;
        }
        if (!QUICK_EFFECTS.has(e.type)) this.writeLines(obj, lines);
        const o = await this.perform(key, obj, e);
        if (o) outcomes.push(o);
      }
    } finally {
      this.writeLines(obj, lines);
    }
    return outcomes;
  }

  /** The held session.log lines, one append per run's file, in order; `lines` is emptied. */
  private writeLines(obj: AgentSession, lines: WorkspaceLogEffect[]): void {
    const byRun = new Map<number, WorkspaceLogEffect[]>();
    for (const e of lines.splice(0)) byRun.set(e.run, [...(byRun.get(e.run) ?? []), e]);
    for (const [run, batch] of byRun) logLines(this.ws(obj, run), batch);
  }

  private async perform(key: string, obj: AgentSession, e: Effect): Promise<Outcome | undefined> {
    const ws = (run: number) => this.ws(obj, run);
    switch (e.type) {
      case 'PrepareRun':
        return this.prepare(key, obj, e.run, e.agent, e.workdir, e.note, e.handoffFrom, e.inheritEnv);
      case 'Launch':
        return this.launch(key, obj, e);
      case 'Deliver':
        return void this.deliver(key, obj, e.run, e.target, e.agent, e.promptFile);
      case 'AutoAnswer':
        return void this.autoAnswer(key, obj, e.paneId, e.agent, e.dialog, e.keys);
      case 'SendKeys':
        if (e.literal !== undefined) return void this.typeCommand(key, obj, e.paneId, e.literal, e.keys);
        await this.d.tmux.sendKeys(e.paneId, e.keys).catch(() => undefined);
        return;
      case 'DeliverText':
        return void this.deliverContext(key, obj, e.run, e.text);
      case 'RequestRestart':
        return void (await requestRestart(this.d.store, obj, e.note));
      case 'SendContinue':
        return void this.sendContinue(key, obj, e.run, e.text);
      case 'ResumeRecorded':
        this.resumes.delete(`${key}#${e.run}`);
        return;
      case 'DeliverMessage':
        return void (await this.messages.start(key, obj, e));
      case 'MessageRecorded':
        this.messages.forget(key, e.id);
        return;
      case 'Paused':
        this.d.metrics?.onPaused?.(obj, e.reason);
        return;
      case 'Kill':
        await this.d.tmux.kill(e.tmuxSession);
        this.d.panes.changed(obj.metadata.uid!);
        return;
      case 'Capture':
        return { type: 'Captured', text: outputTail(await this.d.tmux.capture(e.paneId, 200)) };
      case 'SettleRun':
        return { type: 'Settled', run: await this.settle(obj, e) };
      case 'TagStore':
        await this.d.tmux.tagStore(e.tmuxSession, this.d.storeUid);
        return;
      case 'RecordEvent':
        // The reconciler holds these for its status writes; one that comes here has no write to go with.
        await this.d.recorder.record(obj, e.eventType, e.reason, e.message);
        return;
      case 'Audit':
        this.d.audit.write(e.entry);
        return;
      case 'Log':
        if (e.level === 'INFO') this.d.log.info(e.message);
        else if (e.level === 'WARN') this.d.log.warn(e.message);
        else this.d.log.error(e.message);
        return;
      case 'WriteState':
        writeState(ws(e.run), e.state);
        return;
      case 'RunEnded':
        this.d.metrics?.onRunEnded?.(obj, e.run, e.phase, e.seconds);
        return;
      case 'Watch':
        this.d.watch?.(key, e.files);
        return;
      case 'DeliveryRecorded':
        this.deliveries.delete(`${key}#${e.run}`); // in status now; the map only holds what is in flight
        return;
      case 'ForgetRun':
        this.d.forget(key, e.workspace);
        return;
      case 'RemoveWorktree':
        await this.d.git.removeWorktree(e.projectPath, e.worktree);
        return;
      case 'RemoveFinalizer':
        await this.removeFinalizer(obj, e.events ?? []);
        // The session is gone: its event log's fd with it (one leaked per deleted session, the soak showed).
        this.d.logs.forget(obj.metadata.namespace ?? 'default', obj.metadata.name);
        return;
    }
  }

  private ws(obj: AgentSession, run: number): RunWorkspace {
    return runWorkspace(this.d.home, obj.metadata.namespace ?? 'default', obj.metadata.name, run);
  }

  /** Worktree, prompt, environment, workspace and the driver's additions; nothing of it in tmux yet. */
  private async prepare(
    key: string,
    obj: AgentSession,
    run: number,
    agent: AgentSpec,
    dir: string,
    restartNote?: string,
    handoffFrom?: number,
    policyInheritEnv: string[] = [],
  ): Promise<Outcome> {
    const spec = obj.spec ?? {};
    const fail = (reason: string, message: string): Outcome => ({ type: 'StartFailed', reason, message });
    if (!isDirectory(dir))
      return fail('WorkdirNotFound', `working directory ${dir} does not exist or is not a directory`);
    let workdir = dir;
    if (spec.worktree?.enabled) {
      const wt = path.join(this.d.home, 'worktrees', obj.metadata.namespace ?? 'default', obj.metadata.name);
      const branch = spec.worktree.branch ?? `orchctl/${obj.metadata.name}`;
      const r = await this.d.git.addWorktree(workdir, wt, branch, spec.worktree.baseRef ?? 'HEAD');
      if (!r.ok) return fail('WorktreeFailed', `git worktree add ${wt} (${branch}) failed: ${r.message}`);
      workdir = wt;
    }
    let task = spec.prompt;
    let system: string | undefined;
    try {
      if (spec.promptFile) task = fs.readFileSync(spec.promptFile, 'utf8');
      if (agent.systemPromptFile) system = fs.readFileSync(agent.systemPromptFile, 'utf8');
    } catch (e) {
      return fail('PromptFileNotFound', `cannot read prompt file: ${(e as Error).message}`);
    }
    let agentEnv: EnvVar[];
    let sessionEnv: EnvVar[];
    try {
      agentEnv = resolveEnv(agent.env);
      sessionEnv = resolveEnv(spec.env);
    } catch (e) {
      if (e instanceof EnvSourceError) return fail('EnvSourceNotFound', e.message);
      throw e;
    }
    for (const [declared, resolved] of [
      [agent.env, agentEnv],
      [spec.env, sessionEnv],
    ] as const)
      resolved.forEach((v, i) => {
        if (declared?.[i]?.valueFrom || SECRET_NAME.test(v.name)) registerSecret(v.value);
      });
    // Only the base and what is named: never the controller's whole environment (api/environment.ts).
    const baseEnv = pickEnv(BASE_ENV);
    const inheritedEnv = pickEnv([...(agent.inheritEnv ?? []), ...policyInheritEnv]);
    for (const [name, value] of Object.entries(inheritedEnv)) if (SECRET_NAME.test(name)) registerSecret(value);
    const ws = this.ws(obj, run);
    createWorkspace(ws);
    const notes = this.d.resumeNotes?.(obj);
    // The report protocol goes with a persona: an agent given one reads prose (a script is not).
    // An agent whose driver can add to its own system prompt gets it there, persona or not.
    const driver = driverFor(agent);
    const viaSystem = driver.appendSystemPrompt?.(agent, REPORT_PROTOCOL) ?? [];
    const sections = [
      ...(system && !viaSystem.length ? [REPORT_PROTOCOL] : []),
      ...(notes ? [notes] : []),
      ...(restartNote ? [`## Why this run was restarted\n\n${restartNote}`] : []),
      ...(handoffFrom ? [this.handoffSection(obj, handoffFrom, !!notes)] : []).filter(Boolean),
    ];
    const prompt = composePrompt(system, task, sections);
    fs.writeFileSync(ws.promptFile, prompt, { mode: 0o600 });
    const headBefore = await this.d.git.head(workdir);
    const env: Record<string, string | undefined> = { ...baseEnv, ...inheritedEnv };
    for (const v of [...agentEnv, ...sessionEnv]) env[v.name] = v.value ?? '';
    const uid = obj.metadata.uid!;
    const facts = { uid, run, workdir, workspace: ws.dir, env, hookCommand: this.d.hookCommand };
    const extra = driver.launch(agent, facts);
    for (const [name, content] of Object.entries(extra.files)) {
      fs.mkdirSync(path.dirname(path.join(ws.dir, name)), { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(ws.dir, name), content, { mode: 0o600 });
    }
    const driverEnv = Object.entries(extra.env ?? {}).map(([name, value]) => ({ name, value }));
    const plan = buildLaunch({
      agent: { ...agent, args: [...(agent.args ?? []), ...extra.args, ...viaSystem], env: agentEnv },
      sessionEnv: [...sessionEnv, ...driverEnv],
      baseEnv,
      inheritedEnv,
      prompt,
      promptFile: ws.promptFile,
      resultFile: ws.resultFile,
      workspace: ws.dir,
      sessionKey: key,
      uid,
      run,
    });
    if (plan.tmuxEnv.ORCHCTL_ENV_DIR)
      this.privateEnv.set(`${key}#${run}`, { dir: plan.tmuxEnv.ORCHCTL_ENV_DIR, env: plan.privateEnv });
    const prepared: PreparedRun = {
      workdir,
      workspace: ws.dir,
      promptFile: ws.promptFile,
      outputLog: ws.outputLog,
      ...(headBefore ? { headBefore } : {}),
      position: this.d.logs.get(obj.metadata.namespace ?? 'default', obj.metadata.name).end,
      ...(extra.sessionId ? { sessionId: extra.sessionId } : {}),
      ...(extra.transcript ? { transcript: extra.transcript } : {}),
      ...(extra.records ? { records: extra.records } : {}),
      launch: {
        session: tmuxSessionName(obj.metadata.namespace ?? 'default', obj.metadata.name, uid),
        window: key, // namespace/name: what a person attaching sees
        cwd: workdir,
        argv: plan.argv,
        env: plan.tmuxEnv,
        // The epoch is tagged too: a node's stale-run sweep reads it from tmux (sweep.ts).
        tags: { uid, key: `${key}#${run}`, store: this.d.storeUid, epoch: obj.status?.binding?.epoch },
      },
    };
    return { type: 'Prepared', run: prepared };
  }

  /**
   * The run is recorded before its tmux session exists, so a controller that dies right after the
   * launch finds the run in status and adopts its session (and one that dies right before finds
   * Starting with no pane, and ends the run after LAUNCH_GRACE_MS).
   */
  private async launch(key: string, obj: AgentSession, e: Extract<Effect, { type: 'Launch' }>): Promise<Outcome> {
    const run = e.record.run ?? 0;
    const env = this.privateEnv.get(`${key}#${run}`);
    this.privateEnv.delete(`${key}#${run}`);
    const events = { recorder: this.d.recorder, events: e.events ?? [] };
    const store = this.d.passStore ?? this.d.store;
    const recorded = await writeOwnedStatus(store, obj, 'session', ownedBy('session', e.record), 8, events);
    if (!recorded)
      return { type: 'StartFailed', reason: 'Deleted', message: 'the object was deleted before its run started' };
    if (env) writePrivateEnv(env.dir, env.env);
    try {
      // A dead pane of an earlier run may still hold the name; a session the snapshot missed fails
      // the launch, which clears it and tries once more.
      if (e.clearFirst) await this.d.tmux.kill(e.launch.session);
      await this.d.tmux.launch(e.launch, e.outputLog).catch(async (err: Error) => {
        if (!/duplicate session/.test(err.message)) throw err;
        await this.d.tmux.kill(e.launch.session);
        await this.d.tmux.launch(e.launch, e.outputLog);
      });
    } catch (err) {
      return { type: 'StartFailed', reason: 'TmuxFailed', message: (err as Error).message };
    } finally {
      this.d.panes.changed(obj.metadata.uid!);
    }
    return { type: 'Launched', obj: recorded };
  }

  /** Verified paste delivery waits for the agent's input; it runs beside the loop and reports back. */
  private deliver(key: string, obj: AgentSession, run: number, target: string, agent: AgentSpec, file: string): void {
    const rk = `${key}#${run}`;
    this.deliveries.set(rk, 'pending');
    const ws = this.ws(obj, run);
    const status = { ...(obj.status ?? {}), workspace: ws.dir };
    const pane = paneTargetFor(this.d.tmux, target, status, agent);
    const text = fs.readFileSync(file, 'utf8');
    const clean = sanitizePaste(text); // deliverText strips them too; here they are reported
    if (clean.removed) {
      const n = clean.removed;
      const msg =
        `removed ${n} control character${n === 1 ? '' : 's'} from the prompt before pasting (first at offset ` +
        `${clean.firstAt}); a key like C-c in a pasted prompt would interrupt the agent — ` +
        'use orchctl send --keys for keys';
      void this.d.recorder.record(obj, 'Warning', OneOffReason.PromptSanitized, msg);
      logLine(ws, 'WARN', msg);
    }
    const buffer = `orchctl-${obj.metadata.uid!.slice(0, 8)}-${run}`;
    void deliverText(pane, textDeliveryFor(agent, text, buffer))
      .catch((e: Error) => ({ delivered: false, reason: 'PasteFailed', message: e.message }))
      .then((r: DeliveryResult) => {
        this.deliveries.set(rk, r);
        this.d.metrics?.onDelivery?.(obj, r);
        logLine(ws, r.delivered ? 'INFO' : 'WARN', `prompt delivery: ${r.reason}: ${r.message}`);
        this.d.enqueue(key);
      });
  }

  /**
   * A paused run's continue message, the way `orchctl send` types one (verified, under the pane's
   * lock); beside the loop, so a slow agent holds no worker. It reads the run from the store, where
   * the pass that asked for it has just written the pause's continueSentAt.
   */
  private sendContinue(key: string, obj: AgentSession, run: number, text: string): void {
    const rk = `${key}#${run}`;
    if (this.resumes.get(rk) === 'pending') return;
    this.resumes.set(rk, 'pending');
    const [namespace, name] = key.split('/');
    void sendToSession(this.d.store, this.d.tmux, namespace, name, { text, resume: true })
      .catch((e: Error) => ({ delivered: false, reason: 'SendFailed', message: e.message }))
      .then((r: DeliveryResult) => {
        this.resumes.set(rk, r);
        logLine(this.ws(obj, run), r.delivered ? 'INFO' : 'WARN', `continue message: ${r.reason}: ${r.message}`);
        this.d.enqueue(key);
      });
  }

  /**
   * A restarted run continues from the previous run's handoff (rehydrate.ts): its handoff.md, the
   * last checkpoint summary, and the last evaluation unless resumeNotes already gave it.
   */
  private handoffSection(obj: AgentSession, from: number, evaluated: boolean): string {
    const m = obj.metadata;
    const handoff = readHandoff(this.ws(obj, from).dir);
    if (!handoff) return '';
    return rehydratePrompt({
      handoff: handoff.text,
      checkpointSummary: lastCheckpointSummary(this.d.home, m.namespace ?? 'default', m.name),
      lastEvaluation: evaluated ? undefined : obj.status?.lastEvaluation,
      reason: 'restarted',
    });
  }

  /** A context message (context.ts) by the path `orchctl send` takes: verified, under the pane's lock. */
  private deliverContext(key: string, obj: AgentSession, run: number, text: string): void {
    const [namespace, name] = key.split('/');
    void sendToSession(this.d.store, this.d.tmux, namespace, name, { text })
      .catch((e: Error) => ({ delivered: false, reason: 'SendFailed', message: e.message }))
      .then((r: DeliveryResult) => {
        logLine(this.ws(obj, run), r.delivered ? 'INFO' : 'WARN', `context message: ${r.reason}: ${r.message}`);
        this.d.enqueue(key);
      });
  }

  /**
   * A command typed into the agent's input (`/compact <focus>`, `/clear`): the line cleared, the text
   * typed, then the submit keys. Slash commands fire no UserPromptSubmit, but they do fire hooks
   * (PreCompact; SessionEnd clear): while the hook file does not grow, submit is pressed again (an
   * Enter that came while the command menu was still drawing was lost on 2.1.330). The hooks that
   * say the command worked (PostCompact, SessionStart) are context.ts's to read.
   */
  private typeCommand(key: string, obj: AgentSession, paneId: string, text: string, keys: string[]): void {
    const t = this.d.tmux;
    const hooks = path.join(this.ws(obj, obj.status?.run ?? 0).dir, HOOKS_FILE);
    const size = () => fs.statSync(hooks, { throwIfNoEntry: false })?.size ?? 0;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    void (async () => {
      await t.sendKeys(paneId, ['C-u']);
      await t.sendLiteral(paneId, text);
      await sleep(400); // the command menu opens as the text is typed
      const before = size();
      for (let attempt = 0; attempt < COMMAND_SUBMITS; attempt++) {
        await t.sendKeys(paneId, keys);
        for (let waited = 0; waited < 2000 && size() === before; waited += 100) await sleep(100);
        if (size() !== before) return;
      }
    })()
      .catch((e: Error) => logLine(this.ws(obj, obj.status?.run ?? 0), 'WARN', `typing ${text}: ${e.message}`))
      .finally(() => this.d.enqueue(key));
  }

  /** Answers a startup dialog (or, if the Agent says so, a permission prompt) the Agent opted in to. */
  private autoAnswer(key: string, obj: AgentSession, paneId: string, agent: AgentSpec, dialog: string, keys: string[]) {
    if (this.answering.has(key)) return;
    this.answering.add(key);
    const target = paneTargetFor(this.d.tmux, paneId, obj.status ?? {}, agent);
    const stillWaiting = showing(profileFor(agent), [dialog === 'permission' ? 'waiting' : 'dialog']);
    void deliverKeys(target, { keys, stillWaiting, notBefore: Date.now() + 300 })
      .catch((e: Error) => ({ delivered: false, reason: 'SendFailed', message: e.message }))
      .then(async (r) => {
        this.answering.delete(key);
        const reason = r.delivered ? OneOffReason.AutoAnswered : OneOffReason.AutoAnswerFailed;
        await this.d.recorder.record(obj, r.delivered ? 'Normal' : 'Warning', reason, `${dialog}: ${r.message}`);
        this.d.enqueue(key);
      });
  }

  /** The last of an ended run: its remaining events, its screen or log tail, its result, its git. */
  private async settle(obj: AgentSession, e: Extract<Effect, { type: 'SettleRun' }>): Promise<SettledRun> {
    const out: SettledRun = {};
    const log = this.d.logs.get(obj.metadata.namespace ?? 'default', obj.metadata.name);
    if (e.workspace) {
      log.retain(e.from);
      if (fs.existsSync(e.workspace)) {
        const reader = driverFor(e.agent).transcript;
        this.d.feed.ingest(log, { run: e.run, workspace: e.workspace, transcript: e.transcript, reader });
      }
      const { events, next } = log.read(e.from, 100_000);
      out.events = events;
      out.next = next;
      this.d.feed.forget(log, e.run);
    }
    // The run is over: its log's descriptor goes until the next run opens it again.
    this.d.logs.release(obj.metadata.namespace ?? 'default', obj.metadata.name);
    if (e.paneId) out.lastOutput = outputTail(await this.d.tmux.capture(e.paneId, 200)) || undefined;
    else if (e.readTail && e.workspace)
      out.lastOutput = outputTail(readTail(path.join(e.workspace, 'output.log'), 16 * 1024)) || undefined;
    if (e.workspace) out.result = readResult(this.ws(obj, e.run));
    if (e.workdir) out.git = await this.d.git.progress(e.workdir, e.headBefore, { force: true });
    return out;
  }

  /** The finalizer off (the store then removes the object) and the Events of the deletion, in one transaction. */
  private async removeFinalizer(obj: AgentSession, events: EventNote[]): Promise<void> {
    const m = obj.metadata;
    // Written meanwhile (the object or the same Event): read again; the next pass goes on after that.
    await retryOnConflict(
      async () => {
        const fresh = await this.d.store.get({ kind: 'AgentSession', namespace: m.namespace ?? '', name: m.name });
        if (!fresh) return;
        const finalizers = (fresh.metadata.finalizers ?? []).filter((f) => f !== SESSION_FINALIZER);
        const update: WriteOp = { op: 'update', object: { ...fresh, metadata: { ...fresh.metadata, finalizers } } };
        await this.d.store.txn([update, ...(await this.d.recorder.ops(fresh, events))]);
      },
      { attempts: 3, retryOn: isEventRace },
    );
  }
}

export const SESSION_FINALIZER = 'orchctl.io/session-cleanup';
type WorkspaceLogEffect = Extract<Effect, { type: 'WorkspaceLog' }>;
/** Effects done at once, with no store write, no await and no session.log line (see run). */
const QUICK_EFFECTS = new Set<Effect['type']>(['Audit', 'Log', 'WriteState', 'Watch', 'RunEnded']);
/** Presses of submit for a typed command before giving up (context.ts then times the step out). */
const COMMAND_SUBMITS = 3;

/**
 * Asks for a new run the way `orchctl restart` does (the restart annotation, compare-and-swap),
 * with a note for its prompt; nothing when a restart is already asked and not yet honoured.
 */
async function requestRestart(store: Store, obj: AgentSession, note: string): Promise<void> {
  const m = obj.metadata;
  // Someone else wrote first: read again; after three such races, leave it to the next pass.
  await retryOnConflict(
    async () => {
      const fresh = await store.get({ kind: 'AgentSession', namespace: m.namespace ?? '', name: m.name });
      if (!fresh || fresh.metadata.deletionTimestamp || restartRequested(fresh)) return;
      const annotations = {
        ...(fresh.metadata.annotations ?? {}),
        [RESTARTED_AT_ANNOTATION]: new Date().toISOString(),
        [RESTART_REASON_ANNOTATION]: 'Context',
        [RESTART_NOTE_ANNOTATION]: note,
      };
      await store.update({ ...fresh, metadata: { ...fresh.metadata, annotations } });
    },
    { attempts: 3, retryOn: (e) => isApiError(e, 'Conflict') },
  ).catch((e: unknown) => {
    if (!isApiError(e, 'Conflict')) throw e;
  });
}
