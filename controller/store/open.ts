/**
 * Opening the store a command or the controller was pointed at (docs/contexts.md): the embedded
 * SQLite file by default, else what --context, $ORCHCTL_STORE or the config's current context names.
 * The etcd backend and the config reader are imported only when used, so SQLite users load neither.
 */
import {
  configPath,
  defaultStorePath,
  type StoreChoice,
  type StoreLocation,
  type StoreTarget,
  usesEmbeddedDefault,
} from '../config/config-location.js';
import { DeferredStore } from './deferred.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './store.js';

export interface OpenOptions {
  /** Take no write lock and create nothing (SQLite); the etcd backend has no such mode. */
  readonly?: boolean;
}

export async function openStore(location: StoreLocation, opts: OpenOptions = {}): Promise<Store> {
  if (location.backend === 'sqlite') return new SqliteStore(location.path, { readonly: opts.readonly });
  const { EtcdStore } = await import('./etcd.js');
  return new EtcdStore({
    endpoints: location.endpoints,
    ...(location.prefix ? { prefix: location.prefix } : {}),
    ...(location.tls ? { tls: location.tls } : {}),
    ...(location.callTimeoutMs ? { callTimeoutMs: location.callTimeoutMs } : {}),
  });
}

/** Which store `c` names, and why (reads the config file only when one could matter). */
export async function storeTarget(c: StoreChoice): Promise<StoreTarget> {
  if (usesEmbeddedDefault(c))
    return {
      location: { backend: 'sqlite', path: defaultStorePath(c.home) },
      source: 'default',
      configFile: configPath(c.home),
    };
  const { resolveStore } = await import('../config/config-resolve.js');
  return resolveStore(c);
}

/**
 * The store `c` names, for callers that need it synchronously (every command's context, the
 * controller). The embedded default opens at once, as before contexts existed; anything else is
 * opened behind a DeferredStore, and a bad config or unknown context is its first call's error.
 */
export function storeFor(c: StoreChoice, opts: OpenOptions = {}): Store {
  if (usesEmbeddedDefault(c)) return new SqliteStore(defaultStorePath(c.home), { readonly: opts.readonly });
  return new DeferredStore(storeTarget(c).then((t) => openStore(t.location, opts)));
}
