/**
 * What the command registrations (commands/*.cmd.ts) share. Kept free of runtime imports: every
 * registration loads at start-up, each command's implementation only when it runs.
 */
import type { Command } from 'commander';
import type { GlobalOptions } from './context.js';

/** A repeatable option's parser: `-f a -f b` → ['a', 'b']. */
export const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The global options (--home, --context) as seen from a (sub)command. */
export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}
