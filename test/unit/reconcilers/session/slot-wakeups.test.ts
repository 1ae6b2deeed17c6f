/**
 * Which session changes wake the Pending sessions of a namespace (they may be admitted now).
 * Only a change that can give a slot back may: an apply of 1000 fresh Pending sessions once
 * queued every Pending key for each of them (O(N²)) and blocked the event loop for ~18 s.
 */
import { expect, it } from 'vitest';
import type { AgentSession } from '../../../../controller/api/session.js';
import { mayFreeSlot } from '../../../../controller/reconcilers/session/setup.js';

const session = (status?: Record<string, unknown>): AgentSession =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default' },
    spec: { agent: { command: ['sh'] }, workdir: '/tmp' },
    ...(status ? { status } : {}),
  }) as unknown as AgentSession;

it('a session that never ran gives no slot back: its changes wake nobody', () => {
  expect(mayFreeSlot(session())).toBe(false);
  expect(mayFreeSlot(session({ phase: 'Pending', reason: 'WaitingForSlot' }))).toBe(false);
});

it('a run that ended, a session back in Pending after a run, and a paused run that gave its slot up do', () => {
  for (const phase of ['Succeeded', 'Failed', 'Killed', 'TimedOut'])
    expect(mayFreeSlot(session({ phase, run: 1 })), phase).toBe(true);
  expect(mayFreeSlot(session({ phase: 'Pending', run: 2, reason: 'NodeLost' }))).toBe(true);
  expect(mayFreeSlot(session({ phase: 'Running', run: 1 }))).toBe(false);
  const paused = { phase: 'Running', run: 1, pause: { run: 1, reason: 'RateLimited', holdsSlot: false } };
  expect(mayFreeSlot(session(paused))).toBe(true);
});
