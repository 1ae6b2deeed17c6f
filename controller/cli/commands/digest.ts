/**
 * `orchctl digest [--policy NAME] [--dry-run | --now]`. By default (and with --dry-run) it
 * previews the digest the notifier would send now, since the policy's last digest (or a day back),
 * composed as configured (the LLM's narrative unless --template), and writes nothing. `--now` asks
 * the controller for the digest instead: it sets the request annotation on the policy (a CAS
 * update) and waits for the digest Notifications recorded since, until each is Sent or Failed; the
 * controller records and sends it once, through the outbox.
 */
import { parseDuration } from '../../api/duration.js';
import { isApiError } from '../../api/errors.js';
import type { NotificationPolicy } from '../../api/notification.js';
import { DIGEST_REQUEST_ANNOTATION, type Notification } from '../../api/outbox.js';
import { CONTROLLER_LEASE, holderIsDead } from '../../runtime/lease.js';
import { retryOnConflict } from '../../store/retry.js';
import type { Store } from '../../store/store.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';

export interface DigestOptions {
  namespace?: string;
  policy?: string;
  now?: boolean;
  dryRun?: boolean;
  template?: boolean;
  timeout?: string;
}

const DEFAULT_TIMEOUT = '30s';
const POLL_MS = 200;

/** The named policy, or the namespace's only one. */
async function findPolicy(store: Store, namespace: string, name?: string): Promise<NotificationPolicy> {
  if (name) {
    const p = await store.get({ kind: 'NotificationPolicy', namespace, name });
    if (!p) throw new Error(`notificationpolicies "${name}" not found in namespace ${namespace}`);
    return p;
  }
  const { items } = await store.list('NotificationPolicy', { namespace });
  if (items.length === 1) return items[0];
  if (!items.length)
    throw new Error(
      `no NotificationPolicy in namespace ${namespace}: apply one (manifests/notifications/policy.yaml) first`,
    );
  const names = items.map((p) => p.metadata.name).join(', ');
  throw new Error(`namespace ${namespace} has ${items.length} NotificationPolicies (${names}): name one with --policy`);
}

export async function digestCommand(opts: DigestOptions, g: GlobalOptions): Promise<void> {
  if (opts.now && opts.dryRun) throw new Error('--now asks the controller for the digest; --dry-run only previews it');
  if (opts.now && opts.template)
    throw new Error('--template applies to a preview: with --now the policy says how the digest is written');
  const timeout = opts.timeout ?? DEFAULT_TIMEOUT;
  const timeoutMs = parseDuration(timeout);
  const ctx = openContext(g, { readonly: !opts.now });
  try {
    const namespace = namespaceFor(ctx.reg.resolve('notificationpolicy'), opts.namespace);
    const policy = await findPolicy(ctx.store, namespace, opts.policy);
    if (opts.now) await requestDigest(ctx.store, policy, timeout, timeoutMs);
    else await preview(ctx.store, policy, !!opts.template, timeoutMs);
  } finally {
    await ctx.close();
  }
}

async function preview(store: Store, policy: NotificationPolicy, template: boolean, timeoutMs: number) {
  // Loaded here: the composition reaches the LLM backends, which a --now request does not need.
  const { previewDigest } = await import('../../notify/digest/preview.js');
  const p = await previewDigest(store, policy, { now: Date.now(), template, timeoutMs });
  const d = p.data;
  const c = p.composed;
  const writer =
    c.source === 'llm'
      ? `an LLM's narrative (${c.backend}${c.model ? ` ${c.model}` : ''}) on the template`
      : `the template${c.fallbackReason ? ` (the LLM failed: ${c.fallbackReason})` : ''}`;
  const channels = p.channels.map((t) => `${t.name} (${t.found ? t.type : 'not found'}, ${t.maxChars} characters)`);
  err(
    `# digest of notificationpolicy ${d.namespace}/${d.policy} from ${d.since} to ${d.until} ` +
      `(since ${p.sinceFrom}), written by ${writer}\n` +
      `# for ${channels.length ? channels.join(', ') : 'no channel'}; at most ${p.maxChars} characters here; ` +
      `${d.digestItems.length} notification${d.digestItems.length === 1 ? '' : 's'} wait for it\n` +
      '# a preview: nothing was written or sent\n',
  );
  out(`${c.title}\n\n${c.body}\n`);
}

const TERMINAL = new Set(['Sent', 'Failed']);
const recordedAt = (n: Notification) => Date.parse(n.metadata.creationTimestamp ?? '');

async function requestDigest(store: Store, policy: NotificationPolicy, timeout: string, timeoutMs: number) {
  const name = policy.metadata.name;
  const namespace = policy.metadata.namespace ?? '';
  const requested = Date.now();
  const at = new Date(requested).toISOString();
  await retryOnConflict(
    async (attempt) => {
      const cur = attempt === 0 ? policy : await store.get({ kind: 'NotificationPolicy', namespace, name });
      if (!cur) throw new Error(`notificationpolicies "${name}" was deleted`);
      const annotations = { ...cur.metadata.annotations, [DIGEST_REQUEST_ANNOTATION]: at };
      await store.update({ ...cur, metadata: { ...cur.metadata, annotations } });
    },
    { attempts: 5, retryOn: (e) => isApiError(e, 'Conflict') },
  );
  out(`notificationpolicy.orchctl.io/${name} digest requested at ${at}\n`);
  const lease = await store.getLease(CONTROLLER_LEASE);
  const leaseLive =
    lease && Date.parse(lease.renewTime) + lease.leaseDurationSeconds * 1000 > Date.now() && !holderIsDead(lease);
  if (!leaseLive) err('warning: no controller is running on this store; the digest is sent when one starts\n');

  // The store stamps objects to the second: a digest recorded in the request's second counts.
  const from = Math.floor(requested / 1000) * 1000;
  const deadline = requested + timeoutMs;
  for (;;) {
    const { items } = await store.list('Notification', { namespace });
    const digests = items.filter((n) => n.spec?.source === 'digest' && n.spec.policy === name && recordedAt(n) >= from);
    if (digests.length && digests.every((n) => TERMINAL.has(n.status?.phase ?? ''))) {
      for (const n of digests)
        out(`notification.orchctl.io/${n.metadata.name} channel ${n.spec!.channel}: ${n.status!.phase}\n`);
      const failed = digests.filter((n) => n.status!.phase === 'Failed');
      const why = (n: Notification) => `${n.status?.code ?? 'Failed'}): ${n.status?.message ?? ''}`;
      if (failed.length)
        throw new Error(failed.map((n) => `the digest to channel ${n.spec!.channel} failed (${why(n)}`).join('; '));
      return;
    }
    const p = await store.get({ kind: 'NotificationPolicy', namespace, name });
    if (!digests.length && p?.status?.lastDigestRequest === at)
      throw new Error(
        `the controller answered the request but recorded no digest for notificationpolicy "${name}" ` +
          '(is the digest disabled, or does it name no channel?)',
      );
    if (Date.now() >= deadline) {
      const where = digests.length
        ? digests.map((n) => `${n.spec!.channel} ${n.status?.phase ?? 'Pending'}`).join(', ')
        : 'no digest recorded yet';
      throw new Error(
        `timed out after ${timeout} waiting for the digest of notificationpolicy "${name}" ` +
          `(requested at ${at}; ${where}; is the controller running?)`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
