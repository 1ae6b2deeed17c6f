/**
 * A long-running process (`orchctl controller`, `orchctl node`) keeps V8's young generation at its
 * first size (1 MB semi-spaces). V8 doubles them while allocation is fast — loading the CLI's
 * modules already takes them to 16 MB each — and keeps them: 32 MB committed of a 1000-session
 * controller's idle RSS for a few MB in use (docs/benchmarks.md). `--max-semi-space-size` cannot
 * be set once the process runs (V8 sizes the heap when it starts; `v8.setFlagsFromString` of it
 * changes nothing), but the growth factor is read at every growth, so a factor of 1, set before
 * anything else loads (bin/orchctl), keeps the first size. Not for the other commands, which run
 * briefly. Someone who sized the young generation on node's command line or in NODE_OPTIONS keeps
 * their setting. Loads nothing but node:v8: every CLI call imports it.
 */
import v8 from 'node:v8';

const LONG_RUNNING = new Set(['controller', 'node']);

/** The command of `orchctl <args>`: the first word that is neither an option nor --home's or --context's value. */
export function commandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--home' || a === '--context') i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** For `orchctl controller` and `orchctl node` (`args`: process.argv after node and the script). */
export function keepYoungGenerationSmall(args: readonly string[]): boolean {
  if (!LONG_RUNNING.has(commandOf(args) ?? '')) return false;
  if ([...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('semi-space'))) return false;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  return true;
}
