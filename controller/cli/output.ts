/** Process-level output helpers: stdout/stderr writes and the error presentation. */
import { isApiError } from '../api/errors.js';
import { redact } from '../api/redact.js';
// Type-only: importing apply.js/manifest.js would load yaml and ajv into every command, `get` too.
import type { ValidationFailed } from '../client/apply.js';

export const out = (s: string) => process.stdout.write(s);
/** stderr carries error text from outside (an LLM endpoint's answer, a tool's output): redacted. */
export const err = (s: string) => process.stderr.write(redact(s));

/** Thrown by commands that want a specific exit code without an error message (e.g. diff). */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Prints an error the way kubectl does and returns the exit code. Never prints a stack unless ORCHCTL_DEBUG is set. */
export function reportError(e: unknown): number {
  if (e instanceof ExitCode) return e.code;
  if (e instanceof Error && e.name === 'ValidationFailed') {
    const v = e as ValidationFailed;
    for (const x of v.errors) err(`error: ${x.message}\n`);
    err(`error: no objects were changed (${v.errors.length} error${v.errors.length === 1 ? '' : 's'})\n`);
  } else if (isApiError(e)) err(`error: ${e.message}\n`);
  else if (e instanceof Error) err(`error: ${e.message}\n`);
  else err(`error: ${String(e)}\n`);
  if (process.env.ORCHCTL_DEBUG && e instanceof Error && e.stack) err(`${e.stack}\n`);
  return 1;
}
