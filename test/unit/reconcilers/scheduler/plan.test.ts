import { describe, expect, it } from 'vitest';
import type { Node } from '../../../../controller/api/node.js';
import type { Project } from '../../../../controller/api/project.js';
import type { AgentSession } from '../../../../controller/api/session.js';
import type { SessionPolicy } from '../../../../controller/api/session-policy.js';
import { API_VERSION } from '../../../../controller/api/types.js';
import {
  betterPlace,
  bindingFor,
  fitMessage,
  needsBinding,
  type ScheduleInput,
  schedule,
  unfit,
} from '../../../../controller/reconcilers/scheduler/plan.js';

const GB = 1024 ** 3;
const T = '2026-01-01T00:00:00Z';

function node(name: string, o: { labels?: Record<string, string>; ready?: string; spec?: Node['spec'] } = {}): Node {
  return {
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name, labels: o.labels },
    spec: o.spec ?? {},
    status: {
      conditions: [{ type: 'Ready', status: o.ready ?? 'True', reason: 'R', message: '', lastTransitionTime: T }],
      capacity: { cpu: 4, memoryBytes: 16 * GB },
      free: { memoryBytes: 8 * GB, diskBytes: 100 * GB },
      loadAverage: [1, 1, 1],
      projects: ['default/web'],
    },
  } as Node;
}

const withStatus = (n: Node, s: Partial<NonNullable<Node['status']>>): Node => ({
  ...n,
  status: { ...n.status, ...s },
});

function session(spec: Partial<AgentSession['spec']> = {}, status?: AgentSession['status']): AgentSession {
  return {
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', generation: 1 },
    spec: { projectRef: 'web', prompt: 'x', ...spec },
    ...(status ? { status } : {}),
  } as AgentSession;
}

const project = (spec: Partial<Project['spec']> = {}): Project =>
  ({
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name: 'web', namespace: 'default' },
    spec: { path: '/src/web', ...spec },
  }) as Project;

const policy = (spec: SessionPolicy['spec']): SessionPolicy =>
  ({
    apiVersion: API_VERSION,
    kind: 'SessionPolicy',
    metadata: { name: 'p', namespace: 'default' },
    spec,
  }) as SessionPolicy;

const input = (o: Partial<ScheduleInput> = {}): ScheduleInput => ({
  session: session(),
  project: project(),
  nodes: [node('a')],
  bound: () => 0,
  ...o,
});

describe('filters: which node a session does not fit, and why', () => {
  const cases: [string, Partial<ScheduleInput>, Node, string | undefined][] = [
    ['a Ready node with everything fits', {}, node('a'), undefined],
    ['not Ready', {}, node('a', { ready: 'Unknown' }), 'NotReady'],
    ['Ready=False', {}, node('a', { ready: 'False' }), 'NotReady'],
    ['cordoned', {}, node('a', { spec: { unschedulable: true } }), 'Unschedulable'],
    ['spec.nodeName names another node', { session: session({ nodeName: 'b' }) }, node('a'), 'NodeName'],
    ['spec.nodeName names this one', { session: session({ nodeName: 'a' }) }, node('a'), undefined],
    ['nodeSelector not matched', { session: session({ nodeSelector: { gpu: 'yes' } }) }, node('a'), 'NodeSelector'],
    [
      'nodeSelector matched',
      { session: session({ nodeSelector: { gpu: 'yes' } }) },
      node('a', { labels: { gpu: 'yes', zone: 'x' } }),
      undefined,
    ],
    [
      "the project's nodeSelector not matched",
      { project: project({ nodeSelector: { repo: 'web' } }) },
      node('a'),
      'ProjectSelector',
    ],
    [
      'the repository is not on this node (another has it)',
      {},
      withStatus(node('a'), { projects: ['default/other'] }),
      'ProjectPath',
    ],
    ['maxSessions reached', { bound: () => 2 }, node('a', { spec: { maxSessions: 2 } }), 'TooManySessions'],
    ['maxSessions not reached', { bound: () => 1 }, node('a', { spec: { maxSessions: 2 } }), undefined],
    [
      'less free memory than the policy asks',
      { policy: policy({ minFreeMemoryMB: 9 * 1024 }) },
      node('a'),
      'InsufficientMemory',
    ],
    ['enough free memory', { policy: policy({ minFreeMemoryMB: 8 * 1024 }) }, node('a'), undefined],
    [
      'less free disk than the policy asks',
      { policy: policy({ minFreeDiskMB: 200 * 1024 }) },
      node('a'),
      'InsufficientDisk',
    ],
    ['load per CPU above the policy', { policy: policy({ maxLoadPerCPU: 0.2 }) }, node('a'), 'TooMuchLoad'],
    ['load per CPU within the policy', { policy: policy({ maxLoadPerCPU: 0.25 }) }, node('a'), undefined],
  ];
  it.each(cases)('%s', (_what, o, n, want) => {
    const i = input(o);
    const strict = i.nodes.concat(n).some((x) => x.status?.projects?.includes('default/web'));
    expect(unfit(i, n, strict)).toBe(want);
  });
});

describe('schedule', () => {
  it("says why no node fits in kubectl's words, the most common reason first", () => {
    const r = schedule(
      input({
        session: session({ nodeSelector: { zone: 'a' } }),
        policy: policy({ minFreeMemoryMB: 10 * 1024 }),
        nodes: [node('n1', { labels: { zone: 'a' } }), node('n2', { labels: { zone: 'a' } }), node('n3')],
      }),
    );
    expect(r).toEqual({
      fits: false,
      message: "0/3 nodes are available: 2 Insufficient memory, 1 node(s) didn't match node selector.",
      reasons: { InsufficientMemory: 2, NodeSelector: 1 },
    });
  });

  it('ties are ordered by text, and no nodes at all is said so', () => {
    expect(fitMessage(2, { TooManySessions: 1, NotReady: 1 })).toBe(
      '0/2 nodes are available: 1 node(s) were not ready, 1 Too many sessions.',
    );
    expect(fitMessage(0, {})).toBe('0/0 nodes are available: no nodes registered.');
  });

  it('spreads: the node with the fewest sessions bound, then the most free memory, then by name', () => {
    const nodes = [node('a'), withStatus(node('b'), { free: { memoryBytes: 12 * GB } }), node('c')];
    expect(schedule(input({ nodes, bound: (n) => ({ a: 3, b: 3, c: 1 })[n] ?? 0 }))).toMatchObject({ node: 'c' });
    expect(schedule(input({ nodes, bound: () => 2 }))).toMatchObject({ node: 'b', feasible: 3 });
    expect(schedule(input({ nodes: [node('z'), node('y')] }))).toMatchObject({ node: 'y' });
  });

  it('the repository check applies only when some node reports the path', () => {
    const nowhere = [withStatus(node('a'), { projects: [] }), withStatus(node('b'), { projects: [] })];
    // Reported nowhere (not there yet, or not reported yet): placed, and the node waits for the path.
    expect(schedule(input({ nodes: nowhere }))).toMatchObject({ fits: true, feasible: 2 });
    const onB = [nowhere[0], withStatus(node('b'), { projects: ['default/web'] })];
    expect(schedule(input({ nodes: onB }))).toMatchObject({ fits: true, node: 'b', feasible: 1 });
    // A session with no project (a workdir) goes anywhere.
    expect(schedule(input({ project: undefined, nodes: nowhere }))).toMatchObject({ feasible: 2 });
  });
});

describe('needsBinding', () => {
  it('a new session, a waiting or running one without a binding: yes; a bound one: no', () => {
    expect(needsBinding(session())).toBe(true);
    expect(needsBinding(session({}, { phase: 'Running' }))).toBe(true);
    expect(needsBinding(session({}, { phase: 'Backoff' }))).toBe(true);
    expect(needsBinding(session({}, { phase: 'Pending', binding: { nodeName: 'a', epoch: 1, boundAt: T } }))).toBe(
      false,
    );
  });

  it('a finished session only when asked for a new run (restart annotation or a spec change)', () => {
    const done = session({}, { phase: 'Failed', lifecycle: { runGeneration: 1 } });
    expect(needsBinding(done)).toBe(false);
    expect(needsBinding({ ...done, metadata: { ...done.metadata, generation: 2 } })).toBe(true);
    const restart = { ...done, metadata: { ...done.metadata, annotations: { 'orchctl.io/restartedAt': T } } };
    expect(needsBinding(restart)).toBe(true);
    const stopped = { ...restart, spec: { ...restart.spec, desiredState: 'Stopped' as const } };
    expect(needsBinding(stopped)).toBe(false);
  });

  it('a deleted session with a finalizer (a node must clean up), not one without', () => {
    const del = session({}, { phase: 'Failed' });
    del.metadata.deletionTimestamp = T;
    expect(needsBinding(del)).toBe(false);
    del.metadata.finalizers = ['orchctl.io/session'];
    expect(needsBinding(del)).toBe(true);
  });
});

describe('bindingFor', () => {
  it('every binding has a higher epoch than the last binding and the last run', () => {
    expect(bindingFor(session(), 'a', T)).toEqual({ nodeName: 'a', epoch: 1, boundAt: T });
    // Unbound after its node was lost: the run's epoch is what the new one must pass.
    expect(bindingFor(session({}, { lifecycle: { epoch: 3 } }), 'b', T).epoch).toBe(4);
    const bound = session({}, { binding: { nodeName: 'a', epoch: 5, boundAt: T }, lifecycle: { epoch: 4 } });
    expect(bindingFor(bound, 'b', T).epoch).toBe(6);
  });
});

describe('betterPlace', () => {
  const waiting = session(
    {},
    { phase: 'Pending', reason: 'ProjectPathNotFound', binding: { nodeName: 'a', epoch: 1, boundAt: T } },
  );
  const nodes = [withStatus(node('a'), { projects: [] }), node('b')];

  it('moves a never-started session off a node without its repository to one that has it', () => {
    expect(betterPlace(input({ session: waiting, nodes }))).toBe('b');
  });

  it('leaves it when it has run, waits for another reason, or no node has the repository', () => {
    expect(betterPlace(input({ session: { ...waiting, status: { ...waiting.status, run: 1 } }, nodes }))).toBe(
      undefined,
    );
    const other = { ...waiting, status: { ...waiting.status, reason: 'MaxConcurrentSessions' } };
    expect(betterPlace(input({ session: other, nodes }))).toBe(undefined);
    expect(betterPlace(input({ session: waiting, nodes: [nodes[0], withStatus(node('b'), { projects: [] })] }))).toBe(
      undefined,
    );
  });
});
