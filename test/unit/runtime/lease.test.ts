/**
 * Lease holder identities (runtime/lease.ts): they name the node when a process runs one, and a
 * lease is released early only when its holder's process is known dead on this host — never for a
 * live process, whichever node name it carries (the node agents of one host share its hostname).
 */
import { execa } from 'execa';
import os from 'node:os';
import { expect, it } from 'vitest';
import { holderIdentity, holderIsDead } from '../../../controller/runtime/lease.js';
import type { LeaseRecord } from '../../../controller/store/store.js';

const lease = (holderIdentity: string): LeaseRecord => ({
  name: 'orchctl-node-n1',
  holderIdentity,
  acquireTime: '2026-03-01T10:00:00Z',
  renewTime: '2026-03-01T10:00:00Z',
  leaseDurationSeconds: 15,
  leaderTransitions: 0,
});

it('an identity names the node, the host and the pid', () => {
  expect(holderIdentity('n1')).toMatch(new RegExp(`^n1@${os.hostname()}_${process.pid}_[a-z0-9]+$`));
  expect(holderIdentity()).toMatch(new RegExp(`^${os.hostname()}_${process.pid}_`));
});

it('a dead holder on this host is dead; a live one, another host or a foreign format is not', async () => {
  const exited = execa('true');
  const deadPid = exited.pid!;
  await exited;
  expect(holderIsDead(lease(`n1@${os.hostname()}_${deadPid}_abc123`))).toBe(true);
  expect(holderIsDead(lease(`${os.hostname()}_${deadPid}_abc123`))).toBe(true);
  expect(holderIsDead(lease(`n2@${os.hostname()}_${process.ppid}_abc123`))).toBe(false); // alive
  expect(holderIsDead(lease(`n1@${os.hostname()}_${process.pid}_abc123`))).toBe(false); // this process
  expect(holderIsDead(lease(`n1@another-host_${deadPid}_abc123`))).toBe(false);
  expect(holderIsDead(lease('etcd-lease-holder'))).toBe(false);
});
