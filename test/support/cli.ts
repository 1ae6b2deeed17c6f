/** Running the real, built `bin/orchctl` as a separate process against a temp ORCHCTL_HOME. */
import { execa, type Options } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/orchctl');

export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A clean environment: no namespace, debug or store settings leak in from the developer's shell. */
export function cliEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ORCHCTL_HOME: home, NO_COLOR: '1' };
  delete env.ORCHCTL_NAMESPACE;
  delete env.ORCHCTL_DEBUG;
  delete env.ORCHCTL_STORE; // a developer's store must never be the one a test writes to
  return env;
}

/** Runs orchctl to completion. Never throws on a non-zero exit; always checks that no stack trace leaked. */
export async function orchctl(home: string, args: string[], opts: Options = {}): Promise<Run> {
  const r = await execa(BIN, args, {
    cwd: ROOT,
    env: cliEnv(home),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    timeout: 30_000,
    ...opts,
  });
  const run = { exitCode: r.exitCode ?? -1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
  expect(run.stderr, `orchctl ${args.join(' ')} printed a stack trace`).not.toMatch(/^\s+at /m);
  return run;
}

export function tempHome(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-e2e-')), 'home');
}

const UID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;

/** Replaces what varies between runs and machines (uids, timestamps, resourceVersions, paths). */
export function normalize(s: string, paths: Record<string, string> = {}): string {
  let out = s;
  for (const [from, to] of Object.entries({ ...paths, [ROOT]: '<ROOT>' })) out = out.split(from).join(to);
  return out
    .replace(UID, '<UID>')
    .replace(TIMESTAMP, '<TIMESTAMP>')
    .replace(/("?resourceVersion"?: )"\d+"/g, '$1"<RV>"')
    .replace(/(\\"resourceVersion\\":)\\"\d+\\"/g, '$1\\"<RV>\\"')
    .replace(/^(\s*Resource Version:\s+)\d+$/gm, '$1<RV>');
}

/**
 * Tables: checks that every cell starts under its header, then replaces what varies and the
 * AGE cells (which change width as time passes) and lines the table up again.
 */
export function normalizeTable(s: string, paths: Record<string, string> = {}): string {
  const blocks = s.trimEnd().split(/\n\n/); // several kinds print one table each
  return (
    blocks
      .map((block) => {
        expectAligned(block);
        const rows = parseTable(normalize(block, paths));
        const ages = rows[0].map((h, i) => (h === 'AGE' ? i : -1)).filter((i) => i >= 0);
        for (const r of rows.slice(1)) for (const i of ages) if (/^(\d+[smhdy]){1,2}$/.test(r[i] ?? '')) r[i] = '<AGE>';
        return render(rows);
      })
      .join('\n\n') + '\n'
  );
}

/** Every row's cells start at the column offsets of the header (tabwriter alignment). */
export function expectAligned(table: string): void {
  const ls = table.trimEnd().split('\n');
  const starts = (l: string) => [...l.matchAll(/(?:^|\s{3,})(\S)/g)].map((m) => m.index! + m[0].length - 1);
  const head = starts(ls[0]);
  for (const l of ls.slice(1))
    expect(starts(l), `misaligned row:\n${ls[0]}\n${l}`).toEqual(head.slice(0, starts(l).length));
}

function render(rows: string[][]): string {
  const w: number[] = [];
  for (const r of rows) for (const [i, c] of r.entries()) w[i] = Math.max(w[i] ?? 0, c.length);
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i] + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

/** Splits a kubectl-style table into rows of cells (cells are separated by 3+ spaces). */
export function parseTable(s: string): string[][] {
  return s
    .trimEnd()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s{3,}/));
}
