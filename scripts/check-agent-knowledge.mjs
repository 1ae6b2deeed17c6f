// No Claude Code knowledge outside controller/agents/ and controller/llm/ (issue 27): fails on an
// identifier, string, template or import in controller/ code elsewhere that names Claude (`claude`,
// `.claude`, `claude-code`, `CLAUDE_…`) or one of its ANTHROPIC_… variables. Comments are not checked:
// they may name Claude Code as an example. Code parsed with swc (as dependency-cruiser does), so a
// word inside a comment or a longer identifier is found where it is, not guessed from text.
// A reviewed exception goes into scripts/agent-knowledge-allowlist.json as { file, name, why }.
import fs from 'node:fs';
import path from 'node:path';
import { parseSync } from '@swc/core';

const ALLOWED_DIRS = ['controller/agents/', 'controller/llm/'];
const CLAUDE = /claude|\bANTHROPIC_[A-Z_]+/i;
const allowFile = 'scripts/agent-knowledge-allowlist.json';
const { allow } = JSON.parse(fs.readFileSync(allowFile, 'utf8'));

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every identifier, string, template text and import source in an AST, with its byte offset. */
function* words(node) {
  if (Array.isArray(node)) for (const n of node) yield* words(n);
  else if (node && typeof node === 'object') {
    if (node.type === 'Identifier' && typeof node.value === 'string') yield [node.value, node.span.start];
    if (node.type === 'StringLiteral') yield [node.value, node.span.start];
    if (node.type === 'TemplateElement') yield [node.raw, node.span.start];
    for (const [k, v] of Object.entries(node)) if (k !== 'span') yield* words(v);
  }
}

const found = [];
for (const file of files('controller').filter((f) => !ALLOWED_DIRS.some((d) => f.startsWith(d)))) {
  const src = fs.readFileSync(file, 'utf8');
  if (!CLAUDE.test(src)) continue; // most files: no parse needed
  // swc's offsets run on across parses and the module's span starts at its first token: a leading
  // `;` puts that token at the file's first byte.
  const ast = parseSync(`;${src}`, { syntax: 'typescript', target: 'es2022' });
  const base = ast.span.start + 1;
  const bytes = Buffer.from(src, 'utf8');
  for (const [text, at] of words(ast.body)) {
    if (!CLAUDE.test(text)) continue;
    if (allow.some((a) => a.file === file && text.includes(a.name))) continue;
    const line = bytes
      .subarray(0, at - base)
      .toString('utf8')
      .split('\n').length;
    found.push(`${file}:${line}: ${JSON.stringify(text.slice(0, 60))}`);
  }
}
for (const a of allow) if (!a.why) found.push(`${allowFile}: ${a.file} ${a.name} says no why`);
if (found.length) {
  console.error(
    `${found.join('\n')}\n${found.length} piece(s) of Claude Code knowledge outside controller/agents and ` +
      'controller/llm: move it behind the AgentDriver interface (agents/driver.ts), or allowlist it with why',
  );
  process.exit(1);
}
