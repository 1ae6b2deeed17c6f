import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RunMetrics } from '../../../controller/metrics/runs.js';
import type { AgentSession } from '../../../controller/api/kinds.js';

describe('prompt delivery metrics', () => {
  it('counts deliveries by result and the extra submit presses they needed', async () => {
    const registry = new Registry();
    const m = new RunMetrics(registry);
    const s = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 'a', namespace: 'team' },
    } as AgentSession;
    m.onDelivery(s, { delivered: true, reason: 'Confirmed', message: '', retries: 0 });
    m.onDelivery(s, { delivered: true, reason: 'Confirmed', message: '', retries: 2 });
    m.onDelivery(s, { delivered: false, reason: 'Unconfirmed', message: '', retries: 3 });
    const text = await registry.metrics();
    expect(text).toContain('orchctl_prompt_deliveries_total{namespace="team",result="Confirmed"} 2');
    expect(text).toContain('orchctl_prompt_deliveries_total{namespace="team",result="Unconfirmed"} 1');
    expect(text).toContain('orchctl_prompt_delivery_retries_total{namespace="team"} 5');
  });
});
