/**
 * `orchctl apply`: validate every document first, then write all of them in one store
 * transaction (all-or-nothing). Used by the CLI and by the controller's --manifests watcher.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KindInfo, Registry } from '../api/crds.js';
import { isApiError } from '../api/errors.js';
import type { Selector } from '../api/labels.js';
import { locateError, type ManifestError, type ManifestDoc } from '../config/manifest.js';
import { policyReach, reachWarning } from '../api/policy.js';
import { API_VERSION, LAST_APPLIED_ANNOTATION, type Resource } from '../api/types.js';
import { validateObject } from '../api/validate.js';
import { retryOnConflict } from '../store/retry.js';
import type { Store, WriteOp } from '../store/store.js';
import { admissionErrors } from './admission.js';
import { threeWayMerge } from './merge.js';
import { normalizeManifest } from './normalize.js';

export type DryRun = 'none' | 'client' | 'server';

export interface PreparedObject {
  doc: ManifestDoc;
  kind: KindInfo;
  /** Normalised manifest, before defaults: what becomes the last-applied annotation. */
  manifest: Resource;
}

export interface ApplyOptions {
  dryRun?: DryRun;
  prune?: boolean;
  pruneSelector?: Selector;
  /** Kinds to consider for pruning. */
  registry?: Registry;
}

export type ApplyAction = 'created' | 'configured' | 'unchanged' | 'pruned';

export interface ApplyResult {
  kind: KindInfo;
  namespace?: string;
  name: string;
  action: ApplyAction;
  object: Resource;
}

export class ValidationFailed extends Error {
  constructor(readonly errors: ManifestError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.name = 'ValidationFailed';
  }
}

/** Errors in reading order: by file, then line and column. */
function sortByPosition(errors: ManifestError[]): ManifestError[] {
  return errors
    .map((e, i) => ({ e, i }))
    .sort(
      (a, b) =>
        a.e.file.localeCompare(b.e.file) ||
        (a.e.line ?? 0) - (b.e.line ?? 0) ||
        (a.e.col ?? 0) - (b.e.col ?? 0) ||
        a.i - b.i,
    )
    .map((x) => x.e);
}

/** Kinds that are written by the controller, never pruned by apply. */
const SYSTEM_KINDS = new Set(['Event', 'Node', 'Evaluation', 'Notification', 'Decision']);

export function prepareManifests(docs: ManifestDoc[], reg: Registry, namespace?: string): PreparedObject[] {
  const errors: ManifestError[] = [];
  const out: PreparedObject[] = [];
  const seen = new Map<string, ManifestDoc>();
  for (const d of docs) {
    const err = (path: (string | number)[], message: string, atKey = false) =>
      errors.push(locateError(d, { path, message, atKey }));
    const o = d.object as Resource;
    if (!o || typeof o !== 'object' || Array.isArray(o)) {
      err([], 'a manifest must be a mapping with apiVersion, kind, metadata');
      continue;
    }
    if (typeof o.kind !== 'string' || !o.kind) {
      err(['kind'], 'Required value');
      continue;
    }
    const kind = reg.byKind.get(o.kind);
    if (!kind) {
      err(
        ['kind'],
        `no kind "${o.kind}" is registered for version "${API_VERSION}" ` +
          `(known kinds: ${reg.kinds.map((k) => k.kind).join(', ')})`,
      );
      continue;
    }
    const manifest = normalizeManifest(o, kind, d.dir, namespace);
    const fieldErrors = validateObject(structuredClone(manifest), kind);
    if (fieldErrors.length) {
      for (const e of fieldErrors) errors.push(locateError(d, e));
      continue;
    }
    // Admission: what the schema cannot say (regex validity and backtracking safety, ...).
    const admission = admissionErrors(manifest, kind);
    if (admission.length) {
      for (const e of admission) errors.push(locateError(d, e));
      continue;
    }
    const id = `${kind.kind}/${manifest.metadata.namespace ?? ''}/${manifest.metadata.name}`;
    const prev = seen.get(id);
    if (prev) {
      err(
        ['metadata', 'name'],
        `duplicate object: ${kind.singular} "${manifest.metadata.name}" ` +
          `is also defined in ${prev.file} (document ${prev.index})`,
      );
      continue;
    }
    seen.set(id, d);
    out.push({ doc: d, kind, manifest });
  }
  if (errors.length) throw new ValidationFailed(sortByPosition(errors));
  return out;
}

const stripForCompare = (o: Resource) => {
  const c = structuredClone(o);
  delete c.status;
  delete c.metadata.resourceVersion;
  return c;
};

/** Computes the object to store for one manifest, given what is live (if anything). */
function desiredObject(p: PreparedObject, live: Resource | undefined): Resource {
  const annotated = structuredClone(p.manifest);
  annotated.metadata.annotations = {
    ...(annotated.metadata.annotations ?? {}),
    [LAST_APPLIED_ANNOTATION]: JSON.stringify(p.manifest),
  };
  let next: Resource;
  if (!live) next = annotated;
  else {
    const lastRaw = live.metadata.annotations?.[LAST_APPLIED_ANNOTATION];
    let last: unknown;
    try {
      last = lastRaw ? JSON.parse(lastRaw) : undefined;
    } catch {
      last = undefined;
    }
    next = threeWayMerge(last, annotated, stripForCompare(live)) as Resource;
    next.metadata.resourceVersion = live.metadata.resourceVersion; // compare-and-swap on write
  }
  validateObject(next, p.kind); // fills schema defaults in place; the manifest was already checked
  return next;
}

async function planOnce(
  store: Store,
  prepared: PreparedObject[],
  opts: ApplyOptions,
): Promise<{ ops: WriteOp[]; results: ApplyResult[] }> {
  const ops: WriteOp[] = [];
  const results: ApplyResult[] = [];
  for (const p of prepared) {
    const m = p.manifest.metadata;
    const live = await store.get({ kind: p.kind.kind, namespace: m.namespace ?? '', name: m.name });
    const next = desiredObject(p, live);
    let action: ApplyAction;
    if (!live) {
      action = 'created';
      ops.push({ op: 'create', object: next });
    } else if (isDeepStrictEqual(stripForCompare(next), stripForCompare(live))) {
      action = 'unchanged';
    } else {
      action = 'configured';
      ops.push({ op: 'update', object: next });
    }
    results.push({
      kind: p.kind,
      namespace: m.namespace,
      name: m.name,
      action,
      object: live && action === 'unchanged' ? live : next,
    });
  }
  if (opts.prune) {
    const applied = new Set(
      prepared.map((p) => `${p.kind.kind}/${p.manifest.metadata.namespace ?? ''}/${p.manifest.metadata.name}`),
    );
    const namespaces = new Set(prepared.map((p) => p.manifest.metadata.namespace).filter((n): n is string => !!n));
    for (const kind of opts.registry?.kinds ?? []) {
      if (SYSTEM_KINDS.has(kind.kind)) continue;
      const { items } = await store.list(kind.kind, { labelSelector: opts.pruneSelector });
      for (const o of items) {
        const ns = o.metadata.namespace ?? '';
        if (!o.metadata.annotations?.[LAST_APPLIED_ANNOTATION]) continue;
        if (kind.namespaced && namespaces.size && !namespaces.has(ns)) continue;
        if (applied.has(`${kind.kind}/${ns}/${o.metadata.name}`) || o.metadata.deletionTimestamp) continue;
        ops.push({
          op: 'delete',
          key: { kind: kind.kind, namespace: ns, name: o.metadata.name },
          options: { resourceVersion: o.metadata.resourceVersion },
        });
        results.push({ kind, namespace: o.metadata.namespace, name: o.metadata.name, action: 'pruned', object: o });
      }
    }
  }
  return { ops, results };
}

export async function applyPrepared(
  store: Store,
  prepared: PreparedObject[],
  opts: ApplyOptions = {},
): Promise<ApplyResult[]> {
  // Someone wrote between our read and our write: re-read and merge again, like kubectl.
  return retryOnConflict(
    async () => {
      const { ops, results } = await planOnce(store, prepared, opts);
      if (opts.dryRun === 'client' || ops.length === 0) return results;
      const written = await store.txn(ops, { dryRun: opts.dryRun === 'server' });
      // Report what the store made of each write (uid, resourceVersion, generation).
      let i = 0;
      for (const r of results) if (r.action !== 'unchanged') r.object = written[i++] ?? r.object;
      return results;
    },
    { attempts: 5, retryOn: (e) => isApiError(e, 'Conflict') },
  );
}

/**
 * One line for each SessionPolicy just applied that applies to no session now
 * (api/policy.ts reachWarning), read against the store with this apply's own objects laid over it
 * (so a dry run and a policy applied with its sessions are judged on what they would make).
 */
export async function policyWarnings(store: Store, results: ApplyResult[]): Promise<string[]> {
  const applied = results.filter((r) => r.action !== 'pruned');
  const policies = applied.filter((r) => r.kind.kind === 'SessionPolicy').map((r) => r.object);
  if (!policies.length) return [];
  const overlay = <T extends Resource>(live: T[], kind: string): T[] => {
    const key = (o: Resource) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const mine = new Map(applied.filter((r) => r.kind.kind === kind).map((r) => [key(r.object), r.object as T]));
    const gone = new Set(
      results.filter((r) => r.action === 'pruned' && r.kind.kind === kind).map((r) => key(r.object)),
    );
    return [...live.filter((o) => !mine.has(key(o)) && !gone.has(key(o))), ...mine.values()];
  };
  const out: string[] = [];
  for (const ns of new Set(policies.map((p) => p.metadata.namespace ?? ''))) {
    const sessions = overlay((await store.list('AgentSession', { namespace: ns })).items, 'AgentSession').filter(
      (s) => (s.metadata.namespace ?? '') === ns && !s.metadata.deletionTimestamp,
    );
    const all = overlay((await store.list('SessionPolicy', { namespace: ns })).items, 'SessionPolicy').filter(
      (p) => (p.metadata.namespace ?? '') === ns,
    );
    for (const p of policies.filter((q) => (q.metadata.namespace ?? '') === ns)) {
      const w = reachWarning(p, policyReach(p, sessions, all), sessions.length);
      if (w) out.push(w);
    }
  }
  return out;
}
