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
import { EventRecorder } from '../../client/events.js';
import { type FreezeOptions, freezeTargets, KIND_NAME, mark } from '../../client/freeze.js';
export type { FreezeOptions };
import { type GlobalOptions, namespaceFor, openContext } from '../context.js';
import { err, out } from '../output.js';

async function run(verb: 'freeze' | 'thaw', args: string[], o: FreezeOptions, g: GlobalOptions): Promise<void> {
  const ctx = openContext(g);
  try {
    const ns = namespaceFor(ctx.reg.resolve('project'), o.namespace);
    const list = await freezeTargets(ctx.store, ns, args, o, verb);
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
