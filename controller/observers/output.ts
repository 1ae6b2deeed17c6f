/** Turning raw pane output into readable text: the tail kept in status.lastOutput, and `orchctl logs`. */
import stripAnsi from 'strip-ansi';

const MAX_LINES = 40;
const MAX_CHARS = 2000;

/**
 * Strips CSI/OSC escape sequences, resolves carriage-return overwrites (progress bars), drops
 * tmux's "Pane is dead" footer and trailing blank lines, and keeps a bounded tail.
 */
export function outputTail(raw: string, maxLines = MAX_LINES, maxChars = MAX_CHARS): string {
  const lines = stripAnsi(raw)
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((l) => {
      // A terminal turns "\n" into "\r\n", so a bare trailing "\r" overwrites nothing.
      const last =
        l
          .split('\r')
          .filter((x) => x !== '')
          .pop() ?? '';
      return last.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '').trimEnd();
    })
    .filter((l) => !/^Pane is dead \(/.test(l));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  let tail = lines.slice(-maxLines).join('\n');
  if (tail.length > maxChars) tail = tail.slice(tail.length - maxChars);
  return tail;
}
