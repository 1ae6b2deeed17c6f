/**
 * What the session plan reads of the world, gathered in one place: desired state resolved from the
 * informer caches (and whether its paths and command exist), the run's pane from the shared tmux
 * snapshot, the launch wrapper's exit-code record, the agent's sources (screen, hooks, transcript,
 * folded into the session's event log), the output tail and git progress. It never changes what
 * it looks at; the costs per pass are what observe-cost.test.ts counts (no process while nothing
 * changed).
 */
import { frozenMark } from '../../api/freeze.js';
import { currentPause } from '../../api/pause.js';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentSession, AgentSessionStatus } from '../../api/kinds.js';
import { resolvePolicy } from '../../api/policy.js';
import { classifyScreen, type DetectionProfile, profileFor, type ScreenClass } from '../../agents/detection.js';
import { readTyped } from '../../agents/typed.js';
import { driverFor } from '../../agents/drivers.js';
import type { AgentFeed } from '../../observers/agent-feed.js';
import type { GitObserver, GitProgress } from '../../observers/git.js';
import type { HostSnapshot } from '../../observers/host.js';
import { outputTail } from './output.js';
import type { PaneObserver, PaneSnapshot } from '../../observers/panes.js';
import { processAlive, processInfo } from '../../observers/process.js';
import { readReport } from '../../observers/report.js';
import { readHandoffFile } from '../../observers/handoff.js';
import { lastCheckpointSummary, readHandoff, readStatusline } from '../../observers/context-files.js';
import type { PaneInfo, Tmux } from '../../observers/tmux.js';
import { readExitRecord, readTail, runWorkspace } from '../../observers/workspace.js';
import type { Informer } from '../../runtime/informer.js';
import { type EventLogs, LOG_START } from '../../store/eventlog.js';
import { effective, type PaneState } from './decide.js';
import { ACTIVE_PHASES, type Phase } from './machine.js';
import { type AgentFacts, commandNotFound, gitKey, type Observed, type Problem, type Resolved } from './plan.js';

export interface ObserverDeps {
  sessions: Informer<'AgentSession'>;
  agents: Informer<'Agent'>;
  projects: Informer<'Project'>;
  policies: Informer<'SessionPolicy'>;
  tmux: Tmux;
  panes: PaneObserver;
  git: GitObserver;
  host: () => HostSnapshot;
  nodeUnschedulable: () => boolean;
  logs: EventLogs;
  feed: AgentFeed;
  home: string;
  /** The store's identity: a live pane tagged otherwise is re-tagged as ours. */
  storeUid: string;
}

/** What the reconciler reads through; tests give it a scripted one. */
export interface SessionObservation {
  resolve(obj: AgentSession): Resolved;
  observe(key: string, obj: AgentSession, resolved: Resolved): Promise<Observed>;
  agent(
    key: string,
    obj: AgentSession,
    status: AgentSessionStatus,
    resolved: Resolved,
    pane?: PaneInfo,
  ): Promise<AgentFacts>;
  git(status: AgentSessionStatus): Promise<{ git?: GitProgress; gitKey?: string }>;
  /** The freeze mark in force: the session's own, else its project's (api/freeze.ts); none in tests that omit it. */
  freezeMark?(obj: AgentSession): string | undefined;
  /** Synchronous, so that the count and the reservation that follows it cannot interleave with another worker. */
  admission(key: string, obj: AgentSession, resolved: Resolved, reserved: ReadonlySet<string>): Observed['admission'];
  /** Every tmux session of this object, for deletion. */
  panesOf(uid: string): Promise<PaneInfo[]>;
  projectPath(obj: AgentSession): string | undefined;
  forget(key: string, workspace?: string): void;
}

export class SessionObserver implements SessionObservation {
  private readonly screens = new ScreenCache();
  private readonly tails = new Map<string, { stamp: string; tail: string }>();

  constructor(private readonly d: ObserverDeps) {}

  resolve(obj: AgentSession): Resolved {
    const spec = obj.spec ?? {};
    const ns = obj.metadata.namespace;
    const policy = resolvePolicy(obj, this.d.policies.list());
    let agent = spec.agent;
    let problem: Problem | undefined;
    if (!agent && spec.agentRef) {
      agent = this.d.agents.get(ns, spec.agentRef)?.spec;
      if (!agent) problem = notFound('AgentNotFound', `Agent "${spec.agentRef}" not found in namespace ${ns}`);
    }
    let workdir = spec.workdir;
    if (!workdir && spec.projectRef) {
      const project = this.d.projects.get(ns, spec.projectRef);
      if (!project)
        problem ??= notFound('ProjectNotFound', `Project "${spec.projectRef}" not found in namespace ${ns}`);
      else if (project.spec?.blocked) problem ??= notFound('ProjectBlocked', `Project "${spec.projectRef}" is blocked`);
      workdir = project?.spec?.path;
    }
    if (spec.policyRef && !policy)
      problem ??= notFound('PolicyNotFound', `SessionPolicy "${spec.policyRef}" not found`);
    // Before a run starts, what it needs must be there: a session waits (Pending, Ready=False)
    // rather than fail and restart in a loop; the resync looks again.
    const phase = (obj.status?.phase ?? 'Pending') as Phase;
    if (!problem && (phase === 'Pending' || phase === 'Backoff')) {
      if (workdir && !isDirectory(workdir)) {
        problem = spec.projectRef
          ? notFound(
              'ProjectPathNotFound',
              `the path ${workdir} of Project "${spec.projectRef}" does not exist or is not a directory`,
            )
          : notFound('WorkdirNotFound', `working directory ${workdir} does not exist or is not a directory`);
      } else if (agent?.command?.length) {
        const pathVar = agent.env?.find((e) => e.name === 'PATH')?.value ?? process.env.PATH ?? '';
        if (!findCommand(agent.command[0], pathVar, workdir)) problem = commandNotFound(agent.command[0]);
      }
    }
    return { agent, workdir, problem, policy, effective: effective(spec, policy, agent?.stop?.gracePeriod) };
  }

  async observe(key: string, obj: AgentSession, resolved: Resolved): Promise<Observed> {
    const status = obj.status ?? {};
    const panes = await this.d.panes.snapshot(obj.metadata.uid);
    const o: Observed = { pane: { kind: 'missing' }, hasPanes: false, retag: [] };
    this.observePanes(o, obj, panes);
    const phase = (status.phase ?? 'Pending') as Phase;
    const run = status.run ?? 0;
    // The launch wrapper's record wins: it is written even when tmux loses track of the process.
    if (run > 0 && ACTIVE_PHASES.has(phase)) {
      const exit = readExitRecord(this.ws(obj, run));
      const fenced = o.paneInfo?.fused ? { fenced: true } : {};
      if (exit) o.pane = { kind: 'dead', exitCode: exit.code, at: exit.at, ...fenced };
    }
    if (o.adopt) {
      const ws = this.ws(obj, Number(o.adopt.pane.key.split('#')[1]));
      o.adopt = { ...o.adopt, workspace: ws.dir, state: readState(ws.stateFile) };
    }
    if (ACTIVE_PHASES.has(phase) && status.workspace) {
      o.outputTail = this.tailOf(path.join(status.workspace, 'output.log')) || undefined;
      // A stat per pass; read only when it differs from what status.report was made from.
      const report = readReport(status.workspace, status.report?.run === run ? status.report.stamp : undefined);
      if (report) o.report = { ...report, run };
      const handoff = readHandoffFile(status.workspace, status.handoff?.run === run ? status.handoff.stamp : undefined);
      if (handoff) o.handoff = { ...handoff, run };
      o.context = this.contextFiles(obj, status);
      o.agent = await this.agent(key, obj, status, resolved, o.paneInfo);
      Object.assign(o, await this.git(status));
    }
    return o;
  }

  /** The statusline when it changed (a stat per pass); the handoff and checkpoint summary while a step runs. */
  private contextFiles(obj: AgentSession, status: AgentSessionStatus): Observed['context'] {
    const run = status.run ?? 0;
    const ctx = status.context?.run === run ? status.context : undefined;
    const statusline = readStatusline(status.workspace!, ctx?.stamp);
    const step = ctx?.step?.name;
    if (!step || step === 'Compact') return statusline ? { statusline } : undefined;
    const m = obj.metadata;
    return {
      ...(statusline ? { statusline } : {}),
      handoff: readHandoff(status.workspace!),
      checkpointSummary: lastCheckpointSummary(this.d.home, m.namespace ?? 'default', m.name),
    };
  }

  /** The current run's pane; a live pane of a newer run to adopt; panes to re-tag as this store's. */
  private observePanes(o: Observed, obj: AgentSession, panes: PaneSnapshot): void {
    const status = obj.status ?? {};
    const run = status.run ?? 0;
    const phase = status.phase ?? 'Pending';
    const mine = panes.byUid(obj.metadata.uid!);
    o.hasPanes = mine.length > 0;
    for (const pane of mine) {
      const paneRun = Number(pane.key.split('#')[1] ?? Number.NaN);
      if (paneRun === run && run > 0 && (phase !== 'Pending' || !pane.dead)) {
        o.paneInfo = pane;
        o.pane = paneState(pane);
        // Launched before this store had an identity, or adopted after a restore: ours now.
        if (pane.store !== this.d.storeUid && !pane.dead) o.retag.push(pane.session);
      } else if (paneRun > run && !pane.dead && phase === 'Pending') {
        o.adopt = { pane, workspace: '', state: {} }; // launched by a controller that died before recording it
      }
    }
  }

  /**
   * The agent's sources: the screen (captured only when its output changed), hooks and transcript
   * into the log, and what is new there.
   */
  async agent(
    key: string,
    obj: AgentSession,
    status: AgentSessionStatus,
    resolved: Resolved,
    pane?: PaneInfo,
  ): Promise<AgentFacts> {
    const run = status.run ?? 0;
    const prev = status.agent;
    const profile = profileFor(resolved.agent);
    const facts: AgentFacts = { run, events: [], next: LOG_START };
    if (pane && !pane.dead && profile) {
      const paneId = pane.paneId;
      const stamp = outputStamp(status.workspace);
      const now = Date.now();
      const ws = status.workspace;
      // What orchctl typed (agents/typed.ts), read only when the screen changed: its echo is not the agent's.
      const typed = () => (ws ? readTyped(ws) : []);
      const r = await this.screens.read(key, stamp, () => this.d.tmux.capture(paneId, 60), profile, now, typed);
      if (r) {
        facts.screen = { ...r.cls, at: now };
        facts.screenChangedAt = r.changedAt;
      }
    }
    const log = this.d.logs.get(obj.metadata.namespace ?? 'default', obj.metadata.name);
    // A cut of the log past its limit keeps what this consumer has not read yet (store/eventlog.ts).
    log.retain(prev?.position ?? LOG_START);
    if (status.workspace) {
      const screen = facts.screen;
      const driver = driverFor(resolved.agent);
      const transcript =
        prev?.transcript ??
        (prev?.records
          ? driver.locateTranscript?.({ ...prev, workdir: status.workdir, startTime: status.startTime })
          : undefined);
      this.d.feed.ingest(log, {
        run,
        workspace: status.workspace,
        transcript,
        reader: driver.transcript,
        ...(screen && screen.state !== 'unknown' ? { pane: { state: screen.state, detail: screen.dialog } } : {}),
      });
    }
    const from = prev?.position ?? LOG_START;
    const { events, next } = log.read(from, 5000);
    facts.events = events;
    facts.next = next;
    return facts;
  }

  async git(status: AgentSessionStatus): Promise<{ git?: GitProgress; gitKey?: string }> {
    const dir = status.workdir;
    if (!dir) return {};
    return { git: await this.d.git.progress(dir, status.headBefore, { force: false }), gitKey: gitKey(status) };
  }

  admission(key: string, obj: AgentSession, resolved: Resolved, reserved: ReadonlySet<string>): Observed['admission'] {
    const facts = { host: this.d.host(), nodeUnschedulable: this.d.nodeUnschedulable() };
    // Only a maxConcurrentSessions limit reads the count: without one, counting cost O(sessions) per
    // admission, O(N²) for N applied at once (2.5 s of a 1000-session start).
    if (resolved.policy?.spec?.maxConcurrentSessions === undefined) return { activeUnderPolicy: 0, ...facts };
    // Sessions under the same policy that run, or that this process admitted and whose
    // Starting status may not have reached the cache yet.
    const policies = this.d.policies.list();
    const policyName = resolved.policy?.metadata.name;
    let active = 0;
    for (const o of this.d.sessions.list(obj.metadata.namespace)) {
      const k = `${o.metadata.namespace}/${o.metadata.name}`;
      if (k === key || !(ACTIVE_PHASES.has(o.status?.phase as Phase) || reserved.has(k))) continue;
      if (freesSlot(o.status)) continue; // paused for a rate limit with rateLimit.holdSlot false
      if (resolvePolicy(o, policies)?.metadata.name === policyName) active++;
    }
    return { activeUnderPolicy: active, ...facts };
  }

  async panesOf(uid: string): Promise<PaneInfo[]> {
    return (await this.d.panes.snapshot(uid)).byUid(uid);
  }

  freezeMark(obj: AgentSession): string | undefined {
    const own = frozenMark(obj);
    if (own) return `${own} (session)`;
    const project = obj.spec?.projectRef ? this.d.projects.get(obj.metadata.namespace, obj.spec.projectRef) : undefined;
    const mark = frozenMark(project);
    return mark ? `${mark} (project ${project!.metadata.name})` : undefined;
  }

  projectPath(obj: AgentSession): string | undefined {
    if (!obj.spec?.projectRef) return undefined;
    return this.d.projects.get(obj.metadata.namespace, obj.spec.projectRef)?.spec?.path;
  }

  forget(key: string, workspace?: string): void {
    this.screens.forget(key);
    if (workspace) this.tails.delete(path.join(workspace, 'output.log'));
  }

  private ws(obj: AgentSession, run: number) {
    return runWorkspace(this.d.home, obj.metadata.namespace ?? 'default', obj.metadata.name, run);
  }

  /** The output tail, re-read only when the log grew (idle sessions cost a stat, not a read). */
  private tailOf(file: string): string {
    const stamp = statStamp(file);
    if (stamp === undefined) return '';
    const cached = this.tails.get(file);
    if (cached?.stamp === stamp) return cached.tail;
    const tail = outputTail(readTail(file, 16 * 1024));
    this.tails.set(file, { stamp, tail });
    return tail;
  }
}

/**
 * Per-session memory between passes (not state: losing it costs one extra capture). The pane's
 * output log only grows when the screen is redrawn, so while it stands still the last reading
 * stands too and no tmux capture is needed.
 */
export class ScreenCache {
  private readonly last = new Map<string, { stamp: string; text: string; cls: ScreenClass; changedAt: number }>();

  async read(
    key: string,
    stamp: string | undefined,
    capture: () => Promise<string>,
    profile: DetectionProfile,
    now: number,
    typed: () => readonly string[] = () => [],
  ): Promise<{ cls: ScreenClass; changedAt: number } | undefined> {
    const prev = this.last.get(key);
    // A blank screen is remembered like any other: an agent that never prints must not cost a
    // capture every tick.
    if (prev && stamp !== undefined && prev.stamp === stamp) return prev.text.trim() ? prev : undefined;
    // Nothing written to the pane yet (its output log is empty): the screen is blank.
    if (stamp?.startsWith('0:')) return undefined;
    const text = await capture();
    if (prev && prev.text === text) {
      prev.stamp = stamp ?? '';
      return text.trim() ? prev : undefined;
    }
    const cls: ScreenClass = text.trim() ? classifyScreen(text, profile, { typed: typed() }) : { state: 'unknown' };
    const entry = { stamp: stamp ?? '', text, cls, changedAt: now };
    this.last.set(key, entry);
    return text.trim() ? entry : undefined;
  }

  forget(key: string): void {
    this.last.delete(key);
  }
}

const notFound = (reason: string, message: string): Problem => ({ reason, message, fatal: false });

/** A paused run that gave its admission slot up (pause.ts). */
export const freesSlot = (s: AgentSessionStatus | undefined): boolean => currentPause(s)?.holdsSlot === false;

function statStamp(file: string): string | undefined {
  try {
    const st = fs.statSync(file);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** Size and mtime of the run's output log: changes whenever the pane is redrawn. */
const outputStamp = (workspace: string | undefined) =>
  workspace ? statStamp(path.join(workspace, 'output.log')) : undefined;

function readState(file: string): Record<string, unknown> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return {}; // launched, but state.json not yet written
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
  // tmux's pane_dead_time (whole seconds) says when it ended; the exit-code file, read after, is finer.
  const at = {
    ...(pane.deadAt !== undefined ? { at: pane.deadAt * 1000 } : {}),
    ...(pane.fused ? { fenced: true } : {}),
  };
  if (pane.exitStatus !== undefined) return { kind: 'dead', exitCode: pane.exitStatus, ...at };
  if (pane.exitSignal !== undefined) return { kind: 'dead', exitCode: 128 + pane.exitSignal, ...at };
  if (pane.serverPid > 0) {
    try {
      process.kill(pane.serverPid, 'SIGCHLD');
    } catch {
      /* not ours to signal, or gone */
    }
  }
  return paneProcessAlive(pane) ? { kind: 'alive' } : { kind: 'dead', exitCode: -1, ...at };
}

/**
 * The pane's own process still exists (a zombie counts: tmux has yet to reap it) — not a later
 * process that reused its pid.
 */
function paneProcessAlive(pane: PaneInfo): boolean {
  if (!pane.pid || !processAlive(pane.pid)) return false;
  const started = processInfo(pane.pid)?.startTime;
  return started === undefined || Math.abs(started - pane.created) <= 5;
}

const isZombie = (pid: number) => processInfo(pid)?.state === 'Z';

export function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `command` resolves to an executable file: a path as given, else through PATH. */
function findCommand(command: string, pathVar: string, cwd: string | undefined): boolean {
  const executable = (f: string) => {
    // Most directories of PATH lack the command: a stat that does not throw for them (a thrown
    // error per directory was most of a launch's resolve in a burst, issue 29).
    try {
      if (!fs.statSync(f, { throwIfNoEntry: false })?.isFile()) return false;
      fs.accessSync(f, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(path.resolve(cwd ?? process.cwd(), command));
  return pathVar.split(':').some((dir) => dir && executable(path.join(dir, command)));
}
