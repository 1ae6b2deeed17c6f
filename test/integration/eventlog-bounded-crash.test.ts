/**
 * The event log cut past --event-log-max-bytes (its lower bound, 1 MiB) while an agent streams
 * large hook lines and the controller is killed with SIGKILL twice mid-stream: every line still
 * reaches the consumer (status.agent.counts) exactly once — the cut keeps what the consumer has not
 * read — and the log on disk stays bounded, its kept events dense and in order up to the last.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventLogPath, readEventLog } from '../../controller/store/eventlog.js';
import { makeHarness, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const N = 2000;
const MIB = 1 << 20;
const PAD = 'x'.repeat(1500); // 2000 lines of ~1.6 KB: about 3 MiB of log, three times the limit
const AGENT =
  `i=1; while [ $i -le ${N} ]; do ` +
  `printf '{"t":1795000000000,"payload":{"hook_event_name":"Tick","i":%s,"pad":"${PAD}"}}\\n' $i ` +
  '>> "$ORCHCTL_WORKSPACE/hooks.jsonl"; ' +
  'if [ $((i % 50)) -eq 0 ]; then sleep 0.2; fi; i=$((i+1)); done; exec sleep 600';

describe('bounded event log across controller crashes', () => {
  it('cuts the log within its bound and still delivers every event to its consumer exactly once', async () => {
    h = await makeHarness();
    const harness = h;
    const flags = ['--event-log-max-bytes', '1Mi'];
    await harness.apply([shellSession('stream', AGENT, harness.repo)]);
    const file = eventLogPath(harness.home, 'default', 'stream');
    const last = () => readEventLog(file).next.seq;
    for (const at of [400, 1200]) {
      harness.start(flags);
      await harness.waitFor(`${at} events in the log`, async () => last() >= at, 60_000);
      await harness.stopController('SIGKILL');
    }
    harness.start(flags);
    const s = await harness.waitFor(
      'the consumer to have counted all events',
      async () => {
        const s = await harness.session('stream');
        const counts = (s?.status?.agent as { counts?: Record<string, number> } | undefined)?.counts;
        return counts?.hook === N && s;
      },
      120_000,
    );
    const kept = readEventLog(file).events;
    expect(fs.readFileSync(file, 'utf8').startsWith('{"base":')).toBe(true); // it was cut
    expect(fs.statSync(file).size).toBeLessThanOrEqual(2.25 * MIB + 64 * 1024);
    expect(kept.map((e) => e.seq)).toEqual(kept.map((_, i) => kept[0]!.seq + i));
    const seen = kept.flatMap((e) => (e.type === 'hook' ? [e.payload.i as number] : []));
    expect(seen.at(-1)).toBe(N);
    expect(seen).toEqual(seen.map((_, i) => seen[0]! + i)); // each once, in order
    const agent = s.status?.agent as { counts: Record<string, number>; position: { seq: number } };
    expect(agent.position.seq).toBe(kept.at(-1)!.seq);
  }, 300_000);
});
