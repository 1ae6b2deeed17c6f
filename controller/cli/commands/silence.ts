/**
 * `orchctl silence create` and `orchctl silence expire`: Alertmanager's silences from the command
 * line, as amtool makes them (`amtool silence add reason=Stalled -d 2h`). A new silence starts now
 * and goes through the same schema and admission checks as `orchctl apply`, so a bad matcher or a
 * length past the bound is refused with nothing written. Expiring keeps the object for the record
 * and ends it now, as Alertmanager does; `orchctl get silences` lists them all.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import type { KindInfo } from '../../api/crds.js';
import { isApiError } from '../../api/errors.js';
import type { Silence, SilenceSpec } from '../../api/notification.js';
import { API_VERSION } from '../../api/types.js';
import { type FieldError, formatPath, validateObject } from '../../api/validate.js';
import { admissionErrors } from '../../client/admission.js';
import { namespaceFor, openContext, qualifiedKind, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';

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

function createdBy(): string {
  let user = process.env.USER;
  if (!user)
    try {
      user = os.userInfo().username;
    } catch {
      user = 'unknown';
    }
  return `${user}@${os.hostname()}`;
}

/** Which flag set the field an error names, so the message points at what to change. */
const FLAG_OF: Record<string, string> = {
  matchers: '-l/--matcher',
  endsAt: '--for/--until',
  comment: '--comment',
  createdBy: '$USER',
  name: '--name',
};

function describeError(e: FieldError): string {
  const flag = FLAG_OF[String(e.path[1])];
  return `${formatPath(e.path)}${flag ? ` (${flag})` : ''}: ${e.message}`;
}

/** Schema, then admission: the checks `orchctl apply` runs, in the same order. */
function problems(o: Silence, kind: KindInfo): FieldError[] {
  const schema = validateObject(o, kind);
  return schema.length ? schema : admissionErrors(o, kind);
}

export function buildSilence(matchers: string[], opts: SilenceCreateOptions, ns: string, now: number): Silence {
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
  const spec: SilenceSpec = { matchers, startsAt: rfc3339(now), endsAt: endsAt!, createdBy: createdBy() };
  if (opts.comment !== undefined) spec.comment = opts.comment;
  return {
    apiVersion: API_VERSION,
    kind: 'Silence',
    metadata: { name: opts.name ?? silenceName(now), namespace: ns },
    spec,
  };
}

export async function silenceCreateCommand(
  positional: string[],
  opts: SilenceCreateOptions,
  g: GlobalOptions,
): Promise<void> {
  const ctx = openContext(g);
  try {
    const kind = ctx.reg.resolve('silence');
    const silence = buildSilence(
      [...(opts.matcher ?? []), ...positional],
      opts,
      namespaceFor(kind, opts.namespace),
      Date.now(),
    );
    const errors = problems(silence, kind);
    if (errors.length) {
      for (const e of errors) err(`error: ${describeError(e)}\n`);
      throw new Error('the silence was not created');
    }
    try {
      await ctx.store.create(silence);
    } catch (e) {
      if (isApiError(e, 'AlreadyExists'))
        throw new Error(
          `silences "${silence.metadata.name}" already exists in namespace ${silence.metadata.namespace}`,
        );
      throw e;
    }
    out(`${silence.metadata.name}\n`);
  } finally {
    await ctx.close();
  }
}

export interface SilenceExpireOptions {
  namespace?: string;
}

/**
 * Ends each silence now. One not yet started is made to start and end now (Alertmanager's way), so
 * it never takes effect. Exit status 1 when any is not found.
 */
export async function silenceExpireCommand(names: string[], opts: SilenceExpireOptions, g: GlobalOptions) {
  const ctx = openContext(g);
  let failed = 0;
  try {
    const kind = ctx.reg.resolve('silence');
    const ns = namespaceFor(kind, opts.namespace);
    for (const arg of names) {
      const name = arg.includes('/') ? arg.split('/')[1] : arg;
      const what = `${qualifiedKind(kind)}/${name}`;
      for (let attempt = 0; ; attempt++) {
        const s = await ctx.store.get({ kind: 'Silence', namespace: ns, name });
        if (!s?.spec) {
          err(`error: silences "${name}" not found in namespace ${ns}\n`);
          failed++;
          break;
        }
        const now = Date.now();
        if (Date.parse(s.spec.endsAt) <= now) {
          out(`${what} unchanged (expired at ${s.spec.endsAt})\n`);
          break;
        }
        // To the millisecond: an active silence then still ends after it started, even within its first second.
        const at = new Date(now).toISOString();
        const spec: SilenceSpec = { ...s.spec, endsAt: at };
        if (Date.parse(s.spec.startsAt) > now) spec.startsAt = at;
        try {
          await ctx.store.update({ ...s, spec });
          out(`${what} expired\n`);
          break;
        } catch (e) {
          // Someone wrote it between our read and our write: read it again.
          if (!isApiError(e, 'Conflict') || attempt >= 4) throw e;
        }
      }
    }
  } finally {
    await ctx.close();
  }
  if (failed) process.exitCode = 1;
}
