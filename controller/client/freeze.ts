/**
 * The emergency stop's marks (api/freeze.ts, docs/freeze.md), shared by `orchctl freeze|thaw` and
 * the console: what a selection names, and the orchctl.io/frozen annotation set or removed with
 * compare-and-swap, a project's or autopilot's Frozen / Thawed Event in the same transaction.
 */
import { isApiError } from '../api/errors.js';
import { retryOnConflict } from '../store/retry.js';
import { FreezeReason } from '../api/event-reasons.js';
import { FROZEN_ANNOTATION } from '../api/freeze.js';
import { parseSelector } from '../api/labels.js';
import type { Resource } from '../api/types.js';
import type { Store } from '../store/store.js';
import type { EventRecorder } from './events.js';
import { CAS_ATTEMPTS } from './update.js';

export interface FreezeOptions {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  all?: boolean;
  message?: string;
}

export type FreezeTarget = { kind: 'AgentSession' | 'Project' | 'Autopilot'; namespace: string; name: string };

export const KIND_NAME: Record<FreezeTarget['kind'], string> = {
  AgentSession: 'agentsession.orchctl.io',
  Project: 'project.orchctl.io',
  Autopilot: 'autopilot.orchctl.io',
};

/** What the arguments select, sessions last (a project's mark is in place before its sessions'). */
export async function freezeTargets(
  store: Store,
  ns: string,
  args: string[],
  o: FreezeOptions,
  verb: string,
): Promise<FreezeTarget[]> {
  const ways = [args.length > 0, o.selector !== undefined, !!o.all].filter(Boolean).length;
  if (ways !== 1) throw new Error(`give what to ${verb}: orchctl ${verb} PROJECT…, -l SELECTOR or --all`);
  if (o.allNamespaces && !o.all) throw new Error('--all-namespaces (-A) goes with --all');
  const namespace = o.allNamespaces ? undefined : ns;
  const list = async (kind: FreezeTarget['kind'], labelSelector?: string) =>
    (await store.list(kind, { namespace, labelSelector: parseSelector(labelSelector) })).items;
  const of = (kind: FreezeTarget['kind']) => (r: Resource) => ({
    kind,
    namespace: r.metadata.namespace ?? 'default',
    name: r.metadata.name,
  });
  if (o.selector !== undefined) return (await list('AgentSession', o.selector)).map(of('AgentSession'));
  if (o.all)
    return [
      ...(await list('Autopilot')).map(of('Autopilot')),
      ...(await list('Project')).map(of('Project')),
      ...(await list('AgentSession')).map(of('AgentSession')),
    ];
  const projects: FreezeTarget[] = [];
  for (const name of new Set(args)) {
    const p = await store.get({ kind: 'Project', namespace: ns, name });
    if (!p) throw new Error(`projects.orchctl.io "${name}" not found in namespace ${namespace}`);
    projects.push(of('Project')(p));
  }
  const wanted = new Set(projects.map((p) => p.name));
  const sessions = (await list('AgentSession')).filter((s) =>
    wanted.has(String((s.spec as { projectRef?: string } | undefined)?.projectRef)),
  );
  return [...projects, ...sessions.map(of('AgentSession'))];
}

/** Sets (mark) or removes (undefined) the freeze mark; the project's or autopilot's Event in the same write. */
export async function mark(
  store: Store,
  recorder: EventRecorder,
  t: FreezeTarget,
  value: string | undefined,
  thawNote = 'thawed (orchctl thaw)',
): Promise<boolean> {
  return retryOnConflict(
    async () => {
      const cur = await store.get(t);
      if (!cur || cur.metadata.deletionTimestamp) return false;
      const annotations = { ...(cur.metadata.annotations ?? {}) };
      if (value === undefined ? !(FROZEN_ANNOTATION in annotations) : FROZEN_ANNOTATION in annotations) return false;
      if (value === undefined) delete annotations[FROZEN_ANNOTATION];
      else annotations[FROZEN_ANNOTATION] = value;
      const next = { ...cur, metadata: { ...cur.metadata, annotations } };
      const notes =
        t.kind === 'AgentSession'
          ? []
          : await recorder.ops(cur, [
              value === undefined
                ? { type: 'Normal', reason: FreezeReason.Thawed, message: thawNote }
                : { type: 'Warning', reason: FreezeReason.Frozen, message: value },
            ]);
      await store.txn([{ op: 'update', object: next }, ...notes]);
      return true;
    },
    { attempts: CAS_ATTEMPTS, retryOn: (e) => isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists') },
  );
}
