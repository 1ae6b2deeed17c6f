// Fails listing file:line for every .ts/.mjs line over 120 characters. Biome wraps code at 120
// but leaves long strings, comments and templates alone, and has no max-line rule.
import fs from 'node:fs';
import path from 'node:path';

const MAX = 120;
const long = [];

function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    // Dot folders (test/.cache holds an installed Claude Code) and dependencies are not ours.
    if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') walk(file);
    else if (entry.isFile() && /\.(ts|mjs)$/.test(entry.name)) {
      for (const [i, line] of fs.readFileSync(file, 'utf8').split('\n').entries()) {
        const width = [...line].length; // code points, so 'é' is one character
        if (width > MAX) long.push(`${file}:${i + 1}: ${width} characters`);
      }
    }
  }
}

for (const dir of ['controller', 'bench', 'test']) walk(dir);
if (long.length) {
  console.error(`${long.join('\n')}\n${long.length} line(s) over ${MAX} characters`);
  process.exit(1);
}
