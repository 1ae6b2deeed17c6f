/**
 * What the process metrics cost an idle controller, counted, not timed: how often its event loop
 * wakes. prom-client's event-loop-lag histogram samples every 10 ms by default, 100 wake-ups a
 * second for ever; at 1000 idle sessions that was ~0.5 % of a core of the controller's ~1.7 %
 * (issue 29). Counted as the main thread's voluntary context switches (each sleep in epoll_wait is
 * one) in a fresh node process running the built module, so nothing else of the test runner's
 * shares the loop.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../../controller/config/paths.js';

const MODULE = path.join(packageRoot(), 'dist/controller/metrics/index.js');

/** Wake-ups of a process's main thread over `ms`, after 500 ms of start-up, with or without the metrics. */
function wakeups(withMetrics: boolean, ms: number): number {
  const script = `
    import fs from 'node:fs';
    const { ControllerMetrics } = await import(${JSON.stringify(MODULE)});
    const none = { list: () => [], onChange: () => undefined };
    if (${withMetrics}) new ControllerMetrics({ controller: 'c', leaseName: 'l', sessions: none, nodes: none });
    setInterval(() => undefined, 1000);
    const status = () => fs.readFileSync('/proc/self/task/' + process.pid + '/status', 'utf8');
    const switches = () => Number(/^voluntary_ctxt_switches:\\s+(\\d+)/m.exec(status())[1]);
    await new Promise((r) => setTimeout(r, 500));
    const before = switches();
    await new Promise((r) => setTimeout(r, ${ms}));
    console.log(switches() - before);
    process.exit(0);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the probe failed: ${r.stderr}`);
  return Number(r.stdout.trim());
}

describe('process metrics at idle', () => {
  it.runIf(process.platform === 'linux')('wake the event loop ~10 times a second, not 100', () => {
    const bare = wakeups(false, 2000);
    const measured = wakeups(true, 2000);
    // 100 ms sampling: ~20 over 2 s beyond the bare process; prom-client's default 10 ms: ~200.
    expect(measured - bare).toBeGreaterThanOrEqual(10); // the histogram does sample
    expect(measured - bare).toBeLessThan(60);
  });
});
