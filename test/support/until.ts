/** Waits (asserting nothing about time) until `cond` holds, looking every 10 ms; fails after `ms`. */
export async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Polls `fn` every `everyMs` until it returns a value other than undefined or false, and returns it;
 * an error thrown by `fn` counts as not yet (the last one is named). After `ms` it fails with what
 * `context` adds (a log tail, the panes), so a timeout says what the world looked like.
 */
export async function pollFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  ms: number,
  opts: { everyMs: number; context?: () => Promise<string> | string },
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const why = last ? ` (last error: ${(last as Error).message})` : '';
      const more = opts.context ? `\n${await opts.context()}` : '';
      throw new Error(`timed out after ${ms} ms waiting for ${what}${why}${more}`);
    }
    await new Promise((r) => setTimeout(r, opts.everyMs));
  }
}
