/**
 * Admission: checks apply runs after schema validation, for what a schema cannot say — above
 * all that the regular expressions in a manifest are valid and safe to run on every message or
 * screen (controller/api/patterns.ts): a SessionPolicy's detector and task-boundary patterns,
 * and an Agent's detection data (agents/detection.ts, also inline in an AgentSession). It lives
 * in client/ because it needs agents/, which api/ must not import.
 */
import type { KindInfo } from '../api/crds.js';
import { isGoDuration, parseDuration } from '../api/duration.js';
import { checkPattern } from '../api/patterns.js';
import type { Resource } from '../api/types.js';
import type { FieldError, PathPart } from '../api/validate.js';
import { validateDetection } from '../agents/detection.js';

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
  ];
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

/** Errors of an object that passed schema validation (empty: admitted). */
export function admissionErrors(o: Resource, kind: KindInfo): FieldError[] {
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
      ];
    default:
      return [];
  }
}
