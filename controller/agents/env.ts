/**
 * An agent's environment variables, resolved when a run starts: `value` as written, or
 * `valueFrom` — a variable of the controller's own environment or a file — so a manifest need
 * not hold a secret. Errors name the variable and where its value was to come from, never a value.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EnvVar } from '../api/kinds.js';

/** The most a single value may hold (the schema's bound for `value`, applied to valueFrom too). */
export const MAX_ENV_VALUE_BYTES = 32 * 1024;

export class EnvSourceError extends Error {}

/** `vars` with every valueFrom replaced by its value. Throws EnvSourceError. */
export function resolveEnv(vars: EnvVar[] | undefined, env: NodeJS.ProcessEnv = process.env): EnvVar[] {
  return (vars ?? []).map((v) => ({ name: v.name, value: v.valueFrom ? readSource(v, env) : (v.value ?? '') }));
}

function readSource(v: EnvVar, env: NodeJS.ProcessEnv): string {
  const from = v.valueFrom!;
  if (from.env !== undefined) {
    const value = env[from.env];
    const what = `env ${v.name}: valueFrom.env ${from.env}`;
    if (value === undefined) throw new EnvSourceError(`${what} is not set in the controller's environment`);
    if (Buffer.byteLength(value) > MAX_ENV_VALUE_BYTES)
      throw new EnvSourceError(`${what} is over ${MAX_ENV_VALUE_BYTES} bytes`);
    return value;
  }
  if (from.file !== undefined) {
    const what = `env ${v.name}: valueFrom.file ${from.file}`;
    let st: fs.Stats;
    try {
      st = fs.statSync(from.file);
    } catch (e) {
      throw new EnvSourceError(`${what} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (!st.isFile()) throw new EnvSourceError(`${what} is not a regular file`);
    if (st.size > MAX_ENV_VALUE_BYTES) throw new EnvSourceError(`${what} is over ${MAX_ENV_VALUE_BYTES} bytes`);
    return fs.readFileSync(from.file, 'utf8').replace(/\r?\n$/, '');
  }
  throw new EnvSourceError(`env ${v.name}: valueFrom names neither env nor file`);
}

/** Writes one 0600 file per variable into a fresh 0700 directory, for the launch wrapper to read. */
export function writePrivateEnv(dir: string, env: Record<string, string>): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new EnvSourceError(`env ${name}: not a valid variable name`);
    fs.writeFileSync(path.join(dir, name), value, { mode: 0o600 });
  }
}

/** Every value the environment of `vars` resolves to (for redaction), skipping sources that fail. */
export function envValues(vars: EnvVar[] | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const v of vars ?? []) {
    try {
      const value = v.valueFrom ? readSource(v, env) : v.value;
      if (value) out.push(value);
    } catch {
      /* reported at launch */
    }
  }
  return out;
}
