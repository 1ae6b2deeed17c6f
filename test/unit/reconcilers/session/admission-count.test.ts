/**
 * The admission count (sessions running under the same SessionPolicy) is read only where a
 * maxConcurrentSessions limit needs it: it is an O(sessions) look at the cache per admission, and
 * N sessions applied at once made it O(N²).
 */
import { expect, it } from 'vitest';
import type { AgentSession } from '../../../../controller/api/session.js';
import type { SessionPolicy } from '../../../../controller/api/session-policy.js';
import { type ObserverDeps, SessionObserver } from '../../../../controller/reconcilers/session/observe.js';
import type { Resolved } from '../../../../controller/reconcilers/session/observation.js';

const session = (name: string, phase?: string) =>
  ({
    kind: 'AgentSession',
    metadata: { name, namespace: 'default', labels: { team: 'a' } },
    spec: {},
    ...(phase ? { status: { phase, run: 1 } } : {}),
  }) as unknown as AgentSession;

function observer(all: AgentSession[], policies: SessionPolicy[]) {
  let lists = 0;
  const d = {
    sessions: {
      list: () => {
        lists++;
        return all;
      },
    },
    policies: { list: () => policies },
    host: () => ({}),
    nodeUnschedulable: () => false,
  } as unknown as ObserverDeps;
  return { o: new SessionObserver(d), lists: () => lists };
}

const policy = (spec: Record<string, unknown>) =>
  ({ kind: 'SessionPolicy', metadata: { name: 'p', namespace: 'default' }, spec }) as unknown as SessionPolicy;

it('without a maxConcurrentSessions limit nothing is counted', () => {
  const all = [session('a', 'Running'), session('b', 'Running'), session('c')];
  const p = policy({ selector: {} });
  const { o, lists } = observer(all, [p]);
  const r = o.admission('default/c', all[2], { policy: p, effective: {} } as unknown as Resolved, new Set());
  expect(r?.activeUnderPolicy).toBe(0);
  expect(lists()).toBe(0);
});

it('under a limit it counts the running sessions of the policy and this process’s reservations', () => {
  const all = [session('a', 'Running'), session('b', 'Succeeded'), session('c'), session('d')];
  const p = policy({ selector: {}, maxConcurrentSessions: 3 });
  const { o, lists } = observer(all, [p]);
  const r = o.admission(
    'default/d',
    all[3],
    { policy: p, effective: {} } as unknown as Resolved,
    new Set(['default/c']),
  );
  expect(r?.activeUnderPolicy).toBe(2);
  expect(lists()).toBe(1);
});
