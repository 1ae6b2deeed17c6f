/**
 * `orchctl config …`: the contexts in $ORCHCTL_HOME/config, shaped like `kubectl config`
 * (docs/contexts.md). Only these commands write the file; a file that does not validate is never
 * rewritten (the error names file:line and field, fix it by hand).
 */
import path from 'node:path';
import { configPath, describeLocation } from '../../config/config-location.js';
import { ConfigError, type LoadedConfig, locationOf, readConfig } from '../../config/config.js';
import {
  type ContextChange,
  deleteContext,
  setContext,
  useContext,
  writeConfigFile,
} from '../../config/config-edit.js';
import { type GlobalOptions, storeChoice } from '../context.js';
import { err, out } from '../output.js';
import { renderTable } from '../printers/table.js';

const fileOf = (g: GlobalOptions) => configPath(storeChoice(g).home);

function load(g: GlobalOptions): { file: string; loaded?: LoadedConfig } {
  const file = fileOf(g);
  return { file, loaded: readConfig(file) };
}

export async function getContextsCommand(
  names: string[],
  opts: { output?: string; noHeaders?: boolean },
  g: GlobalOptions,
): Promise<void> {
  if (opts.output && opts.output !== 'name') throw new Error(`unknown output format "${opts.output}" (allowed: name)`);
  const { loaded } = load(g);
  const all = loaded?.config.contexts ?? [];
  for (const n of names)
    if (!all.some((c) => c.name === n)) throw new ConfigError([`context ${n} not found in ${fileOf(g)}`]);
  const shown = names.length ? all.filter((c) => names.includes(c.name)) : all;
  if (opts.output === 'name') return void out(shown.map((c) => `${c.name}\n`).join(''));
  const current = loaded?.config.currentContext;
  const rows = shown.map((c) => [
    c.name === current ? '*' : '',
    c.name,
    describeLocation(locationOf(c, loaded!.dir)),
    c.node ?? '',
  ]);
  out(renderTable(opts.noHeaders ? rows : [['CURRENT', 'NAME', 'STORE', 'NODE'], ...rows]));
}

export async function currentContextCommand(g: GlobalOptions): Promise<void> {
  const current = load(g).loaded?.config.currentContext;
  if (!current) throw new Error('current-context is not set');
  out(`${current}\n`);
}

export async function useContextCommand(name: string, g: GlobalOptions): Promise<void> {
  const { file, loaded } = load(g);
  const r = useContext(loaded, name);
  writeConfigFile(file, r.text);
  out(`${r.message}\n`);
  // Said, not refused: the switch is recorded, but this shell would go on using the other store.
  if (process.env.ORCHCTL_STORE) err('note: $ORCHCTL_STORE is set and takes precedence over the current context\n');
}

export async function deleteContextCommand(name: string, g: GlobalOptions): Promise<void> {
  const { file, loaded } = load(g);
  const r = deleteContext(loaded, name, file);
  writeConfigFile(file, r.text);
  out(`${r.message}\n`);
}

export interface SetContextOptions {
  sqlite?: string;
  etcdEndpoints?: string;
  etcdPrefix?: string;
  etcdCa?: string;
  etcdCert?: string;
  etcdKey?: string;
  etcdCallTimeout?: string;
  node?: string;
}

/** The flags as a change; paths given here are relative to the working directory, so they are stored absolute. */
export function contextChange(o: SetContextOptions, cwd = process.cwd()): ContextChange {
  const abs = (p: string | undefined) => (p === undefined ? undefined : path.resolve(cwd, p));
  const tls = { ca: abs(o.etcdCa), cert: abs(o.etcdCert), key: abs(o.etcdKey) };
  const anyTls = Object.values(tls).some((v) => v !== undefined);
  const anyEtcd = anyTls || [o.etcdEndpoints, o.etcdPrefix, o.etcdCallTimeout].some((v) => v !== undefined);
  if (o.sqlite !== undefined && anyEtcd) throw new Error('--sqlite and --etcd-* flags cannot be used together');
  const change: ContextChange = o.node === undefined ? {} : { node: o.node };
  if (o.sqlite !== undefined) return { ...change, store: { sqlite: { path: abs(o.sqlite)! } } };
  if (!anyEtcd) return change;
  // A bare host:port is an http endpoint, or https when TLS files are given.
  const scheme = anyTls ? 'https' : 'http';
  const endpoints = o.etcdEndpoints
    ?.split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => (/^[a-z]+:\/\//.test(e) ? e : `${scheme}://${e}`));
  return {
    ...change,
    etcd: {
      endpoints,
      prefix: o.etcdPrefix,
      callTimeout: o.etcdCallTimeout,
      ...(anyTls ? { tls: Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined)) } : {}),
    },
  };
}

export async function setContextCommand(name: string, opts: SetContextOptions, g: GlobalOptions): Promise<void> {
  const change = contextChange(opts);
  if (!change.store && !change.etcd && change.node === undefined)
    throw new Error('nothing to set: give --sqlite PATH, --etcd-endpoints URL[,URL] (and --etcd-* flags) or --node');
  const { file, loaded } = load(g);
  const r = setContext(loaded, name, change);
  writeConfigFile(file, r.text);
  out(`${r.message}\n`);
}

export async function viewCommand(opts: { output?: string }, g: GlobalOptions): Promise<void> {
  const output = opts.output ?? 'yaml';
  if (output !== 'yaml' && output !== 'json')
    throw new Error(`unknown output format "${output}" (allowed: yaml, json)`);
  const { loaded } = load(g);
  const config = loaded?.config ?? { contexts: [] };
  if (output === 'json') return void out(`${JSON.stringify(config, null, 2)}\n`);
  // The file as written, comments included; a missing file shows as an empty config.
  out(loaded?.doc ? loaded.doc.toString() : (await import('yaml')).stringify(config));
}
