/**
 * The digest (seed 002 §2.6), one NotificationPolicy per key: when its schedule comes round (or
 * `orchctl digest --now` sets the request annotation), collect what happened since the last
 * digest from the outbox, the sessions and the Evaluations, have the narrative written (an LLM
 * backend, falling back to the template on any failure), and record one `digest` Notification
 * per channel — the held-back notifications marked Digested, `status.lastDigestAt` moved on — in
 * one transaction guarded by the policy's resourceVersion. Delivery sends it like any other.
 * A crash before the transaction composes again; after it, the digest is not made twice.
 */
import { isApiError } from '../../api/errors.js';
import { DIGEST_REQUEST_ANNOTATION, NOTIFICATION_LABELS, type Notification } from '../../api/outbox.js';
import { API_VERSION } from '../../api/types.js';
import type { Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { Store, WriteOp } from '../../store/store.js';
import {
  collectDigest,
  type DigestInput,
  composeDigest,
  type DigestChannel,
  digestBackend,
  digestDueAt,
  digestSettings,
  digestTargets,
  digestWindowStart,
  nextDigestAt,
} from '../../notify/digest/index.js';
import { carrierName } from './outbox.js';

const MAX_SLEEP_MS = 3600_000;
const RETRY_MS = 50;
const iso = (t: number) => new Date(t).toISOString();

export interface DigesterDeps {
  store: Store;
  policies: Pick<Informer<'NotificationPolicy'>, 'get'>;
  channels: Pick<Informer<'NotificationChannel'>, 'list'>;
  notifications: Pick<Informer<'Notification'>, 'list'>;
  sessions: Pick<Informer<'AgentSession'>, 'list'>;
  evaluations: Pick<Informer<'Evaluation'>, 'list'>;
  /** Pending Decisions, escalated Projects, blocked Pipelines and the budgets: the digest's other sections. */
  decisions?: Pick<Informer<'Decision'>, 'list'>;
  projects?: Pick<Informer<'Project'>, 'list'>;
  pipelines?: Pick<Informer<'Pipeline'>, 'list'>;
  sessionPolicies?: Pick<Informer<'SessionPolicy'>, 'list'>;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

export class DigestReconciler {
  private readonly abort = new AbortController();

  constructor(private readonly d: DigesterDeps) {}

  stop(): void {
    this.abort.abort();
  }

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    const policy = this.d.policies.get(namespace, name);
    if (!policy?.spec || policy.metadata.deletionTimestamp) return;
    const settings = digestSettings(policy.spec);
    const status = policy.status ?? {};
    const now = (this.d.now ?? Date.now)();
    const request = policy.metadata.annotations?.[DIGEST_REQUEST_ANNOTATION];
    const requested = !!request && request !== status.lastDigestRequest;
    const due = digestDueAt(policy, now);
    if (!requested && (due === undefined || due > now))
      return due === undefined ? undefined : { requeueAfterMs: Math.min(MAX_SLEEP_MS, due - now) };

    const channels = this.d.channels.list(namespace) as DigestChannel[];
    const outbox = this.d.notifications.list(namespace).filter((n) => n.spec?.policy === name);
    const data = collectDigest({
      now,
      since: digestWindowStart(status.lastDigestAt, now),
      policy,
      notifications: outbox,
      sessions: this.d.sessions.list(namespace),
      evaluations: this.d.evaluations.list(namespace),
      channels,
      decisions: this.d.decisions?.list(namespace) as DigestInput['decisions'],
      projects: this.d.projects?.list(namespace) as DigestInput['projects'],
      pipelines: this.d.pipelines?.list(namespace) as DigestInput['pipelines'],
      sessionPolicies: this.d.sessionPolicies?.list(namespace) as DigestInput['sessionPolicies'],
    });
    // Nothing happened and nothing waits: no message (a daily "nothing to report" is the spam this
    // answers), but the window moves on. `orchctl digest --now` always sends.
    const skip = data.empty && !requested;
    const sized = digestTargets(settings, channels);
    const targets = skip ? [] : sized.targets.filter((t) => t.channel).map((t) => t.name);
    const text = await composeDigest(data, {
      // The narrative only when a message goes out: an LLM call for a digest nobody receives is waste.
      backend: targets.length ? digestBackend(settings, { env: this.d.env }) : undefined,
      timeoutMs: settings.llm?.timeoutMs ?? 60_000,
      maxRetries: settings.llm?.maxRetries,
      maxChars: sized.maxChars,
      signal: this.abort.signal,
    });
    if (this.abort.signal.aborted) return;
    if (text.fallbackReason && targets.length)
      this.d.log.warn(`digest ${key}: the template instead of a narrative: ${text.fallbackReason}`);

    // Named after the scheduled time (or the request): the same digest recorded twice is one object.
    const when = requested ? `request:${request}` : iso(due!);
    const carriers = targets.map((channel): Notification => {
      const nm = carrierName(name, 'digest', channel, [when]);
      return {
        apiVersion: API_VERSION,
        kind: 'Notification',
        metadata: {
          name: nm,
          namespace,
          labels: {
            [NOTIFICATION_LABELS.policy]: name,
            [NOTIFICATION_LABELS.channel]: channel,
            [NOTIFICATION_LABELS.tier]: '2',
            [NOTIFICATION_LABELS.source]: 'digest',
          },
          ...(policy.metadata.uid
            ? {
                ownerReferences: [
                  { apiVersion: API_VERSION, kind: 'NotificationPolicy', name, uid: policy.metadata.uid },
                ],
              }
            : {}),
        },
        // Tier 2: a digest is read when convenient, but it is not batched, and no budget holds it back.
        spec: {
          policy: name,
          channel,
          tier: 2,
          source: 'digest',
          title: text.title,
          body: text.body,
          items: data.digestItems,
        },
        status: { phase: 'Pending', attempts: 0 },
      };
    });
    const items = new Set(data.digestItems);
    const ops: WriteOp[] = [
      ...carriers.flatMap((n): WriteOp[] => [
        { op: 'create', object: n },
        { op: 'updateStatus', object: n },
      ]),
      ...outbox
        // A tier-3 item the digest told is not sent again by its batch.
        .filter(
          (n) =>
            carriers.length &&
            items.has(n.metadata.name) &&
            (n.status?.phase === 'Digest' || n.status?.phase === 'Batched'),
        )
        .map(
          (n): WriteOp => ({
            op: 'updateStatus',
            object: { ...n, status: { ...n.status!, phase: 'Digested', sentWith: carriers[0]?.metadata.name } },
          }),
        ),
      {
        op: 'updateStatus',
        object: {
          ...policy,
          status: { ...status, lastDigestAt: iso(now), ...(request ? { lastDigestRequest: request } : {}) },
        },
      },
    ];
    try {
      await this.d.store.txn(ops);
    } catch (e) {
      if (isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists') || isApiError(e, 'NotFound'))
        return { requeueAfterMs: RETRY_MS };
      throw e;
    }
    if (skip) this.d.log.info(`digest ${key}: nothing to report since the last one; not sent`);
    else if (!targets.length) this.d.log.warn(`digest ${key}: none of its channels (${settings.channels}) exists`);
    else this.d.log.info(`digest ${key}: recorded for ${targets.join(', ')} (${text.source})`);
    const next = nextDigestAt(policy.spec, now);
    return next === undefined ? undefined : { requeueAfterMs: Math.min(MAX_SLEEP_MS, Math.max(1, next - now)) };
  }
}
