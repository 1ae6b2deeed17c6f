/**
 * The notifier's metrics as the registry renders them: the hooks' counter and latency histogram
 * (a channel/tier's results present from its first message, so increase() sees the first failure),
 * and the per-channel gauges read at scrape time from NotificationChannel status in a real informer
 * cache over a real database file (written, changed, deleted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NotificationChannelStatus } from '../../../controller/api/outbox.js';
import type { Resource } from '../../../controller/api/types.js';
import { ControllerMetrics, renderMetrics } from '../../../controller/metrics/index.js';
import { NOTIFICATION_RESULTS, NotifierMetrics } from '../../../controller/metrics/notifications.js';
import { Informer } from '../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { parseExposition } from '../../support/prom-text.js';
import { until } from '../../support/until.js';

describe('notifier event metrics', () => {
  it('counts results by channel, tier and result, and observes delivery latency', async () => {
    const registry = new Registry();
    const m = new NotifierMetrics(registry);
    let x = parseExposition(await registry.metrics());
    expect(x.types.get('orchctl_notifications_total')).toBe('counter');
    expect(x.types.get('orchctl_notification_delivery_seconds')).toBe('histogram');
    expect(x.find('orchctl_notifications_total')).toEqual([]);

    m.onNotification('slack', 1, 'sent');
    m.onDelivered('slack', 1, 0.3);
    m.onNotification('slack', 2, 'deferred');
    m.onNotification('slack', 2, 'sent');
    m.onDelivered('slack', 2, 7200);
    m.onNotification('ntfy', 1, 'retry');
    m.onNotification('ntfy', 1, 'retry');
    m.onNotification('ntfy', 1, 'failed');
    m.onNotification('ntfy', 4, 'suppressed');
    x = parseExposition(await registry.metrics());

    const total = (channel: string, tier: string, result: string) =>
      x.value('orchctl_notifications_total', { channel, tier, result });
    expect(total('slack', '1', 'sent')).toBe(1);
    expect(total('slack', '2', 'deferred')).toBe(1);
    expect(total('slack', '2', 'sent')).toBe(1);
    expect(total('ntfy', '1', 'retry')).toBe(2);
    expect(total('ntfy', '1', 'failed')).toBe(1);
    expect(total('ntfy', '4', 'suppressed')).toBe(1);
    // Every result of a channel/tier once it has had a message: a first failure is an increase from 0.
    expect(total('ntfy', '1', 'sent')).toBe(0);
    expect(total('slack', '1', 'failed')).toBe(0);
    expect(x.find('orchctl_notifications_total', { channel: 'ntfy', tier: '1' })).toHaveLength(
      NOTIFICATION_RESULTS.length,
    );
    // No series for a tier a channel never had.
    expect(x.find('orchctl_notifications_total', { channel: 'ntfy', tier: '2' })).toEqual([]);

    const bucket = (tier: string, le: string) =>
      x.value('orchctl_notification_delivery_seconds_bucket', { channel: 'slack', tier, le });
    expect(bucket('1', '0.25')).toBe(0);
    expect(bucket('1', '0.5')).toBe(1);
    expect(bucket('1', '1')).toBe(1);
    // A tier-2 message held through quiet hours: in the hour-scale buckets, not the second-scale ones.
    expect(bucket('2', '5')).toBe(0);
    expect(bucket('2', '3600')).toBe(0);
    expect(bucket('2', '14400')).toBe(1);
    expect(x.value('orchctl_notification_delivery_seconds_sum', { channel: 'slack', tier: '2' })).toBe(7200);
    expect(x.value('orchctl_notification_delivery_seconds_count', { channel: 'slack', tier: '1' })).toBe(1);
    expect(x.find('orchctl_notification_delivery_seconds_count', { channel: 'ntfy' })).toEqual([]);
  });
});

describe('channel metrics from NotificationChannel status', () => {
  let dir: string;
  let store: SqliteStore;
  let channels: Informer<'NotificationChannel'>;
  let m: ControllerMetrics;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-notify-metrics-'));
    store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
    channels = new Informer(store, 'NotificationChannel');
    const sessions = new Informer(store, 'AgentSession');
    await Promise.all([channels.start(), sessions.start()]);
    m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions,
      nodes: { list: () => [] },
      notificationChannels: channels,
      processMetrics: false,
    });
    sessions.stop();
  });
  afterEach(async () => {
    channels.stop();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async () => parseExposition(await renderMetrics(m.registry));
  async function channel(name: string, namespace: string, status?: NotificationChannelStatus): Promise<Resource> {
    const o = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'NotificationChannel',
      metadata: { name, namespace },
      spec: { type: 'ntfy', server: 'https://ntfy.example', topic: 't' },
    });
    return status ? store.updateStatus({ ...o, status }) : o;
  }

  it('budget, remaining, waiting by state and failing follow the status the notifier writes', async () => {
    const slack = await channel('slack', 'team', {
      day: '2026-03-01',
      sent: 7,
      budget: 20,
      deferred: 2,
      batched: 5,
      digest: 0,
      failing: false,
    });
    await channel('pager', 'ops', {
      day: '2026-03-01',
      sent: 31,
      budget: 30,
      deferred: 0,
      batched: 0,
      digest: 4,
      failing: true,
      lastFailure: { at: '2026-03-01T10:00:00Z', code: 'server_error', message: 'HTTP 500' },
    });
    await channel('fresh', 'team'); // the notifier has not written its status yet
    await until('cache', () => channels.list().length === 3);
    let x = await scrape();
    const slackId = { namespace: 'team', channel: 'slack' };
    const pagerId = { namespace: 'ops', channel: 'pager' };

    expect(x.types.get('orchctl_notification_budget')).toBe('gauge');
    expect(x.value('orchctl_notification_budget', slackId)).toBe(20);
    expect(x.value('orchctl_notification_budget_remaining', slackId)).toBe(13);
    // Tier 1 goes out past the budget: sent > budget floors at 0 rather than going negative.
    expect(x.value('orchctl_notification_budget_remaining', pagerId)).toBe(0);
    expect(x.find('orchctl_notifications_waiting', slackId).map((s) => [s.labels.state, s.value])).toEqual([
      ['deferred', 2],
      ['batched', 5],
      ['digest', 0],
    ]);
    expect(x.value('orchctl_notifications_waiting', { ...pagerId, state: 'digest' })).toBe(4);
    expect(x.value('orchctl_notification_channel_failing', slackId)).toBe(0);
    expect(x.value('orchctl_notification_channel_failing', pagerId)).toBe(1);
    for (const name of [
      'orchctl_notification_budget',
      'orchctl_notification_budget_remaining',
      'orchctl_notifications_waiting',
      'orchctl_notification_channel_failing',
    ])
      expect(x.find(name, { channel: 'fresh' }), name).toEqual([]);

    // The notifier rewrites the status (a send went through, the failure cleared); then the channel is deleted.
    const cur = (await store.get({ kind: 'NotificationChannel', namespace: 'ops', name: 'pager' }))!;
    await store.updateStatus({ ...cur, status: { ...cur.status, sent: 32, digest: 1, failing: false } });
    await until(
      'status in cache',
      () => (channels.get('ops', 'pager')?.status as NotificationChannelStatus)?.failing === false,
    );
    x = await scrape();
    expect(x.value('orchctl_notification_channel_failing', pagerId)).toBe(0);
    expect(x.value('orchctl_notifications_waiting', { ...pagerId, state: 'digest' })).toBe(1);

    await store.delete({ kind: 'NotificationChannel', namespace: 'team', name: slack.metadata.name });
    await until('deletion in cache', () => channels.list().length === 2);
    x = await scrape();
    expect(x.find('orchctl_notification_budget', { channel: 'slack' })).toEqual([]);
    expect(x.find('orchctl_notifications_waiting', { channel: 'slack' })).toEqual([]);
    expect(x.value('orchctl_notification_budget', pagerId)).toBe(30);
  });

  it('a ControllerMetrics without a channel informer has the counters but no channel gauges', async () => {
    const sessions = new Informer(store, 'AgentSession');
    const bare = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions,
      nodes: { list: () => [] },
      processMetrics: false,
    });
    await channel('slack', 'team', { sent: 1, budget: 20, failing: true });
    bare.notifications.onNotification('slack', 1, 'failed');
    const x = parseExposition(await renderMetrics(bare.registry));
    expect(x.value('orchctl_notifications_total', { channel: 'slack', tier: '1', result: 'failed' })).toBe(1);
    expect(x.types.has('orchctl_notification_channel_failing')).toBe(false);
  });
});
