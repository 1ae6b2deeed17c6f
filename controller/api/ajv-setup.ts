/**
 * The one ajv set-up of orchctl (options, formats, the Kubernetes and orchctl keywords), shared by the
 * run-time compile (api/validate.ts) and the build's precompiled validators (api/precompiled.ts, written
 * to dist/validators/ by scripts/compile-crds.mjs). The keywords generate code, as ajv's standalone
 * code requires: what they call is in `validatorRuntime`, referenced directly when ajv compiles in the
 * process and as `runtime.<name>` in the generated module, which is handed the same object.
 * ajv is loaded on the first compile only: a process that uses the precompiled validators never loads it.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv';
import type { Ajv, CodeKeywordDefinition, KeywordErrorDefinition, Options } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { isGoDuration, parseDuration } from './duration.js';

const require = createRequire(import.meta.url);

export const AJV_OPTIONS = {
  allErrors: true,
  strict: true,
  strictTypes: false,
  strictTuples: false,
  allowUnionTypes: true,
  useDefaults: true,
  // Errors carry their schema: an unknown `url` beside a `urlFrom` can say what to write instead.
  verbose: true,
} as const satisfies Options;

const DAYS: Record<string, string> = { '720h': '30 days', '24h': 'a day' };

/**
 * x-orchctl-max-duration: why `data` exceeds the bound `max` (both Go durations), or undefined. Every
 * duration has an upper bound, named in the error: a time that overflows a date ("99999999999999999999h")
 * must be refused here, not fail every reconcile later.
 */
function maxDurationError(max: string, data: string): string | undefined {
  if (!isGoDuration(data)) return undefined; // the format reports it
  const ms = parseDuration(data);
  if (ms < 0) return 'must not be negative';
  if (ms > parseDuration(max)) return `must be at most ${max}${DAYS[max] ? ` (${DAYS[max]})` : ''}, got ${data}`;
  return undefined;
}

/** x-kubernetes-list-map-keys: the first value of the key fields two items of `data` share, or undefined. */
function duplicateListMapKey(keys: string[], data: unknown[]): string | undefined {
  const seen = new Set<string>();
  for (const item of data) {
    if (!item || typeof item !== 'object') continue;
    const k = JSON.stringify(keys.map((key) => (item as Record<string, unknown>)[key]));
    if (seen.has(k)) return `Duplicate value: ${k}`;
    seen.add(k);
  }
  return undefined;
}

/** What validators call at run time: ajv-formats' formats plus `go-duration`, and the keywords' checks. */
export const validatorRuntime = {
  formats: { ...fullFormats, 'go-duration': { type: 'string' as const, validate: isGoDuration } },
  maxDurationError,
  duplicateListMapKey,
};
export type ValidatorRuntime = typeof validatorRuntime;

type Codegen = Pick<typeof AjvModule, '_'>;

/**
 * A keyword whose error message is the one `check(schema, data)` returns (undefined: valid); the check is
 * `validatorRuntime[name]`, so the generated code is the same in the process and in standalone code.
 */
function messageKeyword(
  { _ }: Codegen,
  def: Omit<CodeKeywordDefinition, 'code' | 'error'>,
  name: 'maxDurationError' | 'duplicateListMapKey',
  params?: KeywordErrorDefinition['params'],
): CodeKeywordDefinition {
  return {
    ...def,
    error: { message: ({ params: p }) => _`${p.message}`, ...(params ? { params } : {}) },
    code(cxt) {
      const check = cxt.gen.scopeValue('func', { ref: validatorRuntime[name], code: _`runtime[${name}]` });
      const message = cxt.gen.const('message', _`${check}(${cxt.schemaValue}, ${cxt.data})`);
      cxt.setParams({ message });
      cxt.fail(_`${message} !== undefined`);
    },
  };
}

/** A new ajv instance set up as orchctl validates; `standalone` keeps each validator's code for the build. */
export function createAjv(standalone = false): Ajv {
  const ajv = require('ajv') as typeof AjvModule;
  const addFormats = require('ajv-formats') as (a: Ajv) => Ajv;
  const { _ } = ajv;
  const a = new ajv.Ajv({
    ...AJV_OPTIONS,
    ...(standalone ? { code: { source: true, formats: _`runtime.formats` } } : {}),
  });
  addFormats(a);
  a.addFormat('go-duration', validatorRuntime.formats['go-duration']);
  a.addKeyword(
    messageKeyword(
      ajv,
      { keyword: 'x-orchctl-max-duration', type: 'string', schemaType: 'string' },
      'maxDurationError',
      (cxt) => _`{max: ${cxt.schemaCode}}`,
    ),
  );
  a.addVocabulary([
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-int-or-string',
    'x-kubernetes-list-type',
    'x-kubernetes-map-type',
    'x-kubernetes-validations',
    'example',
    'externalDocs',
  ]);
  a.addKeyword(
    messageKeyword(
      ajv,
      { keyword: 'x-kubernetes-list-map-keys', type: 'array', schemaType: 'array' },
      'duplicateListMapKey',
    ),
  );
  return a;
}

/**
 * What else shapes the generated code: the set-up's own source (a keyword's code generator changed) and
 * ajv's version. In the hash, so that a build from an older set-up is never used, with no number to bump.
 */
let setup: string | undefined;
const setupFingerprint = (): string =>
  (setup ??= [
    String(createAjv),
    String(messageKeyword),
    (require('ajv/package.json') as { version: string }).version,
  ].join('\n'));

/** Identifies a schema as ajv with this set-up compiles it: a precompiled validator is used only for its own hash. */
export function schemaHash(schema: object): string {
  return createHash('sha256')
    .update(JSON.stringify({ options: AJV_OPTIONS, setup: setupFingerprint(), schema }))
    .digest('hex');
}
