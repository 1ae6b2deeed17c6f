/**
 * Admission: checks apply runs after schema validation, for what a schema cannot say — above
 * all that the regular expressions in a manifest are valid and safe to run on every message or
 * screen (controller/api/patterns.ts): a SessionPolicy's detector and task-boundary patterns,
 * an Agent's detection data (agents/detection.ts, also inline in an AgentSession), and the
 * notification kinds' rules (a NotificationPolicy's route tree, a Silence, a channel's spec) and an
 * Autopilot's (autopilot-admission.ts); Notifications and Decisions are the controller's. It
 * lives in client/ because it needs agents/ and notify/, which api/ must not import.
 */
import type { KindInfo } from '../api/crds.js';
import { registry } from '../config/crds.js';
import { isGoDuration, parseDuration } from '../api/duration.js';
import type { NotificationChannelSpec } from '../api/notification-channel.js';
import {
  LIMITS,
  type NotificationPolicySpec,
  type SilenceSpec,
  validateNotificationPolicy,
  validateSilence,
} from '../api/notification.js';
import { checkPattern } from '../api/patterns.js';
import type { Resource } from '../api/types.js';
import { type FieldError, formatPath, type PathPart, validateObject } from '../api/validate.js';
import { validateDetection } from '../agents/detection.js';
import { CHANNEL_DRIVERS, channelDriver } from '../notify/drivers.js';
import { specProblem } from '../notify/spec.js';
import { autopilotErrors } from './autopilot-admission.js';
import { llmBackendErrors } from './llm-admission.js';
import { nodeSelectorErrors } from './node-selector-admission.js';
import { pipelineErrors } from './pipeline-admission.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

/** "spec.detection.profiles[0].busy[1]" → ['spec', 'detection', 'profiles', 0, 'busy', 1]. */
export function parsePath(p: string): PathPart[] {
  const out: PathPart[] = [];
  for (const m of p.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  return out;
}

function patterns(list: unknown, at: PathPart[]): FieldError[] {
  if (!Array.isArray(list)) return [];
  const errs: FieldError[] = [];
  list.forEach((p, i) => {
    const problem = checkPattern(p);
    if (problem) errs.push({ path: [...at, i], message: problem });
  });
  return errs;
}

function positive(o: Obj | undefined, field: string, at: PathPart[]): FieldError[] {
  const v = o?.[field];
  if (typeof v === 'string' && isGoDuration(v) && parseDuration(v) <= 0)
    return [{ path: [...at, field], message: 'must be a positive duration like 5m' }];
  return [];
}

function sessionPolicy(spec: Obj): FieldError[] {
  const detector = obj(spec.detector);
  const breaker = obj(spec.breaker);
  const checkpoints = obj(spec.checkpoints);
  return [
    ...patterns(detector?.frustrationPatterns, ['spec', 'detector', 'frustrationPatterns']),
    ...patterns(detector?.satisfactionPatterns, ['spec', 'detector', 'satisfactionPatterns']),
    ...patterns(detector?.correctionPatterns, ['spec', 'detector', 'correctionPatterns']),
    ...patterns(checkpoints?.taskBoundaryPatterns, ['spec', 'checkpoints', 'taskBoundaryPatterns']),
    ...positive(detector, 'stalledAfter', ['spec', 'detector']),
    ...positive(breaker, 'correctionWindow', ['spec', 'breaker']),
    ...positive(breaker, 'cooldown', ['spec', 'breaker']),
    ...positive(checkpoints, 'interval', ['spec', 'checkpoints']),
    ...budgetErrors(obj(spec.budget)),
    ...positive(obj(spec.budget), 'window', ['spec', 'budget']),
    ...llmBackendErrors(spec.judge, ['spec', 'judge']),
  ];
}

/** A budget limits tokens, cost or both: one with neither would never be reached. */
function budgetErrors(budget: Obj | undefined): FieldError[] {
  if (!budget || budget.maxTokens !== undefined || budget.maxCostUSD !== undefined) return [];
  return [{ path: ['spec', 'budget'], message: 'needs maxTokens, maxCostUSD or both' }];
}

function detection(v: unknown, at: string): FieldError[] {
  return validateDetection(v, at).map((e) => ({ path: parsePath(e.path), message: e.message }));
}

/**
 * tmux takes a command of at most about 16 KB from its client ("command too long"); the agent's
 * command line is part of the launch command, and with promptDelivery argument so is the prompt.
 * Refused here with the field named rather than at launch.
 */
export const MAX_AGENT_COMMAND_LINE_BYTES = 12 * 1024;

function commandLine(agent: Obj | undefined, prompt: unknown, at: PathPart[], promptAt: PathPart[]): FieldError[] {
  if (!agent) return [];
  const words = [...((agent.command as unknown[]) ?? []), ...((agent.args as unknown[]) ?? [])].map(String);
  const base = words.reduce((n, w) => n + Buffer.byteLength(w) + 1, 0);
  if (base > MAX_AGENT_COMMAND_LINE_BYTES)
    return [
      {
        path: [...at, 'args'],
        message:
          `command and args are ${base} bytes, more than ${MAX_AGENT_COMMAND_LINE_BYTES} ` +
          '(tmux takes commands up to about 16 KB)',
      },
    ];
  if (agent.promptDelivery === 'argument' && typeof prompt === 'string') {
    const total = base + Buffer.byteLength(prompt);
    if (total > MAX_AGENT_COMMAND_LINE_BYTES)
      return [
        {
          path: promptAt,
          message:
            `is ${Buffer.byteLength(prompt)} bytes: too long for promptDelivery argument ` +
            `(the command line may be at most ${MAX_AGENT_COMMAND_LINE_BYTES} bytes); use paste or stdin delivery`,
        },
      ];
  }
  return [];
}

/**
 * A NotificationPolicy's child routes: the CRD cannot describe a recursive tree, so it keeps
 * `routes` items as they are and each is checked here against the root route's own schema (the
 * same fields, types and bounds; an unknown field is refused), by validating a copy of the object
 * with that child as its root route. Only then do the tree's rules run, on well-typed data.
 */
function childRouteErrors(o: Resource, kind: KindInfo): FieldError[] {
  const out: FieldError[] = [];
  let seen = 0;
  const walk = (route: unknown, at: PathPart[], depth: number) => {
    const routes = obj(route)?.routes;
    if (!Array.isArray(routes) || depth >= LIMITS.depth) return; // the tree's rules report depth
    routes.forEach((child, i) => {
      if (++seen > LIMITS.routes) return; // reported by the tree's rules; YAML aliases can make a tree huge
      const path = [...at, 'routes', i];
      const probe = structuredClone({ ...o, spec: { route: child } }) as Resource;
      const errs = validateObject(probe, kind).filter((e) => e.path[0] === 'spec' && e.path[1] === 'route');
      for (const e of errs) {
        const moved = [...path, ...e.path.slice(2)];
        out.push({ ...e, path: moved, message: e.message.replace(formatPath(e.path), formatPath(moved)) });
      }
      if (!errs.length) walk(child, path, depth + 1);
    });
  };
  walk(obj(o.spec)?.route, ['spec', 'route'], 0);
  return out;
}

function notificationPolicy(o: Resource, kind: KindInfo): FieldError[] {
  const children = childRouteErrors(o, kind);
  if (children.length) return children;
  const llm = llmBackendErrors(obj(obj(o.spec)?.digest)?.llm, ['spec', 'digest', 'llm']);
  return [...llm, ...validateNotificationPolicy(o.spec as NotificationPolicySpec)];
}

const COMMON_CHANNEL_FIELDS = ['type', 'timeout', 'rateLimit', 'dailyBudget'];

/** The field a specProblem message is about: the first one it names ("email needs host" → spec.host). */
function problemPath(problem: string): PathPart[] {
  const fields = new Set([...COMMON_CHANNEL_FIELDS, ...CHANNEL_DRIVERS.flatMap((d) => d.fields)]);
  for (const [word] of problem.matchAll(/[A-Za-z]+(?:\.[A-Za-z]+)?/g))
    if (fields.has(word.split('.')[0])) return ['spec', ...parsePath(word)];
  return ['spec'];
}

/** A URL written in the object may not carry credentials: they are secrets, read from a reference. */
function literalCredentials(url: unknown, at: PathPart[], instead: string): FieldError[] {
  if (typeof url !== 'string') return [];
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const secretParam = [...u.searchParams.keys()].find((k) => /^(auth|token|access_token|password|key)$/i.test(k));
  if (!u.username && !u.password && !secretParam) return [];
  const what = secretParam ? `the query parameter "${secretParam}"` : 'credentials';
  return [{ path: at, message: `holds ${what}, a secret that is never stored in an object: use ${instead}` }];
}

function notificationChannel(spec: Obj): FieldError[] {
  const type = spec.type as NotificationChannelSpec['type'];
  // Which of the spec's fields the type reads: the CRD has every type's fields in one object.
  const allowed = new Set([...COMMON_CHANNEL_FIELDS, ...(channelDriver(type)?.fields ?? [])]);
  const foreign = Object.keys(spec)
    .filter((k) => !allowed.has(k))
    .map((k) => ({ path: ['spec', k], message: `is not a field of a ${type} channel`, atKey: true }));
  const errs: FieldError[] = [
    ...foreign,
    ...literalCredentials(spec.server, ['spec', 'server'], 'tokenFrom, or the whole URL in urlFrom'),
  ];
  if (Array.isArray(spec.env))
    spec.env.forEach((e: Obj, i) => {
      if (e?.value !== undefined && e.valueFrom !== undefined)
        errs.push({ path: ['spec', 'env', i, 'valueFrom'], message: 'may not be set together with value' });
    });
  if (errs.length) return errs;
  const problem = specProblem(spec as NotificationChannelSpec);
  if (!problem) return [];
  const path = problemPath(problem);
  // "timeout must be positive" at spec.timeout reads "spec.timeout: must be positive".
  const field = formatPath(path.slice(1));
  return [{ path, message: problem.startsWith(`${field} `) ? problem.slice(field.length + 1) : problem }];
}

/**
 * Who writes: `apply`, a person's manifest; `program`, the controller or a CLI command through the
 * validating client (client/validating-store.ts), which alone may write Notifications and Decisions.
 */
export type AdmissionOrigin = 'apply' | 'program';

/** Errors of an object that passed schema validation (empty: admitted). */
export function admissionErrors(o: Resource, kind: KindInfo, origin: AdmissionOrigin = 'apply'): FieldError[] {
  const spec = obj(o.spec) ?? {};
  switch (kind.kind) {
    case 'SessionPolicy':
      return sessionPolicy(spec);
    case 'Agent':
      return [...detection(spec.detection, 'spec.detection'), ...commandLine(spec, undefined, ['spec'], [])];
    case 'AgentSession':
      return [
        ...detection(obj(spec.agent)?.detection, 'spec.agent.detection'),
        ...commandLine(obj(spec.agent), spec.prompt, ['spec', 'agent'], ['spec', 'prompt']),
        ...nodeSelectorErrors(spec.nodeSelector, ['spec', 'nodeSelector']),
      ];
    case 'Project':
      return nodeSelectorErrors(spec.nodeSelector, ['spec', 'nodeSelector']);
    case 'NotificationChannel':
      return notificationChannel(spec);
    case 'NotificationPolicy':
      return notificationPolicy(o, kind);
    case 'Silence':
      return validateSilence(o.spec as SilenceSpec);
    case 'Notification':
      if (origin === 'program') return [];
      // The outbox is the notifier's: a Notification applied by hand would be sent without a route.
      return [{ path: ['kind'], message: 'Notifications are written by the controller; use `orchctl notify test`' }];
    case 'Autopilot':
      return autopilotErrors(spec);
    case 'Pipeline':
      return pipelineErrors(o, registry().byKind.get('AgentSession'), admissionErrors);
    case 'Decision':
      if (origin === 'program') return [];
      // An Autopilot's record of its own choice: one applied by hand would execute without a think behind it.
      return [
        {
          path: ['kind'],
          message:
            'Decisions are written by the controller (an Autopilot); answer a pending one with ' +
            '`orchctl approve|reject decision NAME`',
        },
      ];
    default:
      return [];
  }
}
