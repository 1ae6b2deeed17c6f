/**
 * `orchctl freeze` / `orchctl thaw`: the emergency stop (api/freeze.ts, docs/freeze.md). Freezing
 * marks objects with the orchctl.io/frozen annotation, compare-and-swap like any change of desired
 * state: the controller then holds every marked session (SIGSTOP of its run's process group,
 * nothing started or sent), the autopilot leaves marked projects alone and a marked autopilot does
 * not think. `thaw` removes the marks. The marks live in the store, so a controller restarted
 * meanwhile keeps everything frozen.
 *
 *   freeze PROJECT…   the projects and every session of theirs
 *   freeze -l SEL     the sessions matching the label selector
 *   freeze --all      every session, project and autopilot of the namespace (-A: of every namespace)
 *
 * A project or autopilot gets its Frozen / Thawed Event from here, in the transaction of its mark;
 * a session gets its own from the controller when the freeze takes hold (status.frozen).
 */
import { isApiError } from '../../api/errors.js';
import { FreezeReason } from '../../api/event-reasons.js';
import { FROZEN_ANNOTATION } from '../../api/freeze.js';
import { parseSelector } from '../../api/labels.js';
import type { Resource } from '../../api/types.js';
import { EventRecorder } from '../../client/events.js';
import { retryOnConflict } from '../../store/retry.js';
import type { Store } from '../../store/store.js';
import { type GlobalOptions, namespaceFor, openContext } from '../context.js';
import { err, out } from '../output.js';
import { CAS_ATTEMPTS } from '../targets.js';

export interface FreezeOptions {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  all?: boolean;
  message?: string;
}

type Target = { kind: 'AgentSession' | 'Project' | 'Autopilot'; namespace: string; name: string };

const KIND_NAME: Record<Target['kind'], string> = {
  AgentSession: 'agentsession.orchctl.io',
  Project: 'project.orchctl.io',
  Autopilot: 'autopilot.orchctl.io',
};

/** What the arguments select, sessions last (a project's mark is in place before its sessions'). */
async function targets(store: Store, ns: string, args: string[], o: FreezeOptions, verb: string): Promise<Target[]> {
  const ways = [args.length > 0, o.selector !== undefined, !!o.all].filter(Boolean).length;
  if (ways !== 1) throw new Error(`give what to ${verb}: orchctl ${verb} PROJECT…, -l SELECTOR or --all`);
  if (o.allNamespaces && !o.all) throw new Error('--all-namespaces (-A) goes with --all');
  const namespace = o.allNamespaces ? undefined : ns;
  const list = async (kind: Target['kind'], labelSelector?: string) =>
    (await store.list(kind, { namespace, labelSelector: parseSelector(labelSelector) })).items;
  const of = (kind: Target['kind']) => (r: Resource) => ({
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
  const projects: Target[] = [];
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
async function mark(store: Store, recorder: EventRecorder, t: Target, value: string | undefined): Promise<boolean> {
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
                ? { type: 'Normal', reason: FreezeReason.Thawed, message: 'thawed (orchctl thaw)' }
                : { type: 'Warning', reason: FreezeReason.Frozen, message: value },
            ]);
      await store.txn([{ op: 'update', object: next }, ...notes]);
      return true;
    },
    { attempts: CAS_ATTEMPTS, retryOn: (e) => isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists') },
  );
}

async function run(verb: 'freeze' | 'thaw', args: string[], o: FreezeOptions, g: GlobalOptions): Promise<void> {
  const ctx = openContext(g);
  try {
    const ns = namespaceFor(ctx.reg.resolve('project'), o.namespace);
    const list = await targets(ctx.store, ns, args, o, verb);
    if (!list.length) {
      err('No resources found.\n');
      return;
    }
    const how = o.all ? ` --all${o.allNamespaces ? ' -A' : ''}` : o.selector !== undefined ? ` -l ${o.selector}` : '';
    const why = o.message ? `: ${o.message.replace(/\s+/g, ' ').slice(0, 300)}` : '';
    const value = verb === 'freeze' ? `${new Date().toISOString()} by orchctl freeze${how}${why}` : undefined;
    const recorder = new EventRecorder(ctx.store, 'orchctl');
    let changed = 0;
    for (const t of list) {
      const done = await mark(ctx.store, recorder, t, value);
      const ns = o.allNamespaces ? `${t.namespace}/` : '';
      out(`${KIND_NAME[t.kind]}/${ns}${t.name} ${done ? (verb === 'freeze' ? 'frozen' : 'thawed') : 'unchanged'}\n`);
      if (done) changed++;
    }
    if (verb === 'freeze' && changed)
      err('the controller holds the marked sessions at its next pass (`orchctl get sessions`: ACTIVITY frozen)\n');
  } finally {
    await ctx.close();
  }
}

export const freezeCommand = (args: string[], o: FreezeOptions, g: GlobalOptions) => run('freeze', args, o, g);
export const thawCommand = (args: string[], o: FreezeOptions, g: GlobalOptions) => run('thaw', args, o, g);
