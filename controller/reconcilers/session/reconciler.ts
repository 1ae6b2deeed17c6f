/**
 * The AgentSession reconciler. Each pass: read the object, observe (one shared tmux snapshot,
 * git only when the repository changed), let the lifecycle machine turn observations into
 * transitions, execute the side effects those transitions name, and write status once.
 * Everything it needs after a restart is in status (phase, run, restarts, due times) or tagged
 * on the tmux session (@orchctl-uid / @orchctl-key), so a killed controller resumes by adoption.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { transition, type SnapshotFrom } from 'xstate';
import { setCondition } from '../../api/conditions.js';
import { formatDuration } from '../../api/duration.js';
import type { AgentSession, AgentSessionStatus, AgentSpec, EnvVar, Project, SessionPolicy } from '../../api/kinds.js';
import type { Resource } from '../../api/types.js';
import { composePrompt, buildLaunch } from '../../agents/launch.js';
import { EnvSourceError, resolveEnv, writePrivateEnv } from '../../agents/env.js';
import { registerSecret, SECRET_NAME } from '../../api/redact.js';
import {
  claudeConfigDir,
  claudeHooks,
  claudeSessionId,
  claudeSettings,
  claudeTranscriptPath,
} from '../../agents/claude-code.js';
import { deliverKeys, deliverText, sanitizePaste, type DeliveryResult } from '../../agents/delivery.js';
import type { AgentFeed } from '../../observers/agent-feed.js';
import type { EventLogs } from '../../store/eventlog.js';
import type { EventRecorder, EventType } from '../../client/events.js';
import { writeStatusMerged } from '../../client/status.js';
import type { AuditLog } from '../../observers/audit.js';
import type { GitObserver } from '../../observers/git.js';
import type { HostSnapshot } from '../../observers/host.js';
import type { PaneObserver, PaneSnapshot } from '../../observers/panes.js';
import { processAlive, processInfo } from '../../observers/process.js';
import { tmuxSessionName, type PaneInfo, type Tmux } from '../../observers/tmux.js';
import {
  createWorkspace,
  logLine,
  readExitCode,
  readResult,
  readTail,
  runWorkspace,
  writeState,
  type RunWorkspace,
} from '../../observers/workspace.js';
import type { Informer } from '../../runtime/informer.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import {
  admit,
  backoffMs,
  effective,
  nextLookMs,
  observedEvent,
  resolvePolicy,
  restartsHeld,
  wantsRunning,
  type Effective,
  type PaneState,
} from './decide.js';
import { ACTIVE_PHASES, sessionMachine, type LifecycleEvent, type Phase } from './machine.js';
import { observeAgent, profileFor, ScreenCache, settleAgent, type AgentStatus } from './agent-pass.js';
import { paneTargetFor, showing, textDeliveryFor } from './send.js';
import { outputTail } from './output.js';

export const SESSION_FINALIZER = 'orchctl.io/session-cleanup';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

export interface SessionDeps {
  store: import('../../store/store.js').Store;
  sessions: Informer;
  agents: Informer;
  projects: Informer;
  policies: Informer;
  tmux: Tmux;
  panes: PaneObserver;
  /** The store's identity: every launched tmux session is tagged with it (see observers/tmux.ts). */
  storeUid: string;
  git: GitObserver;
  host: () => HostSnapshot;
  nodeUnschedulable: () => boolean;
  recorder: EventRecorder;
  audit: AuditLog;
  home: string;
  log: Logger;
  /** Brings a key back (used when background prompt delivery finishes). */
  enqueue: (key: string) => void;
  metrics?: SessionMetricsHooks;
  /** Per-session event logs and the ingester that fills them. */
  logs: EventLogs;
  feed: AgentFeed;
  /** argv of `orchctl hook` (absolute node and bin paths), for agents that report through hooks. */
  hookCommand: string[];
  /** Files whose changes should bring `key` back at once (hook file, transcript). */
  watch?: (key: string, files: string[]) => void;
  /** The last evaluation, as a "Previous run assessment" section for the next run's prompt (reconcilers/judge/resume.ts). */
  resumeNotes?: (s: AgentSession) => string | undefined;
}

/** What the session reconciler reports to metrics (implemented in controller/metrics/). */
export interface SessionMetricsHooks {
  /** A run this process saw end (not one that was already over when it was read). */
  onRunEnded?(session: AgentSession, run: number, phase: Phase, durationSeconds: number): void;
  /** A verified delivery finished (prompt, `orchctl send` through the controller, intervention). */
  onDelivery?(session: AgentSession, result: DeliveryResult): void;
}

type Snap = SnapshotFrom<typeof sessionMachine>;

/** What status.lifecycle persists beside phase/run/restarts to resume the machine. */
interface Lifecycle {
  stopReason?: 'Stopped' | 'TimedOut';
  /** metadata.generation the current run was started from. */
  runGeneration?: number;
}

interface Resolved {
  agent?: AgentSpec;
  workdir?: string;
  problem?: { reason: string; message: string; fatal: boolean };
  policy?: SessionPolicy;
  effective: Effective;
}

/** Per-pass working state: the status being built and what happened, written once at the end. */
interface Pass {
  obj: AgentSession;
  key: string;
  status: AgentSessionStatus;
  snap: Snap;
  pane: PaneState;
  paneInfo?: PaneInfo;
  resolved: Resolved;
  now: number;
  adopt?: PaneInfo;
  /** Whether the pane snapshot held any tmux session of this object (a launch must clear it first). */
  hasPanes?: boolean;
}

const iso = (t: number) => new Date(t).toISOString();

export class SessionReconciler implements Reconciler {
  /** Sessions admitted by this process whose Starting status may not be in the cache yet. */
  private readonly reservations = new Set<string>();
  private readonly deliveries = new Map<string, DeliveryResult | 'pending'>();
  private readonly screens = new ScreenCache();
  private readonly answering = new Set<string>();

  constructor(private readonly d: SessionDeps) {}

  /** Prompt pastes still waiting for their pane (--once waits for them before exiting). */
  deliveriesInFlight(): number {
    let n = 0;
    for (const v of this.deliveries.values()) if (v === 'pending') n++;
    return n;
  }

  async reconcile(key: string): Promise<Result | void> {
    const [namespace, name] = key.split('/');
    const obj = (await this.d.store.get({ kind: 'AgentSession', namespace, name })) as AgentSession | undefined;
    if (!obj) {
      this.reservations.delete(key);
      return;
    }
    if (obj.metadata.deletionTimestamp) return this.finalize(obj, key);
    if (!obj.metadata.finalizers?.includes(SESSION_FINALIZER)) {
      // The finalizer guarantees we stop the tmux session before the object disappears.
      await this.d.store.update({
        ...obj,
        metadata: { ...obj.metadata, finalizers: [...(obj.metadata.finalizers ?? []), SESSION_FINALIZER] },
      });
      return { requeueAfterMs: 0 };
    }
    const status: AgentSessionStatus = structuredClone(obj.status ?? {});
    status.conditions ??= [];
    const phase = (status.phase as Phase | undefined) ?? 'Pending';
    const lifecycle = (status.lifecycle ?? {}) as Lifecycle;
    const snap = sessionMachine.resolveState({
      value: phase,
      context: { run: status.run ?? 0, restarts: status.restarts ?? 0, stopReason: lifecycle.stopReason },
    }) as Snap;
    const now = Date.now();
    const resolved = this.resolve(obj);
    const panes = await this.d.panes.snapshot();
    const pass: Pass = { obj, key, status, snap, pane: { kind: 'missing' }, resolved, now };
    this.observePane(pass, panes);

    if (phase === 'Pending' && !pass.adopt && resolved.problem && !resolved.problem.fatal) {
      // Waiting for a referenced Agent/Project to appear: not an error, a condition.
      status.phase = 'Pending';
      status.reason = resolved.problem.reason;
      status.message = resolved.problem.message;
      setCondition(status.conditions, {
        type: 'Ready',
        status: 'False',
        reason: resolved.problem.reason,
        message: resolved.problem.message,
        observedGeneration: obj.metadata.generation,
      });
      await this.writeStatus(obj, status);
      return;
    }

    await this.drive(pass);
    await this.observeRunning(pass);
    if (ACTIVE_PHASES.has(pass.snap.value as Phase)) await this.refreshGit(pass, false); // no process unless the repo changed
    this.applyDelivery(pass);
    await this.writeStatus(pass.obj, pass.status); // pass.obj: the run may have been recorded mid-pass
    if (!ACTIVE_PHASES.has(pass.snap.value as Phase)) this.reservations.delete(key);
    const next = nextLookMs(pass.snap.value as Phase, { ...obj, status: pass.status }, Date.now(), resolved.effective);
    return next === undefined ? undefined : { requeueAfterMs: next };
  }

  // ---- desired state ----------------------------------------------------------------------

  private resolve(obj: AgentSession): Resolved {
    const spec = obj.spec ?? {};
    const ns = obj.metadata.namespace;
    const policy = resolvePolicy(obj, this.d.policies.list() as SessionPolicy[]);
    let agent = spec.agent;
    let problem: Resolved['problem'];
    if (!agent && spec.agentRef) {
      agent = (this.d.agents.get(ns, spec.agentRef) as Resource<AgentSpec> | undefined)?.spec;
      if (!agent)
        problem = {
          reason: 'AgentNotFound',
          message: `Agent "${spec.agentRef}" not found in namespace ${ns}`,
          fatal: false,
        };
    }
    let workdir = spec.workdir;
    if (!workdir && spec.projectRef) {
      const project = this.d.projects.get(ns, spec.projectRef) as Project | undefined;
      if (!project)
        problem ??= {
          reason: 'ProjectNotFound',
          message: `Project "${spec.projectRef}" not found in namespace ${ns}`,
          fatal: false,
        };
      else if (project.spec?.blocked)
        problem ??= { reason: 'ProjectBlocked', message: `Project "${spec.projectRef}" is blocked`, fatal: false };
      workdir = project?.spec?.path;
    }
    if (spec.policyRef && !policy)
      problem ??= { reason: 'PolicyNotFound', message: `SessionPolicy "${spec.policyRef}" not found`, fatal: false };
    // Before a run starts, what it needs must be there: a session waits (Pending, Ready=False)
    // rather than fail and restart in a loop; the resync looks again.
    const phase = (obj.status?.phase ?? 'Pending') as Phase;
    if (!problem && (phase === 'Pending' || phase === 'Backoff')) {
      if (workdir && !isDirectory(workdir)) {
        problem = spec.projectRef
          ? {
              reason: 'ProjectPathNotFound',
              message: `the path ${workdir} of Project "${spec.projectRef}" does not exist or is not a directory`,
              fatal: false,
            }
          : {
              reason: 'WorkdirNotFound',
              message: `working directory ${workdir} does not exist or is not a directory`,
              fatal: false,
            };
      } else if (agent?.command?.length) {
        const pathVar = agent.env?.find((e) => e.name === 'PATH')?.value ?? process.env.PATH ?? '';
        if (!findCommand(agent.command[0], pathVar, workdir)) problem = commandNotFound(agent.command[0]);
      }
    }
    return { agent, workdir, problem, policy, effective: effective(spec, policy, agent?.stop?.gracePeriod) };
  }

  // ---- observation ------------------------------------------------------------------------

  private runKey(key: string, run: number): string {
    return `${key}#${run}`;
  }

  /** Finds the current run's pane; notes a live pane of a newer run to adopt; removes stale ones. */
  private observePane(p: Pass, panes: PaneSnapshot): void {
    const uid = p.obj.metadata.uid!;
    const run = p.status.run ?? 0;
    p.hasPanes = panes.byUid(uid).length > 0;
    this.observePanes(p, panes, uid, run);
    // The launch wrapper's record wins: it is written even when tmux loses track of the process.
    const phase = p.status.phase ?? 'Pending';
    if (run > 0 && (phase === 'Starting' || phase === 'Running' || phase === 'Stopping')) {
      const code = readExitCode(this.wsFor(p, run));
      if (code !== undefined) p.pane = { kind: 'dead', exitCode: code };
    }
  }

  private observePanes(p: Pass, panes: PaneSnapshot, uid: string, run: number): void {
    for (const pane of panes.byUid(uid)) {
      const paneRun = Number(pane.key.split('#')[1] ?? NaN);
      if (paneRun === run && run > 0 && (p.status.phase !== 'Pending' || !pane.dead)) {
        p.paneInfo = pane;
        p.pane = paneState(pane);
        // Launched before this store had an identity, or adopted after a restore: ours now.
        if (pane.store !== this.d.storeUid && !pane.dead) void this.d.tmux.tagStore(pane.session, this.d.storeUid);
      } else if (paneRun > run && !pane.dead && (p.status.phase ?? 'Pending') === 'Pending') {
        p.adopt = pane; // launched by a controller that died before recording it
      }
    }
  }

  /** Refreshes for a live run: output tail, the agent's state from its hooks/transcript/screen. */
  private async observeRunning(p: Pass): Promise<void> {
    const phase = p.snap.value as Phase;
    if (phase !== 'Running' && phase !== 'Starting' && phase !== 'Stopping') return;
    if (!p.status.workspace) return;
    const tail = this.tailOf(path.join(p.status.workspace, 'output.log'));
    if (tail) p.status.lastOutput = tail;
    const ns = p.obj.metadata.namespace ?? 'default';
    const r = await observeAgent(
      {
        obj: p.obj,
        status: p.status,
        agent: p.resolved.agent,
        policy: p.resolved.policy,
        log: this.d.logs.get(ns, p.obj.metadata.name),
        feed: this.d.feed,
        tmux: this.d.tmux,
        paneId: p.paneInfo && !p.paneInfo.dead ? p.paneInfo.paneId : undefined,
        now: p.now,
      },
      this.screens,
      p.key,
    );
    const agentStatus = p.status.agent as AgentStatus | undefined;
    this.d.watch?.(p.key, [
      path.join(p.status.workspace, 'hooks.jsonl'),
      ...(agentStatus?.transcript ? [agentStatus.transcript] : []),
    ]);
    if (r.contextStep)
      await this.event(
        p,
        r.contextStep.step >= 80 ? 'Warning' : 'Normal',
        'ContextWindow',
        `context window ${r.contextStep.step}% used (${r.contextStep.used} of ${r.contextStep.window} tokens)`,
      );
    if (r.autoAnswer && p.paneInfo && agentStatus) this.autoAnswer(p, r.autoAnswer, agentStatus);
  }

  /** Answers a startup dialog (or, if the Agent says so, a permission prompt) the Agent opted in to. */
  private autoAnswer(p: Pass, a: { dialog: string; keys: string[] }, agentStatus: AgentStatus): void {
    if (this.answering.has(p.key) || !p.paneInfo) return;
    const profile = profileFor(p.resolved.agent);
    agentStatus.autoAnswered = {
      dialog: a.dialog,
      at: a.dialog === 'permission' ? (agentStatus.permission?.since ?? iso(p.now)) : iso(p.now),
    };
    this.answering.add(p.key);
    const target = paneTargetFor(this.d.tmux, p.paneInfo.paneId, p.status, p.resolved.agent);
    void deliverKeys(target, {
      keys: a.keys,
      stillWaiting: showing(profile, [a.dialog === 'permission' ? 'waiting' : 'dialog']),
      notBefore: Date.now() + 300,
    })
      .catch((e: Error) => ({ delivered: false, reason: 'SendFailed', message: e.message }))
      .then(async (r) => {
        this.answering.delete(p.key);
        await this.d.recorder.record(
          p.obj,
          r.delivered ? 'Normal' : 'Warning',
          r.delivered ? 'AutoAnswered' : 'AutoAnswerFailed',
          `${a.dialog}: ${r.message}`,
        );
        this.d.enqueue(p.key);
      });
  }

  /** Reports a finished background paste (whatever the phase: a quick agent may be done already). */
  private applyDelivery(p: Pass): void {
    const rk = this.runKey(p.key, p.status.run ?? 0);
    const d = this.deliveries.get(rk);
    if (!d || d === 'pending') return;
    setCondition(p.status.conditions!, {
      type: 'PromptDelivered',
      status: d.delivered ? 'True' : 'False',
      reason: d.reason,
      message: d.message,
      observedGeneration: p.obj.metadata.generation,
    });
    p.status.promptDelivery = {
      run: p.status.run,
      delivered: d.delivered,
      reason: d.reason,
      retries: d.retries ?? 0,
      ...(d.confirmedBy ? { confirmedBy: d.confirmedBy } : {}),
      at: iso(p.now),
    };
    this.deliveries.delete(rk); // recorded in status now; the map only holds what is in flight
  }

  private readonly tails = new Map<string, { stamp: string; tail: string }>();

  /** The output tail, re-read only when the log grew (idle sessions cost a stat, not a read). */
  private tailOf(file: string): string {
    let stamp: string;
    try {
      const st = fs.statSync(file);
      stamp = `${st.size}:${st.mtimeMs}`;
    } catch {
      return '';
    }
    const cached = this.tails.get(file);
    if (cached?.stamp === stamp) return cached.tail;
    const tail = outputTail(readTail(file, 16 * 1024));
    this.tails.set(file, { stamp, tail });
    return tail;
  }

  private async refreshGit(p: Pass, force: boolean): Promise<void> {
    const dir = p.status.workdir;
    if (!dir) return;
    const g = await this.d.git.progress(dir, p.status.headBefore, { force });
    if (!g.isGitRepo) return void delete p.status.git;
    p.status.git = {
      head: g.head,
      branch: g.branch,
      commits: g.commits,
      insertions: g.insertions,
      deletions: g.deletions,
      filesChanged: g.filesChanged,
      ...(g.lastCommit ? { lastCommit: g.lastCommit } : {}),
    };
  }

  // ---- the lifecycle ----------------------------------------------------------------------

  private async drive(p: Pass): Promise<void> {
    let injected: LifecycleEvent | undefined;
    for (let step = 0; step < 12; step++) {
      const phase = p.snap.value as Phase;
      let ev =
        injected ??
        observedEvent({
          phase,
          session: { ...p.obj, status: p.status },
          pane: p.pane,
          now: p.now,
          effective: p.resolved.effective,
        });
      injected = undefined;
      if (!ev && phase === 'Pending') ev = this.admission(p);
      if (!ev) break;
      const [next, actions] = transition(sessionMachine, p.snap, ev);
      const from = phase;
      const changed = next.value !== p.snap.value || !isDeepStrictEqual(next.context, p.snap.context);
      if (!changed && actions.length === 0) break;
      p.snap = next as Snap;
      p.status.run = next.context.run;
      p.status.restarts = next.context.restarts;
      const prev = (p.status.lifecycle ?? {}) as Lifecycle;
      p.status.lifecycle = {
        ...(prev.runGeneration !== undefined ? { runGeneration: prev.runGeneration } : {}),
        ...(next.context.stopReason ? { stopReason: next.context.stopReason } : {}),
      };
      for (const a of actions) injected = (await this.execute(a.type, p, ev)) ?? injected;
      const to = next.value as Phase;
      if (to !== from) await this.entered(p, from, to, ev);
      if (ev.type === 'GRACE_EXPIRED') break; // the kill shows in the next observation
    }
    this.timeBoxWarning(p);
    p.status.phase = p.snap.value as Phase;
    this.summarise(p);
  }

  private admission(p: Pass): LifecycleEvent | undefined {
    const s = p.status;
    if (!wantsRunning(p.obj)) {
      s.reason = 'Stopped';
      s.message = 'desiredState is Stopped';
      return undefined;
    }
    if (p.adopt) return { type: 'ADMIT' };
    if (p.resolved.problem) return undefined;
    // Sessions under the same policy that run, or that this process admitted and whose
    // Starting status may not have reached the cache yet.
    const policies = this.d.policies.list() as SessionPolicy[];
    const policyName = p.resolved.policy?.metadata.name;
    let active = 0;
    for (const o of this.d.sessions.list(p.obj.metadata.namespace) as AgentSession[]) {
      const key = `${o.metadata.namespace}/${o.metadata.name}`;
      if (key === p.key || !(ACTIVE_PHASES.has(o.status?.phase as Phase) || this.reservations.has(key))) continue;
      if (resolvePolicy(o, policies)?.metadata.name === policyName) active++;
    }
    const a = admit(p.resolved.policy, active, this.d.host(), this.d.nodeUnschedulable());
    setCondition(s.conditions!, {
      type: 'Admitted',
      status: a.admitted ? 'True' : 'False',
      reason: a.reason,
      message: a.message,
      observedGeneration: p.obj.metadata.generation,
    });
    if (!a.admitted) {
      s.reason = a.reason;
      s.message = `waiting for admission: ${a.message}`;
      return undefined;
    }
    this.reservations.add(p.key); // synchronous with the check: no other worker can slip in between
    return { type: 'ADMIT' };
  }

  /** Runs one named action of the machine; may return the event its outcome implies. */
  private async execute(action: string, p: Pass, ev: LifecycleEvent): Promise<LifecycleEvent | undefined> {
    switch (action) {
      case 'launchRun':
        return p.adopt ? this.adoptRun(p, p.adopt) : this.launchRun(p);
      case 'sendStopKeys': {
        p.status.stopRequestTime = iso(p.now);
        const keys = p.resolved.agent?.stop?.keys ?? ['C-c'];
        if (p.paneInfo && !p.paneInfo.dead) await this.d.tmux.sendKeys(p.paneInfo.paneId, keys).catch(() => undefined);
        this.wsLog(
          p,
          'INFO',
          `sent stop keys ${keys.join(' ')} (${ev.type === 'TIMEOUT' ? 'time box reached' : 'desiredState Stopped'})`,
        );
        return undefined;
      }
      case 'killSession':
        if (p.status.tmuxSession) await this.d.tmux.kill(p.status.tmuxSession);
        this.d.panes.invalidate();
        this.wsLog(p, 'WARN', `grace period over; killed tmux session ${p.status.tmuxSession}`);
        return undefined;
      case 'captureOutput':
        if (p.paneInfo) {
          const text = outputTail(await this.d.tmux.capture(p.paneInfo.paneId, 200));
          if (text) p.status.lastOutput = text;
        }
        return undefined;
      case 'scheduleRestart': {
        const delay = backoffMs(p.resolved.effective, Math.max(0, (p.snap.context.restarts ?? 1) - 1));
        p.status.nextRestartTime = iso(p.now + delay);
        p.status.message = `restart ${p.snap.context.restarts}/${p.resolved.effective.maxRestarts} in ${formatDuration(delay)}`;
        await this.event(
          p,
          'Normal',
          'BackOff',
          `Restarting after ${p.status.reason ?? 'failure'}: ${p.status.message}`,
        );
        return undefined;
      }
      case 'escalate': {
        const msg = `gave up after ${p.snap.context.restarts} restart${p.snap.context.restarts === 1 ? '' : 's'} (maxRestarts ${p.resolved.effective.maxRestarts}); last run ended ${p.status.reason ?? ''}${p.status.exitCode !== undefined ? ` with exit code ${p.status.exitCode}` : ''}`;
        setCondition(p.status.conditions!, {
          type: 'Escalated',
          status: 'True',
          reason: 'RetryLimitReached',
          message: msg,
          observedGeneration: p.obj.metadata.generation,
        });
        await this.event(p, 'Warning', 'Escalated', msg);
        this.d.log.warn(`agentsession ${p.key}: escalated: ${msg}`); // the give-up belongs in the log too
        this.d.audit.write({
          kind: 'AgentSession',
          namespace: p.obj.metadata.namespace,
          name: p.obj.metadata.name,
          uid: p.obj.metadata.uid,
          run: p.status.run,
          to: p.status.phase ?? '',
          reason: 'Escalated',
          message: msg,
        });
        return undefined;
      }
    }
    return undefined;
  }

  private wsFor(p: Pass, run = p.status.run ?? 0): RunWorkspace {
    return runWorkspace(this.d.home, p.obj.metadata.namespace ?? 'default', p.obj.metadata.name, run);
  }

  private wsLog(p: Pass, level: 'INFO' | 'WARN' | 'ERROR', msg: string): void {
    if (p.status.workspace) logLine(this.wsFor(p), level, msg);
  }

  private async launchRun(p: Pass): Promise<LifecycleEvent | undefined> {
    const { obj, status } = p;
    status.lifecycle = { ...(status.lifecycle ?? {}), runGeneration: obj.metadata.generation };
    const spec = obj.spec ?? {};
    const run = p.snap.context.run;
    const fail = (reason: string, message: string): LifecycleEvent => ({ type: 'START_FAILED', reason, message });
    const agent = p.resolved.agent;
    if (!agent) return fail('AgentNotFound', 'no agent to run');
    let workdir = p.resolved.workdir;
    if (!workdir) return fail('NoWorkdir', 'neither a Project nor a workdir gives a working directory');
    if (!isDirectory(workdir))
      return fail('WorkdirNotFound', `working directory ${workdir} does not exist or is not a directory`);
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
      for (const [declared, resolved] of [
        [agent.env, agentEnv],
        [spec.env, sessionEnv],
      ] as const)
        resolved.forEach((e, i) => (declared?.[i]?.valueFrom || SECRET_NAME.test(e.name)) && registerSecret(e.value));
    } catch (e) {
      if (e instanceof EnvSourceError) return fail('EnvSourceNotFound', e.message);
      throw e;
    }
    const ws = this.wsFor(p, run);
    createWorkspace(ws);
    const notes = this.d.resumeNotes?.(obj);
    const prompt = composePrompt(system, task, notes ? [notes] : []);
    fs.writeFileSync(ws.promptFile, prompt, { mode: 0o600 });
    const headBefore = await this.d.git.head(workdir);
    const sessionName = tmuxSessionName(obj.metadata.namespace ?? 'default', obj.metadata.name, obj.metadata.uid!);
    // A dead pane of an earlier run may still hold the name. The snapshot says whether one does,
    // so a first launch costs no kill; a session it missed fails the launch, which clears it below.
    if (p.hasPanes) await this.d.tmux.kill(sessionName);
    // Claude Code reports through hooks installed by a settings file, with a known session id
    // (which fixes where its transcript is).
    const claude = claudeHooks(agent.hooks);
    let launchAgent = agent;
    const agentStatus: AgentStatus = {
      run,
      position: this.d.logs.get(obj.metadata.namespace ?? 'default', obj.metadata.name).end,
      counts: {},
      hooks: false,
      turns: 0,
    };
    if (claude) {
      const sessionId = claudeSessionId(obj.metadata.uid!, run);
      const settingsFile = path.join(ws.dir, 'claude-settings.json');
      fs.writeFileSync(settingsFile, JSON.stringify(claudeSettings(claude, this.d.hookCommand), null, 2) + '\n', {
        mode: 0o600,
      });
      launchAgent = { ...agent, args: [...(agent.args ?? []), '--session-id', sessionId, '--settings', settingsFile] };
      const env: Record<string, string | undefined> = { ...process.env };
      for (const e of [...agentEnv, ...sessionEnv]) env[e.name] = e.value ?? '';
      agentStatus.sessionId = sessionId;
      const transcript = claudeTranscriptPath(claudeConfigDir(env), workdir, sessionId);
      if (transcript) agentStatus.transcript = transcript;
    }
    const plan = buildLaunch({
      agent: { ...launchAgent, env: agentEnv },
      sessionEnv,
      prompt,
      promptFile: ws.promptFile,
      resultFile: ws.resultFile,
      workspace: ws.dir,
      sessionKey: p.key,
      uid: obj.metadata.uid!,
      run,
    });
    // The run is recorded before its tmux session exists, so a controller that dies right after
    // the launch finds the run in status and adopts its session (and one that dies right before
    // finds Starting with no pane, and ends the run after LAUNCH_GRACE_MS).
    Object.assign(status, {
      tmuxSession: sessionName,
      workspace: ws.dir,
      workdir,
      startTime: iso(p.now),
      headBefore,
      deadlineTime: p.resolved.effective.maxDurationMs ? iso(p.now + p.resolved.effective.maxDurationMs) : undefined,
      lastOutput: '',
      git: headBefore ? { head: headBefore, commits: 0, insertions: 0, deletions: 0, filesChanged: 0 } : undefined,
    });
    status.agent = agentStatus as unknown as Record<string, unknown>;
    for (const f of [
      'completionTime',
      'exitCode',
      'result',
      'stopRequestTime',
      'nextRestartTime',
      'promptDelivery',
    ] as const)
      delete status[f];
    if (!status.deadlineTime) delete status.deadlineTime;
    if (!status.git) delete status.git;
    if (!status.headBefore) delete status.headBefore;
    status.phase = 'Starting';
    const recorded = await writeStatusMerged(this.d.store, p.obj, {
      ...status,
      observedGeneration: obj.metadata.generation,
    } as Record<string, unknown>);
    if (!recorded) return fail('Deleted', 'the object was deleted before its run started');
    p.obj = recorded as AgentSession;
    if (plan.tmuxEnv.ORCHCTL_ENV_DIR) writePrivateEnv(plan.tmuxEnv.ORCHCTL_ENV_DIR, plan.privateEnv);
    const launch = {
      session: sessionName,
      cwd: workdir,
      argv: plan.argv,
      env: plan.tmuxEnv,
      tags: { uid: obj.metadata.uid!, key: this.runKey(p.key, run), store: this.d.storeUid },
    };
    try {
      await this.d.tmux.launch(launch, ws.outputLog).catch(async (e: Error) => {
        if (!/duplicate session/.test(e.message)) throw e;
        await this.d.tmux.kill(sessionName);
        await this.d.tmux.launch(launch, ws.outputLog);
      });
    } catch (e) {
      return fail('TmuxFailed', (e as Error).message);
    } finally {
      this.d.panes.invalidate();
    }
    writeState(ws, {
      session: p.key,
      uid: obj.metadata.uid,
      run,
      agent: spec.agentRef ?? '(inline)',
      status: 'RUNNING',
      tmuxSession: sessionName,
      workdir,
      headBefore: headBefore ?? null,
      startTime: status.startTime,
      promptFile: ws.promptFile,
      resultFile: ws.resultFile,
    });
    logLine(
      ws,
      'INFO',
      `run ${run} started in tmux session ${sessionName} (workdir ${workdir}, delivery ${agent.promptDelivery ?? 'paste'})`,
    );
    p.pane = { kind: 'alive' };
    p.paneInfo = undefined;
    this.startDelivery(p, agent, ws, sessionName, run);
    return undefined;
  }

  /** A run launched by a controller that died before recording it: take it over as it is. */
  private adoptRun(p: Pass, pane: PaneInfo): LifecycleEvent | undefined {
    const run = Number(pane.key.split('#')[1]);
    const ws = this.wsFor(p, run);
    let state: Record<string, unknown> = {};
    try {
      state = JSON.parse(fs.readFileSync(ws.stateFile, 'utf8')) as Record<string, unknown>;
    } catch {
      /* launched but state.json not yet written */
    }
    p.snap = sessionMachine.resolveState({
      value: 'Starting',
      context: { run, restarts: p.snap.context.restarts },
    }) as Snap;
    Object.assign(p.status, {
      run,
      tmuxSession: pane.session,
      workspace: ws.dir,
      workdir: (state.workdir as string) ?? p.resolved.workdir,
      startTime: (state.startTime as string) ?? iso(pane.created * 1000),
      ...(state.headBefore ? { headBefore: state.headBefore as string } : {}),
    });
    if (p.resolved.effective.maxDurationMs)
      p.status.deadlineTime = iso(Date.parse(p.status.startTime!) + p.resolved.effective.maxDurationMs);
    p.pane = { kind: 'alive' };
    p.paneInfo = pane;
    setCondition(p.status.conditions!, {
      type: 'PromptDelivered',
      status: 'Unknown',
      reason: 'Adopted',
      message: 'run adopted after a controller restart; delivery was not confirmed',
      observedGeneration: p.obj.metadata.generation,
    });
    logLine(ws, 'INFO', `run ${run} adopted from tmux session ${pane.session}`);
    return undefined;
  }

  /** Verified paste delivery waits for the agent's input; it runs beside the loop and reports back. */
  private startDelivery(p: Pass, agent: AgentSpec, ws: RunWorkspace, sessionName: string, run: number): void {
    const mode = agent.promptDelivery ?? 'paste';
    const rk = this.runKey(p.key, run);
    if (mode !== 'paste') {
      const r = {
        delivered: true,
        reason: mode === 'none' ? 'NoPrompt' : mode === 'stdin' ? 'DeliveredByStdin' : 'DeliveredByArgument',
        message: `prompt delivery: ${mode}`,
      };
      this.deliveries.set(rk, r);
      setCondition(p.status.conditions!, {
        type: 'PromptDelivered',
        status: 'True',
        reason: r.reason,
        message: r.message,
        observedGeneration: p.obj.metadata.generation,
      });
      return;
    }
    setCondition(p.status.conditions!, {
      type: 'PromptDelivered',
      status: 'Unknown',
      reason: 'Delivering',
      message: 'waiting for the agent to be ready before pasting',
      observedGeneration: p.obj.metadata.generation,
    });
    this.deliveries.set(rk, 'pending');
    const target = paneTargetFor(this.d.tmux, `=${sessionName}:`, p.status, agent);
    const promptText = fs.readFileSync(ws.promptFile, 'utf8');
    const clean = sanitizePaste(promptText);
    if (clean.removed) {
      const msg = `removed ${clean.removed} control character${clean.removed === 1 ? '' : 's'} from the prompt before pasting (first at offset ${clean.firstAt}); a key like C-c in a pasted prompt would interrupt the agent — use orchctl send --keys for keys`;
      void this.d.recorder.record(p.obj, 'Warning', 'PromptSanitized', msg);
      logLine(ws, 'WARN', msg);
    }
    void deliverText(target, textDeliveryFor(agent, promptText, `orchctl-${p.obj.metadata.uid!.slice(0, 8)}-${run}`))
      .catch((e: Error) => ({ delivered: false, reason: 'PasteFailed', message: e.message }))
      .then((r: DeliveryResult) => {
        this.deliveries.set(rk, r);
        this.d.metrics?.onDelivery?.(p.obj, r);
        logLine(ws, r.delivered ? 'INFO' : 'WARN', `prompt delivery: ${r.reason}: ${r.message}`);
        this.d.enqueue(p.key);
      });
  }

  /** Status, events, audit and logs for entering a phase. */
  private async entered(p: Pass, from: Phase, to: Phase, ev: LifecycleEvent): Promise<void> {
    const s = p.status;
    const gen = p.obj.metadata.generation;
    const cond = (type: string, st: 'True' | 'False' | 'Unknown', reason: string, message = '') =>
      setCondition(s.conditions!, { type, status: st, reason, message, observedGeneration: gen });
    switch (to) {
      case 'Starting':
        s.reason = 'Starting';
        s.message = `starting run ${s.run}`;
        break;
      case 'Running':
        s.reason = 'Running';
        s.message = `running in tmux session ${s.tmuxSession}`;
        cond('Ready', 'True', 'Running', s.message);
        await this.event(p, 'Normal', 'Started', `Started run ${s.run} in tmux session ${s.tmuxSession}`);
        break;
      case 'Stopping':
        s.reason = p.snap.context.stopReason === 'TimedOut' ? 'TimedOut' : 'Stopping';
        s.message =
          p.snap.context.stopReason === 'TimedOut'
            ? `time box of ${formatDuration(p.resolved.effective.maxDurationMs ?? 0)} reached; stopping`
            : 'desiredState is Stopped; stopping';
        cond('Ready', 'False', 'Stopping', s.message);
        await this.event(
          p,
          p.snap.context.stopReason === 'TimedOut' ? 'Warning' : 'Normal',
          p.snap.context.stopReason === 'TimedOut' ? 'TimeBoxExceeded' : 'Stopping',
          s.message,
        );
        break;
      case 'Succeeded':
      case 'Failed':
      case 'Killed':
      case 'TimedOut':
        await this.runEnded(p, to, ev);
        // A later run that succeeded settles an earlier escalation: one story, not two.
        if (to === 'Succeeded' && s.conditions?.some((c) => c.type === 'Escalated' && c.status === 'True'))
          cond('Escalated', 'False', 'Succeeded', `run ${s.run} succeeded after the escalation`);
        break;
      case 'Backoff':
        cond('Ready', 'False', 'BackOff', s.message ?? '');
        break;
      case 'Pending':
        if (ev.type === 'NEW_RUN') {
          cond('Escalated', 'False', 'NewRun', 'spec changed or run requested again');
          s.reason = 'NewRun';
          s.message = 'a new run was requested';
          await this.event(p, 'Normal', 'NewRun', 'Spec changed: starting a new run');
        } else {
          s.reason = 'Restarting';
          s.message = `restart ${s.restarts} due`;
        }
        delete s.nextRestartTime;
        break;
    }
    this.d.audit.write({
      kind: 'AgentSession',
      namespace: p.obj.metadata.namespace,
      name: p.obj.metadata.name,
      uid: p.obj.metadata.uid,
      run: s.run,
      from,
      to,
      reason: s.reason,
      message: s.message,
    });
    this.wsLog(
      p,
      to === 'Failed' || to === 'Killed' || to === 'TimedOut' ? 'WARN' : 'INFO',
      `phase ${from} → ${to}${s.message ? `: ${s.message}` : ''}`,
    );
    this.d.log.info(`agentsession ${p.key}: ${from} → ${to}${s.message ? ` (${s.message})` : ''}`);
  }

  private async runEnded(p: Pass, to: Phase, ev: LifecycleEvent): Promise<void> {
    const s = p.status;
    if (s.workspace && s.agent) {
      settleAgent({
        obj: p.obj,
        status: s,
        agent: p.resolved.agent,
        policy: p.resolved.policy,
        log: this.d.logs.get(p.obj.metadata.namespace ?? 'default', p.obj.metadata.name),
        feed: this.d.feed,
        now: p.now,
      });
      this.screens.forget(p.key);
    }
    if (s.workspace) this.tails.delete(path.join(s.workspace, 'output.log'));
    s.completionTime = iso(p.now);
    if (ev.type === 'EXITED') s.exitCode = ev.exitCode;
    // The pane still exists when it died under remain-on-exit: its screen is the best tail.
    if (p.paneInfo) {
      const text = outputTail(await this.d.tmux.capture(p.paneInfo.paneId, 200));
      if (text) s.lastOutput = text;
      await this.d.tmux.kill(p.paneInfo.session);
      this.d.panes.invalidate();
    } else if (s.workspace && !s.lastOutput) {
      s.lastOutput = outputTail(readTail(path.join(s.workspace, 'output.log'), 16 * 1024));
    }
    if (s.workspace) {
      const result = readResult(this.wsFor(p));
      if (result) s.result = result;
    }
    await this.refreshGit(p, true);
    // A run that never started (START_FAILED) has no duration worth a histogram bucket.
    const started = Date.parse(s.startTime ?? '');
    if (ev.type !== 'START_FAILED' && !Number.isNaN(started))
      this.d.metrics?.onRunEnded?.(p.obj, s.run ?? 0, to, Math.max(0, (p.now - started) / 1000));
    const commits = s.git?.commits ? `, ${s.git.commits} commit${s.git.commits === 1 ? '' : 's'}` : '';
    const stopReason = p.snap.context.stopReason;
    let type: EventType = 'Warning';
    if (ev.type === 'START_FAILED') {
      s.reason = ev.reason;
      s.message = ev.message;
    } else if (to === 'Succeeded') {
      type = 'Normal';
      s.reason = 'Completed';
      s.message = `agent exited with code 0${commits}`;
    } else if (to === 'Failed' && s.exitCode === -1) {
      s.reason = 'ExitStatusUnknown';
      s.message = `the agent's process ended but tmux recorded no exit status${commits}`;
    } else if (to === 'Failed' && s.exitCode === 127) {
      // The shell's "command not found": restarting cannot help, so it is not retried.
      const cnf = commandNotFound(p.resolved.agent?.command?.[0] ?? 'the agent command');
      s.reason = cnf.reason;
      s.message = `${cnf.message} (exit code 127)${commits}`;
    } else if (to === 'Failed') {
      s.reason = 'Error';
      s.message = `agent exited with code ${s.exitCode}${commits}`;
    } else if (to === 'TimedOut') {
      s.reason = 'TimedOut';
      s.message = `stopped after the time box of ${formatDuration(p.resolved.effective.maxDurationMs ?? 0)}${commits}`;
    } else if (stopReason === 'Stopped') {
      type = 'Normal';
      s.reason = 'Stopped';
      s.message = `stopped on request${s.exitCode !== undefined ? ` (exit code ${s.exitCode})` : ''}${commits}`;
    } else {
      s.reason = 'TmuxSessionLost';
      s.message = `the tmux session disappeared without an exit status (killed outside orchctl, or the tmux server died)${commits}`;
    }
    const gen = p.obj.metadata.generation;
    setCondition(s.conditions!, {
      type: 'Ready',
      status: 'False',
      reason: s.reason,
      message: s.message,
      observedGeneration: gen,
    });
    setCondition(s.conditions!, {
      type: 'Succeeded',
      status: to === 'Succeeded' ? 'True' : 'False',
      reason: s.reason,
      message: s.message,
      observedGeneration: gen,
    });
    await this.event(p, type, to === 'Succeeded' ? 'Completed' : s.reason, `Run ${s.run} ${to}: ${s.message}`);
    if (s.workspace) {
      const ws = this.wsFor(p);
      writeState(ws, {
        session: p.key,
        uid: p.obj.metadata.uid,
        run: s.run,
        status: to.toUpperCase(),
        tmuxSession: s.tmuxSession,
        workdir: s.workdir,
        headBefore: s.headBefore ?? null,
        startTime: s.startTime,
        completedTime: s.completionTime,
        exitCode: s.exitCode ?? null,
        reason: s.reason,
        git: s.git ?? null,
      });
    }
  }

  private timeBoxWarning(p: Pass): void {
    const s = p.status;
    if (p.snap.value !== 'Running' || p.resolved.effective.timeoutAction !== 'Warn' || !s.deadlineTime) return;
    if (p.now < Date.parse(s.deadlineTime)) return;
    if (
      setCondition(s.conditions!, {
        type: 'TimeBoxExceeded',
        status: 'True',
        reason: 'MaxDurationReached',
        message: `running longer than ${formatDuration(p.resolved.effective.maxDurationMs ?? 0)} (timeoutAction Warn)`,
        observedGeneration: p.obj.metadata.generation,
      })
    )
      void this.event(
        p,
        'Warning',
        'TimeBoxExceeded',
        `Run ${s.run} passed its time box; timeoutAction is Warn, so it keeps running`,
      );
  }

  /** A Pending session's Ready condition says why it waits (admission, desiredState Stopped...). */
  private summarise(p: Pass): void {
    const s = p.status;
    const escalated = s.conditions?.find((c) => c.type === 'Escalated' && c.status === 'True');
    if (s.phase === 'Backoff' && escalated && restartsHeld(s.conditions)) {
      s.reason = 'RestartHeld';
      s.message = `restart held for a person: ${escalated.message}`;
      delete s.nextRestartTime;
    }
    if (s.phase === 'Pending' && !p.resolved.problem)
      setCondition(s.conditions!, {
        type: 'Ready',
        status: 'False',
        reason: s.reason ?? 'Pending',
        message: s.message ?? '',
        observedGeneration: p.obj.metadata.generation,
      });
  }

  private async event(p: Pass, type: EventType, reason: string, message: string): Promise<void> {
    await this.d.recorder.record(p.obj, type, reason, message);
  }

  // ---- writing ----------------------------------------------------------------------------

  /**
   * Writes this pass's status. Other reconcilers (assessment, judge) write their own fields of the
   * same status, so the write is a merge of what this pass changed onto the stored object.
   */
  private async writeStatus(obj: AgentSession, given: AgentSessionStatus): Promise<void> {
    given.observedGeneration = obj.metadata.generation;
    await writeStatusMerged(this.d.store, obj, given as Record<string, unknown>);
  }

  // ---- deletion ---------------------------------------------------------------------------

  private async finalize(obj: AgentSession, key: string): Promise<Result | void> {
    if (!obj.metadata.finalizers?.includes(SESSION_FINALIZER)) return;
    const status: AgentSessionStatus = structuredClone(obj.status ?? {});
    const panes = (await this.d.panes.snapshot()).byUid(obj.metadata.uid!);
    const live = panes.filter((x) => !x.dead);
    const agent = this.resolve(obj).agent;
    const graceMs = effective(obj.spec ?? {}, undefined, agent?.stop?.gracePeriod).graceMs;
    const now = Date.now();
    if (live.length) {
      if (!status.stopRequestTime || status.phase !== 'Stopping') {
        for (const pane of live)
          await this.d.tmux.sendKeys(pane.paneId, agent?.stop?.keys ?? ['C-c']).catch(() => undefined);
        status.phase = 'Stopping';
        status.stopRequestTime = iso(now);
        status.reason = 'Deleting';
        status.message = 'object deleted; stopping the agent';
        await this.writeStatus(obj, status);
        return { requeueAfterMs: Math.min(graceMs, 500) };
      }
      if (now < Date.parse(status.stopRequestTime) + graceMs)
        return { requeueAfterMs: Math.min(500, Date.parse(status.stopRequestTime) + graceMs - now) };
    }
    const last = live[0] ?? panes[0];
    const outcome = last?.dead
      ? last.exitStatus !== undefined
        ? `exit code ${last.exitStatus}`
        : 'its process ended (no exit status recorded)'
      : live.length
        ? 'killed after the grace period'
        : 'no tmux session was running';
    for (const pane of panes) await this.d.tmux.kill(pane.session);
    this.d.panes.invalidate();
    if (obj.spec?.worktree?.enabled && status.workdir && obj.spec.projectRef) {
      const project = this.d.projects.get(obj.metadata.namespace, obj.spec.projectRef) as Project | undefined;
      if (project?.spec?.path) await this.d.git.removeWorktree(project.spec.path, status.workdir);
    }
    this.d.audit.write({
      kind: 'AgentSession',
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      run: status.run,
      from: status.phase,
      to: 'Deleted',
      reason: 'Deleted',
      message: outcome,
    });
    this.d.log.info(`agentsession ${key}: deleted (${outcome})`);
    await this.d.recorder.record(obj, 'Normal', 'Deleted', `Session deleted: ${outcome}`);
    this.reservations.delete(key);
    const fresh = (await this.d.store.get({
      kind: 'AgentSession',
      namespace: obj.metadata.namespace ?? '',
      name: obj.metadata.name,
    })) as AgentSession | undefined;
    if (fresh)
      await this.d.store.update({
        ...fresh,
        metadata: {
          ...fresh.metadata,
          finalizers: (fresh.metadata.finalizers ?? []).filter((f) => f !== SESSION_FINALIZER),
        },
      });
  }
}

/**
 * A dead pane without an exit status means tmux has not reaped the process (yet): tmux 3.3a
 * linked with libutempter can miss a SIGCHLD (tmux/tmux#311) and leave it a zombie for good.
 * Then tmux is nudged with a SIGCHLD so it reaps and records the status; meanwhile the run is
 * not over while its own process lives (the launch wrapper's exit-code file usually settles it
 * first). A process that is gone with no status at all gives an unknown exit code.
 */
function paneState(pane: PaneInfo): PaneState {
  if (!pane.dead && !isZombie(pane.pid)) return { kind: 'alive' };
  if (pane.exitStatus !== undefined) return { kind: 'dead', exitCode: pane.exitStatus };
  if (pane.exitSignal !== undefined) return { kind: 'dead', exitCode: 128 + pane.exitSignal };
  if (pane.serverPid > 0) {
    try {
      process.kill(pane.serverPid, 'SIGCHLD');
    } catch {
      /* not ours to signal, or gone */
    }
  }
  return paneProcessAlive(pane) ? { kind: 'alive' } : { kind: 'dead', exitCode: -1 };
}

/** The pane's own process still exists (a zombie counts: tmux has yet to reap it) — not merely a later process that reused its pid. */
function paneProcessAlive(pane: PaneInfo): boolean {
  if (!pane.pid || !processAlive(pane.pid)) return false;
  const started = processInfo(pane.pid)?.startTime;
  return started === undefined || Math.abs(started - pane.created) <= 5;
}

const isZombie = (pid: number) => processInfo(pid)?.state === 'Z';

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The problem of an agent command that is not installed. */
function commandNotFound(command: string): { reason: string; message: string; fatal: boolean } {
  return {
    reason: 'CommandNotFound',
    message: `${path.basename(command)}: command not found — install it or run orchctl doctor`,
    fatal: false,
  };
}

/** Whether `command` resolves to an executable file: a path as given, else through PATH. */
function findCommand(command: string, pathVar: string, cwd: string | undefined): boolean {
  const executable = (f: string) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return fs.statSync(f).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(path.resolve(cwd ?? process.cwd(), command));
  return pathVar.split(':').some((dir) => dir && executable(path.join(dir, command)));
}
