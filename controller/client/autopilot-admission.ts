/**
 * Admission of an Autopilot: what its CRD cannot say. The schema bounds every duration from above;
 * the lower bounds (a think every 10s at most, windows of at least a minute) are checked here, as
 * are the planner's backend-specific fields and the label selectors' keys, values and operators
 * (metav1.LabelSelector's rules), so that a selector that could never match is refused at apply
 * rather than silently selecting nothing.
 */
import { AUTOPILOT_LABEL, DECISION_LABEL, PROJECT_LABEL } from '../api/autopilot.js';
import { isGoDuration, parseDuration } from '../api/duration.js';
import { checkLabelValue, checkQualifiedName } from '../api/names.js';
import type { FieldError, PathPart } from '../api/validate.js';
import { llmBackendErrors } from './llm-admission.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);

/** The labels a start puts on its session itself: a template may not set them. */
const RESERVED_LABELS = new Set([AUTOPILOT_LABEL, PROJECT_LABEL, DECISION_LABEL]);

/** A duration below `least` (the schema has already refused negatives and the upper bound). */
function atLeast(o: Obj | undefined, field: string, least: string, at: PathPart[]): FieldError[] {
  const v = o?.[field];
  if (typeof v !== 'string' || !isGoDuration(v) || parseDuration(v) >= parseDuration(least)) return [];
  return [{ path: [...at, field], message: `must be at least ${least}, got ${v}` }];
}

/** Label keys and values of a map (matchLabels, a template's labels). */
function labelMap(map: Obj | undefined, at: PathPart[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(map ?? {})) {
    const ke = checkQualifiedName(k);
    if (ke) errs.push({ path: [...at, k], message: `Invalid key "${k}": ${ke}`, atKey: true });
    const ve = typeof v === 'string' ? checkLabelValue(v) : undefined;
    if (ve) errs.push({ path: [...at, k], message: `Invalid value "${v}": ${ve}` });
  }
  return errs;
}

/** A metav1.LabelSelector: valid keys and values; In/NotIn with values, Exists/DoesNotExist without. */
export function labelSelectorErrors(selector: unknown, at: PathPart[]): FieldError[] {
  const s = obj(selector);
  if (!s) return [];
  const errs = labelMap(obj(s.matchLabels), [...at, 'matchLabels']);
  const exprs = Array.isArray(s.matchExpressions) ? (s.matchExpressions as Obj[]) : [];
  exprs.forEach((e, i) => {
    const p = [...at, 'matchExpressions', i];
    const ke = typeof e.key === 'string' ? checkQualifiedName(e.key) : undefined;
    if (ke) errs.push({ path: [...p, 'key'], message: `Invalid value "${e.key}": ${ke}` });
    const values = Array.isArray(e.values) ? (e.values as unknown[]) : [];
    const set = e.operator === 'In' || e.operator === 'NotIn';
    if (set && !values.length)
      errs.push({ path: [...p, 'values'], message: `must be non-empty when operator is ${e.operator}` });
    if (!set && values.length)
      errs.push({ path: [...p, 'values'], message: `must be empty when operator is ${e.operator}` });
    values.forEach((v, j) => {
      const ve = typeof v === 'string' ? checkLabelValue(v) : undefined;
      if (ve) errs.push({ path: [...p, 'values', j], message: `Invalid value "${v}": ${ve}` });
    });
  });
  return errs;
}

function plannerErrors(planner: Obj | undefined, at: PathPart[]): FieldError[] {
  if (!planner) return [];
  const errs: FieldError[] = [];
  const backend = planner.backend;
  if ((backend === 'openai' || backend === 'anthropic') && planner.model === undefined)
    errs.push({ path: [...at, 'model'], message: `is required for the ${backend} backend` });
  if (backend === 'command' && !(Array.isArray(planner.command) && planner.command.length))
    errs.push({ path: [...at, 'command'], message: 'is required for the command backend' });
  const timeout = planner.timeout;
  if (typeof timeout === 'string' && isGoDuration(timeout) && parseDuration(timeout) <= 0)
    errs.push({ path: [...at, 'timeout'], message: 'must be a positive duration like 60s' });
  return [...errs, ...llmBackendErrors(planner, at)];
}

function templateErrors(template: Obj | undefined, at: PathPart[]): FieldError[] {
  const labels = obj(template?.labels);
  const errs = labelMap(labels, [...at, 'labels']);
  for (const k of Object.keys(labels ?? {}))
    if (RESERVED_LABELS.has(k))
      errs.push({ path: [...at, 'labels', k], message: `is set by the autopilot itself`, atKey: true });
  const maxDuration = template?.maxDuration;
  if (typeof maxDuration === 'string' && isGoDuration(maxDuration) && parseDuration(maxDuration) <= 0)
    errs.push({ path: [...at, 'maxDuration'], message: 'must be a positive duration like 45m' });
  return errs;
}

/** Everything wrong with an Autopilot spec that passed schema validation, each error naming its path. */
export function autopilotErrors(spec: Obj): FieldError[] {
  const guardrails = obj(spec.guardrails);
  const history = obj(spec.history);
  return [
    ...labelSelectorErrors(spec.projectSelector, ['spec', 'projectSelector']),
    ...atLeast(spec, 'interval', '10s', ['spec']),
    ...plannerErrors(obj(spec.planner), ['spec', 'planner']),
    ...labelSelectorErrors(guardrails?.protectedProjects, ['spec', 'guardrails', 'protectedProjects']),
    ...atLeast(guardrails, 'errorRetryWindow', '1m', ['spec', 'guardrails']),
    ...templateErrors(obj(spec.sessionTemplate), ['spec', 'sessionTemplate']),
    ...atLeast(history, 'ttl', '1m', ['spec', 'history']),
    ...atLeast(obj(spec.approval), 'timeout', '1s', ['spec', 'approval']),
  ];
}
