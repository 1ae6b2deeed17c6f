/**
 * Benchmark harness: `npm run bench [name...]` (default: all of bench/index.ts). Each result is
 * written to bench/results/<name>.json with the machine it ran on; a summary is printed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { benches } from './index.js';
import { machineInfo, ROOT } from './lib.js';

async function main(argv: string[]): Promise<number> {
  // Names, not options nor their values (`soak --minutes 60`: the module reads its own options).
  const wanted = argv.filter((a, i) => !a.startsWith('-') && !argv[i - 1]?.startsWith('--'));
  const unknown = wanted.filter((w) => !benches.some((b) => b.name === w));
  if (argv.includes('--list') || argv.includes('-h') || argv.includes('--help') || unknown.length) {
    if (unknown.length) process.stderr.write(`unknown benchmark: ${unknown.join(', ')}\n`);
    const list = benches.map((b) => `  ${b.name.padEnd(14)} ${b.description}`).join('\n');
    process.stdout.write(`usage: npm run bench [-- name...]\n\n${list}\n`);
    return unknown.length ? 1 : 0;
  }
  const selected = wanted.length
    ? benches.filter((b) => wanted.includes(b.name))
    : benches.filter((b) => !b.onlyWhenNamed);
  const outDir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(outDir, { recursive: true });
  const host = machineInfo();
  process.stdout.write(`machine: ${host.cpuModel}, ${host.cores} cores, ${host.totalMemoryMB} MB, node ${host.node}\n`);
  const summary: string[] = [];
  let failed = 0;
  for (const b of selected) {
    process.stdout.write(`\n== ${b.name}: ${b.description}\n`);
    const started = Date.now();
    const machine = machineInfo();
    try {
      const results = await b.run();
      const record = {
        name: b.name,
        description: b.description,
        date: new Date().toISOString(),
        durationSeconds: Math.round((Date.now() - started) / 100) / 10,
        machine,
        results,
      };
      fs.writeFileSync(path.join(outDir, `${b.name}.json`), JSON.stringify(record, null, 2) + '\n');
      const line = typeof results.summary === 'string' ? results.summary : JSON.stringify(results);
      process.stdout.write(`${line}\n`);
      summary.push(`${b.name.padEnd(12)} ${line}`);
    } catch (e) {
      failed++;
      process.stdout.write(`FAILED: ${(e as Error).stack ?? e}\n`);
      summary.push(`${b.name.padEnd(12)} FAILED: ${(e as Error).message}`);
    }
  }
  process.stdout.write(`\nSummary (results in bench/results/):\n${summary.map((s) => `  ${s}`).join('\n')}\n`);
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
