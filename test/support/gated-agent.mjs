#!/usr/bin/env node
// An agent whose every step waits for the test: it writes its progress report
// ($ORCHCTL_WORKSPACE/status.json, written whole) — executing with 0, then 1 of 3 tasks done — and
// after each waits for the file $GATE_DIR/<session name>.<step> before going on; then it reports
// complete and stays until it is stopped: on C-c it waits for $GATE_DIR/<session name>.stop and
// exits 0. So what it does, and when, is the test's to say (it opens a gate once the controller
// has the step before in status), and a run's Events are the same however often the controller is
// killed meanwhile.
//   GATE_DIR=/tmp/gates node gated-agent.mjs
import fs from 'node:fs';
import path from 'node:path';

const ws = process.env.ORCHCTL_WORKSPACE ?? '.';
const gates = process.env.GATE_DIR ?? '.';
const name = (process.env.ORCHCTL_SESSION ?? 'session').split('/').pop();
const TASKS = ['Implement the change', 'Cover it with tests', 'Run the test suite'];

function report(status, done) {
  const tasks = TASKS.map((subject, i) => ({
    id: String(i + 1),
    subject,
    state: i < done ? 'done' : i === done && status === 'executing' ? 'in_progress' : 'pending',
  }));
  const file = path.join(ws, 'status.json');
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify({ status, tasks })}\n`);
  fs.renameSync(`${file}.tmp`, file);
  process.stdout.write(`report: ${status} ${done}/${TASKS.length}\n`);
}

async function gate(step) {
  const file = path.join(gates, `${name}.${step}`);
  while (!fs.existsSync(file)) await new Promise((r) => setTimeout(r, 50));
}

process.on('SIGINT', () => void gate('stop').then(() => process.exit(0)));
process.stdout.write(`gated agent ${name} started\n`);
report('executing', 0);
await gate(1);
report('executing', 1);
await gate(2);
report('complete', TASKS.length);
setInterval(() => {}, 60_000); // stays until stopped
