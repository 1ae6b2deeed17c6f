import type { KindInfo } from '../../api/crds.js';
import { isApiError, notFoundMessage } from '../../api/errors.js';
import { yaml } from '../../api/lazy.js';
import { parseSelector } from '../../api/labels.js';
import type { Resource } from '../../api/types.js';
import type { WatchEvent } from '../../store/store.js';
import { namespaceFor, openContext, parseTargets, qualifiedKind, type GlobalOptions } from '../context.js';
import { renderTemplate } from '../jsonpath.js';
import { err, out } from '../output.js';
import { header, row, rows } from '../printers/columns.js';
import { renderTable, StreamingTable } from '../printers/table.js';

export interface GetOptions {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  output?: string;
  watch?: boolean;
  watchOnly?: boolean;
  outputWatchEvents?: boolean;
  showLabels?: boolean;
  noHeaders?: boolean;
  ignoreNotFound?: boolean;
}

type Format =
  | { kind: 'table'; wide: boolean }
  | { kind: 'yaml' | 'json' | 'name' }
  | { kind: 'jsonpath'; template: string };

export function parseOutput(o: string | undefined): Format {
  if (!o) return { kind: 'table', wide: false };
  if (o === 'wide') return { kind: 'table', wide: true };
  if (o === 'yaml' || o === 'json' || o === 'name') return { kind: o };
  const m = o.match(/^jsonpath=(.*)$/s);
  if (m) return { kind: 'jsonpath', template: m[1] };
  throw new Error(
    `unable to match a printer suitable for the output format "${o}", ` +
      'allowed formats are: json, jsonpath, name, wide, yaml',
  );
}

export function serialize(objs: Resource[], single: boolean, format: 'yaml' | 'json'): string {
  const data = single ? objs[0] : { apiVersion: 'v1', kind: 'List', items: objs, metadata: { resourceVersion: '' } };
  return format === 'json' ? JSON.stringify(data, null, 4) + '\n' : yaml().stringify(data, { lineWidth: 0 });
}

export async function getCommand(args: string[], opts: GetOptions, g: GlobalOptions): Promise<void> {
  const format = parseOutput(opts.output);
  const selector = parseSelector(opts.selector);
  const ctx = openContext(g, { readonly: true });
  const targets = parseTargets(ctx.reg, args);
  let closing = false;
  try {
    const found: { kind: KindInfo; items: Resource[] }[] = [];
    let revision = 0;
    let missing = false;
    for (const { kind, names } of targets) {
      const ns = opts.allNamespaces ? undefined : namespaceFor(kind, opts.namespace);
      let items: Resource[];
      if (names.length) {
        items = [];
        for (const name of names) {
          const o = await ctx.store.get({ kind: kind.kind, namespace: ns ?? '', name });
          if (o) items.push(o);
          else if (!opts.ignoreNotFound) {
            err(`error: ${notFoundMessage(kind.kind, name, ns)}\n`);
            missing = true;
          }
        }
        revision = Math.max(revision, await ctx.store.revision());
      } else {
        const r = await ctx.store.list(kind.kind, { namespace: ns, labelSelector: selector });
        items = r.items;
        // Events read as a timeline (kubectl users reach for --sort-by=.lastTimestamp every time).
        if (kind.kind === 'Event')
          items.sort((a, b) => String(a.lastTimestamp ?? '').localeCompare(String(b.lastTimestamp ?? '')));
        revision = Math.max(revision, r.revision);
      }
      found.push({ kind, items });
    }
    const total = found.reduce((n, f) => n + f.items.length, 0);
    const single = targets.length === 1 && targets[0].names.length === 1;
    // With --output-watch-events the watch loop prints the initial rows itself, as ADDED events.
    const watchPrintsList = !!opts.watch && !!opts.outputWatchEvents && format.kind === 'table';
    if (!opts.watchOnly) {
      // Like kubectl: only a list that comes back empty says so; named objects report NotFound
      // (or nothing with --ignore-not-found).
      const named = targets.some((t) => t.names.length > 0);
      if (total === 0 && !missing && !named && format.kind === 'table') {
        const k = targets[0].kind;
        err(
          opts.allNamespaces || !k.namespaced
            ? 'No resources found\n'
            : `No resources found in ${namespaceFor(k, opts.namespace)} namespace.\n`,
        );
      }
      if (!watchPrintsList) printOnce(found, format, opts, single && total === 1);
    }
    if (missing && !opts.watch) process.exitCode = 1;
    if (opts.watch || opts.watchOnly) {
      await watchLoop(ctx, found, targets, format, opts, selector, revision);
      closing = true;
    }
  } finally {
    if (!closing) await ctx.close();
  }
}

function printOnce(
  found: { kind: KindInfo; items: Resource[] }[],
  format: Format,
  opts: GetOptions,
  single: boolean,
): void {
  const all = found.flatMap((f) => f.items);
  if (format.kind === 'yaml' || format.kind === 'json') {
    if (all.length) out(serialize(all, single, format.kind));
    return;
  }
  if (format.kind === 'name') {
    for (const f of found) for (const o of f.items) out(`${qualifiedKind(f.kind)}/${o.metadata.name}\n`);
    return;
  }
  if (format.kind === 'jsonpath') {
    if (all.length)
      out(renderTemplate(format.template, single ? all[0] : { apiVersion: 'v1', kind: 'List', items: all }));
    return;
  }
  const tableOpts = {
    wide: format.kind === 'table' && format.wide,
    allNamespaces: opts.allNamespaces,
    showLabels: opts.showLabels,
  };
  const multi = found.filter((f) => f.items.length).length > 1;
  let first = true;
  for (const f of found) {
    if (!f.items.length) continue;
    const table = rows(f.kind, f.items, tableOpts);
    if (multi && !f.kind.hideNameColumn) {
      const name = opts.allNamespaces && f.kind.namespaced ? 1 : 0;
      for (const [i, o] of f.items.entries()) table[i][name] = `${qualifiedKind(f.kind)}/${o.metadata.name}`;
    }
    if (!first) out('\n');
    first = false;
    out(renderTable(opts.noHeaders ? table : [header(f.kind, tableOpts), ...table]));
  }
}

/** `-w`: stream changes after the initial list, until interrupted. */
async function watchLoop(
  ctx: ReturnType<typeof openContext>,
  found: { kind: KindInfo; items: Resource[] }[],
  targets: { kind: KindInfo; names: string[] }[],
  format: Format,
  opts: GetOptions,
  selector: ReturnType<typeof parseSelector>,
  fromRevision: number,
): Promise<void> {
  const kind = targets[0].kind;
  const names = new Set(targets[0].names);
  const ns = opts.allNamespaces ? undefined : namespaceFor(kind, opts.namespace);
  const tableOpts = {
    wide: format.kind === 'table' && format.wide,
    allNamespaces: opts.allNamespaces,
    showLabels: opts.showLabels,
  };
  const table = new StreamingTable();
  if (format.kind === 'table') {
    const head = [...(opts.outputWatchEvents ? ['EVENT'] : []), ...header(kind, tableOpts)];
    const initial = found[0].items.map((o) => [
      ...(opts.outputWatchEvents ? ['ADDED'] : []),
      ...row(kind, o, tableOpts),
    ]);
    table.prime([head, ...initial, ...(opts.outputWatchEvents ? [['MODIFIED']] : [])]); // widest event name
    if ((opts.watchOnly || opts.outputWatchEvents) && !opts.noHeaders) out(table.row(head));
    if (opts.outputWatchEvents && !opts.watchOnly) for (const r of initial) out(table.row(r));
  }
  const { matches } = await import('../../api/labels.js');
  await new Promise<void>((resolve, reject) => {
    // The store's poll timer is unref'd (a watch alone must not keep a library user alive), so
    // the CLI holds the process open itself until it is interrupted.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const handle = ctx.store.watch(
      { kind: kind.kind, namespace: ns, fromRevision },
      (ev: WatchEvent) => {
        const o = ev.object;
        if (names.size && !names.has(o.metadata.name)) return;
        if (selector.length && !matches(selector, o.metadata.labels)) return;
        if (format.kind === 'table')
          out(table.row([...(opts.outputWatchEvents ? [ev.type] : []), ...row(kind, o, tableOpts)]));
        else if (format.kind === 'name') out(`${qualifiedKind(kind)}/${o.metadata.name}\n`);
        else if (format.kind === 'jsonpath') out(renderTemplate(format.template, o));
        else if (format.kind === 'json')
          out(JSON.stringify(opts.outputWatchEvents ? { type: ev.type, object: o } : o, null, 4) + '\n');
        else
          out('---\n' + yaml().stringify(opts.outputWatchEvents ? { type: ev.type, object: o } : o, { lineWidth: 0 }));
      },
      (e) => {
        handle.close();
        clearInterval(keepAlive);
        reject(
          isApiError(e, 'Gone')
            ? new Error('watch expired: the store compacted past our revision; run get -w again')
            : e,
        );
      },
    );
    const stop = () => {
      handle.close();
      clearInterval(keepAlive);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await ctx.close();
}
