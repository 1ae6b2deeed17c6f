/**
 * The config file, `$ORCHCTL_HOME/config` (docs/contexts.md): named contexts, each naming a store
 * (an SQLite file or an etcd cluster) and optionally the node this host runs as, and the current one.
 * Like a kubeconfig, minus secrets: TLS keys are file paths. Validated with a JSON Schema (ajv, as
 * manifests are) plus the rules a schema cannot say; every error names file:line:column and field.
 */
import { plaintextRefusal } from '../api/endpoint.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Document } from 'yaml';
import type { StoreLocation } from './config-location.js';
import { parseDuration } from '../api/duration.js';
import { locateError, type ManifestDoc, type ManifestError, parseManifestText } from './manifest.js';
import { checkDns1123Subdomain } from '../api/names.js';
import { type FieldError, formatPath, type PathPart, validateAgainstSchema } from '../api/validate.js';

export const CONFIG_API_VERSION = 'orchctl.io/v1alpha1';
export const CONFIG_KIND = 'Config';

export interface EtcdConfig {
  endpoints: string[];
  prefix?: string;
  tls?: { ca?: string; cert?: string; key?: string };
  /** A Go duration, e.g. 5s. */
  callTimeout?: string;
}

export interface ContextStore {
  sqlite?: { path: string };
  etcd?: EtcdConfig;
}

export interface ConfigContext {
  name: string;
  store: ContextStore;
  node?: string;
}

export interface ConfigFile {
  apiVersion?: string;
  kind?: string;
  currentContext?: string;
  contexts?: ConfigContext[];
}

const file = { type: 'string', minLength: 1 };

export const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apiVersion: { const: CONFIG_API_VERSION },
    kind: { const: CONFIG_KIND },
    currentContext: { type: 'string', minLength: 1 },
    contexts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'store'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]*$' },
          node: { type: 'string', minLength: 1 },
          store: {
            type: 'object',
            additionalProperties: false,
            properties: {
              sqlite: {
                type: 'object',
                additionalProperties: false,
                required: ['path'],
                properties: { path: file },
              },
              etcd: {
                type: 'object',
                additionalProperties: false,
                required: ['endpoints'],
                properties: {
                  endpoints: {
                    type: 'array',
                    minItems: 1,
                    items: { type: 'string', pattern: '^https?://[^/\\s,]+$' },
                  },
                  prefix: { type: 'string', minLength: 1 },
                  tls: {
                    type: 'object',
                    additionalProperties: false,
                    properties: { ca: file, cert: file, key: file },
                  },
                  callTimeout: { type: 'string', format: 'go-duration' },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

/** One or more problems in a config (or in ORCHCTL_STORE); nothing was read from or written to it. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    // reportError prints `error: ` before the message: one such line per problem.
    super(problems.join('\nerror: '));
    this.name = 'ConfigError';
  }
}

export interface LoadedConfig {
  file: string;
  /** Relative paths in the file are relative to this directory. */
  dir: string;
  config: ConfigFile;
  /** The parsed YAML (undefined for an empty file): edits keep its comments. */
  doc?: Document.Parsed;
}

/** Etcd rules beyond the schema; `base` is where `etcd` sits (for the error path). */
export function checkEtcd(etcd: EtcdConfig, base: PathPart[]): FieldError[] {
  const errs: FieldError[] = [];
  const tls = etcd.tls;
  if (tls && !tls.cert !== !tls.key)
    errs.push({ path: [...base, 'tls', tls.cert ? 'key' : 'cert'], message: 'a client cert and key go together' });
  etcd.endpoints.forEach((e, i) => {
    let url: URL;
    try {
      url = new URL(e);
    } catch {
      errs.push({ path: [...base, 'endpoints', i], message: `${JSON.stringify(e)} is not a URL` });
      return;
    }
    if (url.protocol === 'http:' && tls)
      errs.push({ path: [...base, 'endpoints', i], message: 'tls is set: the endpoint must be https://' });
    // The store's traffic is everything orchctl does: in clear text only where it never leaves the host.
    const plaintext = plaintextRefusal(url);
    if (plaintext) errs.push({ path: [...base, 'endpoints', i], message: `${plaintext}: use https:// and tls` });
  });
  if (etcd.callTimeout && parseDuration(etcd.callTimeout) <= 0)
    errs.push({ path: [...base, 'callTimeout'], message: 'must be a positive duration like 5s' });
  return errs;
}

/** Schema, then the rules a schema cannot express (only once the shape is right). */
export function checkConfig(config: unknown): FieldError[] {
  const errs = validateAgainstSchema(CONFIG_SCHEMA, config);
  if (errs.length) return errs;
  const c = config as ConfigFile;
  const seen = new Map<string, number>();
  (c.contexts ?? []).forEach((ctx, i) => {
    const at: PathPart[] = ['contexts', i];
    const first = seen.get(ctx.name);
    if (first !== undefined)
      errs.push({ path: [...at, 'name'], message: `duplicate context name (also contexts[${first}])` });
    else seen.set(ctx.name, i);
    const backends = Object.keys(ctx.store);
    if (backends.length !== 1)
      errs.push({ path: [...at, 'store'], message: 'exactly one of sqlite or etcd is required' });
    else if (ctx.store.etcd) errs.push(...checkEtcd(ctx.store.etcd, [...at, 'store', 'etcd']));
    const bad = ctx.node === undefined ? undefined : checkDns1123Subdomain(ctx.node);
    if (bad) errs.push({ path: [...at, 'node'], message: `Invalid value ${JSON.stringify(ctx.node)}: ${bad}` });
  });
  if (c.currentContext !== undefined && !seen.has(c.currentContext))
    errs.push({ path: ['currentContext'], message: `no context is named ${JSON.stringify(c.currentContext)}` });
  return errs;
}

// A config is one document: a manifest error's "(document 1)" would be noise.
const located = (m: ManifestError) =>
  `${m.file}${m.line !== undefined ? `:${m.line}:${m.col}` : ''} ${m.fieldPath ? `${m.fieldPath}: ` : ''}${m.detail}`;

/** `file:line:col field: message` for each error, located in the parsed YAML when there is one. */
export function configProblems(errs: FieldError[], file: string, doc?: ManifestDoc): string[] {
  return errs.map((e) =>
    doc ? located(locateError(doc, e)) : `${file} ${formatPath(e.path) ? `${formatPath(e.path)}: ` : ''}${e.message}`,
  );
}

/** Reads and validates the config file; undefined when there is none. Throws ConfigError when it is invalid. */
export function readConfig(configFile: string): LoadedConfig | undefined {
  let text: string;
  try {
    text = fs.readFileSync(configFile, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError([`cannot read ${configFile}: ${(e as Error).message}`]);
  }
  return parseConfig(text, configFile);
}

export function parseConfig(text: string, configFile: string): LoadedConfig {
  const dir = path.dirname(path.resolve(configFile));
  const { docs, errors } = parseManifestText(text, configFile, dir);
  // Nothing but comments is an empty config, not an error: a fresh file someone is about to fill.
  if (!docs.length && errors.length === 1 && errors[0].detail.startsWith('no objects'))
    return { file: configFile, dir, config: {} };
  if (errors.length) throw new ConfigError(errors.map(located));
  if (docs.length !== 1) throw new ConfigError([`${configFile}: one YAML document expected, found ${docs.length}`]);
  const d = docs[0];
  const errs = checkConfig(d.object);
  if (errs.length) throw new ConfigError(configProblems(errs, configFile, d));
  return { file: configFile, dir, config: d.object as ConfigFile, doc: d.doc };
}

/** Keys are `<prefix>objects/…`: a prefix without its trailing slash would run into the next word. */
export const keyPrefix = (p: string) => (p.endsWith('/') ? p : `${p}/`);

/** A context's store, with relative paths resolved against the config file's directory. */
export function locationOf(ctx: ConfigContext, dir: string): StoreLocation {
  const abs = (p: string) => path.resolve(dir, p);
  if (ctx.store.sqlite) return { backend: 'sqlite', path: abs(ctx.store.sqlite.path) };
  const e = ctx.store.etcd!;
  const tls = e.tls && Object.fromEntries(Object.entries(e.tls).map(([k, v]) => [k, abs(v)]));
  return {
    backend: 'etcd',
    endpoints: e.endpoints,
    ...(e.prefix ? { prefix: keyPrefix(e.prefix) } : {}),
    ...(tls ? { tls } : {}),
    ...(e.callTimeout ? { callTimeoutMs: parseDuration(e.callTimeout) } : {}),
  };
}
