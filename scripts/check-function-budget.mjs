// The function-size budget (issue 27): Biome's noExcessiveLinesPerFunction and
// noExcessiveCognitiveComplexity, with the budgets set in biome.json, over controller/. A function
// over budget fails unless scripts/function-budget.json names it (file, function, why) with its
// size today; the list only shrinks: a listed function that grows fails, and one back within
// budget fails until its entry goes. The rules are "off" in biome.json and run here with --only,
// so the allowlist is one reviewed file rather than ignore comments spread through the code.
//   node scripts/check-function-budget.mjs          check
//   node scripts/check-function-budget.mjs --top    also print the largest functions
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const RULES = { noExcessiveLinesPerFunction: 'lines', noExcessiveCognitiveComplexity: 'complexity' };
const biome = 'node_modules/@biomejs/biome/bin/biome';
const args = ['lint', 'controller', '--max-diagnostics=none', '--reporter=json'];
for (const rule of Object.keys(RULES)) args.push(`--only=complexity/${rule}`);
let report;
try {
  // stderr only says the JSON reporter is experimental.
  const stdio = ['ignore', 'pipe', 'pipe'];
  report = execFileSync(process.execPath, [biome, ...args], { encoding: 'utf8', maxBuffer: 64 << 20, stdio });
} catch (e) {
  report = e.stdout; // biome exits 1 when it reports anything; the JSON is still on stdout
}
const diagnostics = JSON.parse(report).diagnostics;

const sources = new Map();
const linesOf = (file) => {
  if (!sources.has(file)) sources.set(file, fs.readFileSync(file, 'utf8').split('\n'));
  return sources.get(file);
};
const indent = (s) => /^ */.exec(s)[0].length;
const DECL =
  /^\s*(?:export\s+)?(?:(?:async|private|public|protected|static|get|set)\s+)*(?:function\s*\*?\s*)?(\w+)\s*[(<]/;

/** The class or function a line sits in: the nearest line above, indented less, that declares one. */
function enclosing(lines, at) {
  const depth = indent(lines[at]);
  for (let i = at - 1; i >= 0; i--) {
    if (!lines[i].trim() || indent(lines[i]) >= depth) continue;
    const cls = /^\s*(?:export\s+)?(?:abstract\s+)?class\s+(\w+)/.exec(lines[i]);
    if (cls) return cls[1];
    const fn = DECL.exec(lines[i]);
    if (fn && !/^(if|for|while|switch|return|catch)$/.test(fn[1])) return fn[1];
  }
  return undefined;
}

/** A stable name for the function a diagnostic points at: `name`, `Class.method`, `outer/inner`. */
function functionName(file, line, column) {
  const lines = linesOf(file);
  const text = lines[line - 1];
  const outer = indent(text) > 0 ? enclosing(lines, line - 1) : undefined;
  const decl = DECL.exec(text.slice(column - 1)) ?? DECL.exec(text);
  let name = decl?.[1];
  if (!name || text.slice(column - 1).startsWith('=>')) {
    const before = text.slice(0, column - 1);
    name = /(?:const|let)\s+(\w+)/.exec(before)?.[1] ?? `${[...before.matchAll(/(\w+)\(/g)].at(-1)?.[1]} callback`;
  }
  return outer ? `${outer}${/^[A-Z]/.test(outer) ? '.' : '/'}${name}` : name;
}

const found = diagnostics.map((d) => {
  const rule = RULES[d.category.split('/').at(-1)];
  const size = Number((/\((\d+)\)/.exec(d.message) ?? /of (\d+)/.exec(d.message))[1]);
  const { path: file, start } = d.location;
  return { file, function: functionName(file, start.line, start.column), rule, size };
});

const listFile = 'scripts/function-budget.json';
const { allow } = JSON.parse(fs.readFileSync(listFile, 'utf8'));
const key = (e) => `${e.file} ${e.function}`;
const entries = new Map(allow.map((e) => [key(e), e]));
const problems = [];
for (const f of found) {
  const entry = entries.get(key(f));
  if (!entry?.[f.rule]) problems.push(`${f.file}: ${f.function} is over the ${f.rule} budget (${f.size}): split it`);
  else if (f.size > entry[f.rule])
    problems.push(`${f.file}: ${f.function} grew to ${f.rule} ${f.size} (allowlisted at ${entry[f.rule]}): split it`);
}
for (const e of allow) {
  if (!e.why) problems.push(`${listFile}: ${key(e)} says no why`);
  for (const rule of Object.values(RULES))
    if (e[rule] && !found.some((f) => key(f) === key(e) && f.rule === rule))
      problems.push(`${listFile}: ${key(e)} is within the ${rule} budget now: remove "${rule}" from its entry`);
}
if (process.argv.includes('--top'))
  for (const rule of Object.values(RULES))
    console.log(
      `largest by ${rule}:\n` +
        found
          .filter((f) => f.rule === rule)
          .sort((a, b) => b.size - a.size)
          .slice(0, 10)
          .map((f) => `  ${f.size}  ${f.function}  ${f.file}`)
          .join('\n'),
    );
if (problems.length) {
  console.error(`${problems.join('\n')}\n${problems.length} function budget problem(s); budgets in biome.json`);
  process.exit(1);
}
