#!/usr/bin/env node
// A notification program for the command channel's tests. Usage: notify-command.mjs MODE OUT [ARGS...]
// Writes what it was given — stdin, its arguments, the ORCHCTL_NOTIFICATION_* and NOTIFY_TEST_*
// variables — as JSON to OUT, then acts by MODE:
//   ok          exit 0
//   exit:N      say "failed: <NOTIFY_TEST_SECRET>" on stderr (a tool echoing its secret) and exit N
//   hang        start a grandchild `sleep` that holds the pipes too, write its pid to OUT.pid, never exit
import { spawn } from 'node:child_process';
import fs from 'node:fs';

const [mode, out, ...args] = process.argv.slice(2);
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  input += c;
});
process.stdin.on('end', () => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith('ORCHCTL_NOTIFICATION_') || k.startsWith('NOTIFY_TEST_')),
  );
  fs.writeFileSync(out, JSON.stringify({ stdin: input, args, env }));
  if (mode === 'ok') process.exit(0);
  if (mode.startsWith('exit:')) {
    process.stderr.write(`failed: ${process.env.NOTIFY_TEST_SECRET ?? 'no secret'}\n`);
    process.exit(Number(mode.slice(5)));
  }
  if (mode === 'hang') {
    const child = spawn('sleep', ['60'], { stdio: ['ignore', 'inherit', 'inherit'] });
    fs.writeFileSync(`${out}.pid`, String(child.pid));
    setInterval(() => {}, 1000);
    return;
  }
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(64);
});
