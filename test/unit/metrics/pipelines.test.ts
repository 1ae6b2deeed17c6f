/**
 * The pipeline gauges as the registry renders them, read at scrape time from Pipelines in a real
 * informer cache over a real database file: the status as a StateSet (one series per status, 1 for
 * the current one) and the phases by state; none for a pipeline without a status yet, and gone
 * with the pipeline.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PIPELINE_PHASES, type PipelineStatus } from '../../../controller/api/pipeline.js';
import { ControllerMetrics, renderMetrics } from '../../../controller/metrics/index.js';
import { Informer } from '../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { parseExposition } from '../../support/prom-text.js';
import { until } from '../../support/until.js';

describe('pipeline gauges', () => {
  let dir: string;
  let store: SqliteStore;
  let pipelines: Informer<'Pipeline'>;
  let m: ControllerMetrics;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-pipeline-metrics-'));
    store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
    pipelines = new Informer(store, 'Pipeline');
    await pipelines.start();
    m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions: { list: () => [], onChange: () => {} },
      nodes: { list: () => [] },
      pipelines,
      processMetrics: false,
    });
  });
  afterEach(async () => {
    pipelines.stop();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async () => parseExposition(await renderMetrics(m.registry));
  const template = { agentRef: 'sim', workdir: '/tmp', prompt: 'x' };
  async function pipeline(name: string, status?: PipelineStatus) {
    const o = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Pipeline',
      metadata: { name, namespace: 'default' },
      spec: {
        phases: [
          { name: 'a', template },
          { name: 'b', template },
          { name: 'c', template },
        ],
      },
    });
    return status ? store.updateStatus({ ...o, status }) : o;
  }

  it('the status as a StateSet and the phases by state', async () => {
    await pipeline('fresh');
    const running = await pipeline('rel', {
      phase: 'Blocked',
      phases: [
        { name: 'a', state: 'Succeeded' },
        { name: 'b', state: 'Blocked' },
        { name: 'c', state: 'Pending' },
      ],
    });
    await until('cached', () => pipelines.list().length === 2 && !!pipelines.get('default', 'rel')?.status);
    let x = await scrape();
    expect(x.types.get('orchctl_pipeline_status_phase')).toBe('gauge');
    const status = (pipeline: string) =>
      Object.fromEntries(x.find('orchctl_pipeline_status_phase', { pipeline }).map((s) => [s.labels.phase, s.value]));
    expect(status('rel')).toEqual({ Pending: 0, Running: 0, Blocked: 1, Succeeded: 0, Failed: 0 });
    expect(Object.keys(status('rel'))).toHaveLength(PIPELINE_PHASES.length);
    expect(status('fresh')).toEqual({});
    const phases = (state: string) => x.value('orchctl_pipeline_phases', { pipeline: 'rel', state });
    expect([phases('Succeeded'), phases('Blocked'), phases('Pending'), phases('Running'), phases('Failed')]).toEqual([
      1, 1, 1, 0, 0,
    ]);

    await store.delete({ kind: 'Pipeline', namespace: 'default', name: running.metadata.name });
    await until('gone from the cache', () => !pipelines.get('default', 'rel'));
    x = await scrape();
    expect(x.find('orchctl_pipeline_status_phase', { pipeline: 'rel' })).toEqual([]);
  });
});
