/**
 * Pure text cleaning for agent- or LLM-written text that goes into another agent's prompt, into
 * status or into `describe`. Shared by the session, pipeline and judge reconcilers.
 */

/** Control characters out except newlines and tabs (terminal escapes included); CRLF to LF. */
export const printable = (s: string) =>
  s.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');

/** Control characters out (newlines and tabs kept), then at most `max` characters, an ellipsis marking a cut. */
export function clip(s: string, max: number): string {
  const t = s.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
