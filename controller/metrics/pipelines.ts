/**
 * Pipeline object metrics (kube-state-metrics style), from the Pipeline objects in the informer
 * cache at scrape time: the pipeline's status as a StateSet (`sum by (phase)` counts pipelines by
 * status) and its phases by state. Only the closed enums become labels.
 */
import type { Registry } from 'prom-client';
import { PHASE_STATES, PIPELINE_PHASES, type Pipeline } from '../api/pipeline.js';
import { ScrapeFamily } from './family.js';

export function registerPipelineMetrics(registry: Registry, pipelines: () => Iterable<Pipeline>): void {
  const id = (p: Pipeline) => [p.metadata.namespace ?? '', p.metadata.name];
  new ScrapeFamily(registry, {
    name: 'orchctl_pipeline_status_phase',
    help:
      "The Pipeline's status (1 for the current one of Pending, Running, Blocked, Succeeded, Failed); " +
      'sum by (phase) counts pipelines in each. None before the pipeline reconciler wrote a status.',
    type: 'gauge',
    labelNames: ['namespace', 'pipeline', 'phase'],
    objects: pipelines,
    id,
    series: (p, emit) => {
      const cur = p.status?.phase;
      if (cur) for (const ph of PIPELINE_PHASES) emit([ph], ph === cur ? 1 : 0);
    },
  });
  new ScrapeFamily(registry, {
    name: 'orchctl_pipeline_phases',
    help: "The Pipeline's phases in each state (Pending, Running, Succeeded, Blocked, Failed).",
    type: 'gauge',
    labelNames: ['namespace', 'pipeline', 'state'],
    objects: pipelines,
    id,
    series: (p, emit) => {
      const phases = p.status?.phases;
      if (!phases) return;
      for (const s of PHASE_STATES) emit([s], phases.filter((x) => x.state === s).length);
    },
  });
}
