/**
 * Validation of manifests against the CRD schemas (ajv: precompiled by the build, else compiled
 * lazily per kind) plus the few rules a structural schema cannot express (metadata keys, mutually
 * exclusive fields). Errors come back as field paths with Kubernetes-style wording; callers add
 * file:line:column.
 */
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { createAjv } from './ajv-setup.js';
import type { KindInfo } from './crds.js';
import { isGoDuration, parseDuration } from './duration.js';
import { checkDns1123Label, checkDns1123Subdomain, checkLabelValue, checkQualifiedName } from './names.js';
import { precompiledValidator } from './precompiled.js';
import { LABEL_NAMED_KINDS, manifestSchema } from './schema.js';
import type { Resource } from './types.js';

export type PathPart = string | number;

export interface FieldError {
  path: PathPart[];
  message: string;
  /** True when the error is about a key that should not be there (points at the key). */
  atKey?: boolean;
}

export const formatPath = (p: PathPart[]): string =>
  p.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');

let ajvInstance: Ajv | undefined;
/** The run-time compiler, for a schema the build did not precompile (api/ajv-setup.ts; loads ajv). */
const ajv = (): Ajv => (ajvInstance ??= createAjv());

const compiled = new Map<string, ValidateFunction>();

/**
 * The kind's validator: the build's precompiled one (api/precompiled.ts) when it was made from this very
 * schema, else compiled here on first use (~10–190 ms a kind, and ~90 ms to load ajv).
 */
function validatorFor(kind: KindInfo): ValidateFunction {
  let v = compiled.get(kind.kind);
  if (!v) {
    v = precompiledValidator(kind) ?? ajv().compile(manifestSchema(kind));
    compiled.set(kind.kind, v);
  }
  return v;
}

function pathOf(instancePath: string): PathPart[] {
  if (!instancePath) return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

const quote = (v: unknown) => JSON.stringify(v);

/** A literal where the schema has a reference (`url` beside `urlFrom`, `value` inside `urlFrom`) says what to write. */
function secretHint(e: ErrorObject, path: PathPart[]): string {
  const field = String(e.params.additionalProperty);
  const parent = String(path[path.length - 1] ?? '');
  if (field === 'value' && parent.endsWith('From'))
    return ': a secret is never written in an object; use {env: NAME} or {file: PATH}, read when it is used';
  const siblings = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  if (`${field}From` in siblings)
    return `: secrets are references; did you mean ${field}From: {env: NAME} (or {file: PATH})?`;
  return '';
}

function toFieldError(e: ErrorObject): FieldError | undefined {
  const path = pathOf(e.instancePath);
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return { path: [...path, p.missingProperty], message: 'Required value' };
    case 'additionalProperties':
      return {
        path: [...path, p.additionalProperty],
        message: `unknown field "${formatPath([...path, p.additionalProperty])}"${secretHint(e, path)}`,
        atKey: true,
      };
    case 'enum':
      return {
        path,
        message: `Unsupported value: must be one of ${(p.allowedValues as unknown[]).map(quote).join(', ')}`,
      };
    case 'const':
      return { path, message: `must be ${quote(p.allowedValue)}` };
    case 'type':
      return { path, message: `must be of type ${p.type}` };
    case 'format':
      if (p.format === 'go-duration') return { path, message: 'must be a duration like 45m' };
      return { path, message: `must be a valid ${p.format}` };
    case 'pattern':
      // metadata.name and .namespace are checked with a better message below.
      if (path.join('.') === 'metadata.name' || path.join('.') === 'metadata.namespace') return undefined;
      return { path, message: `must match the pattern ${quote(p.pattern)}` };
    case 'minimum':
    case 'exclusiveMinimum':
      return { path, message: `must be greater than ${p.comparison === '>=' ? 'or equal to ' : ''}${p.limit}` };
    case 'maximum':
    case 'exclusiveMaximum':
      return { path, message: `must be less than ${p.comparison === '<=' ? 'or equal to ' : ''}${p.limit}` };
    case 'minLength':
      return { path, message: p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters` };
    case 'maxLength':
      return { path, message: `must be no more than ${p.limit} characters` };
    case 'minItems':
      return { path, message: `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}` };
    case 'maxItems':
      return { path, message: `must have at most ${p.limit} items` };
    case 'x-orchctl-max-duration':
      return { path, message: e.message ?? 'is too long' };
    case 'anyOf':
      return undefined; // the branch errors say more
    default:
      return { path, message: e.message ?? 'is invalid' };
  }
}

function checkMetadata(obj: Resource, kind: KindInfo): FieldError[] {
  const errs: FieldError[] = [];
  const m = obj.metadata;
  if (!m || typeof m !== 'object') return errs;
  if (typeof m.name === 'string') {
    const e = LABEL_NAMED_KINDS.has(kind.kind) ? checkDns1123Label(m.name) : checkDns1123Subdomain(m.name);
    if (e) errs.push({ path: ['metadata', 'name'], message: `Invalid value ${quote(m.name)}: ${e}` });
  }
  if (typeof m.namespace === 'string') {
    if (!kind.namespaced)
      errs.push({
        path: ['metadata', 'namespace'],
        message: `${kind.kind} is cluster-scoped and has no namespace`,
        atKey: true,
      });
    const e = checkDns1123Label(m.namespace);
    if (e) errs.push({ path: ['metadata', 'namespace'], message: `Invalid value ${quote(m.namespace)}: ${e}` });
  }
  for (const [field, checkVal] of [
    ['labels', checkLabelValue],
    ['annotations', undefined],
  ] as const) {
    const map = m[field];
    if (!map || typeof map !== 'object') continue;
    for (const [k, v] of Object.entries(map)) {
      const ke = checkQualifiedName(k);
      if (ke) errs.push({ path: ['metadata', field, k], message: `Invalid key ${quote(k)}: ${ke}`, atKey: true });
      if (checkVal && typeof v === 'string') {
        const ve = checkVal(v);
        if (ve) errs.push({ path: ['metadata', field, k], message: `Invalid value ${quote(v)}: ${ve}` });
      }
    }
  }
  return errs;
}

type SemanticCheck = (obj: Resource) => FieldError[];

function exclusive(spec: Record<string, unknown>, a: string, b: string, required: boolean): FieldError[] {
  const has = (k: string) => spec[k] !== undefined && spec[k] !== null;
  if (has(a) && has(b)) return [{ path: ['spec', b], message: `may not be set together with spec.${a}` }];
  if (required && !has(a) && !has(b)) return [{ path: ['spec'], message: `one of spec.${a} or spec.${b} is required` }];
  return [];
}

function positiveDuration(spec: Record<string, unknown> | undefined, field: string, base: PathPart[]): FieldError[] {
  const v = spec?.[field];
  if (typeof v === 'string' && isGoDuration(v) && parseDuration(v) <= 0)
    return [{ path: [...base, field], message: 'must be a positive duration like 45m' }];
  return [];
}

/** restartBackoff.initialDelay may not exceed maxDelay. */
function delayOrder(b: unknown, base: PathPart[]): FieldError[] {
  const { initialDelay, maxDelay } = (b ?? {}) as { initialDelay?: unknown; maxDelay?: unknown };
  if (
    typeof initialDelay !== 'string' ||
    typeof maxDelay !== 'string' ||
    !isGoDuration(initialDelay) ||
    !isGoDuration(maxDelay)
  )
    return [];
  if (parseDuration(initialDelay) <= parseDuration(maxDelay)) return [];
  return [
    {
      path: [...base, 'initialDelay'],
      message: `must not exceed ${formatPath([...base, 'maxDelay'])} (${initialDelay} > ${maxDelay})`,
    },
  ];
}

/** An env entry has a value or a valueFrom, not both. */
function envEntries(list: unknown, base: PathPart[]): FieldError[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((e: { value?: unknown; valueFrom?: unknown }, i) =>
    e && e.value !== undefined && e.valueFrom !== undefined
      ? [{ path: [...base, i, 'valueFrom'], message: 'may not be set together with value' }]
      : [],
  );
}

/** Rules a structural schema cannot express. */
const SEMANTIC: Record<string, SemanticCheck> = {
  AgentSession: (obj) => {
    const spec = (obj.spec ?? {}) as Record<string, unknown>;
    return [
      ...exclusive(spec, 'agentRef', 'agent', true),
      ...exclusive(spec, 'projectRef', 'workdir', true),
      ...exclusive(spec, 'prompt', 'promptFile', false),
      ...positiveDuration(spec, 'maxDuration', ['spec']),
      ...delayOrder(spec.restartBackoff, ['spec', 'restartBackoff']),
      ...envEntries(spec.env, ['spec', 'env']),
      ...envEntries((spec.agent as { env?: unknown } | undefined)?.env, ['spec', 'agent', 'env']),
    ];
  },
  Agent: (obj) => envEntries((obj.spec as { env?: unknown } | undefined)?.env, ['spec', 'env']),
  SessionPolicy: (obj) => positiveDuration(obj.spec as Record<string, unknown>, 'maxSessionDuration', ['spec']),
};

/**
 * Validates a manifest object (status is ignored and should be removed by the caller first).
 * Fills in schema defaults in place, as the API server's defaulting does.
 */
export function validateObject(obj: Resource, kind: KindInfo): FieldError[] {
  const v = validatorFor(kind);
  const errors: FieldError[] = [];
  if (!v(obj))
    for (const e of v.errors ?? []) {
      const fe = toFieldError(e);
      if (fe) errors.push(fe);
    }
  errors.push(...checkMetadata(obj, kind));
  if (errors.length === 0) errors.push(...(SEMANTIC[kind.kind]?.(obj) ?? []));
  // ajv can report the same problem twice through anyOf branches.
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${formatPath(e.path)}|${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const plainValidators = new WeakMap<object, ValidateFunction>();

/**
 * Validates data against a plain JSON Schema (orchctl's own files, e.g. the config: not a kind),
 * with the same ajv set-up and wording as manifests.
 */
export function validateAgainstSchema(schema: object, data: unknown): FieldError[] {
  let v = plainValidators.get(schema);
  if (!v) {
    v = ajv().compile(schema);
    plainValidators.set(schema, v);
  }
  if (v(data)) return [];
  return (v.errors ?? []).map(toFieldError).filter((e): e is FieldError => e !== undefined);
}
