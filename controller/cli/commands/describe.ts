import { notFoundMessage } from '../../api/errors.js';
import { parseSelector } from '../../api/labels.js';
import { eventsFor } from '../../client/events.js';
import { namespaceFor, openContext, parseTargets, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';
import { describeObject, describeSessionPolicy } from '../printers/describe.js';
import { describeAutopilot, describeDecision } from '../printers/autopilot.js';
import { describeNode } from '../printers/nodes.js';
import { describePipeline } from '../printers/pipeline.js';
import type { KindInfo } from '../../api/crds.js';
import { isKind } from '../../api/kinds.js';
import type { Resource } from '../../api/types.js';
import type { Store } from '../../store/store.js';

/** The kinds with a describer of their own; every other kind gets the generic one. */
async function describeOne(store: Store, kind: KindInfo, o: Resource): Promise<string> {
  const events = await eventsFor(store, o);
  if (isKind(o, 'Decision')) return describeDecision(kind, o, events);
  if (isKind(o, 'Node')) {
    const { items } = await store.list('AgentSession');
    const bound = items.filter((s) => s.status?.binding?.nodeName === o.metadata.name);
    return describeNode(kind, o, bound, events);
  }
  if (isKind(o, 'Pipeline')) return describePipeline(kind, o, events);
  if (isKind(o, 'SessionPolicy')) {
    const ns = o.metadata.namespace;
    const sessions = (await store.list('AgentSession', { namespace: ns })).items;
    const policies = (await store.list('SessionPolicy', { namespace: ns })).items;
    return describeSessionPolicy(kind, o, sessions, policies, events);
  }
  if (!isKind(o, 'Autopilot')) return describeObject(kind, o, events);
  const { items } = await store.list('Decision', { namespace: o.metadata.namespace });
  const own = items.filter((d) => d.spec?.autopilot === o.metadata.name);
  return describeAutopilot(kind, o, own, events);
}

export async function describeCommand(
  args: string[],
  opts: { namespace?: string; selector?: string; allNamespaces?: boolean },
  g: GlobalOptions,
): Promise<void> {
  const ctx = openContext(g, { readonly: true });
  try {
    let first = true;
    let missing = false;
    for (const { kind, names } of parseTargets(ctx.reg, args)) {
      const ns = opts.allNamespaces ? undefined : namespaceFor(kind, opts.namespace);
      let objs: Resource[] = [];
      if (names.length) {
        for (const name of names) {
          const o = await ctx.store.get({ kind: kind.kind, namespace: ns ?? '', name });
          if (o) objs.push(o);
          else {
            err(`error: ${notFoundMessage(kind.kind, name, ns)}\n`);
            missing = true;
          }
        }
      } else {
        objs = (await ctx.store.list(kind.kind, { namespace: ns, labelSelector: parseSelector(opts.selector) })).items;
        if (!objs.length) err(`No resources found${ns ? ` in ${ns} namespace` : ''}.\n`);
      }
      for (const o of objs) {
        if (!first) out('\n\n');
        first = false;
        out(await describeOne(ctx.store, kind, o));
      }
    }
    if (missing) process.exitCode = 1;
  } finally {
    await ctx.close();
  }
}
