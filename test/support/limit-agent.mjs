#!/usr/bin/env node
// A stand-in for Claude Code that hits a usage limit: it draws Claude Code's screen (the shapes of
// test/support/fixtures/claude-code/2.1.330/: the echoed prompt "❯ text", "●" replies, the input
// box "❯\u00a0" between rules, the footer) and reads what is pasted and submitted into it, as
// Claude Code does. The first prompt is answered with the limit notice of
// shared/reference/claude-code-samples.md (cc_ratelimit.txt), its reset LIMIT_RESET_S seconds ahead;
// every later prompt is taken ("● Continuing.") and appended to $ORCHCTL_WORKSPACE/received.txt.
// With LIMIT_GATE set, the first prompt is worked on (a spinner, busy) until that file exists, and
// only then answered with the limit: the pause starts when the test says, not at a wall-clock moment.
//   LIMIT_RESET_S=10 [LIMIT_GATE=/path/to/file] node limit-agent.mjs
import fs from 'node:fs';
import path from 'node:path';

const ws = process.env.ORCHCTL_WORKSPACE ?? '.';
const reset = process.env.LIMIT_RESET_S ?? '10';
const gate = process.env.LIMIT_GATE;
const RULE = '─'.repeat(100);
const history = [];
let typed = '';
let pasting = false;
let pending = '';

function draw() {
  const out = [
    '\x1b[2J\x1b[H',
    '',
    ...history,
    '',
    RULE,
    `❯\u00a0${typed}`,
    RULE,
    '  ⏸ manual mode on · ? for shortcuts',
  ];
  process.stdout.write(out.join('\r\n'));
}

function submit(text) {
  history.push(`❯ ${text}`, '');
  fs.appendFileSync(path.join(ws, 'received.txt'), `${text}\n`);
  if (history.filter((l) => l.startsWith('❯ ')).length > 1) history.push('● Continuing.');
  else if (!gate || fs.existsSync(gate)) limit();
  else {
    history.push('✻ Working… (esc to interrupt)');
    const wait = setInterval(() => {
      if (!fs.existsSync(gate)) return;
      clearInterval(wait);
      history.pop();
      limit();
      draw(); // the spinner and the notice swap in one screen
    }, 100);
  }
  draw();
}

function limit() {
  history.push("You've hit your limit. Please wait and try again later.", '', `Your usage resets in ${reset} seconds.`);
}

process.stdin.setRawMode(true);
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  let s = pending + chunk;
  pending = '';
  const partial = s.match(/\x1b(\[(2(0([01]~?)?)?)?)?$/);
  if (partial) {
    pending = partial[0];
    s = s.slice(0, -pending.length);
  }
  for (let i = 0; i < s.length; i++) {
    if (s.startsWith('\x1b[200~', i)) {
      pasting = true;
      i += 5;
    } else if (s.startsWith('\x1b[201~', i)) {
      pasting = false;
      i += 5;
    } else if (s[i] === '\x03') process.exit(130);
    else if (s[i] === '\x15')
      typed = ''; // C-u clears the input
    else if ((s[i] === '\r' || s[i] === '\n') && !pasting) {
      if (typed.trim()) submit(typed.trim());
      typed = '';
    } else if (s[i] >= ' ') typed += s[i];
  }
  draw();
});
process.stdout.write('\x1b[?2004h'); // bracketed paste, as Claude Code asks for
draw();
