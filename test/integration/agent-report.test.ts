/**
 * The agent's progress report end to end: a shell agent writes $ORCHCTL_WORKSPACE/status.json
 * (executing 1/3), then garbage, then complete 3/3 and exits; the controller mirrors each good
 * report into status.report with its Event, and the garbage is one InvalidReport warning that
 * changes nothing else. The agent waits for the test between writes (files in its workdir), so
 * each state is seen.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPORT_PROTOCOL } from '../../controller/agents/report-protocol.js';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const report = (status: string, done: number) =>
  JSON.stringify({
    status,
    tasks: [1, 2, 3].map((i) => ({ id: `${i}`, subject: `step ${i}`, state: i <= done ? 'done' : 'in_progress' })),
  });

describe('agent progress reports', () => {
  it('status.json → status.report and Events; a corrupt file is a warning that changes nothing else', async () => {
    // Written whole, as the protocol asks: a temporary file renamed over status.json.
    const ws = '"$ORCHCTL_WORKSPACE"';
    const write = (text: string) => `printf '%s' '${text}' > ${ws}/t.json; mv ${ws}/t.json ${ws}/status.json`;
    const wait = (f: string) => `while [ ! -f ${f} ]; do sleep 0.1; done`;
    const script = [
      write(report('executing', 1)),
      wait('go1'),
      write('{"status": "executing", "tasks": [ \\033[2J'),
      wait('go2'),
      write(report('complete', 3)),
    ].join('; ');
    await h.apply([shellSession('rep', script, h.repo)]);
    h.start();

    const first = await h.waitFor('1/3', async () => {
      const s = await h.session('rep');
      return s?.status?.report?.progress === '1/3' && s.status.report;
    });
    expect(first).toMatchObject({ run: 1, status: 'executing', tasksDone: 1, tasksTotal: 3, currentTask: 'step 2' });
    fs.writeFileSync(path.join(h.repo, 'go1'), '');

    const bad = await h.waitFor('problem', async () => {
      const r = (await h.session('rep'))?.status?.report;
      return r?.problem ? r : undefined;
    });
    expect(bad.problem).toMatch(/^status\.json is not valid JSON/);
    expect(bad.problem).not.toMatch(/[\u0000-\u001f]/);
    expect(bad).toMatchObject({ status: 'executing', tasksDone: 1, tasksTotal: 3, progress: '1/3' });
    fs.writeFileSync(path.join(h.repo, 'go2'), '');

    const s = await h.waitFor('Succeeded', async () => {
      const s = await h.session('rep');
      return phaseOf(s) === 'Succeeded' && s;
    });
    expect(s.status?.report).toMatchObject({
      run: 1,
      status: 'complete',
      tasksDone: 3,
      tasksTotal: 3,
      progress: '3/3',
    });
    expect(s.status?.report?.problem).toBeUndefined();

    const events = (await h.events('rep')).filter((e) => /Report/.test(String(e.reason)));
    expect(events.map((e) => [e.type, e.reason, e.count])).toEqual([
      ['Normal', 'ReportUpdated', 1],
      ['Warning', 'InvalidReport', 1],
      ['Normal', 'ReportComplete', 1],
    ]);
    expect(events[0].message).toBe('agent reports executing (1/3 tasks done); current: step 2');

    const table = await h.orchctl(['get', 'agentsessions']);
    expect(table.stdout).toMatch(/TASKS/);
    expect(table.stdout).toMatch(/rep\s+Succeeded\s+.*3\/3/);
  });

  it('an Agent with a persona is told the protocol after it; one without gets the task alone', async () => {
    const persona = path.join(h.repo, '..', 'persona.md');
    fs.writeFileSync(persona, 'You are a careful engineer.\n');
    await h.apply([
      shellSession('with-persona', 'true', h.repo, { prompt: 'Fix it.' }, { systemPromptFile: persona }),
      shellSession('plain', 'true', h.repo, { prompt: 'Fix it.' }),
    ]);
    h.start();
    for (const name of ['with-persona', 'plain'])
      await h.waitFor(`${name} Succeeded`, async () => phaseOf(await h.session(name)) === 'Succeeded');
    const prompt = (name: string) =>
      fs.readFileSync(path.join(h.home, 'sessions/default', name, '1/prompt.md'), 'utf8');
    expect(prompt('with-persona')).toBe(`You are a careful engineer.\n\n${REPORT_PROTOCOL}\n\nFix it.\n`);
    expect(prompt('plain')).toBe('Fix it.\n');
  });
});
