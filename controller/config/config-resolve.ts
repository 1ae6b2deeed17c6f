/**
 * Which store a command uses: `--context NAME` > `$ORCHCTL_STORE` > the config's currentContext >
 * the embedded SQLite file `$ORCHCTL_HOME/state.db` (docs/contexts.md).
 */
import path from 'node:path';
import {
  configPath,
  defaultStorePath,
  type StoreChoice,
  type StoreLocation,
  type StoreTarget,
} from './config-location.js';
import {
  checkEtcd,
  ConfigError,
  type EtcdConfig,
  keyPrefix,
  type LoadedConfig,
  locationOf,
  readConfig,
} from './config.js';
import { isGoDuration, parseDuration } from '../api/duration.js';
import { formatPath } from '../api/validate.js';

export function resolveStore(c: StoreChoice): StoreTarget {
  const env = c.env ?? process.env;
  const configFile = configPath(c.home);
  if (c.context) {
    const loaded = readConfig(configFile);
    return { ...contextTarget(loaded, c.context, configFile), source: 'flag' };
  }
  if (env.ORCHCTL_STORE) return { location: parseStoreUrl(env.ORCHCTL_STORE), source: 'env', configFile };
  const loaded = readConfig(configFile);
  const current = loaded?.config.currentContext;
  if (loaded && current) return { ...contextTarget(loaded, current, configFile), source: 'config' };
  return { location: { backend: 'sqlite', path: defaultStorePath(c.home) }, source: 'default', configFile };
}

function contextTarget(loaded: LoadedConfig | undefined, name: string, configFile: string) {
  const contexts = loaded?.config.contexts ?? [];
  const ctx = contexts.find((x) => x.name === name);
  if (!loaded || !ctx) {
    const known = contexts.map((x) => x.name).join(', ');
    throw new ConfigError([
      `context "${name}" not found in ${configFile}` +
        (known ? ` (contexts: ${known})` : loaded ? ' (it has no contexts)' : ' (there is no such file)') +
        '; create it with orchctl config set-context',
    ]);
  }
  return { location: locationOf(ctx, loaded.dir), context: name, ...(ctx.node ? { node: ctx.node } : {}), configFile };
}

const STORE_URL_FORMS = 'sqlite:PATH or etcd://HOST:PORT[,HOST:PORT…][/PREFIX][?ca=F&cert=F&key=F&timeout=5s]';

/**
 * `$ORCHCTL_STORE`: `sqlite:/path/state.db` (relative to the working directory) or
 * `etcd://127.0.0.1:2379,127.0.0.1:2381/prefix` (TLS when any of ca, cert, key is given).
 */
export function parseStoreUrl(value: string, cwd = process.cwd()): StoreLocation {
  const bad = (why: string) => new ConfigError([`ORCHCTL_STORE=${JSON.stringify(value)}: ${why}`]);
  const sqlite = /^sqlite:(?:\/\/(?=\/))?(.+)$/.exec(value);
  if (sqlite) return { backend: 'sqlite', path: path.resolve(cwd, sqlite[1]) };
  const etcd = /^etcd:\/\/([^/?]+)(\/[^?]*)?(?:\?(.*))?$/.exec(value);
  if (!etcd) throw bad(`expected ${STORE_URL_FORMS}`);
  const [, hosts, prefix, query] = etcd;
  const params = new URLSearchParams(query ?? '');
  const tls: Record<string, string> = {};
  for (const [k, v] of params) {
    if (!['ca', 'cert', 'key', 'timeout'].includes(k))
      throw bad(`unknown parameter "${k}" (allowed: ca, cert, key, timeout)`);
    if (k !== 'timeout') tls[k] = path.resolve(cwd, v);
  }
  const timeout = params.get('timeout') ?? undefined;
  if (timeout !== undefined && !isGoDuration(timeout))
    throw bad(`timeout must be a duration like 5s, not "${timeout}"`);
  const scheme = Object.keys(tls).length ? 'https' : 'http';
  const cfg: EtcdConfig = {
    endpoints: hosts.split(',').map((h) => `${scheme}://${h}`),
    ...(Object.keys(tls).length ? { tls } : {}),
    ...(timeout ? { callTimeout: timeout } : {}),
  };
  const errs = checkEtcd(cfg, []);
  if (errs.length) throw new ConfigError(errs.map((e) => bad(`${formatPath(e.path)}: ${e.message}`).message));
  return {
    backend: 'etcd',
    endpoints: cfg.endpoints,
    ...(prefix && prefix !== '/' ? { prefix: keyPrefix(prefix) } : {}),
    ...(cfg.tls ? { tls: cfg.tls } : {}),
    ...(timeout ? { callTimeoutMs: parseDuration(timeout) } : {}),
  };
}
