/**
 * Whether the etcd cluster as a whole cannot commit (issue 26 item 1): asked of each member on its
 * own. A member that refuses the connection is down (its host answered); one that answers with no
 * leader is in a cluster without quorum. When every member is one or the other, nobody anywhere can
 * write — no control plane can move a session — so a node need not fence itself for it. A member
 * that does not answer at all (a timeout) may be behind a partition that the rest of the cluster is
 * on the other side of: then the cluster may still act, and the answer is no.
 */
import net from 'node:net';
import { connectEtcd, type EtcdTls } from './etcd-client.js';

/** What one member said: it has a leader, it has none, it is down (refused), or nothing (timeout). */
export type MemberAnswer = 'leader' | 'noLeader' | 'refused' | 'silent';

/** How long one member is given to answer, connect and status together. */
export const PROBE_TIMEOUT_MS = 1500;

function connects(endpoint: string, ms: number): Promise<'refused' | 'silent' | 'open'> {
  const url = new URL(endpoint);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (r: 'refused' | 'silent' | 'open') => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done('silent'), ms);
    sock.once('connect', () => done('open'));
    sock.once('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? 'refused' : 'silent'));
  });
}

/** One member's answer within `ms`. */
export async function probeMember(endpoint: string, tls: EtcdTls | undefined, ms = PROBE_TIMEOUT_MS) {
  const start = Date.now();
  const tcp = await connects(endpoint, ms);
  if (tcp !== 'open') return tcp;
  const left = Math.max(200, ms - (Date.now() - start));
  const client = connectEtcd([endpoint], tls, left);
  try {
    const s = await client.maintenance.status();
    const none = !s.leader || s.leader === '0' || (s.errors ?? []).some((x) => /no leader/i.test(x));
    return none ? 'noLeader' : 'leader';
  } catch (e) {
    return /no leader/i.test((e as Error)?.message ?? '') ? 'noLeader' : 'silent';
  } finally {
    client.close();
  }
}

/** True only when every member answered, each refusing or without a leader. */
export async function clusterCannotCommit(endpoints: string[], tls: EtcdTls | undefined): Promise<boolean> {
  const answers: MemberAnswer[] = await Promise.all(endpoints.map((e) => probeMember(e, tls)));
  return answers.every((a) => a === 'refused' || a === 'noLeader');
}
