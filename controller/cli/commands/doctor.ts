/**
 * `orchctl doctor`: what this host has for orchctl — tmux, git and node versions, and for every
 * built-in Agent template (manifests/agents/) and every Agent in the store (when the state
 * directory exists; doctor never creates one) whether its CLI is on PATH, which version it
 * reports, and whether the Agent's detection patterns were verified on that version.
 * tmux and git are required (exit 1 without them); a missing agent CLI is information.
 * Every external program runs through execa with an argument list and a short timeout.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { compileDetection, parseVersion, profileForVersion, type DetectionProfile } from '../../agents/detection.js';
import { type AgentCheck, driverFor } from '../../agents/drivers.js';
import type { AgentSpec } from '../../api/kinds.js';
import { describeLocation, describeSource, type StoreTarget } from '../../config/config-location.js';
import { packageRoot } from '../../config/paths.js';
import type { GlobalOptions } from '../context.js';
import { out } from '../output.js';
import { renderTable } from '../printers/table.js';

const VERSION_TIMEOUT_MS = 5000;
/**
 * Agent CLIs may load a whole bundle to print their version: Gemini CLI 0.61.0 loads ~100 MB of JS
 * and relaunches itself under a second node first (8 s measured on a loaded 2-core box).
 */
const AGENT_VERSION_TIMEOUT_MS = 30_000;
const MIN_TMUX = '3.2';

export interface ToolReport {
  name: string;
  found: boolean;
  path?: string;
  version?: string;
  ok: boolean;
  message: string;
}

export type PatternStatus = 'verified' | 'reconstructed' | 'unverified' | 'generic' | 'none' | 'invalid' | 'unknown';

export type { AgentCheck } from '../../agents/drivers.js';

export interface AgentReport {
  name: string;
  source: 'template' | 'store';
  namespace?: string;
  command: string;
  installed: boolean;
  path?: string;
  version?: string;
  /**
   * verified: a recorded profile lists the version; reconstructed: a profile lists it but was not
   * recorded; unverified: no profile lists it; generic: no detection data; none: detection off;
   * invalid: bad data; unknown: CLI missing or no version.
   */
  patterns: PatternStatus;
  /** Versions listed by recorded (not reconstructed) profiles. */
  verifiedVersions: string[];
  message: string;
  /** Set-up checks of the agent's own, from its driver (AgentDriver.setupChecks). */
  checks?: AgentCheck[];
}

/** The executable `cmd` resolves to on PATH (or itself when it has a slash), if any. */
export function which(cmd: string, envPath = process.env.PATH ?? ''): string | undefined {
  const isExec = (p: string) => {
    try {
      if (!fs.statSync(p).isFile()) return false;
      fs.accessSync(p, fs.constants.X_OK); // throws when not executable
      return true;
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return isExec(cmd) ? path.resolve(cmd) : undefined;
  for (const dir of envPath.split(path.delimiter).filter(Boolean)) {
    const p = path.join(dir, cmd);
    if (isExec(p)) return p;
  }
  return undefined;
}

async function versionOutput(file: string, args: string[], timeout = VERSION_TIMEOUT_MS): Promise<string | undefined> {
  try {
    const r = await execa(file, args, {
      timeout,
      reject: false,
      stdin: 'ignore',
      all: true,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return r.timedOut ? undefined : String(r.all ?? '').trim();
  } catch {
    return undefined;
  }
}

async function tool(name: string, args: string[], minVersion?: string): Promise<ToolReport> {
  const p = which(name);
  if (!p) return { name, found: false, ok: false, message: 'not found on PATH' };
  const text = await versionOutput(p, args);
  const version = text ? (/\d+(?:\.\d+)+[a-z]?/.exec(text)?.[0] ?? undefined) : undefined;
  const old = !!(minVersion && version && cmpLoose(version, minVersion) < 0);
  return {
    name,
    found: true,
    path: p,
    ...(version ? { version } : {}),
    ok: true,
    message: old ? `version ${version} is older than ${minVersion}, which orchctl is tested with` : p,
  };
}

/** "3.3a" vs "3.2": numeric parts first. */
function cmpLoose(a: string, b: string): number {
  const pa = a.split('.').map((x) => parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++)
    if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

interface AgentDef {
  name: string;
  source: 'template' | 'store';
  namespace?: string;
  spec: AgentSpec;
}

function templates(): AgentDef[] {
  const dir = path.join(packageRoot(), 'manifests/agents');
  if (!fs.existsSync(dir)) return [];
  const defs: AgentDef[] = [];
  for (const f of fs
    .readdirSync(dir)
    .filter((x) => /\.ya?ml$/.test(x))
    .sort()) {
    for (const doc of YAML.parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8'))) {
      const o = doc.toJS() as { kind?: string; metadata?: { name?: string }; spec?: AgentSpec } | null;
      if (o?.kind === 'Agent' && o.metadata?.name && o.spec)
        defs.push({ name: o.metadata.name, source: 'template', spec: o.spec });
    }
  }
  return defs;
}

/** Which store this host's orchctl uses (docs/contexts.md), and what went wrong reaching it. */
export interface StoreReport {
  backend?: string;
  location?: string;
  chosenBy?: string;
  context?: string;
  error?: string;
}

/** Agents in the store, only if the SQLite store already exists (doctor never creates one); fills in `store`. */
async function storeAgents(g: GlobalOptions, store: StoreReport): Promise<AgentDef[]> {
  const { openContext, resolveTarget } = await import('../context.js');
  // A bad config or an unreachable store is something to report, like a missing tool, not a crash.
  const failed = (e: unknown): AgentDef[] => {
    store.error = (e as Error).message.replaceAll('\nerror: ', '; ');
    return [];
  };
  let t: StoreTarget;
  try {
    t = await resolveTarget(g);
  } catch (e) {
    return failed(e);
  }
  Object.assign(store, {
    backend: t.location.backend,
    location: describeLocation(t.location),
    chosenBy: describeSource(t),
    ...(t.context ? { context: t.context } : {}),
  });
  if (t.location.backend === 'sqlite' && !fs.existsSync(t.location.path)) return [];
  const ctx = openContext(g, { readonly: true });
  try {
    const { items } = await ctx.store.list('Agent');
    return items.map((o) => ({
      name: o.metadata.name,
      namespace: o.metadata.namespace,
      source: 'store' as const,
      spec: o.spec as AgentSpec,
    }));
  } catch (e) {
    return failed(e);
  } finally {
    await ctx.close();
  }
}

async function checkAgent(def: AgentDef): Promise<AgentReport> {
  const [r, checks] = await Promise.all([checkVersion(def), driverFor(def.spec).setupChecks?.(def.spec) ?? []]);
  return checks.length ? { ...r, checks } : r;
}

async function checkVersion(def: AgentDef): Promise<AgentReport> {
  const command = def.spec.command?.[0] ?? '';
  const base: AgentReport = {
    name: def.name,
    source: def.source,
    ...(def.namespace ? { namespace: def.namespace } : {}),
    command,
    installed: false,
    patterns: 'unknown',
    verifiedVersions: [],
    message: '',
  };
  let profiles: DetectionProfile[] | undefined;
  let listed = '';
  if (def.spec.detection) {
    try {
      profiles = compileDetection(def.spec.detection, `Agent ${def.name}`, def.name);
      base.verifiedVersions = profiles.filter((p) => p.provenance === 'recorded').flatMap((p) => p.versions);
      listed = profiles
        .map((p) => p.versions.join(', ') + (p.provenance === 'recorded' ? '' : ` [${p.provenance}]`))
        .join('; ');
    } catch (e) {
      return { ...base, patterns: 'invalid', message: (e as Error).message };
    }
  }
  const p = command ? which(command) : undefined;
  if (!p)
    return {
      ...base,
      message: `${command || '(no command)'} not found on PATH${listed ? ` (patterns for ${listed})` : ''}`,
    };
  const text = await versionOutput(p, ['--version'], AGENT_VERSION_TIMEOUT_MS);
  const version = text ? parseVersion(text) : undefined;
  const r: AgentReport = { ...base, installed: true, path: p, ...(version ? { version } : {}) };
  if (!profiles) return { ...r, patterns: 'generic', message: 'no detection data: the generic patterns apply' };
  if (!profiles.length) return { ...r, patterns: 'none', message: 'pane detection is off (profiles: [])' };
  if (!version)
    return {
      ...r,
      message:
        text === undefined
          ? `${command} --version failed or timed out`
          : `no version in ${JSON.stringify(text.slice(0, 80))}`,
    };
  const hit = profileForVersion(profiles, version);
  if (!hit)
    return {
      ...r,
      patterns: 'unverified',
      message:
        `patterns were recorded from ${listed}, not ${version}: a screen of ${version} they do not know ` +
        'shows as WaitingForInput UnrecognisedScreen',
    };
  if (hit.provenance === 'reconstructed')
    return { ...r, patterns: 'reconstructed', message: `patterns for ${version} were reconstructed, not recorded` };
  return {
    ...r,
    patterns: 'verified',
    message: `patterns recorded from ${hit.versions.join(', ')}, which covers the installed ${version}`,
  };
}

export interface DoctorReport {
  ok: boolean;
  tools: ToolReport[];
  agents: AgentReport[];
  store: StoreReport;
}

export async function doctor(g: GlobalOptions): Promise<DoctorReport> {
  const store: StoreReport = {};
  const [tmux, git, agents] = await Promise.all([
    tool('tmux', ['-V'], MIN_TMUX),
    tool('git', ['--version']),
    Promise.all([...templates(), ...(await storeAgents(g, store))].map(checkAgent)),
  ]);
  const node: ToolReport = {
    name: 'node',
    found: true,
    path: process.execPath,
    version: process.version.replace(/^v/, ''),
    ok: true,
    message: process.execPath,
  };
  return { ok: tmux.found && git.found, tools: [tmux, git, node], agents, store };
}

export async function doctorCommand(opts: { output?: string }, g: GlobalOptions): Promise<void> {
  if (opts.output && opts.output !== 'json') throw new Error(`unknown output format "${opts.output}" (allowed: json)`);
  const report = await doctor(g);
  if (opts.output === 'json') out(JSON.stringify(report, null, 2) + '\n');
  else {
    out(
      renderTable([
        ['TOOL', 'VERSION', 'STATUS', 'DETAIL'],
        ...report.tools.map((t) => [t.name, t.version ?? '-', t.found ? 'ok' : 'missing', t.message]),
      ]),
    );
    out('\n');
    out(
      renderTable([
        ['AGENT', 'SOURCE', 'COMMAND', 'INSTALLED', 'VERSION', 'PATTERNS', 'DETAIL'],
        ...report.agents.map((a) => [
          a.namespace ? `${a.namespace}/${a.name}` : a.name,
          a.source,
          a.command,
          a.installed ? 'yes' : 'no',
          a.version ?? '-',
          a.patterns,
          a.message,
        ]),
      ]),
    );
    const checks = report.agents.flatMap((a) =>
      (a.checks ?? []).map((c) => [
        a.namespace ? `${a.namespace}/${a.name}` : a.name,
        c.check,
        c.ok ? 'ok' : 'fix',
        c.message,
      ]),
    );
    if (checks.length) out(`\n${renderTable([['AGENT', 'CHECK', 'STATUS', 'DETAIL'], ...checks])}`);
    const st = report.store;
    out(`\nStore: ${st.location ? `${st.location}, chosen by ${st.chosenBy}` : 'unknown'}\n`);
    if (st.error) out(`Store error: ${st.error}\n`);
  }
  const missing = report.tools.filter((t) => !t.found).map((t) => t.name);
  if (missing.length)
    throw new Error(
      `${missing.join(' and ')} not found on PATH: orchctl runs agents in tmux (≥ ${MIN_TMUX}) and watches git; ` +
        `install ${missing.join(' and ')} (e.g. apt-get install ${missing.join(' ')})`,
    );
}
