/**
 * The digest the notifier would send now, read from the store and composed as the notifier
 * composes it, writing nothing: `orchctl digest`'s preview and the console's digest page. Here
 * beside the composition, below the reconcilers, so that both the CLI and the console reach it.
 */
import type { KindName } from '../../api/kinds.js';
import type { NotificationPolicy } from '../../api/notification.js';
import type { BackendFactoryOptions } from '../../llm/index.js';
import type { Store } from '../../store/store.js';
import {
  type ComposedDigest,
  collectDigest,
  composeDigest,
  type DigestData,
  digestBackend,
  digestSettings,
  digestTargets,
  digestWindowStart,
} from './index.js';

export type DigestPreview = {
  data: DigestData;
  composed: ComposedDigest;
  /** Where the window starts from: the last digest, or a day back. */
  sinceFrom: 'lastDigestAt' | 'a day ago';
  /** The digest's channels, each with its length limit (`found: false`: no such NotificationChannel). */
  channels: { name: string; type?: string; maxChars: number; found: boolean }[];
  maxChars: number;
};

export type PreviewOptions = {
  now: number;
  /** The template alone, whatever `llm` says. */
  template?: boolean;
  /** For the narrative, retries included. */
  timeoutMs: number;
  backend?: BackendFactoryOptions;
};

export async function previewDigest(
  store: Store,
  policy: NotificationPolicy,
  o: PreviewOptions,
): Promise<DigestPreview> {
  const namespace = policy.metadata.namespace ?? '';
  const list = async <K extends KindName>(kind: K) => (await store.list(kind, { namespace })).items;
  const [notifications, sessions, evaluations, channels, decisions, projects, pipelines, sessionPolicies] =
    await Promise.all([
      list('Notification'),
      list('AgentSession'),
      list('Evaluation'),
      list('NotificationChannel'),
      list('Decision'),
      list('Project'),
      list('Pipeline'),
      list('SessionPolicy'),
    ]);
  const lastDigestAt = policy.status?.lastDigestAt;
  const since = digestWindowStart(lastDigestAt, o.now);
  // This policy's outbox only, as the notifier reads it.
  const outbox = notifications.filter((n) => n.spec?.policy === policy.metadata.name);
  const data = collectDigest({
    now: o.now,
    since,
    policy,
    notifications: outbox,
    sessions,
    evaluations,
    channels,
    decisions,
    projects,
    pipelines,
    sessionPolicies,
  });
  const settings = digestSettings(policy.spec!);
  const { targets, maxChars } = digestTargets(settings, channels);
  const composed = await composeDigest(data, {
    backend: o.template ? undefined : digestBackend(settings, o.backend),
    timeoutMs: o.timeoutMs,
    maxChars,
    maxRetries: settings.llm?.maxRetries,
  });
  const sinceFrom = Number.isNaN(Date.parse(lastDigestAt ?? '')) ? 'a day ago' : 'lastDigestAt';
  const shown = targets.map((t) => ({
    name: t.name,
    ...(t.channel?.spec?.type ? { type: t.channel.spec.type } : {}),
    maxChars: t.maxChars,
    found: !!t.channel,
  }));
  return { data, composed, sinceFrom, channels: shown, maxChars };
}
