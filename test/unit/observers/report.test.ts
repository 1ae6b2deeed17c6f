/** readReport (controller/observers/report.ts): status.json read only when it changed, and never past its bound. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readReport } from '../../../controller/observers/report.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-report-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'status.json');

describe('readReport', () => {
  it('is undefined while the agent has written nothing', () => {
    expect(readReport(dir, undefined)).toBeUndefined();
  });

  it('reads the file once, then not again until its size or mtime changes', () => {
    fs.writeFileSync(file, '{"status":"executing"}');
    const first = readReport(dir, undefined);
    expect(first).toMatchObject({ size: 22, text: '{"status":"executing"}' });
    expect(readReport(dir, first!.stamp)).toBeUndefined();
    fs.writeFileSync(file, '{"status":"complete"}');
    const second = readReport(dir, first!.stamp);
    expect(second?.text).toBe('{"status":"complete"}');
    expect(second?.stamp).not.toBe(first?.stamp);
  });

  it('does not read a file over the bound: its size only', () => {
    fs.writeFileSync(file, 'x'.repeat(2048));
    expect(readReport(dir, undefined, 1024)).toEqual({ stamp: expect.any(String), size: 2048 });
  });
});
