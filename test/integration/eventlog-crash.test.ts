/**
 * Event log, exactly once across kill -9: an agent keeps writing hook lines while the controller
 * ingests them into the session's event log and folds them into status (a consumer). The
 * controller is killed with SIGKILL twice mid-stream and restarted. In the end every line is in
 * the log exactly once (dense seq, each payload once) and the consumer counted each exactly once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventLogPath, readEventLog } from '../../controller/store/eventlog.js';
import { makeHarness, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const N = 3000;
// Appends N hook records in bursts of 50 with a pause between, then idles.
const AGENT =
  `i=1; while [ $i -le ${N} ]; do ` +
  `printf '{"t":1795000000000,"payload":{"hook_event_name":"Tick","i":%s}}\\n' $i ` +
  '>> "$ORCHCTL_WORKSPACE/hooks.jsonl"; ' +
  'if [ $((i % 50)) -eq 0 ]; then sleep 0.1; fi; i=$((i+1)); done; exec sleep 600';

describe('event log across controller crashes', () => {
  it('delivers every event to the log and to its consumer exactly once', async () => {
    h = await makeHarness();
    const harness = h;
    await harness.apply([shellSession('stream', AGENT, harness.repo)]);
    const file = eventLogPath(harness.home, 'default', 'stream');
    const hooks = () => readEventLog(file).events.filter((e) => e.type === 'hook');

    for (const at of [400, 1500]) {
      harness.start();
      await harness.waitFor(`${at} events in the log`, async () => hooks().length >= at, 60_000);
      await harness.stopController('SIGKILL');
    }
    expect(hooks().length).toBeLessThan(N); // the crashes really were mid-stream
    harness.start();
    const s = await harness.waitFor(
      'the consumer to have counted all events',
      async () => {
        const s = await harness.session('stream');
        const counts = (s?.status?.agent as { counts?: Record<string, number> } | undefined)?.counts;
        return counts?.hook === N && s;
      },
      90_000,
    );

    const all = readEventLog(file).events;
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    const seen = hooks().map((e) => (e.type === 'hook' ? (e.payload.i as number) : -1));
    expect(seen).toHaveLength(N);
    expect(new Set(seen).size).toBe(N);
    expect(seen).toEqual(Array.from({ length: N }, (_, i) => i + 1)); // and in order
    const agent = s.status?.agent as { counts: Record<string, number>; position: { seq: number } };
    expect(agent.counts.hook).toBe(N);
    expect(agent.position.seq).toBe(all.at(-1)!.seq);
  }, 240_000);
});
