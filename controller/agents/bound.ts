/** Long text and payloads cut to size before they go into a session's event log (any agent's). */

/** Keeps the head and tail of long text (errors are usually at the end, commands at the start). */
export function bound(s: string, max: number): string {
  if (s.length <= max) return s;
  const half = Math.floor((max - 40) / 2);
  return `${s.slice(0, half)}\n…[${s.length - 2 * half} characters cut]…\n${s.slice(-half)}`;
}

/** A hook payload kept in the event log: every field, long strings cut. */
export function boundPayload(p: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (typeof v === 'string') out[k] = bound(v, 2048);
    else if (v && typeof v === 'object') {
      const s = JSON.stringify(v);
      out[k] = s.length <= 4096 ? v : bound(s, 4096);
    } else out[k] = v;
  }
  return out;
}
