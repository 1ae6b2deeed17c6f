#!/usr/bin/env node
// A scripted judge CLI for the command backend's tests: reads the prompt on stdin and answers
// on stdout according to MODE. Usage: fake-judge-cli.mjs MODE STATE_DIR [ARGS...]
// Each call increments STATE_DIR/calls, saves its stdin as STATE_DIR/stdin-<n>.txt and its
// arguments as STATE_DIR/argv-<n>.json, so tests can count calls and check what arrived.
// Modes: valid | claude | claude-result | garbage | invalid | invalid-then-valid |
//        fail-then-valid | is-error | hang (starts a grandchild `sleep` that holds stdout too,
//        and writes its pid to STATE_DIR/grandchild.pid) | slow-valid (answers after 300 ms).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [mode, dir, ...rest] = process.argv.slice(2);
const calls =
  Number(fs.existsSync(path.join(dir, 'calls')) ? fs.readFileSync(path.join(dir, 'calls'), 'utf8') : '0') + 1;
fs.writeFileSync(path.join(dir, 'calls'), String(calls));
fs.writeFileSync(path.join(dir, `argv-${calls}.json`), JSON.stringify(rest));

const VALID = {
  score: 3,
  recommendation: 'continue',
  outcome: 'partial',
  confidence: 0.6,
  accomplishments: ['two commits'],
  failures: ['tests not run'],
  reasoning: 'Some real progress; nothing verified.',
};
const INVALID = { score: 0, recommendation: 'maybe' };

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  fs.writeFileSync(path.join(dir, `stdin-${calls}.txt`), input);
  const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
  switch (mode) {
    case 'valid':
      return out(VALID);
    case 'slow-valid':
      return setTimeout(() => out(VALID), 300);
    case 'claude':
      return out({
        type: 'result',
        subtype: 'success',
        is_error: false,
        duration_ms: 2100,
        num_turns: 1,
        result: 'Here is the evaluation.',
        structured_output: VALID,
        usage: { input_tokens: 1500, output_tokens: 200 },
      });
    case 'claude-result':
      return out({
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'Evaluation:\n```json\n' + JSON.stringify(VALID) + '\n```',
      });
    case 'garbage':
      return process.stdout.write('The session looks fine to me.\n');
    case 'invalid':
      return out(INVALID);
    case 'invalid-then-valid':
      return out(calls === 1 ? INVALID : VALID);
    case 'fail-then-valid':
      if (calls === 1) {
        process.stderr.write('error: upstream overloaded\n');
        process.exitCode = 1;
        return;
      }
      return out(VALID);
    case 'is-error':
      out({ type: 'result', subtype: 'error_during_execution', is_error: true, result: 'API Error: 529 overloaded' });
      process.exitCode = 1;
      return;
    case 'hang': {
      const child = spawn('sleep', ['300'], { stdio: ['ignore', 'inherit', 'inherit'] });
      fs.writeFileSync(path.join(dir, 'grandchild.pid'), String(child.pid));
      setInterval(() => {}, 1000);
      return;
    }
    default:
      process.stderr.write(`unknown mode ${mode}\n`);
      process.exitCode = 2;
  }
});
