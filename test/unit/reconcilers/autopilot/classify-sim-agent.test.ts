/**
 * The quickstart's sim agent fails on request the way real runs fail ([error:CLASS]), and
 * classifyFailure reads each of those runs as the class it was asked for: the script really runs
 * (node, colours forced), and its stdout becomes status.lastOutput as the session reconciler makes
 * it (observers/output.ts, strip-ansi). [error:transient:N] fails runs 1..N only, so a recovery works.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorClass } from '../../../../controller/api/autopilot.js';
import type { AgentSessionStatus } from '../../../../controller/api/session.js';
import { outputTail } from '../../../../controller/observers/output.js';
import { classifyFailure } from '../../../../controller/reconcilers/autopilot/classify.js';

const SIM = path.resolve('examples/quickstart/agent/sim-agent.mjs');
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-sim-classify-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One run of the sim agent, as the status a failed run ends with. */
async function simRun(task: string, run = 1): Promise<{ exitCode: number; raw: string; status: AgentSessionStatus }> {
  const cwd = fs.mkdtempSync(path.join(dir, 'work-'));
  const resultFile = path.join(cwd, 'result.json');
  const r = await execa(process.execPath, [SIM, task], {
    cwd,
    reject: false,
    env: {
      SIM_AGENT_STEP_MS: '0',
      FORCE_COLOR: '1',
      ORCHCTL_RUN: String(run),
      ORCHCTL_RESULT_FILE: resultFile,
      NO_COLOR: undefined,
    },
  });
  const exitCode = r.exitCode ?? -1;
  const result = fs.existsSync(resultFile) ? JSON.parse(fs.readFileSync(resultFile, 'utf8')) : undefined;
  return {
    exitCode,
    raw: r.stdout,
    status: {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      reason: exitCode === 0 ? 'Completed' : 'Error',
      message: `agent exited with code ${exitCode}`,
      exitCode,
      run,
      lastOutput: outputTail(r.stdout),
      result,
    },
  };
}

describe('sim agent [error:CLASS] → classifyFailure', () => {
  const modes: [string, ErrorClass, string][] = [
    ['transient', 'Transient', 'Error: connect ETIMEDOUT 203.0.113.7:443 (request to the model API timed out)'],
    ['dependency', 'Dependency', "Error: Cannot find module 'left-pad'"],
    ['auth', 'Auth', 'Error: 401 Unauthorized - invalid x-api-key'],
    ['logic', 'Logic', '✘ Tests failed'],
  ];

  it.each(modes)('[error:%s] fails its run as %s', async (mode, cls, lastLine) => {
    const { exitCode, raw, status } = await simRun(`Add a health check endpoint [error:${mode}]`);
    expect(exitCode).toBe(1);
    expect(raw).toContain('\x1b[31m');
    expect(status.lastOutput).not.toContain('\x1b');
    expect(status.lastOutput!.split('\n').pop()).toContain(lastLine);
    expect(status.result).toMatchObject({ status: 'failure' });
    const c = classifyFailure(status);
    expect(c.class).toBe(cls);
    expect(c.source).toBe('output');
    expect(c.evidence).toContain(lastLine);
  });

  it('[error:transient:2] fails runs 1 and 2, and run 3 does the work', async () => {
    const task = 'Add a health check endpoint [error:transient:2]';
    for (const run of [1, 2]) {
      const r = await simRun(task, run);
      expect(r.exitCode).toBe(1);
      expect(classifyFailure(r.status).class).toBe('Transient');
    }
    const ok = await simRun(task, 3);
    expect(ok.exitCode).toBe(0);
    expect(ok.status.result).toMatchObject({ status: 'success' });
    expect(ok.status.lastOutput).toContain('Done: Add a health check endpoint (');
  });
});
