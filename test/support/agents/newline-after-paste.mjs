// A tiny TUI for delivery tests: it echoes what it reads, takes the first Enter after a bracketed
// paste as a newline (as Gemini CLI's paste protection and Codex's paste-burst detection do), and
// on a later Enter writes the prompt to the history file argv[2] — the agent's own record of it.
import fs from 'node:fs';

const history = process.argv[2];
let buffer = '';
let afterPaste = false;
let pasting = false;
const draw = (note = '') => process.stdout.write(`\x1b[2J\x1b[H> ${buffer.replace(/\n/g, '⏎')}\n${note}\n`);
process.stdin.setRawMode(true);
process.stdin.on('data', (d) => {
  let s = d.toString('utf8');
  while (s) {
    if (s.startsWith('\x1b[200~')) {
      pasting = true;
      s = s.slice(6);
    } else if (s.startsWith('\x1b[201~')) {
      pasting = false;
      afterPaste = true;
      s = s.slice(6);
    } else if (s[0] === '\r' && !pasting) {
      s = s.slice(1);
      if (afterPaste) {
        afterPaste = false;
        buffer += '\n';
      } else if (buffer.trim()) {
        fs.appendFileSync(history, `${JSON.stringify({ text: buffer.trim() })}\n`);
        buffer = '';
        draw('submitted');
        continue;
      }
    } else if (s[0] === '\x15') {
      buffer = '';
      s = s.slice(1);
    } else {
      buffer += s[0] === '\r' ? '\n' : s[0];
      s = s.slice(1);
    }
    draw();
  }
});
process.stdout.write('\x1b[?2004h'); // bracketed paste on, as the agent CLIs turn it on
draw('ready');
