/**
 * Changes to the config file (`orchctl config set-context|use-context|delete-context`): made on the
 * parsed YAML so that comments and order survive, validated as a whole before anything is written,
 * and written atomically with mode 0600 (it says where the store is and which key files to use).
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML, { type Document, isMap, isSeq } from 'yaml';
import {
  checkConfig,
  CONFIG_API_VERSION,
  CONFIG_KIND,
  ConfigError,
  type ConfigFile,
  configProblems,
  type ContextStore,
  type EtcdConfig,
  type LoadedConfig,
} from './config.js';

/** What `set-context` changes: a whole store, fields of the current etcd store, the node ('' removes it). */
export interface ContextChange {
  store?: ContextStore;
  etcd?: Partial<EtcdConfig>;
  node?: string;
}

export interface EditResult {
  text: string;
  /** A line for the user, kubectl's wording. */
  message: string;
}

function docOf(loaded: LoadedConfig | undefined): Document {
  if (loaded?.doc) return loaded.doc.clone();
  return new YAML.Document({ apiVersion: CONFIG_API_VERSION, kind: CONFIG_KIND, contexts: [] });
}

function indexOf(doc: Document, name: string): number {
  const seq = doc.get('contexts');
  if (!isSeq(seq)) return -1;
  return seq.items.findIndex((it) => isMap(it) && it.get('name') === name);
}

export function setContext(loaded: LoadedConfig | undefined, name: string, change: ContextChange): EditResult {
  const doc = docOf(loaded);
  const i = indexOf(doc, name);
  const current = i < 0 ? undefined : (doc.toJS() as ConfigFile).contexts?.[i];
  let store = change.store ?? current?.store;
  if (change.etcd) {
    const base = current?.store.etcd;
    const given = Object.fromEntries(Object.entries(change.etcd).filter(([, v]) => v !== undefined));
    if (!base && !given.endpoints)
      throw new ConfigError([
        `context "${name}" ${current ? 'uses sqlite' : 'does not exist'}: give --etcd-endpoints URL`,
      ]);
    // Like kubectl's set-context: the fields given change, the others stay.
    const tls = { ...base?.tls, ...change.etcd.tls };
    store = { etcd: { ...base, ...given, ...(Object.keys(tls).length ? { tls } : {}) } as EtcdConfig };
  }
  if (!store) throw new ConfigError([`context "${name}" does not exist: give --sqlite PATH or --etcd-endpoints URL`]);
  if (!isSeq(doc.get('contexts'))) doc.set('contexts', doc.createNode([]));
  if (i < 0) doc.addIn(['contexts'], doc.createNode({ name, store, ...(change.node ? { node: change.node } : {}) }));
  else {
    doc.setIn(['contexts', i, 'store'], doc.createNode(store));
    if (change.node === '') doc.deleteIn(['contexts', i, 'node']);
    else if (change.node !== undefined) doc.setIn(['contexts', i, 'node'], change.node);
  }
  return finish(doc, loaded, `Context "${name}" ${i < 0 ? 'created' : 'modified'}.`);
}

export function useContext(loaded: LoadedConfig | undefined, name: string): EditResult {
  if (!loaded?.config.contexts?.some((c) => c.name === name))
    throw new ConfigError([`no context exists with the name: "${name}"`]);
  const doc = docOf(loaded);
  doc.set('currentContext', name);
  return finish(doc, loaded, `Switched to context "${name}".`);
}

export function deleteContext(loaded: LoadedConfig | undefined, name: string, file: string): EditResult {
  const doc = docOf(loaded);
  const i = indexOf(doc, name);
  if (i < 0) throw new ConfigError([`cannot delete context ${name}, not in ${file}`]);
  doc.deleteIn(['contexts', i]);
  let message = `deleted context ${name} from ${file}`;
  if (loaded?.config.currentContext === name) {
    // A current context naming nothing would fail every command: back to the embedded default.
    doc.delete('currentContext');
    message += ` (it was the current context: orchctl now uses the embedded default unless told otherwise)`;
  }
  return finish(doc, loaded, message);
}

/** Validates the edited whole; an error means nothing is written. */
function finish(doc: Document, loaded: LoadedConfig | undefined, message: string): EditResult {
  const config = doc.toJS() as unknown;
  const errs = checkConfig(config);
  if (errs.length) throw new ConfigError(configProblems(errs, loaded?.file ?? 'config'));
  return { text: doc.toString(), message };
}

/** Writes `text` to `file` atomically (a temp file renamed over it), mode 0600, its directory 0700. */
export function writeConfigFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.chmodSync(tmp, 0o600); // the umask may have narrowed it, never widened: set it exactly
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
