/**
 * Where the store is, as every command and the controller see it (docs/contexts.md). This module is
 * on every command's start-up path, so it holds only types and cheap checks: reading the config file
 * (yaml, ajv) lives in config.ts and is loaded only when there is a config to read.
 */
import fs from 'node:fs';
import path from 'node:path';

export type StoreLocation =
  | { backend: 'sqlite'; path: string }
  | {
      backend: 'etcd';
      /** Client URLs, e.g. `https://10.0.0.1:2379`. */
      endpoints: string[];
      prefix?: string;
      /** PEM files, absolute paths. */
      tls?: { ca?: string; cert?: string; key?: string };
      callTimeoutMs?: number;
    };

/** Which rule of the precedence chose the store (`--context` > ORCHCTL_STORE > currentContext > default). */
export type StoreSource = 'flag' | 'env' | 'config' | 'default';

export interface StoreTarget {
  location: StoreLocation;
  source: StoreSource;
  /** The context's name, when a context chose it. */
  context?: string;
  /** The context's node name (the host an `orchctl node` of this context runs as). */
  node?: string;
  /** The config file consulted (it may not exist). */
  configFile: string;
}

export interface StoreChoice {
  /** $ORCHCTL_HOME, resolved. */
  home: string;
  /** The global --context flag. */
  context?: string;
  env?: NodeJS.ProcessEnv;
}

export const configPath = (home: string) => path.join(home, 'config');
export const defaultStorePath = (home: string) => path.join(home, 'state.db');

/** True when nothing names a store: the embedded SQLite file is used without reading any config. */
export function usesEmbeddedDefault(c: StoreChoice): boolean {
  const env = c.env ?? process.env;
  return !c.context && !env.ORCHCTL_STORE && !fs.existsSync(configPath(c.home));
}

/** One line for people: `sqlite /path/state.db`, `etcd http://a:2379,http://b:2379 prefix /orchctl/`. */
export function describeLocation(loc: StoreLocation): string {
  if (loc.backend === 'sqlite') return `sqlite ${loc.path}`;
  return `etcd ${loc.endpoints.join(',')}${loc.prefix ? ` prefix ${loc.prefix}` : ''}${loc.tls ? ' (TLS)' : ''}`;
}

/** How the store was chosen, for doctor and log lines: `context "prod" (--context)`, `$ORCHCTL_STORE`. */
export function describeSource(t: StoreTarget): string {
  switch (t.source) {
    case 'flag':
      return `context "${t.context}" (--context)`;
    case 'env':
      return '$ORCHCTL_STORE';
    case 'config':
      return `context "${t.context}" (currentContext in ${t.configFile})`;
    default:
      return 'the embedded default';
  }
}

/** What names the store, without reading the config (for a log line written before it is read). */
export function describeChoice(c: StoreChoice): string {
  const env = c.env ?? process.env;
  if (c.context) return `context "${c.context}" of ${configPath(c.home)}`;
  if (env.ORCHCTL_STORE) return `ORCHCTL_STORE=${env.ORCHCTL_STORE}`;
  if (usesEmbeddedDefault(c)) return defaultStorePath(c.home);
  return `the current context of ${configPath(c.home)}`;
}
