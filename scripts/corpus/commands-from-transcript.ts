/**
 * `command` corpus samples (test/corpus/README.md) from a recorded Claude Code transcript sample:
 * every distinct Bash tool result in it (command, output, exit status as the agent reported them),
 * labelled from what the recording's project makes of each command (the table below, written by
 * hand: e.g. src/ has no package.json, so `npm test` there always fails).
 *
 *   npx tsx scripts/corpus/commands-from-transcript.ts \
 *     [test/corpus/claude-code/turns/<the last>.transcript.jsonl] [--out test/corpus/claude-code/command]
 */
import fs from 'node:fs';
import path from 'node:path';
import { jsonlTranscript } from '../../controller/agents/claude-code.js';

const argv = process.argv.slice(2);
const o = argv.indexOf('--out');
const OUT = path.resolve(o >= 0 ? argv[o + 1] : 'test/corpus/claude-code/command');
const turnsDir = path.resolve('test/corpus/claude-code/turns');
const input =
  argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--out') ??
  path.join(
    turnsDir,
    fs
      .readdirSync(turnsDir)
      .filter((f) => f.endsWith('.transcript.jsonl'))
      .sort((a, b) => Number(/\d+/.exec(b)?.[0]) - Number(/\d+/.exec(a)?.[0]))[0],
  );

/**
 * The detector signals a person reads from each recorded command, by its text, exit and output:
 * `cd src` failing means npm test never ran (a failed tool call); npm's own error is a failed test run.
 */
function labelFor(command: string, exit0: boolean, output: string): { signals: string[] } | undefined {
  if (command.startsWith('cd src && npm test'))
    return { signals: [/cd: src: No such file/.test(output) ? 'ToolFailure' : 'TestFailure'] };
  if (command.startsWith('mkdir -p build && ls src')) return { signals: exit0 ? [] : ['ToolFailure'] };
  if (command.startsWith('git add -A && git commit')) return undefined; // `|| true`: whether it committed is not known
  if (command.startsWith('npm install')) return { signals: [] }; // `|| true`: the exit status says nothing
  return undefined;
}

const source = JSON.parse(fs.readFileSync(input.replace(/\.transcript\.jsonl$/, '.json'), 'utf8')).source as string;
const st = jsonlTranscript.newState();
const seen = new Set<string>();
let n = 0;
for (const line of fs.readFileSync(input, 'utf8').split('\n').filter(Boolean)) {
  for (const e of jsonlTranscript.events(JSON.parse(line), 1, st)) {
    if (e.type !== 'tool_result' || !e.command) continue;
    const label = labelFor(e.command, e.exitCode === 0, e.output ?? '');
    const key = `${e.command}\0${e.exitCode}\0${e.output}`;
    if (!label || seen.has(key)) continue;
    seen.add(key);
    fs.mkdirSync(OUT, { recursive: true });
    const file = {
      kind: 'command',
      label,
      source: `${source.split(':')[0]}: the Bash tool result in ${path.basename(input)} (commands-from-transcript.ts)`,
      command: { command: e.command, output: e.output, exitCode: e.exitCode, isError: e.isError },
    };
    fs.writeFileSync(path.join(OUT, `bash-${++n}.json`), `${JSON.stringify(file, null, 2)}\n`);
  }
}
process.stdout.write(`${n} command samples in ${OUT}\n`);
