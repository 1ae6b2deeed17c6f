#!/usr/bin/env node
// A generic agent CLI (no detection data: orchctl's generic profile reads it) that echoes its
// input, as a shell-like REPL on a terminal does: what is typed stays on screen after its "> "
// prompt. ECHO_AGENT_LIMIT=1: the first line is answered with a usage-limit notice, every later
// one is taken ("Resuming." then "done"); without it every line is worked on and answered "done".
// Each received line is appended to $ORCHCTL_WORKSPACE/received.txt.
//   ECHO_AGENT_LIMIT=1 node echo-agent.mjs
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const ws = process.env.ORCHCTL_WORKSPACE ?? '.';
const limit = process.env.ECHO_AGENT_LIMIT === '1';
let n = 0;
const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
rl.setPrompt('> ');
rl.prompt();
rl.on('line', (line) => {
  fs.appendFileSync(path.join(ws, 'received.txt'), `${line}\n`);
  n++;
  setTimeout(() => {
    if (limit && n === 1) console.log('Error: usage limit reached. Please try again later.');
    else console.log(n === 1 ? 'Working on it.\ndone' : 'Resuming.\ndone');
    rl.prompt();
  }, 300);
});
