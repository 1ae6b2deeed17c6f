/**
 * Silences as amtool makes them, shared by `orchctl silence create|expire` and the console: a new
 * silence starts now and goes through the same schema and admission checks as `orchctl apply`;
 * expiring ends it now and keeps the object for the record.
 */
import crypto from 'node:crypto';
import type { KindInfo } from '../api/crds.js';
import { isApiError } from '../api/errors.js';
import { retryOnConflict } from '../store/retry.js';
import type { Silence, SilenceSpec } from '../api/notification.js';
import { API_VERSION } from '../api/types.js';
import { type FieldError, formatPath, validateObject } from '../api/validate.js';
import type { Store } from '../store/store.js';
import { admissionErrors } from './admission.js';

export interface SilenceCreateOptions {
  matcher?: string[];
  for?: string;
  until?: string;
  comment?: string;
  name?: string;
  namespace?: string;
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/**
 * A silence's length: Go durations (`90m`, `1h30m`) and, as amtool and Prometheus write them,
 * days and weeks (`2d`, `1w`), which Go's durations lack.
 */
export function parseSilenceDuration(v: string): number {
  const parts = [...v.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)];
  if (!v || parts.map((p) => p[0]).join('') !== v) throw new Error(`--for "${v}" is not a duration like 2h, 90m or 3d`);
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]], 0);
}

/** RFC 3339 in UTC to the second: what a person reads in `get -o yaml`. */
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `silence-20250131-180000-3fa2`: sorts by creation time, unique enough without a lookup. */
export function silenceName(now: number): string {
  const stamp = rfc3339(now).replace(/[-:]/g, '').replace('T', '-').replace('Z', '');
  return `silence-${stamp}-${crypto.randomBytes(2).toString('hex')}`;
}

/** Which flag set the field an error names, so the message points at what to change. */
const FLAG_OF: Record<string, string> = {
  matchers: '-l/--matcher',
  endsAt: '--for/--until',
  comment: '--comment',
  createdBy: '$USER',
  name: '--name',
};

export function describeError(e: FieldError): string {
  const flag = FLAG_OF[String(e.path[1])];
  return `${formatPath(e.path)}${flag ? ` (${flag})` : ''}: ${e.message}`;
}

/** Schema, then admission: the checks `orchctl apply` runs, in the same order. */
export function problems(o: Silence, kind: KindInfo): FieldError[] {
  const schema = validateObject(o, kind);
  return schema.length ? schema : admissionErrors(o, kind);
}

export function buildSilence(
  matchers: string[],
  opts: SilenceCreateOptions,
  ns: string,
  now: number,
  createdBy: string,
): Silence {
  if (!matchers.length)
    throw new Error('give at least one matcher, e.g. -l reason=Stalled or involvedObject.name=fix-login');
  if ((opts.for === undefined) === (opts.until === undefined))
    throw new Error('give how long the silence lasts: --for 2h or --until 2025-01-31T18:00:00Z (one of them)');
  let endsAt = opts.until;
  if (opts.for !== undefined) {
    const ms = parseSilenceDuration(opts.for);
    if (ms <= 0) throw new Error(`--for "${opts.for}" must be longer than nothing`);
    endsAt = rfc3339(now + ms);
  }
  const spec: SilenceSpec = { matchers, startsAt: rfc3339(now), endsAt: endsAt!, createdBy };
  if (opts.comment !== undefined) spec.comment = opts.comment;
  return {
    apiVersion: API_VERSION,
    kind: 'Silence',
    metadata: { name: opts.name ?? silenceName(now), namespace: ns },
    spec,
  };
}

/** Creates the silence, refused with every error (naming its flag) and nothing written when it is bad. */
export async function createSilence(store: Store, silence: Silence, kind: KindInfo): Promise<void> {
  const errors = problems(silence, kind);
  if (errors.length) throw new Error(`the silence was not created: ${errors.map(describeError).join('; ')}`);
  try {
    await store.create(silence);
  } catch (e) {
    if (isApiError(e, 'AlreadyExists'))
      throw new Error(`silences "${silence.metadata.name}" already exists in namespace ${silence.metadata.namespace}`);
    throw e;
  }
}

export type ExpireOutcome = { outcome: 'expired' } | { outcome: 'unchanged'; endsAt: string } | { outcome: 'missing' };

/**
 * Ends the silence now. One not yet started is made to start and end now (Alertmanager's way), so
 * it never takes effect.
 */
export async function expireSilence(store: Store, ns: string, name: string): Promise<ExpireOutcome> {
  // Someone wrote it between our read and our write: read it again.
  return retryOnConflict(
    async (): Promise<ExpireOutcome> => {
      const s = await store.get({ kind: 'Silence', namespace: ns, name });
      if (!s?.spec) return { outcome: 'missing' };
      const now = Date.now();
      if (Date.parse(s.spec.endsAt) <= now) return { outcome: 'unchanged', endsAt: s.spec.endsAt };
      // To the millisecond: an active silence then still ends after it started, even within its first second.
      const at = new Date(now).toISOString();
      const spec: SilenceSpec = { ...s.spec, endsAt: at };
      if (Date.parse(s.spec.startsAt) > now) spec.startsAt = at;
      await store.update({ ...s, spec });
      return { outcome: 'expired' };
    },
    { attempts: 5, retryOn: (e) => isApiError(e, 'Conflict') },
  );
}
