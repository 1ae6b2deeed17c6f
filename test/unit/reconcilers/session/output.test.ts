/** outputTail (controller/reconcilers/session/output.ts): raw pane output to the readable tail in status.lastOutput. */
import { describe, expect, it } from 'vitest';
import { outputTail } from '../../../../controller/reconcilers/session/output.js';

const ESC = '\x1b';
const BEL = '\x07';
const ST = `${ESC}\\`;

describe('outputTail: escape sequences', () => {
  it('strips SGR colours and styles', () => {
    expect(outputTail(`${ESC}[1;31merror:${ESC}[0m build ${ESC}[38;5;208mfailed${ESC}[m`)).toBe('error: build failed');
    expect(outputTail(`${ESC}[38;2;255;0;0mtruecolor${ESC}[39;49m`)).toBe('truecolor');
  });

  it('strips cursor moves, erases and mode switches', () => {
    expect(outputTail(`a${ESC}[2Kb${ESC}[10;20Hc${ESC}[?25l${ESC}[?1049hd${ESC}[3Ae${ESC}[J`)).toBe('abcde');
  });

  it('strips OSC 8 hyperlinks terminated by BEL or ST, keeping the link text', () => {
    expect(outputTail(`see ${ESC}]8;;https://example.com/a?b=c&d=e${BEL}the docs${ESC}]8;;${BEL} now`)).toBe(
      'see the docs now',
    );
    expect(outputTail(`see ${ESC}]8;id=x1;https://example.com${ST}docs${ESC}]8;;${ST}`)).toBe('see docs');
  });

  it('strips window titles (OSC 0/1/2), including titles with spaces', () => {
    expect(outputTail(`${ESC}]0;claude — ~/src/project${BEL}prompt>`)).toBe('prompt>');
    expect(outputTail(`${ESC}]2;my window title${ST}text`)).toBe('text');
    expect(outputTail(`${ESC}]1;icon${BEL}x`)).toBe('x');
  });

  it('strips other OSC sequences (cwd reports, shell integration marks)', () => {
    expect(outputTail(`${ESC}]7;file://host/home/user/my dir${BEL}${ESC}]133;A${BEL}$ ls${ESC}]133;B${BEL}`)).toBe(
      '$ ls',
    );
  });

  it('drops stray control characters but keeps tabs', () => {
    expect(outputTail(`a\x00b\x08c${BEL}d\x7fe\tf`)).toBe('abcde\tf');
  });

  it('keeps non-ASCII text intact', () => {
    expect(outputTail(`${ESC}[32m✓${ESC}[0m tests passed — 100% 🎉\nzażółć 日本語`)).toBe(
      '✓ tests passed — 100% 🎉\nzażółć 日本語',
    );
  });
});

describe('outputTail: carriage returns', () => {
  it('keeps only the last overwrite of a progress bar', () => {
    expect(outputTail('Downloading  10%\rDownloading  50%\rDownloading 100%\ndone')).toBe('Downloading 100%\ndone');
  });

  it('resolves overwrites of coloured progress bars', () => {
    const bar = (n: number) => `\r${ESC}[2K${ESC}[36m[${'#'.repeat(n)}${' '.repeat(5 - n)}]${ESC}[0m ${n * 20}%`;
    expect(outputTail(`build\n${bar(1)}${bar(3)}${bar(5)}\nok`)).toBe('build\n[#####] 100%\nok');
  });

  it('treats CRLF as a line break, not an overwrite', () => {
    expect(outputTail('one\r\ntwo\r\nthree\r\n')).toBe('one\ntwo\nthree');
    expect(outputTail('step 1\rstep 2\r\nnext')).toBe('step 2\nnext');
  });
});

describe('outputTail: tmux footer and blank lines', () => {
  it('drops the "Pane is dead" footer and the blank lines after the output', () => {
    expect(outputTail('all done\n\nPane is dead (status 0, Sat Jun  1 12:00:00 2025)\n\n\n')).toBe('all done');
    expect(outputTail('boom\nPane is dead (status 3, Sat Jun  1 12:00:00 2025)')).toBe('boom');
    expect(outputTail(`boom\n${ESC}[1mPane is dead (signal 9, Sat Jun  1 12:00:00 2025)${ESC}[0m\n`)).toBe('boom');
  });

  it('keeps a line that only mentions a dead pane in the middle of text', () => {
    expect(outputTail('the log says: Pane is dead (status 1)\nend')).toBe('the log says: Pane is dead (status 1)\nend');
  });

  it('drops trailing blank and whitespace-only lines, keeps inner and leading ones', () => {
    expect(outputTail('\n\na\n\n  \nb\n   \n\t\n\n')).toBe('\n\na\n\n\nb');
  });

  it('trims trailing spaces of each line (tmux pads captured lines)', () => {
    expect(outputTail('left     \n  indented   ')).toBe('left\n  indented');
  });

  it('empty and blank input give an empty tail', () => {
    expect(outputTail('')).toBe('');
    expect(outputTail('\n\n   \n')).toBe('');
    expect(outputTail(`${ESC}[0m${ESC}]0;t${BEL}\n`)).toBe('');
  });
});

describe('outputTail: bounds', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

  it('keeps the last 40 lines by default', () => {
    const out = outputTail(lines(100));
    expect(out.split('\n')).toHaveLength(40);
    expect(out.split('\n')[0]).toBe('line 61');
    expect(out.endsWith('line 100')).toBe(true);
  });

  it('keeps the last maxLines lines, counted after the footer and blanks are dropped', () => {
    expect(outputTail(`${lines(10)}\n\nPane is dead (status 0, x)\n\n`, 3)).toBe('line 8\nline 9\nline 10');
  });

  it('keeps at most 2000 characters by default, from the end', () => {
    const out = outputTail('x'.repeat(5000) + 'END');
    expect(out).toHaveLength(2000);
    expect(out.endsWith('END')).toBe(true);
  });

  it('applies maxChars after maxLines', () => {
    expect(outputTail('aaaa\nbbbb\ncccc', 2, 6)).toBe('b\ncccc');
    expect(outputTail('aaaa\nbbbb\ncccc', 10, 100)).toBe('aaaa\nbbbb\ncccc');
  });

  it('counts characters after the escapes are stripped', () => {
    const coloured = `${ESC}[31m${'r'.repeat(10)}${ESC}[0m`;
    expect(outputTail(coloured, 40, 10)).toBe('r'.repeat(10));
  });

  it('is bounded for large inputs', () => {
    const big = Array.from({ length: 10_000 }, (_, i) => `${ESC}[3${i % 8}m${'y'.repeat(300)} ${i}${ESC}[0m`).join(
      '\r\n',
    );
    const out = outputTail(big);
    expect(out.length).toBeLessThanOrEqual(2000);
    expect(out.split('\n').length).toBeLessThanOrEqual(40);
    expect(out.endsWith(' 9999')).toBe(true);
    expect(out).not.toContain(ESC);
  });
});

/**
 * A carriage return with nothing after it overwrites nothing: a terminal still shows "one".
 * pipe-pane logs contain this whenever a program writes "\r\n" under the pty's default ONLCR
 * (the tty turns it into "\r\r\n"; check with
 * `script -qc "printf 'one\r\ntwo\r\n'" /dev/null | od -c`).
 */
describe('outputTail: a carriage return with nothing after it', () => {
  it('keeps the text of lines ending in "\\r\\r\\n" (CRLF written through a pty)', () => {
    expect(outputTail('one\r\r\ntwo\r\r\n')).toBe('one\ntwo');
  });

  it('keeps a line whose last carriage return is not followed by new text', () => {
    expect(outputTail('waiting 50%\r')).toBe('waiting 50%');
  });
});
